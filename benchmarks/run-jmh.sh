#!/usr/bin/env bash
# Runs the JMH benchmarks of the call path (io.fabricrpc.benchmarks.table2.CallPathJmh): encode, decodeAndRun,
# append (Fabric.call into the messenger's chunk) and runFromChunk (processCalls), ns per call at 8, 64 and 256 B.
#   benchmarks/run-jmh.sh [JMH options...]     e.g. benchmarks/run-jmh.sh -p size=64 CallPathJmh.encode
# Defaults: 1 fork per benchmark and size, 3 x 1 s warm-up, 5 x 1 s measurement (about 3 minutes); later options
# win (-f 3 -i 10 for a steadier run; -h lists JMH's options). The forks inherit the JVM flags of the other benchmark
# scripts (scripts/lib/benchmarks.sh, plus FABRICRPC_BENCH_JVM_OPTS). Rebuilds benchmarks/target/benchmarks.jar
# when stale. Prints JMH's table; the machine-readable results go to benchmarks/target/jmh-call-path.json.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
include=CallPathJmh
for arg in "$@"; do
    [[ "$arg" == *CallPathJmh* ]] && include=""
done
# shellcheck disable=SC2086 # flags is a list of options
exec java $flags ${FABRICRPC_BENCH_JVM_OPTS:-} -cp "$jar" org.openjdk.jmh.Main -f 1 -wi 3 -w 1s -i 5 -r 1s \
    -rf json -rff "$root/benchmarks/target/jmh-call-path.json" $include "$@"
