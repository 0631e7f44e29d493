#!/usr/bin/env bash
# Runs the histogram demo as a job of Open MPI: `mpirun -np P java ...` starts P JVMs, each of which reads its rank
# and the job size from OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE; the job secret comes from a file only this user
# can read. Checks that rank 0 verified every bin. A template to copy for your own program.
#
# Usage: scripts/mpirun-example.sh [processes (3)] [threads per process (2)] [values per worker (200000)]
# Exit status: 0 if the job verified its result, 77 if mpirun is not installed (Debian: apt-get install openmpi-bin),
# 1 otherwise. JAVA_OPTS adds JVM options (e.g. -Dfabric.transport=rdma); MPIRUN_OPTS adds mpirun options (e.g.
# --hostfile hosts; across nodes also set FABRICRPC_COORDINATOR to rank 0's host:port).
set -euo pipefail
processes=${1:-3}
threads=${2:-2}
values=${3:-200000}

if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpirun-example: skipped: mpirun not found (install Open MPI, e.g. apt-get install openmpi-bin)" >&2
  exit 77
fi
# Sets jar (the demo's shaded jar, built if missing or stale) and flags (the JVM flags from the root pom).
source "$(cd "$(dirname "$0")/.." && pwd)/scripts/lib/benchmarks.sh"

# The secret: 32 random bytes as hex, in a file created 0600 inside a 0700 directory. fabricrpc refuses a secret
# file that group or others can read. Across nodes, put it on a file system every node sees (e.g. your home).
secret_dir=$(mktemp -d "${TMPDIR:-/tmp}/fabricrpc-mpirun.XXXXXX")
trap 'rm -rf "$secret_dir"' EXIT
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$secret_dir/job.secret")

mpirun_opts=()
# Open MPI refuses to start as root without this; the demo runs no MPI code, so nothing else changes.
[ "$(id -u)" -eq 0 ] && mpirun_opts+=(--allow-run-as-root)
# More ranks than cores (e.g. 3 on a 2-core machine) is fine for a demo; Open MPI refuses it by default.
mpirun_opts+=(--oversubscribe)
# -x exports a variable to every rank (needed on remote nodes; on this node the ranks inherit it anyway).
export FABRICRPC_JOB_SECRET_FILE="$secret_dir/job.secret"
export FABRICRPC_THREADS="$threads"
mpirun_opts+=(-x FABRICRPC_JOB_SECRET_FILE -x FABRICRPC_THREADS)

log="$secret_dir/output.txt"
echo "mpirun-example: mpirun -np $processes java ... io.fabricrpc.demo.HistogramDemo ($threads threads per process)"
status=0
# shellcheck disable=SC2086 # flags, JAVA_OPTS and MPIRUN_OPTS are lists of options
timeout 600 mpirun "${mpirun_opts[@]}" ${MPIRUN_OPTS:-} -np "$processes" \
  java $flags ${JAVA_OPTS:-} -Xmx512m -cp "$jar" io.fabricrpc.demo.HistogramDemo "$processes" "$threads" "$values" \
  2>&1 | tee "$log" || status=$?

if [ "$status" -eq 0 ] && grep -q "every bin matches - OK" "$log"; then
  echo "mpirun-example: OK: $processes ranks x $threads threads joined under mpirun and verified every bin"
  exit 0
fi
echo "mpirun-example: FAILED (mpirun exit status $status, no verified result)" >&2
exit 1
