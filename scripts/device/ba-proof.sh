#!/usr/bin/env bash
# Device run: batch-affine settings in a proof rather than the bench. A 2^LOG dense key (cuzk
# gen-circuit + cuzk setup; B in G2's set then has ~22% of its points at infinity, the bench's
# random sets none) proved with each setting (`cuzk prove --gpu-tables on --repeat REPEAT`),
# then one proof per setting under ncu: the batch-affine and product-tree kernels' durations,
# G1 (C, H) and G2 (B2) apart. Env: CURVE (bn128), LOG (24), REPEAT (3), KNOBS (settings as
# msm-knobs.sh's; default "default CUZK_GPU_BA_QUADS=1,CUZK_GPU_BA_CHUNK_BYTES=17179869184"),
# NCU (1; 0 skips the profiles). Run from the repository root on the GPU machine after
# scripts/device-pack here, with build-device carried (device tool: run
# "bash scripts/device/ba-proof.sh", carry ["build-device"]). Writes $OUT/ba-proof.txt.
set -u
O=${OUT:-/tmp/ba-proof-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czb
B=$CUZK_BIN_DIR
KNOBS=${KNOBS:-default CUZK_GPU_BA_QUADS=1,CUZK_GPU_BA_CHUNK_BYTES=17179869184}
curve=${CURVE:-bn128}
lg=${LOG:-24}
{
dev_header
d=/tmp/ba-proof
mkdir -p $d
n=$(( (1 << lg) - (1 << (lg - 6)) ))
t0=$(date +%s)
timeout 120 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d \
  > /dev/null 2>&1 || echo "gen-circuit failed"
timeout 240 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 ||
  echo "setup failed"
echo "$curve 2^$lg dense: circuit + key in $(( $(date +%s) - t0 )) s"
for k in $KNOBS; do
  echo "-- $k"
  env $(knob_env "$k") timeout 200 $B/cuzk prove --backend gpu --g2 gpu --gpu-tables on \
    --repeat "${REPEAT:-3}" $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json 2>&1 |
    grep -E "proof [2-9]/|proofs after|with tables \(" | cut -c1-240
done
if [ "${NCU:-1}" = 1 ]; then
  i=0
  for k in $KNOBS; do
    i=$((i + 1))
    f=$O/ncu-proof-k$i.csv
    echo "-- $k: ncu, one proof (its first: the key's upload and tables too)"
    env $(knob_env "$k") timeout 240 ncu --clock-control none --csv -k 'regex:k_ba_|k_tree' \
      --metrics gpu__time_duration.sum $B/cuzk prove --backend gpu --g2 gpu --gpu-tables on \
      $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json > "$f" 2>&1
    echo "ncu rc=$?"
    # Field 5 is the kernel name (with its template arguments: fe2 marks G2).
    awk -F'","' '/gpu__time_duration/ {
        name = $5; g = (name ~ /fe2/ ? "G2" : "G1"); sub(/[<(].*/, "", name); name = name " " g;
        v = $NF; gsub(/[",]/, "", v); u = $(NF - 1);
        ms = (u ~ /^us/ ? v / 1e3 : (u ~ /^ms/ ? v : v / 1e6));
        n[name]++; s[name] += ms; if (ms > mx[name]) mx[name] = ms }
      END { for (k in n) printf "  %-24s %5d launches %9.3f ms total %8.3f max\n", k, n[k], s[k], mx[k] }' \
      "$f" | sort -k1,1 -k2,2
  done
fi
rm -rf $d
echo "== end $(date -u '+%T')"
} > "$O/ba-proof.txt" 2>&1
cat "$O/ba-proof.txt"
