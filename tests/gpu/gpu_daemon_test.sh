#!/usr/bin/env bash
# cuzk-daemon's GPU workers end to end (gpu_daemon_test.py): on the real device(s), or, on a
# machine without a GPU, on two emulated devices (the test-only config key
# gpus.emulated_devices). CUZK_PYTHON: a python3 with grpc (default /usr/bin/python3).
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export CUZK_BIN_DIR=${CUZK_BIN_DIR:-$ROOT/build/bin}
PY=${CUZK_PYTHON:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
EMULATED=()
d=$ROOT/tests/fixtures/bn128
if ! "$CUZK_BIN_DIR/cuzk" prove --quiet --backend gpu "$d/multiplier.zkey" "$d/multiplier.wtns" \
     "$T/p" "$T/q" 2>"$T/err"; then
  if grep -q NO_DEVICE "$T/err"; then
    # No GPU: the same test on two emulated devices (gpus.emulated_devices), which still runs
    # the GPU worker pipeline end to end.
    echo "gpu_daemon_test: no CUDA device: emulated GPUs ($(head -c 120 "$T/err"))"
    EMULATED=(--emulated-devices 2)
  else
    echo "gpu_daemon_test: GPU prove failed: $(cat "$T/err")" >&2
    exit 1
  fi
fi
[ -x "$CUZK_BIN_DIR/cuzk-daemon" ] || { echo "gpu_daemon_test: cuzk-daemon was not built" >&2; exit 1; }
exec "$PY" "$ROOT/tests/gpu/gpu_daemon_test.py" "${EMULATED[@]}"
