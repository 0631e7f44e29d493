#!/usr/bin/env bash
# A/B of two builds: the checked-out tree against BASE (any git revision), run after run in alternation (base,
# current, base, current, ...).
# - table2 (default): the shared-memory Table 2, each run measuring its columns side by side. For every size it
#   reports, per pair, how the within-run ratio NUM/DEN (e.g. trad/write) moved from base to current, and the median
#   of those per-pair changes. Within-run ratios cancel most of the machine's swings; the alternation the rest. Then,
#   for every size and column, calls/s of current over base per pair and the median.
# - call-cost: the per-call CPU cost (run-call-cost-bench.sh). For every size and column it reports the call rate of
#   current over base (base ns per call / current ns per call, send and run together) per pair, and the median.
#
#   benchmarks/compare-builds.sh BASE [--bench table2|call-cost] [--pairs N] [--ratio NUM/DEN] [--output FILE]
#                                [-- BENCHMARK ARGUMENTS]
#   e.g. benchmarks/compare-builds.sh HEAD~1 --pairs 5 --ratio trad/write -- --rounds 5 --columns write,trad,raw
#        benchmarks/compare-builds.sh HEAD~1 --bench call-cost --pairs 20
#
# BASE is built in target/compare-builds/base (a git worktree, removed afterwards); reports stay in
# target/compare-builds/BENCH/ until the next comparison of that benchmark. The summary goes to stdout and, with
# --output, to FILE.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/lib/env.sh"

[[ $# -ge 1 ]] || { sed -n '2,16p' "$0" >&2; exit 2; }
base_rev="$1"; shift
pairs=5 ratio=trad/write output="" bench=table2
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bench) bench="$2"; shift 2 ;;
        --pairs) pairs="$2"; shift 2 ;;
        --ratio) ratio="$2"; shift 2 ;;
        --output) output="$2"; shift 2 ;;
        --) shift; break ;;
        *) echo "unknown option $1 (benchmark arguments go after --)" >&2; exit 2 ;;
    esac
done
case "$bench" in
    table2) runner=run-table2-bench.sh ;;
    call-cost) runner=run-call-cost-bench.sh ;;
    *) echo "--bench must be table2 or call-cost, got '$bench'" >&2; exit 2 ;;
esac
[[ "$ratio" == */* ]] || { echo "--ratio must be NUM/DEN column names, got '$ratio'" >&2; exit 2; }
base_sha="$(git -C "$root" rev-parse --verify "$base_rev^{commit}")"

work="$root/target/compare-builds"
reports="$work/$bench"
mkdir -p "$reports"
rm -f "$reports"/*.md "$reports"/*.png "$reports"/*.log
git -C "$root" worktree remove --force "$work/base" 2>/dev/null || rm -rf "$work/base"
git -C "$root" worktree add --detach "$work/base" "$base_sha" >/dev/null
trap 'git -C "$root" worktree remove --force "$work/base" 2>/dev/null || true' EXIT
echo "building base $base_sha and the current tree ..." >&2
(cd "$work/base" && mvn -B -q -ntp -Dstyle.color=never -pl benchmarks -am -DskipTests package)
(cd "$root" && mvn -B -q -ntp -Dstyle.color=never -pl benchmarks -am -DskipTests package)

for ((i = 1; i <= pairs; i++)); do
    for build in base current; do
        tree="$root"; [[ $build == base ]] && tree="$work/base"
        echo "pair $i: $build ..." >&2
        "$tree/benchmarks/$runner" --output "$reports/$build-$i.md" --note "compare-builds $build" "$@" \
            > "$reports/$build-$i.log" 2>&1 || { echo "run failed: $reports/$build-$i.log" >&2; exit 1; }
    done
done

python3 - "$reports" "$pairs" "$ratio" "$base_sha" "$bench" "$(git -C "$root" rev-parse HEAD)$(git -C "$root" diff --quiet HEAD || echo '+changes')" <<'PY' | tee ${output:+"$output"}
import re, statistics, sys
reports, pairs, ratio, base, bench, current = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
num, den = ratio.split("/")

def per_pair(b, c, digits=2):
    """Two table cells: current/base per pair, and their median."""
    changes = [y / x for x, y in zip(b, c)]
    return f"{' '.join(f'{v:.2f}' for v in changes)} | **{statistics.median(changes):.{digits}f}x**"

def costs(path):
    """(send, run, total) ns per call per size and column from a call-cost report's table."""
    lines = [l for l in open(path, encoding="utf-8").read().splitlines() if l.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[int(cells[0])] = {h: tuple(float(v) for v in cell.split(" / "))
                              for h, cell in zip(head[1:], cells[1:]) if h != "ratios"}
    return out

if bench == "call-cost":
    runs = {b: [costs(f"{reports}/{b}-{i}.md") for i in range(1, pairs + 1)] for b in ("base", "current")}
    print(f"# compare-builds: call cost of {current} against base {base[:12]}, {pairs} alternating pairs\n")
    print("ns per call, send / run, medians over the runs; the rate change is base total / current total per pair.\n")
    print("| size (B) | column | base send / run | current send / run | current/base rate per pair | median change |")
    print("|---:|---|---:|---:|---|---:|")
    for size in sorted(runs["base"][0]):
        for column in runs["base"][0][size]:
            med = lambda b, k: statistics.median(r[size][column][k] for r in runs[b])
            total = {b: [r[size][column][2] for r in runs[b]] for b in runs}  # the rate change: base ns / current ns
            print(f"| {size} | {column} | {med('base', 0):.1f} / {med('base', 1):.1f} | "
                  f"{med('current', 0):.1f} / {med('current', 1):.1f} | {per_pair(total['current'], total['base'], 3)} |")
    sys.exit(0)

def calls(path):
    """calls/s per size and column from a report's summary table."""
    text = open(path, encoding="utf-8").read().split("## Summary", 1)[1]
    lines = []
    for line in text.lstrip().splitlines():  # the summary table: the first run of table lines
        if not line.startswith("|"):
            break
        lines.append(line)
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[int(cells[0])] = {h[:-len(" calls/s")]: float(v.replace(",", ""))
                              for h, v in zip(head, cells) if h.endswith(" calls/s")}
    return out

runs = {b: [calls(f"{reports}/{b}-{i}.md") for i in range(1, pairs + 1)] for b in ("base", "current")}
print(f"# compare-builds: {ratio} of {current} against base {base[:12]}, {pairs} alternating pairs\n")
print(f"| size (B) | base {ratio} (median) | current {ratio} (median) | current/base per pair | median change |")
print("|---:|---:|---:|---|---:|")
for size in sorted(runs["base"][0]):
    b = [r[size][num] / r[size][den] for r in runs["base"]]
    c = [r[size][num] / r[size][den] for r in runs["current"]]
    print(f"| {size} | {statistics.median(b):.2f}x | {statistics.median(c):.2f}x | {per_pair(b, c)} |")

print(f"\ncalls/s of current over base, per pair and the median:\n")
print("| size (B) | column | base M calls/s per pair | current M calls/s per pair | current/base per pair | median |")
print("|---:|---|---|---|---|---:|")
for size in sorted(runs["base"][0]):
    for column in runs["base"][0][size]:
        b = [r[size][column] / 1e6 for r in runs["base"]]
        c = [r[size][column] / 1e6 for r in runs["current"]]
        print(f"| {size} | {column} | {' '.join(f'{v:.1f}' for v in b)} | {' '.join(f'{v:.1f}' for v in c)} | "
              f"{per_pair(b, c)} |")
PY
