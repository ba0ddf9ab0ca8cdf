#!/usr/bin/env bash
# Device run 3: GPU proofs byte-identical to CPU proofs, the daemon's GPU workers, then a full
# Run on the GPU machine from the repository root, after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/THIS.sh", carry ["build-device"]).
# BN254 proof at 2^24 dense with the witness-only MSMs overlapping synthesis.
set -u
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
B=$CUZK_BIN_DIR
timeout 100 tests/gpu/gpu_prove_test.sh > $OUT/prove.log 2>&1; echo "gpu_prove_test rc=$? $(tail -1 $OUT/prove.log)"
timeout 100 tests/gpu/gpu_daemon_test.sh > $OUT/daemon.log 2>&1; echo "gpu_daemon_test rc=$? $(tail -1 $OUT/daemon.log)"
n=$(( (1 << 24) - (1 << 18) ))
for curve in bn128 bls12381; do
  [ $curve = bls12381 ] && [ "${BLS:-0}" = 0 ] && continue
  d=/tmp/e2e/$curve; mkdir -p $d
  timeout 100 $B/cuzk gen-circuit --constraints $n --curve $curve --profile dense --seed 1 -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
  timeout 200 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 || echo "setup failed"
  for g2 in gpu gpu cpu; do timeout 120 $B/cuzk prove --backend gpu --g2 $g2 $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json 2>&1 | tail -1; done
  cp $d/p.json $OUT/e2e-$curve-proof.json; cp $d/pub.json $OUT/e2e-$curve-public.json; $B/cuzk export-vk $d/circuit.zkey $OUT/e2e-$curve-vk.json
done
