#!/usr/bin/env bash
# A/B of cuzk-bench-gpu binaries built from different commits, interleaved on one device: the
# pack's binary ("new", scripts/device-pack) against each build-base/cuzk-bench-gpu.NAME.xz
# (xz of another build's bin/cuzk-bench-gpu), ROUNDS rounds (default 2) of `cuzk-bench-gpu
# --only ONLY --logs LOGS --max-log MAXLOG --reps REPS --tables 0 --scalars random` (defaults:
# g1,g2 / 24 / the largest of LOGS / 3). gpu_test --quick runs first with the pack's binaries
# (QUICK=0 skips it). For a change the bench binary alone cannot judge, see pack-ab.sh.
#   bash scripts/device/bench-ab.sh      (see common.sh: the pack, $OUT)
set -u
O=${OUT:-/tmp/bench-ab-out}
mkdir -p "$O" /tmp/ab-bin
. scripts/device/common.sh
dev_unpack /tmp/czk
cp "$CUZK_BIN_DIR/cuzk-bench-gpu" /tmp/ab-bin/new
names=new
for f in build-base/cuzk-bench-gpu.*.xz; do
  [ -e "$f" ] || continue
  n=${f#build-base/cuzk-bench-gpu.}
  n=${n%.xz}
  xz -dc "$f" > "/tmp/ab-bin/$n" && chmod +x "/tmp/ab-bin/$n" && names="$n $names"
done
LOGS=${LOGS:-24}
MAXLOG=${MAXLOG:-$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)}
{
dev_header
[ "${QUICK:-1}" = 0 ] || dev_gpu_test "$O/gpu_test.log"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for n in $names; do
    echo "-- round $round: $n"
    timeout "${LIMIT:-150}" "/tmp/ab-bin/$n" --only "${ONLY:-g1,g2}" --logs "$LOGS" --max-log "$MAXLOG" \
      --tables 0 --reps "${REPS:-3}" --scalars random 2>&1 | grep -E "^\|" | grep -v -- "---\|what"
  done
done
echo "== end $(date -u '+%T')"
} > "$O/bench-ab.txt" 2>&1
cat "$O/bench-ab.txt"
