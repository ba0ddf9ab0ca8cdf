#!/usr/bin/env bash
# Profile of a cuzk-bench-gpu row: TOOL=ncu (default) or nsys, for each bench row of TAGS
# (default "g2-bn254 g1-bn254"; any --only tag of cuzk-bench-gpu, e.g. ntt-bn254) at 2^LOG
# (default 24), with fixed-base tables for MSMs (cuzk-bench-gpu --tables 0 --reps 1, random
# scalars).
#   ncu:  the kernels matching KREGEX (default the level-1 accumulation, k_ba_|k_accum1; e.g.
#         k_ntt_pass), LAUNCHES launches (default 6) after skipping SKIP (default 0). Per launch:
#         duration, FMA pipe and issue use, active warps, registers, and every stall reason of
#         0.3 cycles per issued instruction or more. MEM=1 adds DRAM / L2 / L1 throughput, DRAM
#         bytes, L2 hit rate and L1 sectors per global-load request (how scattered gathers are).
#   nsys: the whole run's CUDA kernel and memcpy summary (nsys profile --stats=true); the report
#         is kept under $OUT for the timeline.
#   bash scripts/device/profile.sh       (see common.sh: the pack, $OUT)
set -u
O=${OUT:-/tmp/profile-out}
mkdir -p "$O"
. scripts/device/common.sh
[ -n "${CUZK_BIN_DIR:-}" ] || dev_unpack /tmp/czk || { echo "profile: no pack" >&2; exit 2; }
lg=${LOG:-24}
TOOL=${TOOL:-ncu}
MET=gpu__time_duration.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
MET=$MET,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
MET=$MET,smsp__issue_active.avg.pct_of_peak_sustained_active
MET=$MET,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
MET=$MET,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio
if [ "${MEM:-0}" = 1 ]; then
  MET=$MET,dram__throughput.avg.pct_of_peak_sustained_elapsed
  MET=$MET,lts__throughput.avg.pct_of_peak_sustained_elapsed
  MET=$MET,l1tex__throughput.avg.pct_of_peak_sustained_active
  MET=$MET,dram__bytes_read.sum,dram__bytes_write.sum
  MET=$MET,lts__t_sectors_op_read.sum,lts__t_sector_op_read_hit_rate.pct
  MET=$MET,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  MET=$MET,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
fi
{
dev_header
for tag in ${TAGS:-g2-bn254 g1-bn254}; do
  bench=("$CUZK_BIN_DIR/cuzk-bench-gpu" --only "$tag" --logs "$lg" --max-log "$lg" --reps 1)
  case "$tag" in g1*|g2*) bench+=(--tables 0 --scalars random) ;; esac
  case "$TOOL" in
  ncu)
    f=$O/ncu-$tag.txt
    echo "-- ncu $tag 2^$lg: kernels ${KREGEX:-k_ba_|k_accum1}"
    timeout 300 ncu --clock-control none -k "regex:${KREGEX:-k_ba_|k_accum1}" \
      --launch-skip "${SKIP:-0}" --launch-count "${LAUNCHES:-6}" --metrics "$MET" \
      "${bench[@]}" > "$f" 2>&1
    echo "ncu rc=$?"
    awk '/\(\(?[0-9]+, 1, 1\)x/ {print "  " substr($0, 1, 70)}
         /duration|pct_of_peak|registers|inst_executed.sum|bytes_|sectors|requests|hit_rate/ {
           print "    " $1, $(NF-1), $NF }
         /stalled/ && $NF+0 >= 0.3 {print "    " $1, $NF}' "$f" | head -150
    ;;
  nsys)
    echo "-- nsys $tag 2^$lg"
    timeout 300 nsys profile --stats=true --force-overwrite true -o "$O/nsys-$tag" \
      "${bench[@]}" > "$O/nsys-$tag.txt" 2>&1
    echo "nsys rc=$?"
    grep -A 25 -E "cuda_gpu_kern_sum|cuda_gpu_mem_time_sum" "$O/nsys-$tag.txt" | cut -c1-160
    ;;
  *) echo "profile: TOOL must be ncu or nsys" >&2; exit 2 ;;
  esac
done
echo "== end $(date -u '+%T')"
} > "$O/profile.txt" 2>&1
cat "$O/profile.txt"
