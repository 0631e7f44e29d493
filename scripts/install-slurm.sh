#!/usr/bin/env bash
# Installs Debian's Slurm daemons, client and munge (slurmctld, slurmd, slurm-client, munge) for
# scripts/slurm-example.sh. Idempotent: does nothing when slurmctld, slurmd and srun are present. Waits up to 10
# minutes for another apt run's lock. Needs root (or sudo). Starts no service.
set -euo pipefail
if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v srun >/dev/null 2>&1 \
    && command -v munged >/dev/null 2>&1; then
  echo "install-slurm: Slurm and munge present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-slurm: installing slurmctld slurmd slurm-client munge"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  slurmctld slurmd slurm-client munge >/dev/null
echo "install-slurm: done"
