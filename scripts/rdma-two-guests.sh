#!/usr/bin/env bash
# A job across two Soft-RoCE guests: two kernels, each with its own rxe device (rxe1), linked by a QEMU socket
# network, so the RDMA traffic leaves one kernel and enters the other, as between two hosts. Runs the histogram demo
# (io.fabricrpc.demo.HistogramDemo: call, callBuffer, callReturn, verified totals) with fabric.transport=rdma,
# rank 0 in guest A (10.0.3.1, the coordinator) and rank 1 in guest B (10.0.3.2), 2 worker threads each. Then the
# cross-process stress scenario (FabricScenarioMain stress: every worker calls every worker, each receiver checks
# per-sender order and counts: exactly once, FIFO), and the same through OVERFLOW aggregators on rings of 2 chunks
# of 4 KiB (AggregationScenarioMain ovfl). Then a
# peer is killed across the guests: rank 1's JVM is SIGKILLed while rank 0 waits on two callReturns it runs and a
# third thread of rank 0 is blocked sending to it (FabricScenarioMain killed-peer, as in FabricCrossProcessTest);
# all three must fail with PeerFailedException, timed on the host from the kill request to rank 0's report.
#
#   scripts/rdma-two-guests.sh [values-per-worker [calls-per-pair]]   (defaults 20000 and 2000: about four minutes
#                                                                       on 2 cores)
#
# The README test command (scripts/test.sh) runs it last. Exit: 0 when both scenarios pass; a rank's non-zero status
# (124/125: guest timeout or failure, see guest-run.sh) or 1 for a failed check.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/benchmarks.sh
source "$root/scripts/lib/benchmarks.sh" # JDK, Maven, flags; (re)builds benchmarks/target/benchmarks.jar
values="${1:-20000}"
stress="${2:-2000}"
[[ "$values$stress" =~ ^[0-9]+$ ]] || { echo "rdma-two-guests: arguments must be numbers, got $values $stress" >&2; exit 2; }
secret_file=$(mktemp "$root/benchmarks/target/two-guests-secret.XXXXXX")
trap 'rm -f "$secret_file"' EXIT
chmod 600 "$secret_file"
head -c 32 /dev/urandom | base64 > "$secret_file"
logs="$root/benchmarks/target/two-guests"
mkdir -p "$logs"

rank_command() { # rank address main-class args...
  local rank=$1 address=$2
  shift 2
  # Guest-local JVM: C1 alone (scripts/rdma-tests.sh explains the TCG crash with C2's tiers). The invocation and
  # aggregation test classes carry the scenario mains.
  echo env FABRICRPC_RANK="$rank" FABRICRPC_SIZE=2 FABRICRPC_THREADS=2 FABRICRPC_COORDINATOR=10.0.3.1:7711 \
    FABRICRPC_BIND_HOST=10.0.3.1 FABRICRPC_ADVERTISED_HOST="$address" FABRICRPC_JOB_SECRET_FILE="$secret_file" \
    FABRICRPC_JOIN_TIMEOUT_MS=120000 FABRICRPC_FAILURE_TIMEOUT_MS=10000 \
    "$JAVA_HOME/bin/java" $flags -XX:TieredStopAtLevel=1 -Xmx512m -Dfabric.transport=rdma \
    -Drdma.bindAddress="$address" \
    -cp "$jar:$root/invocation/target/test-classes:$root/aggregation/target/test-classes" "$@"
}

run_pair() { # name command-0 command-1 [guest-run options of guest 1...]
  local name=$1 cmd0=$2 cmd1=$3 port=$((20000 + RANDOM % 20000))
  shift 3
  "$root/scripts/softroce/guest-run.sh" --timeout 900 --link "listen:$port" --link-ip 10.0.3.1 -- \
    bash -c "$cmd0" > "$logs/$name-rank0.log" 2>&1 & pid_a=$!
  sleep 2 # the listening guest's QEMU opens the socket first
  "$root/scripts/softroce/guest-run.sh" --timeout 900 --link "connect:$port" --link-ip 10.0.3.2 "$@" -- \
    bash -c "$cmd1" > "$logs/$name-rank1.log" 2>&1 & pid_b=$!
}

finish_pair() { # name; sets rc_a rc_b
  rc_a=0 rc_b=0
  wait "$pid_a" || rc_a=$?
  wait "$pid_b" || rc_b=$?
  for r in 0 1; do sed "s/^/[$1, guest $r] /" "$logs/$1-rank$r.log"; done
  echo "rdma-two-guests: $1: rank 0 exited $rc_a, rank 1 exited $rc_b (logs in $logs)" >&2
}

await_line() { # file pattern seconds
  local deadline=$(( $(date +%s) + $3 ))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

echo "rdma-two-guests: histogram demo, rank 0 at 10.0.3.1, rank 1 at 10.0.3.2, $values values per worker" >&2
run_pair histogram "$(rank_command 0 10.0.3.1 io.fabricrpc.demo.HistogramDemo 2 2 "$values")" \
  "$(rank_command 1 10.0.3.2 io.fabricrpc.demo.HistogramDemo 2 2 "$values")"
finish_pair histogram
[ "$rc_a" -eq 0 ] || exit "$rc_a"
[ "$rc_b" -eq 0 ] || exit "$rc_b"

stress_pair() { # name expected-line-prefix main-class scenario
  local name=$1 ok=$2 main=$3 scenario=$4 r
  run_pair "$name" "$(rank_command 0 10.0.3.1 "$main" "$scenario" "$stress")" \
    "$(rank_command 1 10.0.3.2 "$main" "$scenario" "$stress")"
  finish_pair "$name"
  for r in 0 1; do
    grep -qx "$ok rank=$r received=$((stress * 4 * 2))" "$logs/$name-rank$r.log" \
      || { echo "rdma-two-guests: $name: rank $r did not receive $((stress * 4 * 2)) calls in order" >&2; exit 1; }
  done
  [ "$rc_a" -eq 0 ] || exit "$rc_a"
  [ "$rc_b" -eq 0 ] || exit "$rc_b"
}

echo "rdma-two-guests: stress: every worker sends $stress calls to every worker, per-sender order checked" >&2
stress_pair stress STRESS_OK io.fabricrpc.invocation.FabricScenarioMain stress
echo "rdma-two-guests: ovfl: the same through OVERFLOW aggregators on rings of 2 chunks of 4 KiB" >&2
stress_pair ovfl AGG_OK io.fabricrpc.aggregation.AggregationScenarioMain ovfl

echo "rdma-two-guests: killed peer: rank 1's JVM is killed while rank 0 waits on it" >&2
ctl=$(mktemp -d "$root/benchmarks/target/two-guests-ctl.XXXXXX") # shared read-write with guest 1: the kill request
trap 'rm -f "$secret_file"; rm -rf "$ctl"' EXIT
victim="$(rank_command 1 10.0.3.2 io.fabricrpc.invocation.FabricScenarioMain killed-peer)"
run_pair killed-peer "$(rank_command 0 10.0.3.1 io.fabricrpc.invocation.FabricScenarioMain killed-peer)" \
  "$victim & pid=\$!; until [ -f $ctl/kill ]; do kill -0 \$pid || exit 3; sleep 0.05; done; kill -9 \$pid; echo KILLED; wait \$pid; exit 0" \
  --rw "$ctl"
failed=""
if await_line "$logs/killed-peer-rank0.log" SENDER_BLOCKED 600; then
  t0=$(date +%s%N)
  touch "$ctl/kill"
  if await_line "$logs/killed-peer-rank0.log" "^FAILED" 60; then
    t1=$(date +%s%N)
    failed=$(grep -m1 "^FAILED" "$logs/killed-peer-rank0.log")
  fi
fi
finish_pair killed-peer
if [ -z "$failed" ]; then
  echo "rdma-two-guests: killed peer: rank 0 never reported (SENDER_BLOCKED, then FAILED)" >&2; exit 1
fi
ms=$(( (t1 - t0) / 1000000 ))
echo "rdma-two-guests: killed peer: rank 0's pending calls failed $ms ms after the kill request (host clock,"\
  "incl. the guests' 9p polling): $failed" >&2
case "$failed" in
  *async=PeerFailedException*blocking=PeerFailedException*sender=PeerFailedException*) ;;
  *) echo "rdma-two-guests: killed peer: not every pending call failed with PeerFailedException" >&2; exit 1 ;;
esac
[ "$ms" -lt 3000 ] || { echo "rdma-two-guests: killed peer: detected after $ms ms (bound 3000)" >&2; exit 1; }
[ "$rc_a" -eq 0 ] || exit "$rc_a"
exit "$rc_b"
