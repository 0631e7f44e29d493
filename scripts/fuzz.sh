#!/usr/bin/env bash
# Long fuzzing runs of the decoders' Jazzer targets (@FuzzTest classes named *FuzzTest), one target at a time.
#
#   scripts/fuzz.sh [target|all] [executions]     e.g. scripts/fuzz.sh CallDecoderFuzzTest 1000000
#   scripts/fuzz.sh --write-seeds                 regenerates every target's seed corpus with the real encoders
#
# The normal build (mvn install, scripts/test.sh) runs every target in regression mode over its committed inputs
# (src/test/resources/<package>/<Target>Inputs/<method>/). Here JAZZER_FUZZ=1 makes Jazzer fuzz instead, for
# `executions` inputs (default 10^6); new coverage goes to <module>/.cifuzz-corpus (not committed), a crashing input
# to the target's Inputs directory, where the next build replays it as a regression test. Runs nice'd. Extra Maven
# options (e.g. -Dmaven.repo.local=...) come from $FUZZ_MAVEN_ARGS. Prints one summary line per target and appends
# it to target/fuzz-summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh

# shellcheck disable=SC2206
maven_args=(-o -q ${FUZZ_MAVEN_ARGS:-})
targets=$(find . -path '*/src/test/java/*' -name '*FuzzTest.java' -printf '%f\n' | sed 's/\.java$//' | sort)

if [ "${1:-}" = "--write-seeds" ]; then
  for module in invocation transport-rdma; do
    mvn "${maven_args[@]}" test -pl "$module" -Dtest='*FuzzTest#writeSeeds' -Dsurefire.failIfNoSpecifiedTests=false \
      -Dfuzz.writeSeeds="$PWD/$module/src/test/resources"
  done
  exit 0
fi

target=${1:-all}
executions=${2:-1000000}
if [ "$target" = all ]; then
  selected=$targets
else
  selected=$target
  echo "$targets" | grep -qx "$target" || { echo "unknown target '$target'; targets:" $targets >&2; exit 2; }
fi

mkdir -p target
status=0
for t in $selected; do
  file=$(find . -path '*/src/test/java/*' -name "$t.java" | head -1)
  module=${file#./}; module=${module%%/*}
  log="target/fuzz-$t.log"
  echo "=== $t ($module): $executions inputs"
  start=$(date +%s)
  rc=0
  # arg.0 is libFuzzer's argv[0]; the JUnit timeout is off so only libFuzzer's per-input -timeout (the @Timeout) counts.
  JAZZER_FUZZ=1 nice -n 10 mvn "${maven_args[@]}" test -pl "$module" -Dtest="$t" -Dsurefire.failIfNoSpecifiedTests=false \
    -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1=-runs="$executions" \
    -Djazzer.internal.arg.2=-print_final_stats=1 -Dfabricrpc.test.timeout.mode=disabled \
    > "$log" 2>&1 || rc=$?
  seconds=$(( $(date +%s) - start ))
  done_line=$(grep -E '^Done [0-9]+ runs in' "$log" | tail -1 || true)
  units=$(grep -E 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)
  fuzz_seconds=$(echo "$done_line" | awk '{print $5}')
  rate=$(grep -E 'stat::average_exec_per_sec' "$log" | tail -1 | awk '{print $2}' || true)
  finding=$(grep -m1 -E 'FuzzTestFindingException|== Java Exception|ERROR: libFuzzer' "$log" || true)
  line="$t: ${units:-?} inputs in ${fuzz_seconds:-?} s fuzzing (${rate:-?} exec/s; ${seconds} s with the build), exit $rc${finding:+, finding: $finding}"
  echo "$line" | tee -a target/fuzz-summary.txt
  [ $rc -eq 0 ] || status=1
done
exit $status
