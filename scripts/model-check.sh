#!/usr/bin/env bash
# Exhaustively model-checks the mailbox protocol, the messenger's publication protocol and the
# drain of waiting calls (model/*.pml) with Spin.
#
# Usage: scripts/model-check.sh [--full]
#   --full  also runs the largest configurations (4-17M states each, ~+125s CPU)
#   MODEL_CHECK_JOBS  parallel pan runs (default 2)
# Installs spin and gcc with apt-get when missing. Works in a temporary directory (kept,
# with its trails, only when a check fails). Prints one line per check; exits non-zero
# when any model has an error, when any search is incomplete (depth or memory limit), or
# when a negative check (*-NEG: a known-bad ordering) does NOT find its violation.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
models="$repo/model"
memlim_mb=2048   # pan stops (and this script fails) rather than exhaust the machine
maxdepth=200000  # well above the deepest search (~1.5k steps, 2x that under -DNP); reaching it fails the check

die() { echo "model-check: $*" >&2; exit 2; }

ensure_tools() {
	local missing=() sudo=()
	command -v spin >/dev/null 2>&1 || missing+=(spin)
	command -v gcc >/dev/null 2>&1 || missing+=(gcc)
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "model-check: installing ${missing[*]} with apt-get" >&2
	if ! { ${sudo[@]+"${sudo[@]}"} apt-get update -qq >/dev/null &&
		${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
		die "could not install ${missing[*]} (need root or sudo, and apt access)"
	fi
	if ! command -v spin >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
		die "spin or gcc still not on PATH after installing ${missing[*]}"
	fi
}

full=0
case "${1:-}" in
	"") ;;
	--full) full=1 ;;
	*) die "usage: $0 [--full]" ;;
esac
jobs=${MODEL_CHECK_JOBS:-2}

ensure_tools
work=$(mktemp -d "${TMPDIR:-/tmp}/model-check.XXXXXX")
keep=0
cleanup() { if [ "$keep" -eq 0 ]; then rm -rf "$work"; else echo "model-check: work files kept in $work" >&2; fi; }
trap cleanup EXIT

started=$(date +%s.%N)
echo "$(spin -V | head -1); pan limits: -DMEMLIM=${memlim_mb} -m${maxdepth}"

# check NAME MODEL EXPECT SPIN_DEFINES CC_FLAGS PAN_FLAGS
#   EXPECT: pass (no error, exhaustive) or violation (must report an error).
#   Writes its one-line verdict to $work/NAME/result (first word ok or FAIL).
check() {
	local name=$1 model=$2 expect=$3 defs=$4 ccflags=$5 panflags=$6
	local dir="$work/$name" out TIMEFORMAT='%R %U %S'   # for bash's time: wall, user, sys
	mkdir -p "$dir"
	cp "$models/$model" "$dir/"
	exec >"$dir/result"
	# shellcheck disable=SC2086 # flag lists are split on purpose
	if ! (cd "$dir" && spin $defs -a "$model" >spin.log 2>&1 \
		&& gcc -w -DMEMLIM=$memlim_mb $ccflags -o pan pan.c >cc.log 2>&1); then
		printf 'FAIL  %-27s could not generate/compile the verifier:\n' "$name"
		cat "$dir/spin.log" "$dir/cc.log" 2>/dev/null | head -20
		return
	fi
	# shellcheck disable=SC2086
	# pan's exit status says nothing useful: the verdict is parsed from its report below
	{ time (cd "$dir" || exit; ./pan -m$maxdepth $panflags >pan.log 2>&1; true); } 2>"$dir/time"
	out="$dir/pan.log"

	local errors states transitions depth secs incomplete=""
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$out" | tail -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | tail -1)
	transitions=$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$out" | tail -1)
	depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | tail -1)
	secs=$(awk '{ printf "%.1fs (cpu %.1fs)", $1, $2 + $3 }' "$dir/time")   # pan only, not the compile
	grep -q "max search depth too small" "$out" && incomplete="depth limit ${maxdepth} reached"
	grep -q "reached -DMEMLIM bound" "$out" && incomplete="memory limit ${memlim_mb} MB reached"
	[ -n "$errors" ] || incomplete="${incomplete:-pan gave no result}"
	local stats="states=${states:-?} transitions=${transitions:-?} depth=${depth:-?} ${secs}"

	if [ "$expect" = pass ]; then
		# "Search not completed" is printed only when pan stops early (error or a limit)
		if [ -z "$incomplete" ] && [ "$errors" = 0 ] && ! grep -q "Search not completed" "$out"; then
			printf 'ok    %-27s %s\n' "$name" "$stats"
		else
			printf 'FAIL  %-27s errors=%s %s %s\n' "$name" "${errors:-?}" "${incomplete:+(incomplete: $incomplete)}" "$stats"
			{ grep -E "^pan:|error:" "$out" | grep -v "elapsed time\|rate " | head -5 | sed 's/^/      /'; } || true
			if ls "$dir"/*.trail >/dev/null 2>&1; then
				echo "      replay the counterexample: cd $dir && spin -t -p $defs $model"
			fi
		fi
	else
		if [ -n "$errors" ] && [ "$errors" -gt 0 ]; then
			printf 'ok    %-27s violation found, as expected: %s, %s\n' "$name" \
				"$(grep -E "assertion violated|invalid end state" "$out" | head -1 | sed 's/^pan:1: //')" "$secs"
		else
			printf 'FAIL  %-27s expected a violation, found none (%s): the check has lost its teeth\n' "$name" "$stats"
		fi
	fi
}

# Checks run $jobs at a time; verdicts are printed in the order below.
names=()
run() {
	names+=("$1")
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	check "$@" &
}

safety="-DSAFETY -DCOLLAPSE"
big="-O2 $safety"     # multi-million-state searches: optimise pan
small="-O1 $safety"   # sub-million-state searches
tiny="-O0 $safety"    # up to a few million states: compile time is everything

# One port, one client thread, one server thread, calls forever (SYNC/ASYNC/streamed).
run single-safety        mailbox_single.pml pass "" "$tiny" "-w18"
run single-progress      mailbox_single.pml pass "" "-O0 -DNP" "-l -w18"
# N ports, client and server threads with per-port locks, bounded calls per client thread.
# STREAM=1: SYNC, ASYNC, streamed SYNC calls; STREAM=2: also streamed calls ending ASYNC.
run ports-2p2c2s-x2      mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=2 -DSTREAM=1" "$big" "-w23"
run ports-2p2c2s-x1      mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2" "$small" "-w19"
run ports-3p2c2s-x1      mailbox_ports.pml pass "-DNPORTS=3 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2" "$small" "-w20"
run ports-2p3c2s-x1-sync mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=3 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=0" "$small" "-w21"
run ports-emptybit       mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DEMPTY_BIT" "$small" "-w20"
run ports-ltl-all-finish mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DLIVENESS" "-O1 -DNFAIR=3" "-a -f -w20"
# The same checks with the fused atomic steps split (validates the reduction, see SPLIT).
run single-unfused       mailbox_single.pml pass "-DUNFUSED" "$tiny" "-w18"
run ports-3p2c2s-x1-unfused mailbox_ports.pml pass "-DNPORTS=3 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DUNFUSED" "$small" "-w21"
# The fabric's callReturn: ASYNC replies collected by the next holder or a Collector thread, server defer.
run ports-fabric-2p2c2s-x1 mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DFABRIC=1" "$small" "-w20"
run ports-fabric-ltl       mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DFABRIC=1 -DLIVENESS" "-O1 -DNFAIR=4" "-a -f -w20"
# Calls that end without their reply (CANCEL): an ASYNC future cancelled or expired, a SYNC wait timed
# out; the port keeps its token until the late reply is collected and dropped. 2c1s: the fabric's one
# worker per channel; 2c2s (STREAM=1 for size) and 1c2s-x2 (one thread's later call) add servers.
run ports-fabric-cancel-2p2c1s-x1 mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=1 -DNCALLS=1 -DSTREAM=2 -DFABRIC=1 -DCANCEL=1" "$small" "-w20"
run ports-fabric-cancel-2p2c2s-x1 mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=1 -DFABRIC=1 -DCANCEL=1" "$small" "-w21"
run ports-fabric-cancel-2p1c2s-x2 mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=1 -DNSERVERS=2 -DNCALLS=2 -DSTREAM=2 -DFABRIC=1 -DCANCEL=1" "$small" "-w20"
run ports-fabric-cancel-ltl       mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=1 -DNCALLS=1 -DSTREAM=2 -DFABRIC=1 -DCANCEL=1 -DLIVENESS" "-O1 -DNFAIR=4" "-a -f -w20"
if [ "$full" -eq 1 ]; then
	run ports-2p2c2s-x2-stream2 mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=2 -DSTREAM=2" "$big" "-w24"
	run ports-2p3c2s-x1      mailbox_ports.pml pass "-DNPORTS=2 -DNCLIENTS=3 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2" "$big" "-w24"
	run ports-3p3c2s-x1-sync mailbox_ports.pml pass "-DNPORTS=3 -DNCLIENTS=3 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=0" "$big" "-w24"
fi
# Two workers calling each other, each serving the other's call (streaming its reply) in its own wait.
# FRAGS: fragments of each result; REQFRAGS: of each call (request).
run nested-f2            mailbox_nested.pml pass "-DFRAGS=2" "$tiny" "-w18"
run nested-f4            mailbox_nested.pml pass "-DFRAGS=4" "$tiny" "-w18"
run nested-req3-f1       mailbox_nested.pml pass "-DREQFRAGS=3 -DFRAGS=1" "$tiny" "-w18"
run nested-req3-f3       mailbox_nested.pml pass "-DREQFRAGS=3 -DFRAGS=3" "$tiny" "-w18"
# Negative checks: packet and flag writes of a send may land in either order.
run single-reorder-NEG   mailbox_single.pml violation "-DREORDER" "$tiny" "-w18"
run ports-reorder-NEG    mailbox_ports.pml violation "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DREORDER" "$small" "-w20"
run ports-fabric-reorder-NEG mailbox_ports.pml violation "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=2 -DNCALLS=1 -DSTREAM=2 -DFABRIC=1 -DREORDER" "$small" "-w20"
# Negative check: a cancel frees the port at once (token cleared, packet taken back) before the late
# reply lands: the next call reads the cancelled call's reply. Without the wires' ghost landing checks
# and SYNC timeouts, so the harm shows at the reader (with them it fails earlier, on a landing check).
run ports-fabric-cancel-frees-NEG mailbox_ports.pml violation "-DNPORTS=2 -DNCLIENTS=2 -DNSERVERS=1 -DNCALLS=1 -DSTREAM=2 -DFABRIC=1 -DCANCEL=1 -DCANCEL_FREES -DNO_LAND_CHECK -DNO_TIMEOUT" "$tiny" "-w20"
# Negative check: a nested wait that does not advance the receive below it (the old ordering) stalls.
run nested-noadvance-NEG mailbox_nested.pml violation "-DFRAGS=3 -DNOADVANCE" "$tiny" "-w18"
run nested-req-noadvance-NEG mailbox_nested.pml violation "-DREQFRAGS=3 -DFRAGS=1 -DNOADVANCE" "$tiny" "-w18"

# Messenger around a single transmit position claimed by CAS (the rewrite): the owner, the
# background agent claiming what the owner left pending, the receiver. Mapped window: records
# framed in the window (first header held) or in staging (copied), direct sends, seal and reuse.
run transmit-window-1c2s-x4 messenger_transmit_window.pml pass "-DNCH=1 -DCAP=2 -DNREC=4" "$tiny" "-w20"
run transmit-window-1c3s-x5 messenger_transmit_window.pml pass "-DNCH=1 -DCAP=3 -DNREC=5" "$tiny" "-w21"
run transmit-window-2c2s-x5 messenger_transmit_window.pml pass "-DNCH=2 -DCAP=2 -DNREC=5" "$small" "-w22"
run transmit-window-1c2s-x4-np messenger_transmit_window.pml pass "-DNCH=1 -DCAP=2 -DNREC=4" "-O0 -DNP -DCOLLAPSE" "-l -w21"
# Staged (RDMA): deferred flags, FOLLOWS, append-only calls, the agent's flag and range writes;
# WRITEs placed byte by byte, in post order.
run transmit-staged-1c2s-x3 messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=2 -DNREC=3" "$small" "-w22"
run transmit-staged-1c1s-x3 messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=1 -DNREC=3" "$small" "-w22"
run transmit-staged-2c1s-x2 messenger_transmit_staged.pml pass "-DNCH=2 -DCAP=1 -DNREC=2" "$small" "-w21"
run transmit-staged-1c2s-x3-nodefer messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=2 -DNREC=3 -DDEFER=0" "$small" "-w21"
run transmit-staged-1c2s-x3-agentfollows messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=2 -DNREC=3 -DAGENT_FOLLOWS" "$small" "-w22"
run transmit-staged-1c1s-x2-np messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=1 -DNREC=2" "-O0 -DNP -DCOLLAPSE" "-l -w21"
if [ "$full" -eq 1 ]; then
	run transmit-window-2c2s-x6 messenger_transmit_window.pml pass "-DNCH=2 -DCAP=2 -DNREC=6" "$big" "-w24"
	run transmit-staged-1c2s-x3-flush messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=2 -DNREC=3 -DMIDFLUSH=1" "$big" "-w23"
	run transmit-staged-2c1s-x3 messenger_transmit_staged.pml pass "-DNCH=2 -DCAP=1 -DNREC=3" "$big" "-w23"
	run transmit-staged-1c3s-x3 messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=3 -DNREC=3" "$big" "-w25"
	run transmit-staged-1c2s-x4 messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=2 -DNREC=4" "$big" "-w25"
	run transmit-staged-1c2s-x3-np messenger_transmit_staged.pml pass "-DNCH=1 -DCAP=2 -DNREC=3" "-O2 -DNP -DCOLLAPSE" "-l -w23"
fi
# Negative checks, run without the ghost checks on T and on posting (NO_GHOST): each must show
# its harm to the receiver (a record lost, run twice, out of order, before its bytes landed, a
# torn header, a late write into a reused chunk). The last two staged ones pin the two defects of
# the protocol as first specified (model/README.md, findings).
run transmit-window-plain-store-NEG messenger_transmit_window.pml violation "-DNCH=1 -DCAP=2 -DNREC=4 -DNO_GHOST -DPLAIN_STORE" "$tiny" "-w18"
run transmit-window-release-before-post-NEG messenger_transmit_window.pml violation "-DNCH=1 -DCAP=2 -DNREC=4 -DNO_GHOST -DRELEASE_EARLY" "$tiny" "-w18"
run transmit-window-agent-no-cas-NEG messenger_transmit_window.pml violation "-DNCH=1 -DCAP=2 -DNREC=4 -DNO_GHOST -DAGENT_NO_CAS" "$tiny" "-w18"
run transmit-window-order-NEG messenger_transmit_window.pml violation "-DNCH=1 -DCAP=2 -DNREC=4 -DNO_GHOST -DA_BEFORE_T" "$tiny" "-w18"
run transmit-staged-plain-store-NEG messenger_transmit_staged.pml violation "-DNCH=1 -DCAP=2 -DNREC=3 -DNO_GHOST -DPLAIN_STORE" "$tiny" "-w18"
run transmit-staged-release-before-post-NEG messenger_transmit_staged.pml violation "-DNCH=1 -DCAP=2 -DNREC=3 -DNO_GHOST -DRELEASE_EARLY" "$tiny" "-w18"
run transmit-staged-agent-no-cas-NEG messenger_transmit_staged.pml violation "-DNCH=1 -DCAP=2 -DNREC=3 -DNO_GHOST -DAGENT_NO_CAS" "$tiny" "-w18"
run transmit-staged-no-await-NEG messenger_transmit_staged.pml violation "-DNCH=2 -DCAP=1 -DNREC=2 -DNO_GHOST -DNO_AWAIT" "$tiny" "-w18"
run transmit-staged-onewrite-NEG messenger_transmit_staged.pml violation "-DNCH=1 -DCAP=2 -DNREC=3 -DNO_GHOST -DONE_WRITE" "$tiny" "-w18"
run transmit-staged-stale-a-off-NEG messenger_transmit_staged.pml violation "-DNCH=1 -DCAP=2 -DNREC=3 -DNO_GHOST -DSTALE_A_OFF" "$tiny" "-w20"
run transmit-staged-owner-ticket-NEG messenger_transmit_staged.pml violation "-DNCH=2 -DCAP=1 -DNREC=2 -DNO_GHOST -DOWNER_TICKET_ONLY" "$tiny" "-w20"
run transmit-staged-seq-after-seal-NEG messenger_transmit_staged.pml violation "-DNCH=1 -DCAP=1 -DNREC=2 -DSEQ_AFTER_SEAL" "$tiny" "-w20"
# Waiting calls (RETRY_ASYNC queue, ovfl exceeding calls) drained by the sender or the agent
# under a drain claim: FIFO, exactly once, one writer of the messenger at a time, no deadlock.
run drain-claim-r1-x3     waiting_calls_drain.pml pass "-DRING=1 -DNREC=3" "$tiny" "-w18"
run drain-claim-r1-x5     waiting_calls_drain.pml pass "-DRING=1 -DNREC=5" "$tiny" "-w19"
run drain-claim-r2-x4     waiting_calls_drain.pml pass "-DRING=2 -DNREC=4" "$tiny" "-w19"
run drain-claim-clear-early-NEG waiting_calls_drain.pml violation "-DCLEAR_EARLY" "$tiny" "-w18"
run drain-claim-no-drain-first-NEG waiting_calls_drain.pml violation "-DNO_DRAIN_FIRST" "$tiny" "-w18"
run drain-claim-agent-no-claim-NEG waiting_calls_drain.pml violation "-DAGENT_NO_CLAIM" "$tiny" "-w18"
wait

failures=0
for n in "${names[@]}"; do
	if [ -s "$work/$n/result" ]; then cat "$work/$n/result"; else echo "FAIL  $n: no verdict"; fi
	head -1 "$work/$n/result" 2>/dev/null | grep -q '^ok ' || failures=$((failures + 1))
done
[ "$failures" -eq 0 ] || keep=1

total=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if [ "$failures" -gt 0 ]; then
	echo "model-check: FAILED ($failures check(s)) in ${total}s" >&2
	exit 1
fi
echo "model-check: all checks passed in ${total}s"
