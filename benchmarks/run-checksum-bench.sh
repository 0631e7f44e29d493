#!/usr/bin/env bash
# Runs the checksum cost benchmark (io.fabricrpc.benchmarks.checksum.ChecksumCostBenchmark): CRC32C per record of
# 8/64/256 bytes and per 4 KiB batch, against copying the same bytes. About 1 minute.
#   benchmarks/run-checksum-bench.sh [benchmark options...]     (try --help)
# Writes benchmarks/results/checksum-cost.md unless --output names another file.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
run_benchmark io.fabricrpc.benchmarks.checksum.ChecksumCostBenchmark "$root/benchmarks/results/checksum-cost.md" "$@"
