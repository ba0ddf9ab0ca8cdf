#!/usr/bin/env bash
# Builds tests/gpu/NAME.cpp (device code compiled for the host with its PTX primitives
# emulated, CUZK_GPU_HOST_EMU) with g++ and runs it: the runner of field_emu_test.sh and
# msm_emu_test.sh, which need no GPU and no nvcc, so they run in CI.
#   tests/gpu/host_emu.sh NAME [LINKER ARGS...]
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
g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unknown-pragmas -Isrc -Iinclude \
    "tests/gpu/$name.cpp" -o "$tmp/$name" "$@"
"$tmp/$name"
