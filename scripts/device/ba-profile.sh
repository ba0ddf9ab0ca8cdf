#!/usr/bin/env bash
# Device run: why the opt-in batch-affine accumulation is slower inside proofs than in
# cuzk-bench-gpu (src/gpu/PERF-NOTES.md, third pass). A 2^LOG dense BN254 circuit (default 22):
#  1. cuzk prove --repeat 2 with CUZK_GPU_TRACE=1 (per-MSM times), batch-affine off and on;
#  2. ncu kernel times (k_ba_*, k_tree_*, k_accum*) of one proof with it on, and of
#     cuzk-bench-gpu's G1 and G2 MSMs of the same size with it on.
# Run from the repository root on the GPU machine after scripts/device-pack, build-device
# carried. Writes under $OUT.
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
O=${OUT:-/tmp/cuzk-bap-out}
mkdir -p "$O"
L=${LOG:-22}
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u '+%F %T') UTC"
n=$(( (1 << L) - (1 << (L - 6)) ))
d=/tmp/bap; mkdir -p $d
timeout 120 $B/cuzk gen-circuit --constraints $n --curve bn128 --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
timeout 240 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "setup failed"
for m in 0 1; do
  echo "== batch-affine $m, traced"
  CUZK_GPU_BATCH_AFFINE=$m CUZK_GPU_TRACE=1 timeout 120 $B/cuzk prove --backend gpu --g2 gpu --repeat 2 \
    $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json > $O/trace-$m.txt 2>&1
  grep -E 'msm G|proof 2/2' $O/trace-$m.txt | tail -8
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then echo "no ncu"; exit 0; fi
K='regex:k_ba|k_tree|k_accum'
CUZK_GPU_BATCH_AFFINE=1 timeout 200 $NCU --clock-control none --metrics gpu__time_duration.sum -k "$K" \
  $B/cuzk prove --backend gpu --g2 gpu $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json > $O/ncu-prove.txt 2>&1
echo "== ncu prove: rc=$?"
grep -E '^  k_|^  void|gpu__time_duration' $O/ncu-prove.txt | sed -E 's/\(([0-9]+), [0-9]+, [0-9]+\)x.*//' | paste - - | awk '{print $1, $(NF)}' | head -60
for t in g1-bn254 g2-bn254; do
  CUZK_GPU_BATCH_AFFINE=1 timeout 200 $NCU --clock-control none --metrics gpu__time_duration.sum -k "$K" \
    $B/cuzk-bench-gpu --only $t --logs $L --scalars random --reps 1 > $O/ncu-bench-$t.txt 2>&1
  echo "== ncu bench $t: rc=$?"
  grep -E '^  k_|^  void|gpu__time_duration' $O/ncu-bench-$t.txt | sed -E 's/\(([0-9]+), [0-9]+, [0-9]+\)x.*//' | paste - - | awk '{print $1, $(NF)}' | head -30
done
