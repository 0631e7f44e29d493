#!/usr/bin/env bash
# Raw RDMA benchmark (the "max-raw" column of Seriema's Table 2 on this test bed): DiSNI through this project's
# libdisni vs perftest (ib_write_bw, ib_write_lat, ib_send_lat) for 8/64/256/4096-byte messages, interleaved in one
# run, natively when `ibv_devices` lists a device, otherwise in the Soft-RoCE guest.
#
#   scripts/rdma-bench.sh [--native|--guest] [sizes...]
#
# Prerequisite: `mvn install` built transport-rdma. Writes benchmarks/results/rdma-raw-<UTC date>.md and prints the
# table with ratios. Exit: 0 ran (targets met or not: see the last line, BENCH targets met / NOT met);
# 1 benchmark failed; 2 not built; 124/125 guest failures.
set -euo pipefail
# shellcheck source=lib/rdma-mode.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rdma-mode.sh"
RESULTS="$ROOT/benchmarks/results"
REPORT="$RESULTS/rdma-raw-$(date -u +%Y-%m-%d).md"
[ -f "$MOD/target/rdma-test-classpath.txt" ] && [ -d "$MOD/target/test-classes" ] \
  || { echo "rdma-bench: transport-rdma is not built: run 'mvn install' first" >&2; exit 2; }
rdma_resolve_mode
case "$MODE" in
  native|in-place)
    ulimit -l unlimited 2>/dev/null || true
    command -v ib_write_bw >/dev/null || { echo "rdma-bench: perftest is not installed (apt-get install perftest)" >&2; exit 1; }
    dev=$(ibv_devices | awk 'NR>2 && NF {print $1; exit}')
    mkdir -p "$RESULTS"
    cp="$(rdma_test_classpath)"
    exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
      -Xmx512m -cp "$cp" \
      io.fabricrpc.transport.rdma.verbs.RawVerbsBenchmark "$REPORT" "$dev" "$@" ;;
  guest)
    mkdir -p "$RESULTS"
    cd "$ROOT"
    exec "$ROOT/scripts/softroce/guest-run.sh" --rw "$RESULTS" -- "$ROOT/scripts/rdma-bench.sh" --in-place "$@" ;;
esac
