#!/usr/bin/env bash
# Device run: the NTT and H rows of the default pass geometry at every size from 2^20 to 2^27
# (the plan picks its tile by size, cuzk__gpu_ntt_auto_lob, so sizes the geometry A/B did not
# cover are measured here), gpu_test --quick and gpu_prove_test (GPU proofs byte-identical to
# the CPU's at r = s = 0) as correctness checks of the same binaries, and the warp stall reasons
# of the NTT passes (ncu, one forward NTT of 2^24 and of 2^27, BN254), kept under
# $OUT/ncu-stalls-24.txt and -27.txt. Run from the repository root on the GPU machine after
# scripts/device-pack here, with build-device carried (device tool: run
# "bash scripts/device/ntt-sizes.sh", carry ["build-device"]). Writes $OUT/ntt-sizes.txt.
set -u
O=${OUT:-/tmp/ntt-sizes-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czs
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
{
dev_header
dev_gpu_test $O/gpu_test.log
dev_prove_test $O/prove.log
timeout 120 $NB --only ntt,h --max-log 27 --logs 20,22,24,25,26,27 --reps 3 2>&1 |
  grep -E "^\|" | grep -v -- "---"
for ln in 24 27; do
  echo "-- ncu: k_ntt_pass stall reasons (cycles per issued instruction), NTT 2^$ln BN254"
  dev_ncu_stalls $O/ncu-stalls-$ln.txt $ln
done
echo "== end $(date -u '+%T')"
} > $O/ntt-sizes.txt 2>&1
cat $O/ntt-sizes.txt
