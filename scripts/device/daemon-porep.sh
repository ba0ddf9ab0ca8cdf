#!/usr/bin/env bash
# The daemon on a GPU machine: GPU CLI proofs against the CPU's (tests/gpu/gpu_prove_test.sh),
# the daemon with GPU workers (tests/gpu/gpu_daemon_test.sh, its proofs kept under $OUT for
# snarkjs), then the PoRep-shaped benchmark: scripts/porep-bench at 2^LOG (first argument,
# default 22) with witnesses sent as paths, COUNT proofs (default 2) and a compare over GRID
# (default "2:2:2 1:2:2 2:4:2", gw:pw:j).
#   bash scripts/device/daemon-porep.sh [LOG]     (see common.sh: the pack, $OUT)
set -u
LOG=${1:-22}
O=${OUT:-/tmp/daemon-porep-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/cz || { echo "daemon-porep: cannot unpack the pack" >&2; exit 2; }
dev_header
echo "python: $CUZK_PYTHON"
dev_prove_test "$O/prove.log"
t0=$(date +%s)
GPU_TEST_OUT=/tmp/dproofs timeout 180 tests/gpu/gpu_daemon_test.sh > "$O/daemon.log" 2>&1
echo "gpu_daemon_test rc=$? ($(( $(date +%s) - t0 )) s)"; tail -4 "$O/daemon.log"
tar -czf "$O/dproofs.tgz" -C /tmp dproofs
t0=$(date +%s)
timeout 330 scripts/porep-bench --log "$LOG" --paths --bin "$CUZK_BIN_DIR" --out /tmp/porep \
  --count "${COUNT:-2}" --rounds 1 --grid "${GRID:-2:2:2 1:2:2 2:4:2}" > "$O/porep.log" 2>&1
echo "porep-bench rc=$? ($(( $(date +%s) - t0 )) s)"
tail -40 "$O/porep.log"
grep -h "proving key loaded\|key cache" /tmp/porep/*.err /tmp/porep/*/*.log 2>/dev/null | head -8
tar -czf "$O/porep.tgz" --exclude=circuit -C /tmp porep
echo "== end $(date -u '+%T')"
