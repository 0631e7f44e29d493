#!/usr/bin/env bash
# The main demo: a distributed histogram kept by 3 processes x 2 threads calling each other with call, callBuffer,
# callReturn and broadcast, over shared memory by default (JAVA_OPTS="-Dfabric.transport=..." picks another).
# Builds what it needs. Arguments: [processes] [threads] [values per worker]; "mailbox [seconds] [threads]" runs the
# two-process mailbox demo instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh

jar=benchmarks/target/benchmarks.jar
if [ ! -f "$jar" ] || [ -n "$(find invocation transport-shm benchmarks pom.xml -newer "$jar" \( -name '*.java' -o -name 'pom.xml' \) 2>/dev/null | head -1)" ]; then
  echo "building (first run or sources changed)..." >&2
  mvn -B -q -ntp -Dstyle.color=never -pl benchmarks -am package -DskipTests
fi
main=io.fabricrpc.demo.HistogramDemo
if [ "${1:-}" = "mailbox" ]; then
  main=io.fabricrpc.demo.MailboxDemo
  shift
fi
exec java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
  --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED ${JAVA_OPTS:-} -cp "$jar" "$main" "$@"
