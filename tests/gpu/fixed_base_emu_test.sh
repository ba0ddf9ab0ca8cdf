#!/usr/bin/env bash
# The fixed-base multiplication's kernel (src/gpu/ec/fixed_base_kernels.cuh) on the host
# (tests/gpu/fixed_base_emu.cpp): the chain 2^i G, the window table and the products k_i G in
# chunks, for both curves and groups, byte for byte against the CPU's k G (src/ec). Needs only
# gcc and g++, so it runs in CI, without a GPU and without nvcc.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in tests/gpu/fixed_base_ref.c src/ff/ff.c; do
    gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Isrc -Iinclude -c "$f" -o "$tmp/$(basename "$f" .c).o"
done
bash tests/gpu/host_emu.sh fixed_base_emu "$tmp/fixed_base_ref.o" "$tmp/ff.o" -pthread
