#!/usr/bin/env bash
# A daemon given ten times the partitions its working budget holds: see oversub_test.py. Runs it
# with Debian's /usr/bin/python3 (python3-grpcio); the Python test stops the daemon however it
# ends (a finally block, and the daemon dies with it: PR_SET_PDEATHSIG).
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
BIN=${CUZK_BIN_DIR:-build/bin}
for b in cuzk cuzk-daemon; do
  [ -x "$BIN/$b" ] || { echo "oversub_test: $BIN/$b was not built (scripts/install-deps)" >&2
                        exit 1; }
done
exec /usr/bin/python3 tests/daemon/oversub_test.py "$BIN/cuzk-daemon"
