#!/usr/bin/env bash
# Two packs of scripts/device-pack side by side, for a change that needs more than the bench
# binary (bench-ab.sh) to judge: build-device/cuzk-device.tar.xz ("new") and
# build-base/cuzk-device.tar.xz ("base", the pack of another commit, or only the binaries of it
# that differ: below), each with the same settings, interleaved.
#   1. QUICK=1 (default): gpu_test --quick with each pack (QUICK=new: the new pack only; 0:
#      none), under the setting QUICK_KNOB (default "default").
#   2. ROUNDS rounds (2) of `cuzk-bench-gpu --only ONLY --logs LOGS --tables 0 --reps 3` (defaults
#      g2 / 24) per BENCH_KNOBS setting ("default"; "-" skips the bench), each pack in turn.
#   3. For each curve in CURVES (default "bn128 bls12381"; "" skips the proofs): a 2^LOG (24)
#      key of PROFILE (gen-circuit's, default dense; e.g. sparse-bits) (cuzk gen-circuit + setup
#      with the new pack, made once), proved by each pack
#      with each PROOF_KNOBS setting (`cuzk prove --backend gpu --g2 gpu --gpu-tables on --repeat
#      REPEAT`, default 3), rounds interleaved as above; the proofs after the first, their
#      stage line, and the last proof checked by the new pack's `cuzk verify`.
# Settings: common.sh's knob_env / knob_args ("default", or comma-separated VAR=VALUE and
# --flag[=value]).
#   bash scripts/device/pack-ab.sh       (see common.sh: the pack, $OUT)
set -u
O=${OUT:-/tmp/pack-ab-out}
mkdir -p "$O"
. scripts/device/common.sh
[ -f build-base/cuzk-device.tar.xz ] ||
  { echo "pack-ab: no build-base/cuzk-device.tar.xz" >&2; exit 2; }
# Each pack in its own directory; its env.sh is sourced in a subshell per command (both packs
# carry libraries of the same names).
# The base pack is unpacked over a copy of the new one, so it may hold only what differs (a
# tar.xz of bin/cuzk and bin/cuzk-bench-gpu), which keeps what is copied to the machine small.
for p in new base; do
  mkdir -p /tmp/pab-$p && tar -xJf build-device/cuzk-device.tar.xz -C /tmp/pab-$p ||
    { echo "pack-ab: cannot unpack build-device/cuzk-device.tar.xz" >&2; exit 2; }
done
tar -xJf build-base/cuzk-device.tar.xz -C /tmp/pab-base ||
  { echo "pack-ab: cannot unpack build-base/cuzk-device.tar.xz" >&2; exit 2; }
inpack() { local p=$1; shift; ( . /tmp/pab-$p/env.sh && "$@" ); }
bin() { echo "/tmp/pab-$1/bin/$2"; }
BENCH_KNOBS=${BENCH_KNOBS:-default}
PROOF_KNOBS=${PROOF_KNOBS:-default}
LOGS=${LOGS:-24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
CURVES=${CURVES-bn128 bls12381}
{
dev_header
if [ "${QUICK:-1}" != 0 ]; then
  for p in new base; do
    [ $p = new ] || [ "${QUICK:-1}" = 1 ] || continue
    echo "-- $p"
    inpack $p dev_gpu_test "$O/gpu_test-$p.log" $(knob_env "${QUICK_KNOB:-default}")
  done
fi
if [ "$BENCH_KNOBS" != - ]; then
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for k in $BENCH_KNOBS; do
      for p in new base; do
        echo "-- bench round $round: $p $k"
        inpack $p env $(knob_env "$k") timeout 240 "$(bin $p cuzk-bench-gpu)" \
          --only "${ONLY:-g2}" --logs "$LOGS" --max-log "$MAXLOG" --tables 0 --reps 3 \
          --scalars random $(knob_args "$k") 2>&1 | grep -E "^\||batch-affine chunk|rror" |
          grep -v -- "---\|what"
      done
    done
  done
fi
lg=${LOG:-24}
for curve in $CURVES; do
  d=/tmp/pack-ab-$curve
  mkdir -p $d
  n=$(( (1 << lg) - (1 << (lg - 6)) ))
  t0=$(date +%s)
  inpack new timeout 150 "$(bin new cuzk)" gen-circuit --constraints $n --curve $curve \
    --profile "${PROFILE:-dense}" --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
  inpack new timeout 300 "$(bin new cuzk)" setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey \
    > /dev/null 2>&1 || echo "setup failed"
  inpack new timeout 60 "$(bin new cuzk)" export-vk $d/circuit.zkey $d/vk.json > /dev/null 2>&1 ||
    echo "export-vk failed"
  echo "== $curve 2^$lg ${PROFILE:-dense}: circuit + key in $(( $(date +%s) - t0 )) s"
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for k in $PROOF_KNOBS; do
      for p in new base; do
        echo "-- proof round $round: $p $k"
        rm -f $d/p.json
        inpack $p env $(knob_env "$k") timeout 240 "$(bin $p cuzk)" prove --backend gpu --g2 gpu \
          --gpu-tables on --repeat "${REPEAT:-3}" $(knob_args "$k") $d/circuit.zkey \
          $d/circuit.wtns $d/p.json $d/pub.json 2>&1 |
          grep -E "proof [2-9]/|proofs after|batch-affine chunk|rror" |
          cut -c1-260
        inpack new timeout 60 "$(bin new cuzk)" verify $d/vk.json $d/pub.json $d/p.json \
          > "$O/verify.log" 2>&1 && echo "   verify OK" ||
          { echo "   verify FAILED"; tail -2 "$O/verify.log"; }
      done
    done
  done
  rm -rf $d
done
echo "== end $(date -u '+%T')"
} > "$O/pack-ab.txt" 2>&1
cat "$O/pack-ab.txt"
