#!/usr/bin/env bash
# Runs the call-cost benchmark (io.fabricrpc.benchmarks.table2.CallCostBenchmark): one thread of a one-process job
# calls itself through write, trad and ovfl in batches and then runs them, the send and run phases timed apart,
# columns interleaved batch by batch. The CPU cost of a call at each end without cross-core traffic: a tool for
# comparing code paths. About 1 minute.
#   benchmarks/run-call-cost-bench.sh [benchmark options...]     (try --help)
# Writes benchmarks/results/call-cost.md.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
run_benchmark io.fabricrpc.benchmarks.table2.CallCostBenchmark "$root/benchmarks/results/call-cost.md" "$@"
