#!/usr/bin/env bash
# Builds cuzk-bench-gpu for compile-time variants of the CUDA kernels (launch bounds, kernel
# macros that no environment setting reaches) on this machine, each in its own build folder
# with the macros passed to nvcc, and packs each as build-v-NAME/cuzk-device.tar.xz holding
# bin/cuzk-bench-gpu, the form scripts/device/bench-bins.sh runs. Prints the BINS and carry
# lists for that run.
#   scripts/device/build-variants.sh "NAME=[MACRO=VALUE[,MACRO=VALUE...]]" ...
#   e.g. scripts/device/build-variants.sh main= ypark=CUZK_GPU_BA_Y_PARK=2 \
#          ypark6=CUZK_GPU_BA_Y_PARK=2,CUZK_GPU_BA_PAIRS_MINB_96=6
#   (NAME= with no macro: the tree's own kernels, the baseline of a run without the pack)
# Needs nvcc (PATH, or /usr/local/cuda/bin); -j from CUZK_JOBS (default 2). Each variant is a
# full build of the library's CUDA units (a few minutes with two cores); an unchanged variant
# rebuilds only what changed. A device run carries at most 64 MiB with the tracked tree (~31
# MiB): beside the pack of scripts/device-pack (~24 MiB) two variants (~4 MiB each) fit; without
# it (bench-bins.sh PACK=none: cuzk-bench-gpu links no library of ours) seven, the baseline one
# of them (carry takes 8 paths at most).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
command -v nvcc >/dev/null || PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "build-variants: nvcc not found" >&2; exit 1; }
J=${CUZK_JOBS:-2}
bins="" carry=""
for spec in "$@"; do
  name=${spec%%=*} defs=${spec#*=}
  case "$name" in
  "" | *[!A-Za-z0-9_-]*) echo "build-variants: bad variant name in '$spec'" >&2; exit 2 ;;
  esac
  [ "$defs" != "$spec" ] ||
    { echo "build-variants: '$spec' is not NAME=[MACRO=VALUE,...]" >&2; exit 2; }
  flags=""
  ds=()
  [ -n "$defs" ] && IFS=',' read -ra ds <<<"$defs"
  for d in "${ds[@]+"${ds[@]}"}"; do
    case "$d" in
    [A-Za-z_]*=*) flags="$flags -D$d" ;;
    *) echo "build-variants: '$d' is not MACRO=VALUE" >&2; exit 2 ;;
    esac
  done
  B=build-v-$name
  echo "build-variants: $name:${flags:- (no macro)} -> $B"
  cmake -S . -B "$B" -DCUZK_CUDA=ON -DCUZK_CUDA_ARCH=90 -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_FLAGS="$flags" >"$B.log" 2>&1 || { tail -20 "$B.log"; exit 1; }
  cmake --build "$B" -j"$J" --target cuzk-bench-gpu >>"$B.log" 2>&1 ||
    { grep -E "error|Error" "$B.log" | head -20; exit 1; }
  rm -rf "$B/pack" && mkdir -p "$B/pack/bin"
  strip -o "$B/pack/bin/cuzk-bench-gpu" "$B/bin/cuzk-bench-gpu"
  tar -C "$B/pack" -cJf "$B/cuzk-device.tar.xz" bin/cuzk-bench-gpu
  bins="$bins $name=$B/cuzk-device.tar.xz" carry="$carry, \"$B/cuzk-device.tar.xz\""
done
echo "BINS=\"${bins# }\""
echo "carry with the pack (two variants fit): [\"build-device/cuzk-device.tar.xz\"$carry]"
echo "carry for PACK=none TEST=0 (seven fit; one of them the baseline, NAME=): [${carry#, }]"
