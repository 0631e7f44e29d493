#!/usr/bin/env bash
# Installs Debian's OpenUCX (libucx0, libucx-dev) for the `ucx` column of the Table 2 benchmarks: JUCX, the Java
# binding on Maven Central, brings only its JNI glue and loads the system's libucp/libuct/libucs. Idempotent and
# quiet: does nothing when both packages are installed. Waits up to 10 minutes for another apt run's lock. Needs
# root (or sudo). The Soft-RoCE guest sees the host's root file system, so installing on the host serves it too.
set -euo pipefail
PKGS=(libucx0 libucx-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-ucx: installing ${missing[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# apt's chatter (debconf notes included) is shown only when it fails.
if ! { $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq &&
       DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
         --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "install-ucx: apt-get failed to install ${missing[*]}" >&2
  exit 1
fi
