#!/usr/bin/env bash
# Fabric.callReturn round trip between two processes over shared memory (a two-process job: rank 0 here, rank 1's
# worker in a child JVM), interleaved round by round with Agrona's OneToOneRingBuffer ping-pong between the same two
# kinds of JVM; p50/p99 from HdrHistogram per round. Writes benchmarks/results/callreturn-rtt.md. Arguments go to
# MailboxRttBenchmark (try --help); e.g. a 20-second smoke:
#   benchmarks/run-callreturn-bench.sh --rounds 2 --seconds 2 --warmup 2 --idle backoff
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/lib/benchmarks.sh"
run_benchmark io.fabricrpc.benchmarks.MailboxRttBenchmark "$root/benchmarks/results/callreturn-rtt.md" \
    --mode cross --mailbox-client callreturn "$@"
