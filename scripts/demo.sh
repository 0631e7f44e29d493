#!/usr/bin/env bash
# The main demo: two processes calling each other through the mailbox over shared memory (the default transport;
# pass -Dfabric.transport=... in JAVA_OPTS to choose another). Builds what it needs. Arguments: [seconds] [threads].
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh

if [ ! -f benchmarks/target/classpath.txt ] || [ -n "$(find invocation transport-shm benchmarks -name '*.java' -newer benchmarks/target/classpath.txt 2>/dev/null | head -1)" ]; then
  echo "building (first run or sources changed)..." >&2
  mvn -B -q -ntp -pl benchmarks -am install -DskipTests
  mvn -B -q -ntp -pl benchmarks dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
fi
exec java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
  --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED ${JAVA_OPTS:-} \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" io.fabricrpc.demo.MailboxDemo "$@"
