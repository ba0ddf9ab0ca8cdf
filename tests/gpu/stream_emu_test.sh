#!/usr/bin/env bash
# MSMs over streamed point sets (src/gpu/msm/stream.cuh) on the host (tests/gpu/stream_emu.cpp):
# the chunk loop's copies, events and sums with emulated streams, for chunk counts 1, 2, 3, 7,
# a chunk that does not divide the range and chunks of one point, sets with points at infinity
# in front and among the points, G1 and G2 of both curves: streamed = resident = plain sum.
# Needs only g++, so it runs in CI, without a GPU and without nvcc.
exec bash "$(dirname "$0")/host_emu.sh" stream_emu
