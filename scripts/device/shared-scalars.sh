#!/usr/bin/env bash
# Device run: the GPU MSMs of a proof sharing the witness's upload and sort (A, B1, B2 and C's
# suffix; CUZK_GPU_SCALARS_SAME). Run from the repository root on the GPU machine after
# scripts/device-pack here, with build-device carried (device tool: run
# "bash scripts/device/shared-scalars.sh", carry ["build-device"]).
#  1. gpu_test (with the shared-scalar checks against the CPU MSM) and gpu_prove_test (GPU
#     proofs byte-identical to CPU proofs with r = s = 0, every fixture of both curves).
#  2. The resident-key latency at 2^24 dense, both curves (scripts/device/e2e24-resident.sh
#     without its key-cache part).
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
O=${OUT:-/tmp/cuzk-shared-out}
mkdir -p "$O"
t0=$(date +%s)
CUZK_GPU_TEST_QUICK=1 timeout 150 $CUZK_BIN_DIR/gpu_test > $O/gpu_test.log 2>&1
echo "gpu_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/gpu_test.log)"
grep -E "shared|MISMATCH" $O/gpu_test.log | head
t0=$(date +%s)
timeout 150 tests/gpu/gpu_prove_test.sh > $O/prove.log 2>&1
echo "gpu_prove_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/prove.log)"
CACHE=0 bash scripts/device/e2e24-resident.sh
