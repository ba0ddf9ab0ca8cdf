#!/usr/bin/env bash
# Device run: several builds of cuzk-bench-gpu side by side, interleaved, on the same device
# call: a pack of scripts/device-pack (build-device/cuzk-device.tar.xz, "pack") and tarballs
# of other builds' bin/cuzk-bench-gpu (each unpacked over a copy of the pack, so they share
# its libraries), for compile-time variants (launch bounds, kernel macros) that no environment
# setting reaches.
#   BINS    "name=path ..." of the other builds' tarballs (default "base=build-base/... var=
#           build-var/...", those that exist); each holds bin/cuzk-bench-gpu
#           (scripts/device/build-variants.sh builds them from macro settings and prints BINS)
#   PACK    the pack (default build-device/cuzk-device.tar.xz), or none: the BINS alone (with
#           TEST=0; cuzk-bench-gpu links no library of ours), so that seven variants fit in a
#           call's 64 MiB instead of two beside the pack; build the baseline among them
#           (build-variants.sh main=)
#   TEST=1  gpu_test --quick with the pack first (0: none)
#   GT      a tarball of a standalone bin/gpu_test (`cmake --build B --target gpu_test`, then
#           `tar -C B -cJf gt.tar.xz bin/gpu_test`): gpu_test --quick, then with every MSM
#           batch-affine in small chunks with quads, before the rows (a variant's tests
#           without the 31 MiB pack)
#   ROUNDS (2), ONLY (g1,g2), LOGS (24), SCALARS (random), EXTRA (more bench flags):
#           `cuzk-bench-gpu --only ONLY --logs LOGS --tables 0 --reps 3` per build in turn
#   KNOBS   after the rounds, "build:SETTING ..." (SETTING as msm-knobs.sh's: default, or
#           VAR=VALUE,...): that build's rows under each setting, once each
# Run from the repository root on the GPU machine (device tool: run
# "bash scripts/device/bench-bins.sh", carry ["build-device", "build-base", "build-var"]).
# Writes $OUT/bench-bins.txt (one line per MSM row: round, build, the bench's row).
set -u
O=${OUT:-/tmp/bench-bins-out}
mkdir -p "$O"
. scripts/device/common.sh
PACK=${PACK:-build-device/cuzk-device.tar.xz}
if [ -z "${BINS:-}" ]; then
  BINS=""
  for b in base var; do
    [ -f build-$b/cuzk-device.tar.xz ] && BINS="$BINS $b=build-$b/cuzk-device.tar.xz"
  done
fi
if [ "$PACK" = none ]; then
  [ "${TEST:-1}" = 0 ] ||
    { echo "bench-bins: PACK=none needs TEST=0 (gpu_test is in the pack)" >&2; exit 2; }
  [ -n "$BINS" ] || { echo "bench-bins: PACK=none and no BINS" >&2; exit 2; }
  names=""
  rm -rf /tmp/bb-pack && mkdir -p /tmp/bb-pack # empty: no libraries, no env.sh
else
  [ -f "$PACK" ] || { echo "bench-bins: no $PACK" >&2; exit 2; }
  names=pack
  mkdir -p /tmp/bb-pack && tar -xJf "$PACK" -C /tmp/bb-pack ||
    { echo "bench-bins: cannot unpack the pack" >&2; exit 2; }
fi
for nb in $BINS; do
  n=${nb%%=*} f=${nb#*=}
  [ "$n" != pack ] || { echo "bench-bins: 'pack' is the pack's name, not a variant's" >&2; exit 2; }
  mkdir -p /tmp/bb-$n && cp -a /tmp/bb-pack/. /tmp/bb-$n/ && tar -xJf "$f" -C /tmp/bb-$n ||
    { echo "bench-bins: cannot unpack $f" >&2; exit 2; }
  names="$names $n"
done
LOGS=${LOGS:-24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
{
dev_header
echo "builds: ${PACK} $BINS"
if [ "${TEST:-1}" != 0 ]; then
  ( . /tmp/bb-pack/env.sh && dev_gpu_test "$O/gpu_test.log" )
fi
if [ -n "${GT:-}" ]; then
  mkdir -p /tmp/bb-gt && tar -xJf "$GT" -C /tmp/bb-gt && [ -x /tmp/bb-gt/bin/gpu_test ] ||
    { echo "bench-bins: cannot unpack $GT"; exit 2; }
  ( export CUZK_BIN_DIR=/tmp/bb-gt/bin
    dev_gpu_test "$O/gt.log"
    dev_gpu_test "$O/gt-ba.log" CUZK_GPU_BATCH_AFFINE=2 CUZK_GPU_BA_CHUNK_BYTES=20000 \
      CUZK_GPU_BA_QUADS=2 )
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for n in $names; do
    ( if [ -f /tmp/bb-pack/env.sh ]; then . /tmp/bb-pack/env.sh; fi
      timeout 240 /tmp/bb-$n/bin/cuzk-bench-gpu --only "${ONLY:-g1,g2}" --logs "$LOGS" \
        --max-log "$MAXLOG" --tables 0 --reps 3 --scalars "${SCALARS:-random}" ${EXTRA:-} 2>&1 |
        grep -E "^\| MSM|^\| NTT|rror" | sed "s/^/$round $n /" )
  done
done
for kb in ${KNOBS:-}; do
  n=${kb%%:*} k=${kb#*:}
  [ -d "/tmp/bb-$n" ] || { echo "bench-bins: KNOBS names no build '$n'"; continue; }
  ( if [ -f /tmp/bb-pack/env.sh ]; then . /tmp/bb-pack/env.sh; fi
    env $(knob_env "$k") timeout 240 /tmp/bb-$n/bin/cuzk-bench-gpu --only "${ONLY:-g1,g2}" \
      --logs "$LOGS" --max-log "$MAXLOG" --tables 0 --reps 3 --scalars "${SCALARS:-random}" \
      ${EXTRA:-} $(knob_args "$k") 2>&1 | grep -E "^\| MSM|^\| NTT|rror" | sed "s/^/knob $n $k /" )
done
echo "== end $(date -u '+%T')"
} > "$O/bench-bins.txt" 2>&1
cat "$O/bench-bins.txt"
