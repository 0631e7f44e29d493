#!/usr/bin/env bash
# Plays one move of Hex with the distributed tree-parallel MCTS (the Seriema case study): P processes x T threads
# on this machine, over shared memory unless JAVA_OPTS="-Dfabric.transport=..." picks another. Builds what it needs.
# Arguments: see ./scripts/mcts.sh --help (e.g. -p 2 -t 1 -s 10 -a ovfl --moves "f6 e7"). "figure3 [options]" runs
# the scaling benchmark instead (benchmarks/results/mcts-figure3.md and .png by default).
set -euo pipefail
source "$(cd "$(dirname "$0")/.." && pwd)/scripts/lib/benchmarks.sh"

if [ "${1:-}" = "figure3" ]; then
  shift
  run_benchmark io.fabricrpc.benchmarks.figure3.Figure3Benchmark "$root/benchmarks/results/mcts-figure3.md" "$@"
fi
# shellcheck disable=SC2086 # flags and JAVA_OPTS are lists of options
exec java $flags ${JAVA_OPTS:-} -cp "$jar" io.fabricrpc.mcts.hex.HexMcts "$@"
