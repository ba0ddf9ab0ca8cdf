#!/usr/bin/env bash
# Device run: where a 2^24 MSM's time goes, kernel by kernel (ncu, durations only, so each
# kernel runs once under the profiler), for G1 and G2 of both curves with fixed-base tables
# (cuzk-bench-gpu --tables 0 --reps 1, random scalars), and the durations and main stall
# reasons of every pass of one forward NTT of 2^27 (BN254). Per kernel name: launches, total
# and largest ms; the MSM count is the count of k_to_jac launches (the bench's warm-up runs
# one too). Run from the repository root on the GPU machine after scripts/device-pack here,
# with build-device carried (device tool: run "bash scripts/device/msm-profile.sh", carry
# ["build-device"]). TAGS: the bench rows (default all four); SKIP_NTT=1 skips the NTT. Writes
# $OUT/msm-profile.txt and keeps ncu's CSV under $OUT.
set -u
O=${OUT:-/tmp/msm-profile-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czp
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
{
dev_header
for tag in ${TAGS:-g1-bn254 g1-bls12-381 g2-bn254 g2-bls12-381}; do
  f=$O/ncu-$tag.csv
  echo "-- $tag 2^24, tables: ncu kernel durations"
  timeout 240 ncu --clock-control none --csv --metrics gpu__time_duration.sum \
    "$NB" --only "$tag" --logs 24 --max-log 24 --tables 0 --reps 1 --scalars random > "$f" 2>&1
  echo "ncu rc=$?"
  # CSV rows: ..., "Kernel Name" (field 5), ..., "Metric Value" (last); durations in ns or us.
  awk -F'","' '/gpu__time_duration/ {
      name = $5; sub(/[<(].*/, "", name); v = $NF; gsub(/[",]/, "", v); u = $(NF - 1);
      ms = (u ~ /^us/ ? v / 1e3 : (u ~ /^ms/ ? v : v / 1e6));
      n[name]++; s[name] += ms; if (ms > mx[name]) mx[name] = ms }
    END { for (k in n) printf "  %-28s %5d launches %9.3f ms total %8.3f max\n", k, n[k], s[k], mx[k] }' \
    "$f" | sort -k5 -nr
done
if [ -z "${SKIP_NTT:-}" ]; then
echo "-- NTT 2^27 BN254 forward: every pass (ncu)"
timeout 120 ncu --clock-control none -k regex:k_ntt_pass --launch-count 8 \
  --metrics gpu__time_duration.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
  "$NB" --only ntt-bn254 --logs 27 --max-log 27 --reps 1 > $O/ncu-ntt27-passes.txt 2>&1
echo "ncu rc=$?"
awk '/k_ntt_pass/ {print "  " substr($0, 1, 70)} /duration|stalled|conflicts/ {print "    " $1, $(NF-1), $NF}' \
  $O/ncu-ntt27-passes.txt | head -90
fi
echo "== end $(date -u '+%T')"
} > $O/msm-profile.txt 2>&1
cat $O/msm-profile.txt
