#!/usr/bin/env bash
# Drives the built cuzk-daemon over loopback gRPC with Debian's python3-grpcio (the system
# python: /usr/bin/python3, not whatever python3 is first on PATH). See daemon_test.py.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
BIN=${CUZK_BIN_DIR:-build/bin}
if [ ! -x "$BIN/cuzk-daemon" ]; then
  echo "daemon_test: $BIN/cuzk-daemon was not built (needs libgrpc-dev, libprotobuf-c-dev," \
       "protobuf-c-compiler: scripts/install-deps)" >&2
  exit 1
fi
exec /usr/bin/python3 tests/daemon/daemon_test.py "$BIN/cuzk-daemon" "$@"
