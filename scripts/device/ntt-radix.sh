#!/usr/bin/env bash
# Device run: the NTT passes with one stage per trip through shared memory (k_ntt_pass) against
# two (k_ntt_pass4 at 64 or 80 registers: CUZK_GPU_NTT_RADIX=2 / 4 / 4w), the default geometry
# otherwise, interleaved twice; gpu_test --quick with each two-stage variant (its NTT, H and
# proof-path checks through them); and the stall reasons of the faster variant's passes at 2^24
# (ncu). 4s is the 80-register variant with each pass's twiddles staged in shared memory.
# The variants to check, time and profile: RADIX_TEST (default "4 4w"), RADIX_BENCH ("2 4 4w"),
# RADIX_NCU ("4 4w", at 2^NCU_LOG, default 24). Run from the repository root on the GPU
# machine after scripts/device-pack here, with build-device carried (device tool: run
# "bash scripts/device/ntt-radix.sh", carry ["build-device"]). Writes $OUT/ntt-radix.txt.
set -u
O=${OUT:-/tmp/ntt-radix-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czr
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
{
dev_header
for rx in ${RADIX_TEST-4 4w}; do
  dev_gpu_test $O/gpu_test-$rx.log CUZK_GPU_NTT_RADIX=$rx
done
for round in 1 2; do
  for rx in ${RADIX_BENCH-2 4 4w}; do
    echo "-- round $round: CUZK_GPU_NTT_RADIX=$rx"
    CUZK_GPU_NTT_RADIX=$rx timeout 90 $NB --only ntt,h --max-log 27 --logs 20,22,24,26,27 --reps 3 2>&1 |
      grep -E "^\|" | grep -v -- "---\|what"
  done
done
for rx in ${RADIX_NCU-4 4w}; do
  echo "-- ncu: k_ntt_pass4 (CUZK_GPU_NTT_RADIX=$rx) stall reasons, NTT 2^${NCU_LOG:-24} BN254"
  dev_ncu_stalls $O/ncu-$rx.txt "${NCU_LOG:-24}" CUZK_GPU_NTT_RADIX=$rx
done
echo "== end $(date -u '+%T')"
} > $O/ntt-radix.txt 2>&1
cat $O/ntt-radix.txt
