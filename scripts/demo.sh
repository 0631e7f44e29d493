#!/usr/bin/env bash
# The main demo: a distributed histogram kept by 3 processes x 2 threads calling each other with call, callBuffer,
# callReturn and broadcast, over shared memory by default (JAVA_OPTS="-Dfabric.transport=..." picks another).
# Builds what it needs. Arguments: [processes] [threads] [values per worker]; "mailbox [seconds] [threads]" runs the
# two-process mailbox demo instead.
set -euo pipefail
source "$(cd "$(dirname "$0")/.." && pwd)/scripts/lib/benchmarks.sh"

main=io.fabricrpc.demo.HistogramDemo
if [ "${1:-}" = "mailbox" ]; then
  main=io.fabricrpc.demo.MailboxDemo
  shift
fi
# shellcheck disable=SC2086 # flags and JAVA_OPTS are lists of options
exec java $flags ${JAVA_OPTS:-} -cp "$jar" "$main" "$@"
