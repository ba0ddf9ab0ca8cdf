#!/usr/bin/env bash
# The CUDA field arithmetic (src/gpu/ff/field.cuh) on the host, its PTX carry primitives emulated,
# against GMP (tests/gpu/field_emu.cpp): needs only g++ and GMP, so it runs without a GPU and
# without nvcc (CI), and covers the carry logic of the device's Montgomery multiplication.
exec bash "$(dirname "$0")/host_emu.sh" field_emu -lgmp
