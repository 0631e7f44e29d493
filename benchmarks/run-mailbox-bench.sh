#!/usr/bin/env bash
# Runs the mailbox round-trip benchmark (io.fabricrpc.benchmarks.MailboxRttBenchmark) and writes
# benchmarks/results/mailbox-rtt.md. Arguments go to the benchmark (try --help); e.g.
#   benchmarks/run-mailbox-bench.sh --rounds 7 --seconds 2 --note "machine shared with builds"
# Finds JDK 25 like the README commands (scripts/lib/env.sh).
# Rebuilds benchmarks/target/benchmarks.jar with Maven when it is missing or older than the sources.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
run_benchmark io.fabricrpc.benchmarks.MailboxRttBenchmark "$root/benchmarks/results/mailbox-rtt.md" "$@"
