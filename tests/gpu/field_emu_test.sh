#!/usr/bin/env bash
# The CUDA field arithmetic (src/gpu/field.cuh) on the host, its PTX carry primitives emulated,
# against GMP (tests/gpu/field_emu.cpp): needs only g++ and GMP, so it runs without a GPU and
# without nvcc (CI), and covers the carry logic of the device's Montgomery multiplication.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
if ! command -v g++ >/dev/null; then
    echo "field_emu_test: g++ not found (needed to build tests/gpu/field_emu.cpp)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unknown-pragmas -Isrc -Iinclude \
    tests/gpu/field_emu.cpp -o "$tmp/field_emu" -lgmp
"$tmp/field_emu"
