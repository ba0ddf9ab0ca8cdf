#!/usr/bin/env bash
# Device run: GPU CLI proofs, the daemon with GPU workers, PoRep-shaped bench.
# Run on the GPU machine from the repository root, after scripts/device-pack here, with
# build-device carried (device tool: run "bash scripts/device/THIS.sh", carry ["build-device"]).
set -u
LOG=${1:-22}
mkdir -p /tmp/cz && tar -xJf ${CUZK_PACK:-build-device/cuzk-device.tar.xz} -C /tmp/cz && . /tmp/cz/env.sh
echo "python: $CUZK_PYTHON; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cpus"
t0=$(date +%s)
timeout 150 tests/gpu/gpu_prove_test.sh > $OUT/prove.log 2>&1; echo "gpu_prove_test rc=$? $(tail -1 $OUT/prove.log) ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
GPU_TEST_OUT=/tmp/dproofs timeout 180 tests/gpu/gpu_daemon_test.sh > $OUT/daemon.log 2>&1; echo "gpu_daemon_test rc=$? ($(( $(date +%s) - t0 )) s)"; tail -4 $OUT/daemon.log
tar -czf $OUT/dproofs.tgz -C /tmp dproofs
t0=$(date +%s)
timeout 330 scripts/porep-bench --log $LOG --bin $CUZK_BIN_DIR --out /tmp/porep --count 2 --rounds 1 \
  --grid "2:2:2 1:2:2 2:4:2" > $OUT/porep.log 2>&1; echo "porep rc=$? ($(( $(date +%s) - t0 )) s)"
tail -40 $OUT/porep.log
grep -h "proving key loaded\|key cache" /tmp/porep/*.err /tmp/porep/*/*.log 2>/dev/null | head -8
tar -czf $OUT/porep.tgz --exclude=circuit -C /tmp porep
