#!/usr/bin/env bash
# Runs the Table 2 benchmark (io.fabricrpc.benchmarks.table2.Table2Benchmark) and writes
# benchmarks/results/table2-shm.md and table2-shm.png. Arguments go to the benchmark (try --help); e.g.
#   benchmarks/run-table2-bench.sh --rounds 7 --seconds 1 --columns write,raw --note "machine shared with builds"
# The default run (5 rounds x 3 columns x 3 sizes x 1 s, plus warm-up and drains) takes 1.5 to 2.5 minutes.
# Needs JDK 25+: $JAVA_HOME if it is 25 or newer, else /usr/lib/jvm/temurin-25-jdk-amd64.
# Rebuilds benchmarks/target/benchmarks.jar with Maven when it is missing or older than the sources.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

java_major() {
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p'
}

jdk=""
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] && (( $(java_major "$JAVA_HOME" || echo 0) >= 25 )); then
    jdk="$JAVA_HOME"
elif [[ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]]; then
    jdk=/usr/lib/jvm/temurin-25-jdk-amd64
else
    echo "error: no JDK 25+ found: JAVA_HOME='${JAVA_HOME:-}' is not 25+ and /usr/lib/jvm/temurin-25-jdk-amd64 is missing" >&2
    exit 1
fi

# The JVM flags every fabricrpc JVM needs (Agrona 2 on JDK 25), from the root pom's fabricrpc.jvm.flags.
flags="$(sed -n 's:.*<fabricrpc.jvm.flags>\(.*\)</fabricrpc.jvm.flags>.*:\1:p' "$root/pom.xml")"
if [[ -z "$flags" ]]; then
    echo "error: no <fabricrpc.jvm.flags> in $root/pom.xml" >&2
    exit 1
fi

jar="$here/target/benchmarks.jar"
sources=("$root/pom.xml" "$here/pom.xml" "$here/src/main")
for module in invocation transport-shm aggregation; do
    if [[ -d "$root/$module" ]]; then sources+=("$root/$module"); fi
done
if [[ ! -f "$jar" ]] || [[ -n "$(find "${sources[@]}" \
        -newer "$jar" -type f \( -name 'pom.xml' -o -path '*/src/main/*' \) -not -path '*/target/*' -print -quit)" ]]; then
    echo "building $jar ..." >&2
    (cd "$root" && JAVA_HOME="$jdk" PATH="$jdk/bin:$PATH" mvn -B -q -pl benchmarks -am -DskipTests package)
fi

output=(--output "$here/results/table2-shm.md")
for arg in "$@"; do
    [[ "$arg" == --output || "$arg" == --output=* ]] && output=()
done
mkdir -p "$here/results"
# shellcheck disable=SC2086 # flags is a list of options
exec "$jdk/bin/java" $flags -cp "$jar" io.fabricrpc.benchmarks.table2.Table2Benchmark "${output[@]}" "$@"
