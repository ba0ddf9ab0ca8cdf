#!/usr/bin/env bash
# Builds tests/gpu/NAME.cpp (device code compiled for the host with its PTX primitives
# emulated, CUZK_GPU_HOST_EMU) with g++ and runs it: the runner of field_emu_test.sh and
# msm_emu_test.sh and ntt_emu_test.sh, which need no GPU and no nvcc, so they run in CI.
#   tests/gpu/host_emu.sh NAME [OBJECTS / LINKER ARGS...]
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
name=$1
shift
if ! command -v g++ >/dev/null; then
    echo "${name}_test: g++ not found (needed to build tests/gpu/$name.cpp)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# -fno-strict-aliasing: the device's 16-byte loads and stores (src/gpu/ff/ldst.cuh) move structs
# through uint4, which g++ at -O2 may reorder around the struct's own accesses (seen: the
# emulated inverse NTT wrong at -O2, right at -O1 or with this flag).
g++ -std=c++17 -O2 -fno-strict-aliasing -Wall -Wextra -Werror -Wno-unknown-pragmas -Isrc -Iinclude \
    "tests/gpu/$name.cpp" -o "$tmp/$name" "$@"
"$tmp/$name"
