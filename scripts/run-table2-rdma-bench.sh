#!/usr/bin/env bash
# Seriema's Table 2 over real RDMA verbs (issue 6): the send/write/trad/ovfl columns between two rank JVMs with
# fabric.transport=rdma, the max-raw column (one RDMA WRITE per message), and in the same rounds perftest's
# ib_write_bw (8/64/256/4096 B) and DaRPC (RPC baseline, two more JVMs), all in ONE Soft-RoCE guest run
# (scripts/softroce/guest-run.sh), or natively when `ibv_devices` lists a device.
#
#   scripts/run-table2-rdma-bench.sh [--native|--guest] [--rounds N] [--seconds S] [--note TEXT] [benchmark options...]
#
# Defaults: 5 rounds x 1 s per column and size (slices of 0.25 s), warm-up 2 s, DaRPC 1 s per size, threads not
# pinned; about 6-8 minutes including the guest boot. JIT: C2 alone in the emulated guest (FABRICRPC_GUEST_JIT=c1:
# C1 alone, as the guest test suite runs). Other options go to Table2Benchmark (try --help through
# `java -cp benchmarks/target/benchmarks.jar io.fabricrpc.benchmarks.table2.Table2Benchmark --help`).
# Builds benchmarks/target/benchmarks.jar (with transport-rdma) when missing or stale. With --columns naming ucx
# (UCX active messages over rc_verbs/ud_verbs), installs OpenUCX on the host first (scripts/install-ucx.sh), which
# the guest sees through the host's root file system; UCX_* variables of the caller reach the guest's ranks.
# Writes benchmarks/results/table2-rdma-<UTC date>.md and .png (the chart). Exit: the benchmark's (0 ran, targets
# met or not: see the report); 2 bad arguments; 124/125 guest failures.
set -euo pipefail
# shellcheck source=lib/rdma-mode.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rdma-mode.sh" # MODE from a leading --native/--guest/--in-place
root="$ROOT"

if [ "$MODE" != in-place ]; then
  # shellcheck source=lib/env.sh
  source "$root/scripts/lib/env.sh"
  jar="$root/benchmarks/target/benchmarks.jar"
  if [[ ! -f "$jar" ]] || [[ -n "$(find "$root" -newer "$jar" -type f \( -name 'pom.xml' -o -path '*/src/main/*' \) \
          -not -path '*/target/*' -print -quit)" ]]; then
    echo "building $jar ..." >&2
    (cd "$root" && mvn -B -q -ntp -Dstyle.color=never -pl benchmarks -am -DskipTests package)
  fi
fi

rdma_resolve_mode
if [ "$MODE" != in-place ]; then
  # shellcheck source=lib/ucx.sh
  source "$root/scripts/lib/ucx.sh"
  table2_install_ucx_if_selected "$@"
fi

case "$MODE" in
  guest)
    mkdir -p "$root/benchmarks/results"
    cd "$root"
    # The guest sees only its own load: the host's, which decides how much CPU the emulation gets, goes in the report.
    export FABRICRPC_HOST_LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "host load average (1, 5, 15 min) before the guest run: $FABRICRPC_HOST_LOAD_BEFORE" >&2
    started=$(mktemp)
    rc=0
    "$root/scripts/softroce/guest-run.sh" --rw "$root/benchmarks/results" --timeout "${FABRICRPC_TABLE2_TIMEOUT:-900}" \
      -- "$root/scripts/run-table2-rdma-bench.sh" --in-place "$@" || rc=$?
    after="$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "host load average (1, 5, 15 min) after the guest run: $after" >&2
    # Only a report this run wrote (an --output outside benchmarks/results leaves none here to annotate).
    report=$(find "$root/benchmarks/results" -maxdepth 1 -name '*.md' -newer "$started" -printf '%T@ %p\n' 2>/dev/null \
      | sort -rn | head -1 | cut -d' ' -f2-)
    rm -f "$started"
    if [ "$rc" -eq 0 ] && [ -n "$report" ]; then
      printf '\nHost load average (1, 5, 15 min) after the guest run: %s (written by the script on the host).\n' "$after" >> "$report"
    fi
    exit "$rc" ;;
  native|in-place)
    ulimit -l unlimited 2>/dev/null || true
    command -v ib_write_bw >/dev/null || { echo "run-table2-rdma-bench: perftest is not installed (apt-get install perftest)" >&2; exit 2; }
    dev=$(ibv_devices | awk 'NR>2 && NF {print $1; exit}')
    # The IPv4 address of the network device behind the RDMA device (rxe0 -> eth0 in the guest).
    netdev=$(rdma link show "$dev/1" 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
    addr=$(ip -4 -o addr show dev "${netdev:-eth0}" | awk '{split($4, a, "/"); print a[1]; exit}')
    [ -n "$addr" ] || { echo "run-table2-rdma-bench: no IPv4 address on ${netdev:-eth0} (device $dev)" >&2; exit 2; }
    flags="$(rdma_jvm_flags)"
    extra=()
    if [ "$MODE" = in-place ]; then
      # Under multi-threaded TCG a JVM has crashed in code that was being patched while the other vCPU ran it (C1's
      # patching stubs, tier changes). The test suite runs C1 alone (scripts/rdma-tests.sh); the benchmark runs C2
      # alone, without tiers (C1 would halve the Java columns and compare them with C programs unfairly).
      # FABRICRPC_GUEST_JIT=c1 falls back to C1 alone.
      if [ "${FABRICRPC_GUEST_JIT:-c2}" = c1 ]; then extra+=(-XX:TieredStopAtLevel=1); else extra+=(-XX:-TieredCompilation); fi
    fi
    opts=(--transport rdma --device "$dev" --bind-address "$addr" --rounds 5 --seconds 1 --slice 0.25 --warmup 2
          --pin none --timeout-ms 60000 --perftest-iterations 10000)
    for o in "${extra[@]}"; do opts+=(--rank-jvm-option="$o"); done
    echo "table2-rdma: device $dev on ${netdev:-?} $addr, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    if [ -n "${FABRICRPC_HOST_LOAD_BEFORE:-}" ]; then
      opts+=(--context "host (the machine running the emulated guest) load average (1, 5, 15 min) before the guest run: $FABRICRPC_HOST_LOAD_BEFORE")
    fi
    cd "$root"
    # shellcheck disable=SC2086 # flags is a list of options
    exec "$JAVA_HOME/bin/java" $flags "${extra[@]}" -Xmx512m -cp "$root/benchmarks/target/benchmarks.jar" \
      io.fabricrpc.benchmarks.table2.Table2Benchmark "${opts[@]}" "$@" ;;
esac
