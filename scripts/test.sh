#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: builds every module, runs the unit, stress and cross-process tests
# over shared memory, checks the mailbox and messenger models with Spin, and runs the RDMA suite on real verbs (natively, or in a
# Soft-RoCE guest when this machine has no RDMA device), then a job across two Soft-RoCE guests (two kernels, RDMA
# between them: scripts/rdma-two-guests.sh). Installs what it needs. Exit status 0 only if all passed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/env.sh

status=0
step() { echo; echo "=== $*"; }

if [ -x scripts/install-rdma-build-deps.sh ]; then
  step "RDMA build dependencies"
  scripts/install-rdma-build-deps.sh
fi

step "Maven build and tests (JDK: $JAVA_HOME)"
mvn -B -ntp -Dstyle.color=never install || status=1
# Totals over every module's Surefire reports, as one plain line.
python3 - <<'PY' | tee target-test-summary.txt || true
import glob, re
t = f = s = 0
for report in glob.glob("*/target/surefire-reports/TEST-*.xml"):
    head = open(report, encoding="utf-8", errors="replace").read(2000)
    m = re.search(r'<testsuite[^>]*', head)
    if not m:
        continue
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(0)))
    t += int(attrs.get("tests", 0)); s += int(attrs.get("skipped", 0))
    f += int(attrs.get("failures", 0)) + int(attrs.get("errors", 0))
print(f"host: {t - f - s} passed, {f} failed, {s} skipped")
PY

if [ -x scripts/example-project.sh ] && [ $status -eq 0 ]; then
  step "Example project: examples/hello built from the deployed artifacts alone, 3 processes (scripts/example-project.sh)"
  if scripts/example-project.sh; then
    echo "example project: 1 passed, 0 failed" | tee -a target-test-summary.txt
  else
    echo "example project: 0 passed, 1 failed" | tee -a target-test-summary.txt
    status=1
  fi
fi

if [ -x scripts/mpirun-example.sh ] && [ $status -eq 0 ]; then
  step "Launchers: mpirun -np 3 and srun -n 3 of the histogram demo over shared memory (scripts/*-example.sh)"
  scripts/install-openmpi.sh || true
  scripts/install-slurm.sh || true
  for launcher in mpirun slurm; do
    launcher_rc=0; "scripts/$launcher-example.sh" || launcher_rc=$?
    case $launcher_rc in
      0) launcher_line="1 passed, 0 failed ($launcher example)" ;;
      77) launcher_line="$launcher example skipped: it could not run here (see its message above)" ;;
      *) launcher_line="0 passed, 1 failed ($launcher example)"; status=1 ;;
    esac
    echo "$launcher_line" | tee -a target-test-summary.txt
  done
fi

if [ -x scripts/model-check.sh ]; then
  step "Spin model check of the mailbox and messenger protocols"
  scripts/model-check.sh || status=1
fi

if [ -x scripts/rdma-tests.sh ] && [ $status -eq 0 ]; then
  step "RDMA suite on real verbs, cross-process suites included"
  # Everything in transport-rdma, the multi-jvm suites too (about 10 more minutes in the emulated guest).
  FABRICRPC_SOFTROCE_TIMEOUT=${FABRICRPC_SOFTROCE_TIMEOUT:-2400} \
    scripts/rdma-tests.sh --select-package io.fabricrpc.transport.rdma | tee -a target-test-summary.txt || status=1
fi

if [ -x scripts/rdma-two-guests.sh ] && [ $status -eq 0 ]; then
  step "Two Soft-RoCE guests, two kernels, RDMA between them: histogram demo, stress and ovfl stress (exactly once, FIFO), killed peer"
  if scripts/rdma-two-guests.sh 20000; then
    echo "two guests: 1 passed, 0 failed" | tee -a target-test-summary.txt
  else
    echo "two guests: 0 passed, 1 failed" | tee -a target-test-summary.txt
    status=1
  fi
fi

echo
if [ $status -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "TESTS FAILED"; fi
# The closing line: totals over the host suite and the RDMA suite (a failed step with no count adds one failure).
awk -v failed_step=$status '/^(host: |two guests: |example project: )?[0-9]+ passed, [0-9]+ failed/ {
       for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { if (failed_step && f == 0) f = 1; printf "total: %d passed, %d failed\n", p, f }' target-test-summary.txt
rm -f target-test-summary.txt
exit $status
