#!/usr/bin/env bash
# Runs the codec benchmark (io.fabricrpc.benchmarks.table2.CodecBenchmark): Table 2's calls encoded, decoded and
# invoked in one thread, against raw stores and loads of the same longs, interleaved. About 1 minute.
#   benchmarks/run-codec-bench.sh [--c1] [benchmark options...]     (try --help)
# Writes benchmarks/results/codec.md, or codec-c1.md with --c1 (C1 alone, -XX:TieredStopAtLevel=1: the JIT the
# emulated RDMA guest's test suite runs).
set -euo pipefail
report=codec.md
if [[ "${1:-}" == --c1 ]]; then
    shift
    export FABRICRPC_BENCH_JVM_OPTS="-XX:TieredStopAtLevel=1 ${FABRICRPC_BENCH_JVM_OPTS:-}"
    report=codec-c1.md
fi
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
run_benchmark io.fabricrpc.benchmarks.table2.CodecBenchmark "$root/benchmarks/results/$report" "$@"
