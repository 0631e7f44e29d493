#!/usr/bin/env bash
# Installs the Debian packages needed to compile transport-rdma's native library (libdisni.so).
# Idempotent: does nothing when the headers are already present. Needs root (or sudo).
set -euo pipefail
PKGS=(gcc libibverbs-dev librdmacm-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-rdma-build-deps: all present (${PKGS[*]})"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-rdma-build-deps: installing ${missing[*]}"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-rdma-build-deps: done"
