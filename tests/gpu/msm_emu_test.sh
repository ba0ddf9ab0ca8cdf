#!/usr/bin/env bash
# The MSM's kernels (src/gpu/msm/msm_kernels.cuh, msm_reduce.cuh) on the host (tests/gpu/
# msm_emu.cpp): the scalars' classification and range check, the digits of every window plan
# sum to the scalars, the tables equal repeated doubling, the batch-affine kernels with the
# product tree leave the buckets and carries k_accum1 leaves, the bucket reduction equals
# sum (j + 1) B_j, for both curves and groups. Needs only g++, so it runs in CI,
# without a GPU and without nvcc.
exec bash "$(dirname "$0")/host_emu.sh" msm_emu
