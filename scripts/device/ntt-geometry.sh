#!/usr/bin/env bash
# Device run: the NTT pass geometries against each other (CUZK_GPU_NTT_BLOCK / _TILE / _PLAN,
# src/gpu/gpu_internal.cuh) in one binary, interleaved twice, optionally with an older pack's
# binary beside them (PREV_PACK=build-device/prev.tar.xz: e.g. the commit before the H step's
# factors, or this commit with BLS12-381's generic Fr reduction, packed here with
# `CUDAFLAGS=-DCUZK_GPU_BLS_FR_LOW64=0 scripts/device-pack build-device-generic`);
# the H step; gpu_test --quick (which also runs the NTTs through a second geometry) and
# gpu_prove_test (GPU proofs byte-identical to the CPU's at r = s = 0); and an ncu
# profile of the default geometry's passes at 2^24 (BN254), kept under $OUT/ncu-ntt.txt.
# Run from the repository root on the GPU machine after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/ntt-geometry.sh",
# carry ["build-device"]). Writes $OUT/summary.txt.
set -u
O=${OUT:-/tmp/ntt-geometry-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czn
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
PB=
if [ -n "${PREV_PACK:-}" ] && [ -f "$PREV_PACK" ]; then
  mkdir -p /tmp/czp && tar -xJf "$PREV_PACK" -C /tmp/czp && PB=/tmp/czp/bin/cuzk-bench-gpu
fi
rows() { grep -E "^\|" | grep -v -- "---\|what"; }
{
dev_header
dev_gpu_test $O/gpu_test.log
dev_prove_test $O/prove.log
for round in 1 2; do
  if [ -n "$PB" ]; then
    echo "-- round $round: previous pack"
    LD_LIBRARY_PATH=/tmp/czp/lib timeout 60 $PB --only ntt,h --max-log 27 --logs 20,24,27 --reps 3 2>&1 | rows
  fi
  for cfg in "1024 3 greedy" "1024 3 even" "2048 2 greedy" "2048 2 even" "2048 3 greedy" "1024 2 even"; do
    set -- $cfg
    echo "-- round $round: blocks $1, tiles 2^$2, $3 passes"
    CUZK_GPU_NTT_BLOCK=$1 CUZK_GPU_NTT_TILE=$2 CUZK_GPU_NTT_PLAN=$3 timeout 60 $NB --only ntt,h \
      --max-log 27 --logs 20,24,27 --reps 3 2>&1 | rows
  done
done
echo "-- ncu: k_ntt_pass, one forward NTT of 2^24 (BN254), default geometry"
timeout 150 ncu --clock-control none --set full -k regex:k_ntt_pass --launch-skip 3 --launch-count 3 \
  $NB --only ntt-bn254 --logs 24 --reps 1 > $O/ncu-ntt.txt 2>&1
echo "ncu rc=$?"
grep -E "k_ntt_pass|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|No Eligible|Warp Cycles Per Issued|Bank" $O/ncu-ntt.txt | head -60
echo "== end $(date -u '+%T')"
} > $O/summary.txt 2>&1
cat $O/summary.txt
