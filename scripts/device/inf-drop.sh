#!/usr/bin/env bash
# Device run: the drop of points at infinity from an MSM's sorted digits (gpu.h
# CUZK_GPU_INF_DROP). Phases (each on unless set to 0):
#   TESTS  gpu_test --quick by default, with CUZK_GPU_INF_DROP=1, and with batch-affine at every
#          size in small chunks (the drop ahead of every accumulation path; TESTS=quick: the
#          default only); staged_test; tests/gpu/gpu_prove_test.sh (GPU proofs byte-identical to
#          the CPU's at r = s = 0).
#   BENCH  msm-knobs.sh over ONLY (default g1,g2) at 2^24 with a fifth of the points at infinity
#          (--inf-every 5), BENCH_KNOBS (default: the drop on, off), ROUNDS (1).
#   CURVES the dense 2^LOG proofs (ba-proof.sh without ncu) per curve (default bn128), each
#          with PROOF_KNOBS (default "default CUZK_GPU_INF_DROP=0"), REPEAT (3).
# Run from the repository root on the GPU machine after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/inf-drop.sh", carry
# ["build-device"]). Writes $OUT/inf-drop.txt and the scripts' own files.
set -u
O=${OUT:-/tmp/inf-drop-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk
{
dev_header
if [ "${TESTS:-1}" != 0 ]; then
  dev_gpu_test "$O/gpu_test.log"
  if [ "${TESTS:-1}" != quick ]; then
    dev_gpu_test "$O/gpu_test-drop1.log" CUZK_GPU_INF_DROP=1
    dev_gpu_test "$O/gpu_test-ba.log" CUZK_GPU_BATCH_AFFINE=2 CUZK_GPU_BA_CHUNK_BYTES=20000
  fi
  dev_staged_test "$O/staged.log"
  dev_prove_test "$O/gpu_prove_test.log"
fi
if [ "${BENCH:-1}" != 0 ]; then
  SKIP_TEST=1 ONLY=${ONLY:-g1,g2} ROUNDS=${ROUNDS:-1} \
    KNOBS=${BENCH_KNOBS:---inf-every=5 CUZK_GPU_INF_DROP=0,--inf-every=5} \
    bash scripts/device/msm-knobs.sh | grep -v "^=="
fi
for c in ${CURVES-bn128}; do
  NCU=0 CURVE=$c REPEAT=${REPEAT:-3} KNOBS=${PROOF_KNOBS:-default CUZK_GPU_INF_DROP=0} \
    bash scripts/device/ba-proof.sh | grep -v "^== end"
done
echo "== end $(date -u '+%T')"
} > "$O/inf-drop.txt" 2>&1
cat "$O/inf-drop.txt"
