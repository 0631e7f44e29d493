#!/usr/bin/env bash
# Proves the published artifacts suffice for a user's project: deploys the library modules and the BOM into a fresh
# file repository, builds examples/hello (which imports only the BOM) with a fresh local Maven repository fed by that
# directory and Maven Central alone, and runs the README's Hello as a 3-process job three ways: java with the
# deployed invocation jar's @argfile through LocalLauncher, scripts/fabricrpc run, and three scripts/fabricrpc exec
# ranks started by hand. Exit status 0 if every job printed the three expected lines.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source scripts/lib/env.sh

work="$(mktemp -d "${TMPDIR:-/tmp}/fabricrpc-example.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mvn_quiet=(-B -q -ntp -Dstyle.color=never)

echo "deploying the library artifacts into $work/repo ..."
mvn "${mvn_quiet[@]}" -DskipTests -DaltDeploymentRepository="local::file://$work/repo" \
    -pl bom,invocation,transport-shm,transport-rdma,aggregation -am deploy

cat > "$work/settings.xml" <<EOF
<settings>
  <profiles><profile><id>deployed</id>
    <repositories><repository><id>deployed</id><url>file://$work/repo</url>
      <releases><enabled>true</enabled></releases><snapshots><enabled>true</enabled></snapshots></repository></repositories>
  </profile></profiles>
  <activeProfiles><activeProfile>deployed</activeProfile></activeProfiles>
</settings>
EOF
echo "building examples/hello with a fresh local repository (the deployed directory and Maven Central) ..."
rm -rf examples/hello/target
# MAVEN_OPTS may name the developer's local repository: the example build must not see it.
MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow" mvn "${mvn_quiet[@]}" -s "$work/settings.xml" \
    -Dmaven.repo.local="$work/m2" -f examples/hello/pom.xml \
    compile dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$work/cp.txt"
cp="$root/examples/hello/target/classes:$(cat "$work/cp.txt")"
case ":$cp:" in
    *"$root/invocation"*|*"$root/transport-"*|*"$root/aggregation"*)
        echo "error: the example's class path reaches into the source tree: $cp" >&2; exit 1 ;;
esac
invocation_jar="$(tr ':' '\n' < "$work/cp.txt" | grep '/invocation-[^/]*\.jar$' | head -1)"
(cd "$work" && jar xf "$invocation_jar" META-INF/fabricrpc.jvmargs)

failed=0
check() { # name output-file prefix-format
    local name="$1" out="$2" fmt="$3" r line
    for r in 0 1 2; do
        # shellcheck disable=SC2059 # the format is ours
        line="$(printf "$fmt" "$r")rank $r asked rank $(((r + 1) % 3)): $((r * 100 + (r + 1) % 3))"
        if ! grep -qxF "$line" "$out"; then
            echo "FAILED ($name): no line '$line'; output:" >&2
            sed 's/^/    /' "$out" >&2
            failed=1
            return
        fi
    done
    echo "ok ($name): the three lines"
}

echo "running Hello: java @fabricrpc.jvmargs (from the deployed jar) ... LocalLauncher -n 3"
timeout 150 java "@$work/META-INF/fabricrpc.jvmargs" -cp "$cp" io.fabricrpc.fabric.LocalLauncher -n 3 \
    --timeout 120 Hello > "$work/launcher.out" 2>&1 || true
check "java @argfile LocalLauncher" "$work/launcher.out" '[rank %d] '

echo "running Hello: scripts/fabricrpc run -n 3"
timeout 150 scripts/fabricrpc run -n 3 --timeout 120 -cp "$cp" Hello > "$work/run.out" 2>&1 || true
check "scripts/fabricrpc run" "$work/run.out" '[rank %d] '

echo "running Hello: three scripts/fabricrpc exec ranks by hand"
(umask 077; head -c 32 /dev/urandom | base64 > "$work/secret")
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
pids=()
for r in 0 1 2; do
    FABRICRPC_RANK=$r FABRICRPC_SIZE=3 FABRICRPC_COORDINATOR="127.0.0.1:$port" \
        FABRICRPC_JOB_SECRET_FILE="$work/secret" \
        timeout 120 scripts/fabricrpc exec -cp "$cp" Hello > "$work/exec-$r.out" 2>&1 &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
cat "$work"/exec-*.out > "$work/exec.out"
check "scripts/fabricrpc exec" "$work/exec.out" ''

exit $failed
