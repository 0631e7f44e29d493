#!/usr/bin/env bash
# The MCTS case study over RDMA between two kernels: two Soft-RoCE QEMU guests linked by a QEMU socket network
# (as scripts/rdma-two-guests.sh), rank 0 of HexMcts in guest A (10.0.3.1, the coordinator) and rank 1 in guest B
# (10.0.3.2), 1 worker thread each, fabric.transport=rdma, once per aggregation; phases of 512·n rollouts (the
# emulated guests are slow: the default 4096·n would leave one phase, no steady rate). Prints each run's MCTS_RESULT line
# and appends it to benchmarks/target/mcts-rdma/results.txt, which the Figure 3 benchmark reads with
# --extra benchmarks/target/mcts-rdma/results.txt=2x1-rdma.
#
#   scripts/mcts-rdma-two-guests.sh [seconds [aggregations...]]    (defaults: 20 s, trad ovfl; about 1.5 min each)
#   MCTS_TRANSPORT=hybrid scripts/mcts-rdma-two-guests.sh ...      (hybrid: two guests are two hosts, the rdma path)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/benchmarks.sh
source "$root/scripts/lib/benchmarks.sh" # JDK, Maven, flags; (re)builds benchmarks/target/benchmarks.jar
seconds="${1:-20}"
shift || true
modes=("${@:-trad ovfl}")
[ $# -eq 0 ] && modes=(trad ovfl)
logs="$root/benchmarks/target/mcts-rdma"
mkdir -p "$logs"
secret_file=$(mktemp "$root/benchmarks/target/mcts-rdma-secret.XXXXXX")
trap 'rm -f "$secret_file"' EXIT
chmod 600 "$secret_file"
head -c 32 /dev/urandom | base64 > "$secret_file"

rank_command() { # rank address aggregation
  # Guest-local JVM: C1 alone, as in rdma-two-guests.sh (C2's tiers crash under TCG, scripts/rdma-tests.sh).
  echo env FABRICRPC_RANK="$1" FABRICRPC_SIZE=2 FABRICRPC_THREADS=1 FABRICRPC_COORDINATOR=10.0.3.1:7712 \
    FABRICRPC_BIND_HOST=10.0.3.1 FABRICRPC_ADVERTISED_HOST="$2" FABRICRPC_JOB_SECRET_FILE="$secret_file" \
    FABRICRPC_JOIN_TIMEOUT_MS=120000 FABRICRPC_FAILURE_TIMEOUT_MS=10000 \
    "$JAVA_HOME/bin/java" $flags -XX:TieredStopAtLevel=1 -Xmx1g -Dfabric.transport="${MCTS_TRANSPORT:-rdma}" -Drdma.bindAddress="$2" \
    -cp "$jar" io.fabricrpc.mcts.hex.HexMcts -p 2 -t 1 -s "$seconds" -a "$3" --phase 512 --timeout 120
}

status=0
for mode in "${modes[@]}"; do
  port=$((20000 + RANDOM % 20000))
  "$root/scripts/softroce/guest-run.sh" --timeout 900 --link "listen:$port" --link-ip 10.0.3.1 -- \
    bash -c "$(rank_command 0 10.0.3.1 "$mode")" > "$logs/$mode-rank0.log" 2>&1 & pid_a=$!
  sleep 2 # the listening guest's QEMU opens the socket first
  "$root/scripts/softroce/guest-run.sh" --timeout 900 --link "connect:$port" --link-ip 10.0.3.2 -- \
    bash -c "$(rank_command 1 10.0.3.2 "$mode")" > "$logs/$mode-rank1.log" 2>&1 & pid_b=$!
  rc_a=0 rc_b=0
  wait "$pid_a" || rc_a=$?
  wait "$pid_b" || rc_b=$?
  grep -v '^ *[0-9]* *[.BW ]*$' "$logs/$mode-rank0.log" | grep -E "searching|result|chosen|top 5|MCTS_" | sed "s/^/[$mode, rank 0] /" || true
  line=$(grep -m1 "^MCTS_RESULT" "$logs/$mode-rank0.log" || true)
  if [ -n "$line" ] && [ "$rc_a" -eq 0 ] && [ "$rc_b" -eq 0 ]; then
    echo "$line transport=${MCTS_TRANSPORT:-rdma}" >> "$logs/results.txt"
  else
    echo "mcts-rdma-two-guests: $mode: rank 0 exited $rc_a, rank 1 exited $rc_b (logs in $logs)" >&2
    status=1
  fi
done
exit $status
