#!/usr/bin/env bash
# Device run: the batch-affine kernels of one G2 MSM of 2^24 with fixed-base tables under ncu,
# launch by launch, so that a split MSM's parts show apart (two parts for G2: the pairs
# and the quads of each): duration, issue slots and FMA pipe busy, active warps, active threads
# per executed instruction, warp instructions, the warp stall reasons per issued instruction;
# then DRAM bytes read and written. The bench's warm-up MSM is the one profiled (its first COUNT
# launches of the kernels, default 4). TAG: the bench row (default g2-bn254); KERNELS: ncu's
# kernel regex (default k_ba_pairs_h|k_ba_quads_h). Run from the repository root on
# the GPU machine after scripts/device-pack here (device tool: run "bash
# scripts/device/ba-stalls.sh", carry ["build-device/cuzk-device.tar.xz"]). Writes
# $OUT/ba-stalls.txt and ncu's reports.
set -u
O=${OUT:-/tmp/ba-stalls-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czs || { echo "ba-stalls: cannot unpack the pack" >&2; exit 2; }
TAG=${TAG:-g2-bn254}
K=${KERNELS:-k_ba_pairs_h|k_ba_quads_h}
M1=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio
M2=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
{
dev_header
n=1
for M in "$M1" "$M2"; do
  f=$O/ncu-$TAG-$n.txt
  echo "-- $TAG 2^24, tables: ncu metric set $n"
  timeout 280 ncu --clock-control none -k "regex:$K" --launch-count "${COUNT:-4}" --metrics "$M" \
    "$CUZK_BIN_DIR/cuzk-bench-gpu" --only "$TAG" --logs 24 --max-log 24 --tables 0 --reps 1 \
    --scalars random > "$f" 2>&1
  echo "ncu rc=$?"
  awk '/Context [0-9]+, Stream/ {match($0, /k_ba_[a-z_]+/); k = substr($0, RSTART, RLENGTH);
         match($0, /\([0-9]+, [0-9]+, [0-9]+\)x\([0-9]+, [0-9]+, [0-9]+\)/);
         print "  " k " " substr($0, RSTART, RLENGTH)}
       /duration|pct_of_peak|stalled|ratio|bytes|inst_executed/ && $NF+0 >= 0.3 {print "    " $1, $(NF-1), $NF}' \
    "$f" | head -150
  n=$((n + 1))
done
echo "== end $(date -u '+%T')"
} > "$O/ba-stalls.txt" 2>&1
cat "$O/ba-stalls.txt"
