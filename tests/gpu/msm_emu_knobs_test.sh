#!/usr/bin/env bash
# msm_emu (tests/gpu/msm_emu_test.sh) with the batch-affine kernels' compile-time knobs set off
# their defaults, so that the paths kept for A/B runs on the GPU stay right too: the running
# inverse parked in BN254 G2's quads as well (CUZK_GPU_BA_IV_PARK 15), the y coordinates parked
# in BN254 G2's pair sums and not in BLS12-381 G2's (CUZK_GPU_BA_Y_PARK 1, the default's bits
# swapped), BN254 G2's in k_ba_pairs only, not in pass B (CUZK_GPU_BA_Y_PARK_B 2), BLS12-381
# G2's late y loads with x read again (CUZK_GPU_BA_LATE_Y_96 2, reached with its y not parked),
# y1 read back twice where y is parked (CUZK_GPU_BA_Y1_AGAIN 1), the halves' plain addition loop
# (CUZK_GPU_BA_OPEN_COPY 0), the quads' and octs' prefix products made as they close
# (CUZK_GPU_BA_QUAD_DEFER 0), in the one-lane k_ba_pairs too (CUZK_GPU_BA_QUAD_DEFER_1L 0).
# Needs only g++.
exec bash "$(dirname "$0")/host_emu.sh" msm_emu -DCUZK_GPU_BA_IV_PARK=15 -DCUZK_GPU_BA_Y_PARK=1 \
    -DCUZK_GPU_BA_Y_PARK_B=2 -DCUZK_GPU_BA_LATE_Y_96=2 -DCUZK_GPU_BA_Y1_AGAIN=1 \
    -DCUZK_GPU_BA_OPEN_COPY=0 -DCUZK_GPU_BA_QUAD_DEFER=0 \
    -DCUZK_GPU_BA_QUAD_DEFER_1L=0
