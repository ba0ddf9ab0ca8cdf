#!/usr/bin/env bash
# Device check of a pack: the GPU tests (gpu_test --quick, staged_test, gpu_prove_test), then the
# G1 and G2 MSM rows with fixed-base tables (cuzk-bench-gpu --only g1,g2 --logs LOGS --tables 0
# --reps 3; LOGS default 24), ROUNDS rounds (default 2), so that G2 / G1 comes from one run;
# then, for each of CURVES (default none; e.g. "bn128 bls12381"), the dense 2^24 proof with its
# key resident (scripts/device/e2e-proof.sh). SKIP_TEST=1 skips the tests.
#   bash scripts/device/check.sh         (see common.sh: the pack, $OUT)
set -u
O=${OUT:-/tmp/check-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk || { echo "check: cannot unpack the pack" >&2; exit 2; }
LOGS=${LOGS:-24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
{
dev_header
if [ -z "${SKIP_TEST:-}" ]; then
  dev_gpu_test "$O/gpu_test.log"
  dev_staged_test "$O/staged.log"
  dev_prove_test "$O/gpu_prove_test.log"
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  echo "-- round $round ($(date -u '+%T'))"
  timeout 240 "$CUZK_BIN_DIR/cuzk-bench-gpu" --only g1,g2 --logs "$LOGS" --max-log "$MAXLOG" \
    --tables 0 --reps 3 --scalars random 2>&1 | grep -E "^\|" | grep -v -- "---\|what"
done
[ -z "${CURVES-}" ] || CACHE=0 CURVES="$CURVES" OUT=$O bash scripts/device/e2e-proof.sh |
  grep -v "^== end"
echo "== end $(date -u '+%T')"
} > "$O/check.txt" 2>&1
cat "$O/check.txt"
