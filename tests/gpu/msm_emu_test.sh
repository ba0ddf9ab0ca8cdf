#!/usr/bin/env bash
# The MSM's digit, table and bucket accumulation kernels (src/gpu/msm_kernels.cuh) on the host,
# one emulated thread at a time (tests/gpu/msm_emu.cpp): the digits of every window plan sum to
# the scalars, the tables equal repeated doubling, the batch-affine kernels leave the buckets
# and carries k_accum1 leaves, for both curves and groups. Needs only g++, so it runs in CI,
# without a GPU and without nvcc.
exec bash "$(dirname "$0")/host_emu.sh" msm_emu
