#!/usr/bin/env bash
# The NTT's kernels (src/gpu/ntt/ntt_kernels.cuh) on the host, driven as the device code drives
# them (tests/gpu/ntt_emu.cpp): forward, inverse, cosets and H for both curves' Fr and every
# pass geometry, against GMP. Needs only gcc, g++ and GMP, so it runs in CI, without a GPU and
# without nvcc.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Isrc -Iinclude -c src/gpu/gpu_plan.c -o "$tmp/gpu_plan.o"
bash tests/gpu/host_emu.sh ntt_emu "$tmp/gpu_plan.o" -lgmp -pthread
