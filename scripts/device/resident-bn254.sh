#!/usr/bin/env bash
# Device run: the GPU tests of the whole tree (gpu_test quick, gpu_prove_test, staged_test when
# packed, gpu_daemon_test with the key residency tiers on the real device), then 2^24 dense with
# the key resident (scripts/device/e2e24-resident.sh, no key-cache part; CURVES, default BN254
# only: CURVES=bls12381 or "bn128 bls12381"). Run from the repository
# root on the GPU machine after scripts/device-pack here, with build-device carried.
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
O=${OUT:-/tmp/cuzk-res-out}
mkdir -p "$O"
t0=$(date +%s)
CUZK_GPU_TEST_QUICK=1 timeout 150 $CUZK_BIN_DIR/gpu_test > $O/gpu_test.log 2>&1
echo "gpu_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/gpu_test.log)"
t0=$(date +%s)
timeout 150 tests/gpu/gpu_prove_test.sh > $O/prove.log 2>&1
echo "gpu_prove_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/prove.log)"
if [ -x $CUZK_BIN_DIR/staged_test ]; then
  t0=$(date +%s)
  timeout 100 $CUZK_BIN_DIR/staged_test > $O/staged.log 2>&1
  echo "staged_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/staged.log)"
fi
t0=$(date +%s)
timeout 150 tests/gpu/gpu_daemon_test.sh > $O/daemon.log 2>&1
echo "gpu_daemon_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/daemon.log)"
if [ -n "${BENCH:-}" ]; then
  # The MSM rows with scalars from pinned memory (they bypass the upload staging): BENCH="--only g1 --logs 24"
  timeout 120 $CUZK_BIN_DIR/cuzk-bench-gpu --reps 3 --scalars random $BENCH 2>&1 | grep -E "^\|" | tail -6
fi
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
CURVES=${CURVES:-bn128} REPEAT=${REPEAT:-5} CACHE=0 SYNTHS=${SYNTHS:-gpu} bash scripts/device/e2e24-resident.sh
