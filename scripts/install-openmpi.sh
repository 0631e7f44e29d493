#!/usr/bin/env bash
# Installs Debian's Open MPI launcher (openmpi-bin: mpirun) for scripts/mpirun-example.sh. Idempotent: does nothing
# when mpirun is already on the PATH. Waits up to 10 minutes for another apt run's lock. Needs root (or sudo).
set -euo pipefail
if command -v mpirun >/dev/null 2>&1; then
  echo "install-openmpi: mpirun present ($(command -v mpirun))"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-openmpi: installing openmpi-bin"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  openmpi-bin >/dev/null
echo "install-openmpi: done"
