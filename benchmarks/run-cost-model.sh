#!/usr/bin/env bash
# The verbs cost model of a call (io.fabricrpc.benchmarks.table2.CostModelBenchmark): per call of write/trad/ovfl at
# 8/64/256 B, the sender's post calls (doorbells), work requests, signaled completions, bytes and CPU, and the
# receiver's CPU and posts, from two rank JVMs over the `counted` transport; then calls/s projected onto NIC message
# rates beside Seriema's Table 2.
#   benchmarks/run-cost-model.sh [options...]          shm without windows (RDMA's staged path at native speed);
#                                                      writes benchmarks/results/verbs-cost-model-shm.md (~2 min)
#   benchmarks/run-cost-model.sh --guest [options...]  real verbs in one Soft-RoCE guest run (scripts/softroce/);
#                                                      writes benchmarks/results/verbs-cost-model-rxe.md
# Options go to the benchmark (--rounds, --batches, --calls, --warmup, --note; try --help).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in
  --guest)
    shift
    source "$here/scripts/lib/benchmarks.sh" # builds the jar on the host: the guest's root is read-only
    exec "$here/scripts/softroce/guest-run.sh" --rw "$here/benchmarks/results" --timeout "${FABRICRPC_COST_TIMEOUT:-1800}" \
      -- "$here/benchmarks/run-cost-model.sh" --in-guest "$@" ;;
  --in-guest)
    shift
    ulimit -l unlimited 2>/dev/null || true
    dev=$(ibv_devices | awk 'NR>2 && NF {print $1; exit}')
    netdev=$(rdma link show "$dev/1" 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
    addr=$(ip -4 -o addr show dev "${netdev:-eth0}" | awk '{split($4, a, "/"); print a[1]; exit}')
    # C2 alone, as the guest Table 2 runs (tier changes under multi-threaded TCG have crashed JVMs).
    export FABRICRPC_BENCH_JVM_OPTS="${FABRICRPC_BENCH_JVM_OPTS:-} -XX:-TieredCompilation"
    set -- --inner rdma --bind-address "$addr" --rounds 3 --batches 3 --calls 2000 --warmup 5 \
      --output "$here/benchmarks/results/verbs-cost-model-rxe.md" "$@" ;;
esac
source "$here/scripts/lib/benchmarks.sh"
run_benchmark io.fabricrpc.benchmarks.table2.CostModelBenchmark "$root/benchmarks/results/verbs-cost-model-shm.md" "$@"
