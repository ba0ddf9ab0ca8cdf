#!/usr/bin/env bash
# Device run: the batch-affine bucket accumulation (gpu_impl.cuh, k_ba_pass_a / k_ba_pass_b)
# against the XYZZ-only one (k_accum1), same binary, switched by CUZK_GPU_BATCH_AFFINE.
#  1. gpu_test --quick with batch-affine forced at every size (CUZK_GPU_BATCH_AFFINE=2: every
#     MSM case incl. the edge cases goes through it), again with chunks of 20000 bytes of
#     prefixes (many chunks, each with its inversion), then the full gpu_test by size (default).
#  2. cuzk-bench-gpu MSM rows (G1 and G2, both curves, LOGS) with it off (0) and on (1),
#     interleaved per curve and group so that drift hits both alike.
#  3. Where build-device/pack-extra/cuzk-bench-gpu-* exist (variants built with other
#     compile-time settings), the same rows with each, batch-affine on.
#  4. PROOF=1: the 2^24 dense proof of each curve in CURVES (e2e24-resident.sh with BA_MODES:
#     key resident after the first of --repeat 4) with batch-affine off (0), on for G1 too (1)
#     and "auto" (the default: G2 only), or the CUZK_GPU_BATCH_AFFINE values in MODES; the
#     last proof of each curve is kept for snarkjs. (In the 19:36 UTC run "auto" was read as 1.)
# Run from the repository root on the GPU machine after scripts/device-pack here, with
# build-device carried. Env: LOGS (default 16,20,22,24), REPS (3), TESTS (1), ONLY (g1,g2),
# BENCH (1), PROOF (0), CURVES ("bn128 bls12381").
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
O=${OUT:-/tmp/cuzk-ba-out}
mkdir -p "$O"
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus; $(date -u '+%F %T') UTC"
if [ "${TESTS:-1}" = 1 ]; then
  CUZK_GPU_TEST_QUICK=1 CUZK_GPU_BATCH_AFFINE=2 timeout 300 $B/gpu_test > $O/gpu_test-ba1-quick.txt 2>&1
  echo "gpu_test --quick, batch-affine at every size: rc=$? $(tail -1 $O/gpu_test-ba1-quick.txt)"
  CUZK_GPU_TEST_QUICK=1 CUZK_GPU_BATCH_AFFINE=2 CUZK_GPU_BA_CHUNK_BYTES=20000 timeout 300 $B/gpu_test > $O/gpu_test-ba1-chunks.txt 2>&1
  echo "gpu_test --quick, batch-affine at every size, 20000-byte chunks: rc=$? $(tail -1 $O/gpu_test-ba1-chunks.txt)"
  timeout 300 $B/gpu_test > $O/gpu_test-default.txt 2>&1
  echo "gpu_test (full), by size: rc=$? $(tail -1 $O/gpu_test-default.txt)"
fi
[ "${BENCH:-1}" = 1 ] && for tag in $(echo ${ONLY:-g1,g2} | tr , ' '); do
  for c in bn254 bls12-381; do
    for m in 0 1; do
      CUZK_GPU_BATCH_AFFINE=$m timeout 200 $B/cuzk-bench-gpu --reps ${REPS:-3} --only $tag-$c \
        --logs ${LOGS:-16,20,22,24} 2>&1 | grep '^| MSM' | sed "s/^/ba=$m /" | tee -a $O/bench.txt
    done
  done
done
for v in build-device/pack-extra/cuzk-bench-gpu-*; do
  [ -x "$v" ] || continue
  for tag in $(echo ${ONLY:-g1,g2} | tr , ' '); do
    for c in bn254 bls12-381; do
      CUZK_GPU_BATCH_AFFINE=1 timeout 200 $v --reps ${REPS:-3} --only $tag-$c --logs ${LOGS:-16,20,22,24} 2>&1 |
        grep '^| MSM' | sed "s/^/$(basename $v) /" | tee -a $O/bench.txt
    done
  done
done
[ "${PROOF:-0}" = 1 ] || exit 0
# The proofs: e2e24-resident.sh's first part, once per batch-affine mode.
CACHE=0 BA_MODES="${MODES:-0 1 auto}" OUT=$O bash scripts/device/e2e24-resident.sh
