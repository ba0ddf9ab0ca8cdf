#!/usr/bin/env bash
# cuzk's MSM beside sppark's on the same points and scalars, in one command on a GPU machine.
#
# Before: scripts/device-pack (cuzk-bench-gpu has --dump) and a peer driver built from sppark's
# msm/pippenger.cuh (msm_t, one binary per curve, instantiated for its G1 and Fp2 G2 types), put
# at build-device/peer/sppark-msm-{bn254,bls12-381}. It reads the files --dump writes (DIR/README
# gives their layout) and prints one "sppark TAG LOG SCALARS BEST_MS MEDIAN_MS RESULT" line per row. Then:
#   bash scripts/device/sppark-side-by-side.sh     (see common.sh: the pack, $OUT)
#
# 1. cuzk-bench-gpu --dump DIR runs the G1/G2 MSM rows and writes, per point set, the points
#    (our device layout), the scalars (canonical 32-byte) and each row's result (canonical affine
#    hex); DIR/README gives the layout.
# 2. sppark-msm-CURVE reruns each row on those files, timed the same way: points resident on the
#    device (uploaded outside the time), scalars copied from pinned host memory inside it, one
#    warm-up, then best (and median) of REPS wall-clock calls.
# 3. A table: size, cuzk ms, sppark ms, the ratio, and whether both results are the same point
#    (MISMATCH otherwise; the script then exits 1).
#
# Env: LOGS (default 20,22,24; G2 runs only 20 and 24), MSM_GROUPS (g1,g2), REPS (5),
#      DUMP (/tmp/cuzk-sppark-dump, removed at the end), CUZK_PACK (build-device/cuzk-device.tar.xz).
set -u
LOGS=${LOGS:-20,22,24}
MSM_GROUPS=${MSM_GROUPS:-g1,g2}
REPS=${REPS:-5}
DUMP=${DUMP:-/tmp/cuzk-sppark-dump}
PEER=build-device/peer
O=${OUT:-/tmp/cuzk-sppark-out}
mkdir -p "$O"

for c in bn254 bls12-381; do
  if [ ! -x "$PEER/sppark-msm-$c" ]; then
    echo "sppark-side-by-side: $PEER/sppark-msm-$c is missing: build the peer driver" \
      "(see this script's header)" >&2
    exit 1
  fi
done
mkdir -p /tmp/cz && tar -xJf "${CUZK_PACK:-build-device/cuzk-device.tar.xz}" -C /tmp/cz &&
  . /tmp/cz/env.sh || { echo "sppark-side-by-side: cannot unpack the cuzk pack" >&2; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

rm -rf "$DUMP" && mkdir -p "$DUMP" || exit 1
t0=$(date +%s)
timeout 280 "$CUZK_BIN_DIR/cuzk-bench-gpu" --only "$MSM_GROUPS" --logs "$LOGS" --max-log 24 \
  --scalars random --reps "$REPS" --dump "$DUMP" > "$O/cuzk.txt"
rc=$?
cat "$O/cuzk.txt"
echo "cuzk-bench-gpu rc=$rc ($(($(date +%s) - t0)) s)"
[ $rc = 0 ] || exit 1

# sppark on every dumped point set: TAG-K.points serves all sizes 2^k <= 2^K.
: > "$O/sppark.txt"
fail=0
for f in "$DUMP"/*.points; do
  [ -e "$f" ] || { echo "sppark-side-by-side: the bench dumped no points" >&2; exit 1; }
  b=$(basename "$f" .points)          # g1-bn254-24
  tag=${b%-*} top=${b##*-}
  logs=$(ls "$DUMP" | sed -n "s/^$tag-\([0-9]*\)-random\.result$/\1/p" | sort -n | paste -sd,)
  t0=$(date +%s)
  timeout 70 "$PEER/sppark-msm-${tag#g?-}" --dir "$DUMP" --tag "$tag" --top "$top" \
    --logs "$logs" --scalars random --reps "$REPS" >> "$O/sppark.txt"
  rc=$?
  echo "sppark-msm $tag 2^{$logs} rc=$rc ($(($(date +%s) - t0)) s)"
  [ $rc = 0 ] || fail=1
done

# Table. cuzk rows: "| MSM G1 | BN254 | 2^20 | random | best | median |".
{
  echo "| MSM | curve | size | cuzk best ms | sppark best ms | cuzk / sppark | cuzk median | sppark median | same result |"
  echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
  while IFS='|' read -r _ what curve size scal best med _; do
    what=$(echo $what) curve=$(echo $curve) size=$(echo $size) best=$(echo $best) med=$(echo $med)
    case "$what" in "MSM G1") g=g1 ;; "MSM G2") g=g2 ;; *) continue ;; esac
    [ "$(echo $scal)" = random ] || continue
    c=$(echo "$curve" | tr A-Z a-z) lg=${size#2^}
    tag=$g-$c
    sp=$(awk -v t="$tag" -v l="$lg" '$1 == "sppark" && $2 == t && $3 == l' "$O/sppark.txt")
    want=$(cat "$DUMP/$tag-$lg-random.result" 2>/dev/null)
    if [ -z "$sp" ]; then
      echo "| ${what#MSM } | $curve | $size | $best | - | - | $med | - | sppark did not run |"
      fail=1
      continue
    fi
    sbest=$(echo "$sp" | awk '{print $5}') smed=$(echo "$sp" | awk '{print $6}')
    got=$(echo "$sp" | cut -d' ' -f7-)
    if [ -n "$want" ] && [ "$got" = "$want" ]; then same=yes; else same=MISMATCH; fail=1; fi
    ratio=$(awk -v a="$best" -v b="$sbest" 'BEGIN { printf "%.2f", a / b }')
    echo "| ${what#MSM } | $curve | $size | $best | $sbest | $ratio | $med | $smed | $same |"
  done < "$O/cuzk.txt"
} > "$O/table.md"
echo
echo "cuzk vs sppark ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); best and" \
  "median of $REPS after a warm-up; points resident, scalars copied from pinned host memory in" \
  "the time; random 253-bit scalars)"
cat "$O/table.md"
grep -q MISMATCH "$O/table.md" && echo "sppark-side-by-side: MISMATCH: the two MSMs disagree" >&2
for t in "$DUMP"/*.result; do cp "$t" "$O/"; done
rm -rf "$DUMP"
exit $fail
