#!/usr/bin/env bash
# cuzk-bench against the real cuzk-daemon on loopback (--spawn, port 0), demo circuits:
#  1. batch -c 6 -j 2: 6 completed, 0 failed, and the JSON report has its fields;
#  2. soak -c 20 on the real daemon passes (slope under the default 64 KiB/proof);
#  3. an injected leak (tests/bench/leak_preload.c, LD_PRELOAD'ed into the daemon: 256 KiB per
#     finished RPC) is caught: soak exits 1 with a slope near 256 KiB/proof;
#  compare of two configs has both arms, every round, and B/A ratios;
#  4. a daemon killed with SIGKILL mid-batch is reported as such, exit non-zero, within seconds.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
SRC=$PWD
BIN=${CUZK_BIN_DIR:-build/bin}
PY=/usr/bin/python3
if [ ! -x "$BIN/cuzk-daemon" ]; then
  echo "bench_test: $BIN/cuzk-daemon was not built (needs libgrpc-dev, libprotobuf-c-dev," \
       "protobuf-c-compiler: scripts/install-deps)" >&2
  exit 1
fi
BENCH=$BIN/cuzk-bench
[ -x "$BENCH" ] || BENCH=$SRC/scripts/cuzk-bench
export CUZK_DAEMON=$(cd "$BIN" && pwd)/cuzk-daemon
T=$(mktemp -d /tmp/cuzk-bench-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

cat > "$T/small.toml" <<TOML
[metrics]
listen = ""
[synthesis]
partition_workers = 2
[gpus]
host_threads = 1
[memory]
working_budget = "256MiB"
[[circuit]]
id = "bn128-multiplier"
zkey = "$SRC/tests/fixtures/bn128/multiplier.zkey"
preload = true
[[circuit]]
id = "bn128-poseidon"
zkey = "$SRC/tests/fixtures/bn128/poseidon.zkey"
preload = true
TOML
MUL=(--circuit bn128-multiplier --witness "$SRC/tests/fixtures/bn128/multiplier.wtns")
POS=(--circuit bn128-poseidon --witness "$SRC/tests/fixtures/bn128/poseidon.wtns")

# 1. batch
if "$BENCH" --spawn "$T/small.toml" --json "$T/batch.json" --report "$T/rep" \
     batch "${POS[@]}" -c 6 -j 2 > "$T/batch.out" 2>&1; then
  $PY - "$T/batch.json" <<'PYEOF' || fail "batch JSON report: $(cat "$T/batch.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == "batch" and d["completed"] == 6 and d["failed"] == 0, d
assert d["count"] == 6 and d["concurrency"] == 2
assert d["s_per_proof"] > 0 and abs(d["s_per_proof"] * 6 - d["wall_s"]) < 1e-3
l = d["latency_s"]
assert 0 < l["min"] <= l["p50"] <= l["p95"] <= l["p99"] <= l["max"], l
assert d["wall_s"] >= l["max"]
st = d["stages_mean_ms"]
assert st["prove"] > 0 and st["total"] >= st["prove"] * 0 and set(st) >= {"queue", "synthesis", "prove", "total"}
m = d["memory"]
assert m["source"] == "proc" and m["samples"] >= 2 and m["peak_hwm"] >= m["peak_rss"] > 1 << 20, m
assert d["machine"]["cores"] >= 1 and d["machine"]["cpu_model"]
assert d["daemon"]["spawned"] and d["daemon"]["exit_status"] == 0 and not d["daemon"]["died_during_run"]
PYEOF
  grep -q "proofs: 6 completed, 0 failed" "$T/batch.out" || fail "batch text: $(cat "$T/batch.out")"
  grep -q "completed: 6" "$T/rep/batch.md" || fail "batch markdown report"
else
  fail "batch exited $?: $(cat "$T/batch.out")"
fi

# status: a readable GetStatus, JSON with the keys
"$BENCH" --spawn "$T/small.toml" --json "$T/status.json" status > "$T/status.out" 2>&1 \
  || fail "status: $(cat "$T/status.out")"
grep -q "bn128-poseidon .* host" "$T/status.out" && grep -q "jobs done: 0 completed" "$T/status.out" \
  || fail "status text: $(cat "$T/status.out")"

# compare: two configs (pw 2 vs pw 1), 2 alternating rounds
sed 's/partition_workers = 2/partition_workers = 1/' "$T/small.toml" > "$T/pw1.toml"
"$BENCH" --json "$T/cmp.json" compare "$T/small.toml" "$T/pw1.toml" "${POS[@]}" -c 4 -j 2 \
  --rounds 2 > "$T/cmp.out" 2>&1 || fail "compare: $(cat "$T/cmp.out")"
$PY - "$T/cmp.json" <<'PYEOF' || fail "compare JSON: $(cat "$T/cmp.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == "compare" and d["rounds"] == 2 and d["exit_status"] == 0, d
for k in ("s_per_proof", "p50_s", "p95_s", "peak_rss"):
    m = d["metrics"][k]
    for arm in "AB":
        assert len(m[arm]["values"]) == 2 and m[arm]["min"] <= m[arm]["mean"] <= m[arm]["max"], m
        assert m[arm]["min"] > 0, m
    assert abs(m["ratio_b_over_a"] - m["B"]["mean"] / m["A"]["mean"]) < 1e-9
assert all(len(d["memory_curves"][arm]) == 2 and all(d["memory_curves"][arm]) for arm in "AB")
PYEOF

# Memory-growth checks (2, 3) mean nothing under AddressSanitizer: its quarantine keeps freed
# memory resident on purpose. The normal build runs them; the sanitizer build skips them.
asan_daemon=0
# (no `ldd | grep -q`: under pipefail grep's early exit can fail the pipeline by SIGPIPE)
case "$(ldd "$CUZK_DAEMON" 2>/dev/null)" in *libasan*) asan_daemon=1 ;; esac
if [ "$asan_daemon" = 1 ]; then
  echo "bench_test: daemon built with ASan: soak and leak checks skipped (quarantine holds memory)"
else
# 2. soak on the real daemon passes
"$BENCH" --spawn "$T/small.toml" --json "$T/soak.json" soak "${MUL[@]}" -c 20 > "$T/soak.out" 2>&1 \
  || fail "soak on the real daemon: $(cat "$T/soak.out")"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["passed"] and d["completed"]==20 \
  and len(d["rss_by_proof"])==20 and d["slope_bytes_per_proof"] < 65536, d' "$T/soak.json" \
  || fail "soak JSON: $(cat "$T/soak.out")"

# 3. injected leak: 256 KiB per finished RPC, preloaded into the daemon only (a wrapper that
# execs it, so the pid is the daemon's).
if cc -shared -fPIC -O1 -Wall -Wextra -Werror -o "$T/leak.so" "$SRC/tests/bench/leak_preload.c" -ldl; then
  printf '#!/bin/sh\nLD_PRELOAD=%s CUZK_TEST_LEAK_BYTES=262144 exec %s "$@"\n' \
    "$T/leak.so" "$CUZK_DAEMON" > "$T/leaky-daemon"
  chmod +x "$T/leaky-daemon"
  rc=0
  CUZK_DAEMON=$T/leaky-daemon "$BENCH" --spawn "$T/small.toml" --json "$T/leak.json" \
    soak "${MUL[@]}" -c 20 > "$T/leak.out" 2>&1 || rc=$?
  [ "$rc" = 1 ] || fail "leak not caught (exit $rc): $(cat "$T/leak.out")"
  $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["slope_bytes_per_proof"]; \
    assert not d["passed"] and 200000 < s < 400000, s' "$T/leak.json" \
    || fail "leak slope: $(cat "$T/leak.out")"
else
  fail "cannot build the leak shim"
fi

fi # asan_daemon

# 4. daemon killed mid-run
"$BENCH" --spawn "$T/small.toml" --json "$T/kill.json" batch "${POS[@]}" -c 100000 -j 2 \
  > "$T/kill.out" 2> "$T/kill.err" &
bp=$!
dpid=
for _ in $(seq 200); do
  dpid=$(sed -n 's/^daemon: pid \([0-9]*\) .*/\1/p' "$T/kill.err" 2>/dev/null)
  [ -n "$dpid" ] && break
  sleep 0.1
done
if [ -z "$dpid" ]; then
  fail "no daemon pid line: $(cat "$T/kill.err")"
  kill "$bp" || true
else
  sleep 1
  kill -9 "$dpid"
  t0=$(date +%s)
  rc=0
  for _ in $(seq 100); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$bp" 2>/dev/null; then
    fail "cuzk-bench still running 10 s after the daemon was killed"
    kill "$bp" || true
  fi
  wait "$bp" || rc=$?
  [ "$rc" = 1 ] || fail "killed daemon: exit $rc"
  grep -q "daemon exited with status -9 (killed by SIGKILL) during the run" "$T/kill.err" \
    || fail "killed daemon message: $(cat "$T/kill.err")"
  $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["daemon"]["died_during_run"] \
    and "during the run" in d["error"], d' "$T/kill.json" || fail "killed daemon JSON"
  echo "killed daemon reported after $(( $(date +%s) - t0 )) s"
fi

if [ "$fails" = 0 ]; then echo "bench_test: all passed"; else echo "bench_test: $fails failed"; fi
[ "$fails" = 0 ]
