#!/usr/bin/env bash
# A job across two Soft-RoCE guests: two kernels, each with its own rxe device (rxe1), linked by a QEMU socket
# network, so the RDMA traffic leaves one kernel and enters the other, as between two hosts. Runs the histogram demo
# (io.fabricrpc.demo.HistogramDemo: call, callBuffer, callReturn, verified totals) with fabric.transport=rdma,
# rank 0 in guest A (10.0.3.1, the coordinator) and rank 1 in guest B (10.0.3.2), 2 worker threads each.
#
#   scripts/rdma-two-guests.sh [values-per-worker]        (default 20000: about a minute on 2 cores)
#
# The README test command (scripts/test.sh) runs it last, with 20000 values per worker (about a minute). Exit: 0 when
# both ranks exit 0, else the first non-zero status (124/125: guest timeout or failure, see guest-run.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/benchmarks.sh
source "$root/scripts/lib/benchmarks.sh" # JDK, Maven, flags; (re)builds benchmarks/target/benchmarks.jar
values="${1:-20000}"
[[ "$values" =~ ^[0-9]+$ ]] || { echo "rdma-two-guests: values per worker must be a number, got $values" >&2; exit 2; }
port=$((20000 + RANDOM % 20000))
secret_file=$(mktemp "$root/benchmarks/target/two-guests-secret.XXXXXX")
trap 'rm -f "$secret_file"' EXIT
chmod 600 "$secret_file"
head -c 32 /dev/urandom | base64 > "$secret_file"
logs="$root/benchmarks/target/two-guests"
mkdir -p "$logs"

rank_command() { # rank address
  # Guest-local JVM: C1 alone (scripts/rdma-tests.sh explains the TCG crash with C2's tiers).
  echo env FABRICRPC_RANK="$1" FABRICRPC_SIZE=2 FABRICRPC_THREADS=2 FABRICRPC_COORDINATOR=10.0.3.1:7711 \
    FABRICRPC_BIND_HOST=10.0.3.1 FABRICRPC_ADVERTISED_HOST="$2" FABRICRPC_JOB_SECRET_FILE="$secret_file" \
    FABRICRPC_JOIN_TIMEOUT_MS=120000 FABRICRPC_FAILURE_TIMEOUT_MS=10000 \
    "$JAVA_HOME/bin/java" $flags -XX:TieredStopAtLevel=1 -Xmx512m -Dfabric.transport=rdma -Drdma.bindAddress="$2" \
    -cp "$jar" io.fabricrpc.demo.HistogramDemo 2 2 "$values"
}

echo "rdma-two-guests: link on 127.0.0.1:$port; rank 0 at 10.0.3.1, rank 1 at 10.0.3.2; $values values per worker" >&2
rc_a=0 rc_b=0
"$root/scripts/softroce/guest-run.sh" --timeout 900 --link "listen:$port" --link-ip 10.0.3.1 -- \
  bash -c "$(rank_command 0 10.0.3.1)" > "$logs/rank0.log" 2>&1 & pid_a=$!
sleep 2 # the listening guest's QEMU opens the socket first
"$root/scripts/softroce/guest-run.sh" --timeout 900 --link "connect:$port" --link-ip 10.0.3.2 -- \
  bash -c "$(rank_command 1 10.0.3.2)" > "$logs/rank1.log" 2>&1 & pid_b=$!
wait "$pid_a" || rc_a=$?
wait "$pid_b" || rc_b=$?
for r in 0 1; do sed "s/^/[guest $r] /" "$logs/rank$r.log"; done
echo "rdma-two-guests: rank 0 exited $rc_a, rank 1 exited $rc_b (logs in $logs)" >&2
[ "$rc_a" -ne 0 ] && exit "$rc_a"
exit "$rc_b"
