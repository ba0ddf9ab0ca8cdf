#!/usr/bin/env bash
# Device run: the NTT passes with one stage per trip through shared memory (k_ntt_pass) against
# two (k_ntt_pass4 at 64 or 80 registers: CUZK_GPU_NTT_RADIX=2 / 4 / 4w), the default geometry
# otherwise, interleaved twice; gpu_test --quick with each two-stage variant (its NTT, H and
# proof-path checks through them); and the stall reasons of the faster variant's passes at 2^24
# (ncu). Run from the repository root on the GPU machine after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/ntt-radix.sh", carry
# ["build-device"]). Writes $OUT/ntt-radix.txt.
set -u
O=${OUT:-/tmp/ntt-radix-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czr
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
{
dev_header
for rx in 4 4w; do
  dev_gpu_test $O/gpu_test-$rx.log CUZK_GPU_NTT_RADIX=$rx
done
for round in 1 2; do
  for rx in 2 4 4w; do
    echo "-- round $round: CUZK_GPU_NTT_RADIX=$rx"
    CUZK_GPU_NTT_RADIX=$rx timeout 90 $NB --only ntt,h --max-log 27 --logs 20,22,24,26,27 --reps 3 2>&1 |
      grep -E "^\|" | grep -v -- "---\|what"
  done
done
for rx in 4 4w; do
  echo "-- ncu: k_ntt_pass4 (CUZK_GPU_NTT_RADIX=$rx) stall reasons, NTT 2^24 BN254"
  CUZK_GPU_NTT_RADIX=$rx timeout 100 ncu --clock-control none -k regex:k_ntt_pass --launch-skip 3 --launch-count 3 \
    --metrics gpu__time_duration.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
    $NB --only ntt-bn254 --logs 24 --max-log 24 --reps 1 > $O/ncu-$rx.txt 2>&1
  echo "ncu rc=$?"
  awk '/k_ntt_pass/ {print "  " substr($0, 1, 60)} /duration|pct_of_peak|stalled/ && $NF+0 >= 0.3 {print "    " $1, $NF}' \
    $O/ncu-$rx.txt | head -40
done
echo "== end $(date -u '+%T')"
} > $O/ntt-radix.txt 2>&1
cat $O/ntt-radix.txt
