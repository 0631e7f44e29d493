#!/usr/bin/env bash
# Compiles libdisni.so for the Maven build: build-native.sh <source dir> <output dir> <java home>.
# Fails with the Debian package names when the compiler or the rdma-core headers are missing.
set -euo pipefail
src=$1 out=$2 jhome=$3
cc=${CC:-gcc}
hint="install them with: sudo apt-get install gcc libibverbs-dev librdmacm-dev (or scripts/install-rdma-build-deps.sh)"
command -v "${cc%% *}" >/dev/null || { echo "ERROR: C compiler '$cc' not found; $hint" >&2; exit 1; }
if ! printf '#include <infiniband/verbs.h>\n#include <rdma/rdma_cma.h>\n' | $cc -E -x c - >/dev/null 2>&1; then
  echo "ERROR: rdma-core development headers (infiniband/verbs.h, rdma/rdma_cma.h) not found; $hint" >&2
  exit 1
fi
for lib in ibverbs rdmacm; do
  echo 'int main(void){return 0;}' | $cc -x c - -o /dev/null "-l$lib" 2>/dev/null \
    || { echo "ERROR: lib$lib.so (development link) not found; $hint" >&2; exit 1; }
done
[ -f "$jhome/include/jni.h" ] || { echo "ERROR: no jni.h under $jhome/include: build with a JDK" >&2; exit 1; }
mkdir -p "$out"
$cc -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -Wno-unused-parameter -Werror \
  -fvisibility=hidden -I"$jhome/include" -I"$jhome/include/linux" \
  -Wl,-z,defs -Wl,-z,now -Wl,--as-needed -Wl,-soname,libdisni.so \
  -o "$out/libdisni.so" "$src/disni.c" -libverbs -lrdmacm
echo "built $out/libdisni.so"
