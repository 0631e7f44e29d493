#!/usr/bin/env bash
# Fabric.callReturn round trip between two JVMs over RDMA (fabric.transport=rdma), side by side with perftest's
# ib_send_lat and ib_write_lat on the same device, rounds interleaved, in ONE Soft-RoCE guest run
# (scripts/softroce/guest-run.sh) or natively when `ibv_devices` lists a device.
#
#   benchmarks/run-callreturn-rtt-rxe.sh [--native|--guest] [rounds (3)]
#
# Prerequisite: `mvn install` (benchmarks/target/benchmarks.jar with transport-rdma). Writes the raw outputs to
# benchmarks/results/callreturn-rtt-rxe-raw/<jit>-* (perftest's output, MailboxRttBenchmark's reports), prints them;
# the summary (p50/p99 and ratios) is written by hand from them. Under TCG absolute figures mean little: compare
# ratios taken in the same run.
set -euo pipefail
# shellcheck source=../scripts/lib/rdma-mode.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/rdma-mode.sh"
root="$ROOT"
rounds=${1:-3}
out="$root/benchmarks/results/callreturn-rtt-rxe-raw"
jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || { echo "callreturn-rtt-rxe: $jar missing: run mvn install first" >&2; exit 2; }
rdma_resolve_mode

case "$MODE" in
  guest)
    mkdir -p "$out"
    cd "$root"
    FABRICRPC_GUEST_JIT=${FABRICRPC_GUEST_JIT:-c1} exec "$root/scripts/softroce/guest-run.sh" \
      --rw "$root/benchmarks/results" --timeout 1500 \
      -- "$root/benchmarks/run-callreturn-rtt-rxe.sh" --in-place "$rounds" ;;
  native|in-place)
    ulimit -l unlimited 2>/dev/null || true
    command -v ib_send_lat >/dev/null || { echo "callreturn-rtt-rxe: perftest is not installed" >&2; exit 2; }
    dev=$(ibv_devices | awk 'NR>2 && NF {print $1; exit}')
    netdev=$(rdma link show "$dev/1" 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
    addr=$(ip -4 -o addr show dev "${netdev:-eth0}" | awk '{split($4, a, "/"); print a[1]; exit}')
    mkdir -p "$out"
    echo "callreturn-rtt-rxe: device $dev on ${netdev:-?} $addr, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
    flags="$(rdma_jvm_flags)"
    # In the guest one JIT alone (tier changes have crashed JVMs under TCG): C1 by default, as the test suite runs;
    # C2 alone (FABRICRPC_GUEST_JIT=c2) leaves callReturn interpreted for the whole run at TCG's call rates.
    jit_name=${FABRICRPC_GUEST_JIT:-c1}
    if [ "$MODE" != in-place ]; then jit=(); jit_name=tiered
    elif [ "$jit_name" = c2 ]; then jit=(-XX:-TieredCompilation)
    else jit=(-XX:TieredStopAtLevel=1); fi
    perftest() { # tool port: one server and one client on the device, 16-byte messages
      local tool=$1 port=$2 common
      common=("$tool" -d "$dev" -x 1 -F -s 16 -n 5000 -p "$port")
      "${common[@]}" >/dev/null 2>&1 &
      local server=$! attempt
      for attempt in $(seq 40); do
        sleep 0.3
        if "${common[@]}" "$addr" > "$out/$jit_name-$tool-$port.txt" 2>&1; then break; fi
      done
      wait "$server" || true
      awk -v t="$tool" '$1 == "16" && $2 ~ /^[0-9]+$/ {print t, $0}' "$out/$jit_name-$tool-$port.txt"
    }
    for round in $(seq "$rounds"); do
      perftest ib_send_lat $((18500 + 2 * round))
      perftest ib_write_lat $((18501 + 2 * round))
      # shellcheck disable=SC2086 # flags is a list of options
      "${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java" $flags "${jit[@]}" -Xmx512m -Dfabric.transport=rdma -Drdma.bindAddress="$addr" \
        -Drdma.connectTimeoutMillis=30000 -cp "$jar" io.fabricrpc.benchmarks.MailboxRttBenchmark \
        --mode cross --mailbox-client callreturn --idle busy --pin none --rounds 2 --seconds 3 --warmup 10 \
        --output "$out/$jit_name-callreturn-round$round.md" \
        --note "over $dev (fabric.transport=rdma), JIT $jit_name, round $round of $rounds" \
        | grep -E "round [0-9]+:" || true
    done ;;
esac
