#!/usr/bin/env bash
# Device run of 11:31 (docs/PERFORMANCE.md): the GPU tests, then the resident-key latency of both
# curves at 2^24 dense, after A, B1 and B2 came to share the witness upload and sort. It is now
# scripts/device/resident-bn254.sh for both curves with 4 proofs each (that script also runs
# staged_test and gpu_daemon_test). Run from the repository root on the GPU machine after
# scripts/device-pack here, with build-device carried.
CURVES=${CURVES:-"bn128 bls12381"} REPEAT=${REPEAT:-4} exec bash "$(dirname "$0")/resident-bn254.sh"
