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
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD="$ROOT/transport-rdma"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export JAVA_HOME
MODE=auto
case "${1:-}" in
  --native) MODE=native; shift ;;
  --guest) MODE=guest; shift ;;
  --in-place) MODE=in-place; shift ;;
esac
RESULTS="$ROOT/benchmarks/results"
REPORT="$RESULTS/rdma-raw-$(date -u +%Y-%m-%d).md"
[ -f "$MOD/target/rdma-test-classpath.txt" ] && [ -d "$MOD/target/test-classes" ] \
  || { echo "rdma-bench: transport-rdma is not built: run 'mvn install' first" >&2; exit 2; }
has_device() { command -v ibv_devices >/dev/null && [ "$(ibv_devices 2>/dev/null | awk 'NR>2 && NF' | wc -l)" -gt 0 ]; }
[ "$MODE" != auto ] || { if has_device; then MODE=native; else MODE=guest; fi; }
case "$MODE" in
  native|in-place)
    ulimit -l unlimited 2>/dev/null || true
    command -v ib_write_bw >/dev/null || { echo "rdma-bench: perftest is not installed (apt-get install perftest)" >&2; exit 1; }
    dev=$(ibv_devices | awk 'NR>2 && NF {print $1; exit}')
    mkdir -p "$RESULTS"
    cp="$MOD/target/test-classes:$MOD/target/classes:$(cat "$MOD/target/rdma-test-classpath.txt")"
    exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
      -Xmx512m -cp "$cp" \
      io.fabricrpc.transport.rdma.verbs.RawVerbsBenchmark "$REPORT" "$dev" "$@" ;;
  guest)
    mkdir -p "$RESULTS"
    cd "$ROOT"
    exec "$ROOT/scripts/softroce/guest-run.sh" --rw "$RESULTS" -- "$ROOT/scripts/rdma-bench.sh" --in-place "$@" ;;
esac
