#!/usr/bin/env bash
# Cluster test: a throwaway PostgreSQL (initdb + pg_ctl in a temporary folder, unix socket only,
# run as `nobody` when we are root) and several cuzk-daemon nodes on it, driven with
# python3-grpcio (cluster_test.py). The trap stops the daemons and PostgreSQL on any exit.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
BIN=${CUZK_BIN_DIR:-build/bin}
if [ ! -x "$BIN/cuzk-daemon" ]; then
  echo "cluster_test: $BIN/cuzk-daemon was not built (scripts/install-deps)" >&2
  exit 1
fi
source tests/cluster/pg.sh
if [ ! -x "$PG_BINDIR/initdb" ] || ! pkg-config --exists libpq; then
  echo "cluster_test: needs PostgreSQL and libpq-dev (scripts/install-deps)" >&2
  exit 1
fi
TMP=$(mktemp -d /tmp/cuzk-cluster-test.XXXXXX)
chmod 755 "$TMP" # the database server runs as another user
export TMP
cleanup() {
  local rc=$?
  if [ -f "$TMP/pids" ]; then
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$TMP/pids"
  fi
  pg_stop
  if [ $rc -ne 0 ] && [ -f "$PG_DIR/postgres.log" ]; then
    echo "--- postgres.log (tail)" >&2
    tail -20 "$PG_DIR/postgres.log" >&2
  fi
  rm -rf "$TMP"
  exit $rc
}
trap cleanup EXIT INT TERM
pg_start "$TMP/pg"
/usr/bin/python3 tests/cluster/cluster_test.py "$BIN/cuzk-daemon"
