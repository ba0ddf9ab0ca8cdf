#!/usr/bin/env bash
# The MSM's bucket accumulation kernels (src/gpu/msm_kernels.cuh) on the host, one emulated
# thread at a time (tests/gpu/msm_emu.cpp): the batch-affine kernels must leave the buckets and
# carries k_accum1 leaves, for both curves and groups. Needs only g++, so it runs in CI,
# without a GPU and without nvcc.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
if ! command -v g++ >/dev/null; then
    echo "msm_emu_test: g++ not found (needed to build tests/gpu/msm_emu.cpp)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unknown-pragmas -Isrc -Iinclude \
    tests/gpu/msm_emu.cpp -o "$tmp/msm_emu"
"$tmp/msm_emu"
