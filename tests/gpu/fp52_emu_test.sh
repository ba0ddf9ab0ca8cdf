#!/usr/bin/env bash
# The FP64-pipe Montgomery multiplication (src/gpu/fp52.cuh) on the host against GMP
# (tests/gpu/fp52_emu.cpp): g++ with -frounding-math, so that the C library's fma under
# FE_TOWARDZERO stands for the device's __fma_rz; needs no GPU and no nvcc (CI).
exec bash "$(dirname "$0")/host_emu.sh" fp52_emu -frounding-math -lgmp
