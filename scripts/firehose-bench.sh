#!/usr/bin/env bash
# Firehose registration cache benchmark (Firehose Figure 3 shape): put bandwidth against working-set size with the
# cache (pin / write / release) and without (register / write / deregister per put), interleaved rounds, median
# per-round ratio per working-set size. Natively when `ibv_devices` lists a device, otherwise in the Soft-RoCE guest.
#
#   scripts/firehose-bench.sh [--native|--guest] [FirehoseBenchmark options...]
#     options: --put BYTES --puts N --rounds R --sets KiB,KiB,... --max-pinned KiB --max-victim KiB
#
# Prerequisite: `mvn install` built transport-rdma. Writes benchmarks/results/firehose-<UTC date>.md and prints it.
# Exit: 0 ran; 1 benchmark failed; 2 not built; 124/125 guest failures.
set -euo pipefail
# shellcheck source=lib/rdma-mode.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rdma-mode.sh"
RESULTS="$ROOT/benchmarks/results"
REPORT="$RESULTS/firehose-$(date -u +%Y-%m-%d).md"
[ -f "$MOD/target/rdma-test-classpath.txt" ] && [ -d "$MOD/target/test-classes/io/fabricrpc/transport/rdma/firehose" ] \
  || { echo "firehose-bench: transport-rdma is not built: run 'mvn install' first" >&2; exit 2; }
rdma_resolve_mode
case "$MODE" in
  native|in-place)
    ulimit -l unlimited 2>/dev/null || true
    mkdir -p "$RESULTS"
    cp="$(rdma_test_classpath)"
    flags="$(rdma_jvm_flags)"
    tmp="$REPORT.tmp"
    # shellcheck disable=SC2086 # flags is a list of options
    "$JAVA_HOME/bin/java" $flags ${FABRICRPC_BENCH_OPTS:-} -Xmx512m -cp "$cp" \
      io.fabricrpc.transport.rdma.firehose.FirehoseBenchmark "$@" > "$tmp" || { rm -f "$tmp"; exit 1; }
    if [ "$MODE" = in-place ] && [ -n "${FABRICRPC_FIREHOSE_GUEST:-}" ]; then
      printf '\nRun in the Soft-RoCE guest (QEMU TCG, rdma_rxe): absolute numbers are emulation numbers; the ratios are the result.\n' >> "$tmp"
    fi
    mv "$tmp" "$REPORT"
    cat "$REPORT" ;;
  guest)
    mkdir -p "$RESULTS"
    cd "$ROOT"
    # C1 only under TCG (see scripts/rdma-tests.sh).
    export FABRICRPC_BENCH_OPTS="-XX:TieredStopAtLevel=1 ${FABRICRPC_BENCH_OPTS:-}" FABRICRPC_FIREHOSE_GUEST=1
    exec "$ROOT/scripts/softroce/guest-run.sh" --rw "$RESULTS" -- "$ROOT/scripts/firehose-bench.sh" --in-place "$@" ;;
esac
