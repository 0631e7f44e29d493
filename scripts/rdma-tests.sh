#!/usr/bin/env bash
# Runs transport-rdma's RDMA test suite against real verbs:
#   natively when `ibv_devices` lists a device, otherwise inside a Soft-RoCE guest (scripts/softroce/guest-run.sh).
#
#   scripts/rdma-tests.sh [--native|--guest] [JUnit console selector...]
#     default selector: --select-package io.fabricrpc.transport.rdma --exclude-tag multi-jvm
#     e.g. scripts/rdma-tests.sh --select-class io.fabricrpc.transport.rdma.verbs.VerbsApiTest
#     The cross-process suites (tag multi-jvm: child JVMs start slowly under TCG, ~10 min in the guest) alone:
#       FABRICRPC_SOFTROCE_TIMEOUT=1800 scripts/rdma-tests.sh --select-package io.fabricrpc.transport.rdma --include-tag multi-jvm
#     scripts/test.sh (the README's test command) runs both: --select-package io.fabricrpc.transport.rdma
#
# Prerequisite: `mvn install` (or `mvn verify`) has built transport-rdma on the host (classes, test classes,
# target/rdma-test-classpath.txt, target/rdma-test-launcher/). Nothing is compiled here or in the guest.
# Extra JVM options for the test JVM: FABRICRPC_RDMA_TEST_OPTS (e.g. -Dfabricrpc.rdma.hygiene.iterations=100).
# A test or lifecycle method that runs past FABRICRPC_RDMA_TEST_TIMEOUT (default "300 s") fails, after JUnit has
# printed every thread's stack to the console, so a hang names itself before the guest's own limit kills it.
# Output: the JUnit tree, a Surefire-style `Tests run: N, Failures: F, Errors: 0, Skipped: S` line and a final
# `N passed, N failed` line. Exit: 0 all passed; 1 a test failed or none ran; 2 not built;
# 124 guest timed out; 125 guest failed to boot. Reports: transport-rdma/target/rdma-test-reports/.
set -euo pipefail

# shellcheck source=lib/rdma-mode.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rdma-mode.sh"
SELECTORS=("$@")
[ ${#SELECTORS[@]} -gt 0 ] || SELECTORS=(--select-package io.fabricrpc.transport.rdma --exclude-tag multi-jvm)

LAUNCHER="$MOD/target/rdma-test-launcher/junit-platform-console-standalone.jar"
for f in "$MOD/target/rdma-test-classpath.txt" "$LAUNCHER" "$MOD/target/test-classes" \
         "$MOD/target/classes/io/fabricrpc/transport/rdma/nativelib/linux-x86_64/libdisni.so"; do
  [ -e "$f" ] || { echo "rdma-tests: $f is missing: run 'mvn install' first" >&2; exit 2; }
done


run_in_place() {
  ulimit -l unlimited 2>/dev/null || echo "rdma-tests: cannot raise the memlock limit (now $(ulimit -l) KiB)" >&2
  local reports="$MOD/target/rdma-test-reports" out rc
  rm -rf "$reports"; mkdir -p "$reports"
  local cp="$MOD/target/test-classes:$MOD/target/classes:$(cat "$MOD/target/rdma-test-classpath.txt"):$LAUNCHER"
  out="$reports/console.txt"
  set +e
  # -Dfabricrpc.rdma.required: device tests fail instead of skipping if the verbs stack is missing here.
  # The project's JVM flags (Agrona and DiSNI on JDK 25), from the root pom like every other launcher.
  local flags
  flags="$(rdma_jvm_flags)"
  # shellcheck disable=SC2086 # flags is a list of options
  "$JAVA_HOME/bin/java" $flags \
    -Dfabricrpc.rdma.required=true -Xmx512m ${FABRICRPC_RDMA_TEST_OPTS:-} -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --disable-ansi-colors --details=tree --reports-dir "$reports" \
    --config="junit.jupiter.execution.timeout.default=${FABRICRPC_RDMA_TEST_TIMEOUT:-300 s}" \
    --config=junit.jupiter.execution.timeout.threaddump.enabled=true \
    "${SELECTORS[@]}" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  set -e
  local found failed skipped aborted passed
  num() { awk -v k="$1" '$0 ~ "tests " k {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) {print $i; exit}}' "$out"; }
  found=$(num found); failed=$(num failed); skipped=$(num skipped); aborted=$(num aborted); passed=$(num successful)
  found=${found:-0} failed=${failed:-0} skipped=${skipped:-0} aborted=${aborted:-0} passed=${passed:-0}
  echo "Tests run: $((found - skipped)), Failures: $failed, Errors: 0, Skipped: $((skipped + aborted)) -- in transport-rdma (real verbs)"
  echo "$passed passed, $failed failed"
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then return 1; fi
  return 0
}

rdma_resolve_mode
case "$MODE" in
  native|in-place)
    cd "$ROOT"
    run_in_place ;;
  guest)
    echo "rdma-tests: no RDMA device on this machine; running the suite in a Soft-RoCE guest" >&2
    mkdir -p "$MOD/target/rdma-test-reports"
    cd "$ROOT"
    # Under multi-threaded TCG the JVM sometimes crashes while patching compiled code that the other virtual CPU is
    # running (seen with C2); C1 alone has run clean. Only the emulated guest needs this.
    export FABRICRPC_RDMA_TEST_OPTS="-XX:TieredStopAtLevel=1 ${FABRICRPC_RDMA_TEST_OPTS:-}"
    exec "$ROOT/scripts/softroce/guest-run.sh" --rw "$MOD/target" -- "$ROOT/scripts/rdma-tests.sh" --in-place "${SELECTORS[@]}" ;;
esac
