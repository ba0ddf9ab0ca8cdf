#!/usr/bin/env bash
# `cuzk prove` output paths that are not regular files: a full device fails the command
# (exit 2) and stays a device; a symlink stays a link and its target receives the proof.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
BIN=${CUZK_BIN_DIR:-build/bin}
FX=tests/fixtures/bn128
T=$(mktemp -d /tmp/cuzk-write-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
ln -s "$T/proof-target.json" "$T/proof-link.json"
"$BIN/cuzk" prove "$FX/multiplier.zkey" "$FX/multiplier.wtns" "$T/proof-link.json" "$T/public.json"
if [ ! -L "$T/proof-link.json" ] || ! grep -q pi_a "$T/proof-target.json"; then
  echo "FAIL: a symlinked proof.json was replaced or its target not written" >&2; fail=1
fi
if [ "$(id -u)" = 0 ] && mknod "$T/full" c 1 7 2>/dev/null; then
  rc=0
  "$BIN/cuzk" prove "$FX/multiplier.zkey" "$FX/multiplier.wtns" "$T/full" "$T/public.json" \
    2>"$T/err" || rc=$?
  if [ "$rc" != 2 ] || ! grep -q "No space left" "$T/err"; then
    echo "FAIL: proof.json on a full device: exit $rc, $(cat "$T/err")" >&2; fail=1
  fi
  if [ ! -c "$T/full" ]; then
    echo "FAIL: the full device was replaced by a regular file" >&2; fail=1
  fi
else
  echo "json_write_cli: not root (or mknod refused): device case skipped" >&2
fi
[ "$fail" = 0 ] && echo "json_write_cli: ok"
exit "$fail"
