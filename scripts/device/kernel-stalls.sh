#!/usr/bin/env bash
# Device run: per-kernel pipe use and warp stall reasons (ncu) of a 2^LOG MSM of the bench
# (cuzk-bench-gpu --only TAG --tables 0 --reps 1, random scalars), for the kernels matching
# KREGEX (default the level-1 accumulation: k_ba_|k_accum1), LAUNCHES launches (default 6)
# after skipping SKIP (default 0). Per launch: duration, FMA pipe and issue use, active warps,
# registers, and every stall reason of 0.3 cycles per issued instruction or more. TAGS: the
# bench rows (default "g2-bn254 g1-bn254"), LOG (24). Run from the repository root on the GPU
# machine with build-device carried (device tool: run "bash scripts/device/kernel-stalls.sh",
# carry ["build-device"]). MEM=1 adds where the bytes go: DRAM and L2 throughput (percent of
# peak), DRAM bytes read and written, L2 sectors read and their hit rate, L1 global-load requests
# and sectors (sectors per request: how scattered the gathers are) and L1 throughput.
# Writes $OUT/kernel-stalls.txt and ncu's output per tag under $OUT.
set -u
O=${OUT:-/tmp/kernel-stalls-out}
mkdir -p "$O"
. scripts/device/common.sh
[ -n "${CUZK_BIN_DIR:-}" ] || dev_unpack /tmp/czk
lg=${LOG:-24}
MET=gpu__time_duration.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
MET=$MET,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
MET=$MET,smsp__issue_active.avg.pct_of_peak_sustained_active
MET=$MET,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
MET=$MET,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio
MEMM=
if [ "${MEM:-0}" = 1 ]; then
  MEMM=,dram__throughput.avg.pct_of_peak_sustained_elapsed
  MEMM=$MEMM,lts__throughput.avg.pct_of_peak_sustained_elapsed
  MEMM=$MEMM,l1tex__throughput.avg.pct_of_peak_sustained_active
  MEMM=$MEMM,dram__bytes_read.sum,dram__bytes_write.sum
  MEMM=$MEMM,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct
  MEMM=$MEMM,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  MEMM=$MEMM,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
fi
{
dev_header
for tag in ${TAGS:-g2-bn254 g1-bn254}; do
  f=$O/ncu-stalls-$tag.txt
  echo "-- $tag 2^$lg, tables: kernels ${KREGEX:-k_ba_|k_accum1}"
  timeout 200 ncu --clock-control none -k "regex:${KREGEX:-k_ba_|k_accum1}" \
    --launch-skip "${SKIP:-0}" --launch-count "${LAUNCHES:-6}" \
    --metrics "$MET$MEMM" \
    "$CUZK_BIN_DIR/cuzk-bench-gpu" --only "$tag" --logs "$lg" --max-log "$lg" --tables 0 \
    --reps 1 --scalars random > "$f" 2>&1
  echo "ncu rc=$?"
  awk '/\(\(?[0-9]+, 1, 1\)x/ || /k_ba_|k_accum/ && /Context|Device|\[/ {print "  " substr($0, 1, 70)}
       /duration|pct_of_peak|registers|inst_executed.sum|bytes_|sectors|requests|hit_rate/ {
         print "    " $1, $(NF-1), $NF }
       /stalled/ && $NF+0 >= 0.3 {print "    " $1, $NF}' "$f" | head -150
done
echo "== end $(date -u '+%T')"
} > "$O/kernel-stalls.txt" 2>&1
cat "$O/kernel-stalls.txt"
