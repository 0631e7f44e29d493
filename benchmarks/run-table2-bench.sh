#!/usr/bin/env bash
# Runs the Table 2 benchmark (io.fabricrpc.benchmarks.table2.Table2Benchmark) and writes
# benchmarks/results/table2-shm.md and table2-shm.png. Arguments go to the benchmark (try --help); e.g.
#   benchmarks/run-table2-bench.sh --rounds 7 --seconds 1 --columns write,raw --note "machine shared with builds"
# The default run (5 rounds x 3 columns x 3 sizes x 1 s, plus warm-up and drains) takes 1.5 to 2.5 minutes.
# Finds JDK 25 like the README commands (scripts/lib/env.sh).
# Rebuilds benchmarks/target/benchmarks.jar with Maven when it is missing or older than the sources.
# With --columns naming ucx, installs OpenUCX first (scripts/install-ucx.sh; apt, needs root or sudo).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
source "$root/scripts/lib/ucx.sh"
table2_install_ucx_if_selected "$@"
run_benchmark io.fabricrpc.benchmarks.table2.Table2Benchmark "$root/benchmarks/results/table2-shm.md" "$@"
