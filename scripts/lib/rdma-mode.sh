# Sourced (without arguments) by the scripts that run Java against real verbs: natively when `ibv_devices` lists a
# device, otherwise in the Soft-RoCE guest. Sets ROOT, MOD (transport-rdma), JAVA_HOME and MODE (native, guest or
# in-place, the latter meaning "already inside the guest"), consuming a leading --native/--guest/--in-place of the
# caller's arguments; defines the helpers below.
ROOT=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
MOD="$ROOT/transport-rdma"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export JAVA_HOME
MODE=auto
case "${1:-}" in
  --native) MODE=native; shift ;;
  --guest) MODE=guest; shift ;;
  --in-place) MODE=in-place; shift ;;
esac

rdma_has_device() { command -v ibv_devices >/dev/null && [ "$(ibv_devices 2>/dev/null | awk 'NR>2 && NF' | wc -l)" -gt 0 ]; }

# auto -> native or guest
rdma_resolve_mode() {
  if [ "$MODE" = auto ]; then
    if rdma_has_device; then MODE=native; else MODE=guest; fi
  fi
}

# The test classpath of transport-rdma as built by `mvn install`.
rdma_test_classpath() {
  echo "$MOD/target/test-classes:$MOD/target/classes:$(cat "$MOD/target/rdma-test-classpath.txt")"
}

# The project's JVM flags (Agrona and DiSNI on JDK 25), from the root pom like every other launcher.
rdma_jvm_flags() {
  sed -n 's:.*<fabricrpc.jvm.flags>\(.*\)</fabricrpc.jvm.flags>.*:\1:p' "$ROOT/pom.xml"
}
