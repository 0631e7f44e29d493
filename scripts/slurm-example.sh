#!/usr/bin/env bash
# Runs the histogram demo as a Slurm job step, `srun -n TASKS -c THREADS java ...`, on a throwaway one-node Slurm
# cluster that this script starts on the loopback interface and stops again: munged with a fresh key and private
# socket, slurmctld and slurmd (Debian's slurm-wlm) with a configuration in a temporary directory. Each task reads
# its rank, the job size and its thread count from SLURM_PROCID / SLURM_NTASKS / SLURM_CPUS_PER_TASK and rank 0's
# host from SLURM_STEP_NODELIST; the job secret comes from a 0600 file. Checks that rank 0 verified every bin.
# On a real cluster only the srun line below is needed (plus the secret file on a shared file system).
#
# Usage: scripts/slurm-example.sh [tasks (3)] [threads per task (2)] [values per worker (100000)]
# Exit status: 0 if the job verified its result; 77 if it cannot run here (not root, or slurm-wlm/munge missing:
# apt-get install slurm-wlm); 1 otherwise. Needs root: slurmd starts the tasks.
set -euo pipefail
tasks=${1:-3}
threads=${2:-2}
values=${3:-100000}

skip() { echo "slurm-example: skipped: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to run slurmd (the daemons of the throwaway cluster)"
for tool in slurmctld slurmd srun sinfo squeue munged python3; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (install Slurm and munge, e.g. apt-get install slurm-wlm)"
done
# Sets jar (the demo's shaded jar, built if missing or stale) and flags (the JVM flags from the root pom).
source "$(cd "$(dirname "$0")/.." && pwd)/scripts/lib/benchmarks.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/fabricrpc-slurm.XXXXXX")
pids=()
cleanup() {
  # Only the daemons this script started, by pid.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# munge authenticates Slurm's messages: a fresh key and a private socket, so nothing else can talk to this cluster.
(umask 077 && head -c 1024 /dev/urandom > "$dir/munge.key")
munged -F --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/munged.log" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" > "$dir/munged.out" 2>&1 &
pids+=($!)

# Two free loopback ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); s.close()
print(*ports)')
node=$(hostname -s)
# The tasks find rank 0 by the node's name (the first host of SLURM_STEP_NODELIST), so it must resolve.
getent hosts "$node" >/dev/null || skip "this host's name '$node' does not resolve (add it to /etc/hosts)"
# One node with room for every task's CPUs (oversubscribed on purpose: this is a functional test).
cpus=$((tasks * threads))
mkdir -p "$dir/state" "$dir/spool"
cat > "$dir/slurm.conf" <<EOF
ClusterName=fabricrpc-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=fabricrpc Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -D -i > "$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D > "$dir/slurmd.out" 2>&1 &
pids+=($!)

# Wait (bounded) until the node is up and idle.
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
if [ "$state" != idle ]; then
  echo "slurm-example: FAILED: the throwaway cluster did not come up (node state '${state:-none}'); logs:" >&2
  tail -n 20 "$dir"/*.out "$dir"/*.log >&2 || true
  exit 1
fi

(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/job.secret")
export FABRICRPC_JOB_SECRET_FILE="$dir/job.secret"
unset FABRICRPC_THREADS
echo "slurm-example: srun -n $tasks -c $threads java ... io.fabricrpc.demo.HistogramDemo"
status=0
# srun exports the whole environment (the secret file's name included); -c gives each task its thread count.
# shellcheck disable=SC2086 # flags and JAVA_OPTS are lists of options
timeout 600 srun -n "$tasks" -c "$threads" \
  java $flags ${JAVA_OPTS:-} -Xmx512m -cp "$jar" io.fabricrpc.demo.HistogramDemo "$tasks" "$threads" "$values" \
  2>&1 | tee "$dir/output.txt" || status=$?

# Let the step's slurmstepd report to slurmd and exit before the daemons are stopped (it outlives slurmd otherwise).
for _ in $(seq 40); do
  [ -z "$(squeue -h 2>/dev/null)" ] && [ -z "$(find "$dir/spool" -type s 2>/dev/null)" ] && break
  sleep 0.5
done

if [ "$status" -eq 0 ] && grep -q "every bin matches - OK" "$dir/output.txt"; then
  echo "slurm-example: OK: $tasks tasks x $threads threads joined under srun and verified every bin"
  exit 0
fi
echo "slurm-example: FAILED (srun exit status $status, no verified result)" >&2
exit 1
