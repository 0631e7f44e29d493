# Sourced by the benchmark scripts: JDK 25 and Maven (scripts/lib/env.sh), the JVM flags every fabricrpc JVM
# needs (from the root pom's fabricrpc.jvm.flags; with FABRICRPC_BENCH_JIT_FLAGS=1 also its optional
# fabricrpc.jit.flags, for comparisons), and benchmarks/target/benchmarks.jar, rebuilt when it is missing or older
# than any main source or pom. Sets: root, jar, flags.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=env.sh
source "$root/scripts/lib/env.sh"

pom_property() { # name
    sed -n "s:.*<$1>\\(.*\\)</$1>.*:\\1:p" "$root/pom.xml"
}
flags="$(pom_property fabricrpc.jvm.flags)"
if [[ -z "$flags" ]]; then
    echo "error: no <fabricrpc.jvm.flags> in $root/pom.xml" >&2
    exit 1
fi
if [[ "${FABRICRPC_BENCH_JIT_FLAGS:-0}" == 1 ]]; then
    # The CompileCommands contain '*': every user of $flags must keep the shell from globbing (set -f).
    set -f
    flags="$flags $(pom_property fabricrpc.jit.flags)"
fi

jar="$root/benchmarks/target/benchmarks.jar"
if [[ ! -f "$jar" ]] || [[ -n "$(find "$root" -newer "$jar" -type f \( -name 'pom.xml' -o -path '*/src/main/*' \) \
        -not -path '*/target/*' -not -path '*/transport-rdma/*' -print -quit)" ]]; then
    echo "building $jar ..." >&2
    # The scripts need the jar alone: no sources or javadoc jars of the library modules.
    (cd "$root" && mvn -B -q -ntp -Dstyle.color=never -pl benchmarks -am -DskipTests -Dmaven.source.skip=true \
        -Dmaven.javadoc.skip=true package)
fi

# Runs a benchmark main with the flags (plus FABRICRPC_BENCH_JVM_OPTS), writing to the default report unless the
# arguments name --output.
run_benchmark() { # main-class default-output args...
    local main="$1" default_output="$2"
    shift 2
    local output=(--output "$default_output")
    for arg in "$@"; do
        [[ "$arg" == --output || "$arg" == --output=* ]] && output=()
    done
    mkdir -p "$(dirname "$default_output")"
    # shellcheck disable=SC2086 # flags is a list of options
    exec java $flags ${FABRICRPC_BENCH_JVM_OPTS:-} -cp "$jar" "$main" "${output[@]}" "$@"
}
