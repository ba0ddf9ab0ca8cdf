#!/usr/bin/env bash
# cuzk-bench stress and the SVG plots, against the real cuzk-daemon on loopback (demo circuits):
#  0. the client's helpers: the public values it reads from a .wtns equal snarkjs's public.json
#     for the fixtures; the result check rejects wrong signals, counts and proofs; the seeded
#     arrival schedules (fixed counts exact, Poisson rate within 5%, streams independent);
#  1. stress, fixed arrivals: per class exactly rate x duration proofs submitted (the arrival
#     schedule's own arithmetic), all completed, every result's public signals checked and every
#     partition proof verified by snarkjs; a 1 ms LOW deadline is missed by every LOW proof, a
#     60 s CRITICAL deadline by none; the JSON and Markdown reports have their fields; with the
#     wrong verification key snarkjs rejects every proof and stress exits 1;
#  2. --report writes SVGs that parse as XML, have labelled axes with units, and keep every
#     plotted point inside the plot; batch, soak and compare write theirs too (compare: both
#     configurations' memory curves on one plot);
#  3. a daemon killed (SIGKILL) mid-stress is reported as such within seconds, exit 1; a daemon
#     reached by --addr that dies is reported as no longer answering;
#  4. usage errors: an unknown circuit, a bad priority, a mix circuit without a witness: exit 2
#     with a message naming the problem; without python3-grpcio a clear message, exit 2.
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
SRC=$PWD
BIN=${CUZK_BIN_DIR:-build/bin}
PY=/usr/bin/python3
if [ ! -x "$BIN/cuzk-daemon" ]; then
  echo "stress_test: $BIN/cuzk-daemon was not built (scripts/install-deps)" >&2
  exit 1
fi
BENCH=$SRC/scripts/cuzk-bench
export CUZK_DAEMON=$(cd "$BIN" && pwd)/cuzk-daemon
T=$(mktemp -d /tmp/cuzk-stress-test.XXXXXX)
dpid=
cleanup() { [ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
# A command that fails outside a check ends the test (set -e): say which (a CI run once ended
# here with no FAIL line, only bash's own "wait_for: No record of process").
trap 'echo "stress_test: line $LINENO: command failed (exit $?)" >&2' ERR
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
FX=$SRC/tests/fixtures/bn128
WIT=(--witness "bn128-multiplier=$FX/multiplier.wtns" --witness "bn128-poseidon=$FX/poseidon.wtns")

# SVG checker: parses, has an <svg> root with a viewBox, axis labels with units, and every
# polyline point and rect inside the view box. Prints nothing on success.
cat > "$T/svgcheck.py" <<'PYEOF'
import re, sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    assert root.tag == NS + "svg", (path, root.tag)
    w, h = float(root.get("width")), float(root.get("height"))
    texts = [t.text or "" for t in root.iter(NS + "text")]
    units = [t for t in texts if re.search(r"\((s|MiB|GiB|count|number|1/s)\)", t)]
    assert len(units) >= 2, (path, "axis labels with units", texts)
    n = 0
    for pl in root.iter(NS + "polyline"):
        for pt in pl.get("points").split():
            x, y = map(float, pt.split(","))
            assert 0 <= x <= w and 0 <= y <= h, (path, x, y)
            n += 1
    for r in root.iter(NS + "rect"):
        x, y = float(r.get("x")), float(r.get("y"))
        assert 0 <= x <= w and 0 <= y <= h and float(r.get("height")) >= 0, (path, r.attrib)
        n += 1
    assert n > 2, (path, "nothing plotted")
PYEOF

# 0. the client's own pieces, against independent data: wtns_public reads the public values
# snarkjs wrote to *_public.json; check_result rejects wrong results; the arrival schedule.
$PY - "$BENCH" "$FX" <<'PYEOF' || fail "cuzk-bench helpers"
import importlib.machinery, importlib.util, json, os, sys
ld = importlib.machinery.SourceFileLoader("cuzk_bench", sys.argv[1])
cb = importlib.util.module_from_spec(importlib.util.spec_from_loader("cuzk_bench", ld))
ld.exec_module(cb)
fx = sys.argv[2]
for c in ("multiplier", "poseidon", "chain"):
    want = json.load(open(os.path.join(fx, "%s_public.json" % c)))
    assert cb.wtns_public(os.path.join(fx, "%s.wtns" % c), len(want)) == want, c
pb = cb.cc.pb()
pub = json.load(open(os.path.join(fx, "multiplier_public.json")))
prf = open(os.path.join(fx, "multiplier_proof.json")).read()
def res(pubs, proof=prf):
    return pb.ProofResult(proofs=[pb.PartitionProof(proof_json=proof, public_json=json.dumps(p))
                                  for p in pubs])
assert cb.check_result(res([pub, pub]), [pub, pub], 2) is None
assert "public signals" in cb.check_result(res([pub, ["7"]]), [pub, pub], 2)
assert "1 proofs for 2 partitions" in cb.check_result(res([pub]), [pub, pub], 2)
assert "not a groth16 proof" in cb.check_result(res([pub], '{"protocol": "groth16"}'), [pub], 1)
assert cb.parse_duration("1.5m") == 90 and cb.parse_duration("250ms") == 0.25
assert cb.parse_rate("30/min") == 0.5 and cb.parse_rate("4") == 4
st = [{"rate_per_s": 7.0}, {"rate_per_s": 100.0}]
fx_arr = cb.arrival_times(st, 10.0, "fixed", 3)
assert [i for _, i in fx_arr].count(0) == 70 and [i for _, i in fx_arr].count(1) == 1000
po = cb.arrival_times(st, 100.0, "poisson", 3)
n1 = [i for _, i in po].count(1)
assert 9500 < n1 < 10500 and po == sorted(po) and po == cb.arrival_times(st, 100.0, "poisson", 3)
assert po != cb.arrival_times(st, 100.0, "poisson", 4)
# stream 0's arrivals do not move when a stream is added
assert [t for t, i in cb.arrival_times(st[:1], 100.0, "poisson", 3)] == [t for t, i in po if i == 0]
lo, hi, ticks, dec = cb._ticks(0.013, 0.171)
assert lo <= 0.013 and hi >= 0.171 and ticks == sorted(ticks) and 3 <= len(ticks) <= 11, ticks
PYEOF

# 1. stress, fixed arrivals: 8/s CRITICAL multiplier, 3/s LOW poseidon x2 partitions, 3 s
if "$BENCH" --spawn "$T/small.toml" --json "$T/stress.json" --report "$T/rep" stress \
     --mix bn128-multiplier:CRITICAL:8/s,bn128-poseidon:low:3/s:2 "${WIT[@]}" \
     --duration 3s --arrivals fixed --seed 7 --deadline CRITICAL=60s,LOW=1ms \
     --vk "bn128-multiplier=$FX/multiplier_vk.json" --vk "bn128-poseidon=$FX/poseidon_vk.json" \
     > "$T/stress.out" 2> "$T/stress.err"; then
  $PY - "$T/stress.json" <<'PYEOF' || fail "stress JSON: $(cat "$T/stress.out" "$T/stress.err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == "stress" and d["exit_status"] == 0 and not d["daemon_died"], d
c, l = d["classes"]["CRITICAL"], d["classes"]["LOW"]
# fixed arrivals with a phase in [0, 1/rate): exactly rate x duration in [0, duration)
assert c["submitted"] == 24 and l["submitted"] == 9, (c, l)
for k in (c, l):
    assert k["completed"] == k["submitted"] and k["failed"] == 0 and k["unfinished"] == 0, k
    lt = k["latency_s"]
    assert 0 < lt["min"] <= lt["p50"] <= lt["p95"] <= lt["p99"] <= lt["max"], lt
assert c["deadline_s"] == 60 and c["late"] == 0 and c["deadline_misses"] == 0, c
assert l["deadline_s"] == 0.001 and l["late"] == 9 and l["deadline_misses"] == 9, l
assert d["total"]["submitted"] == 33 and d["total"]["completed"] == 33, d["total"]
assert d["checked_public"] == 33
assert d["snarkjs"] == {"proofs": 24 + 9 * 2, "verified": 42, "bad": [],
                        "circuits": ["bn128-multiplier", "bn128-poseidon"]}, d["snarkjs"]
s = {x["spec"]: x for x in d["streams"]}
p = s["bn128-poseidon:low:3/s:2"]
assert p["partitions"] == 2 and p["rate_per_s"] == 3 and p["priority"] == "LOW", p
assert len(d["completions"]) == 33 and all(x[2] for x in d["completions"])
assert sorted(x[3] for x in d["completions"]).count("LOW") == 9
assert d["wall_s"] >= 3.0 and d["memory"]["source"] == "proc" and d["memory"]["samples"] >= 10
assert d["memory_owners_curve"] and all(len(o) == 4 for o in d["memory_owners_curve"])
assert d["daemon"]["exit_status"] == 0 and not d["daemon"]["died_during_run"]
assert sorted(d["plots"]) == ["stress-latency.svg", "stress-memory.svg", "stress-throughput.svg"]
PYEOF
  grep -Eq "^CRITICAL +24 +24 +0 +0 .* 60s +0$" "$T/stress.out" \
    && grep -Eq "^LOW +9 +9 +0 +0 .* 0.001s +9$" "$T/stress.out" \
    || fail "stress text table: $(cat "$T/stress.out")"
  grep -q "| CRITICAL | 24 | 24 | 0 | 0 |" "$T/rep/stress.md" || fail "stress markdown"
  $PY "$T/svgcheck.py" "$T"/rep/stress-*.svg || fail "stress SVGs"
else
  fail "stress exited $?: $(cat "$T/stress.out" "$T/stress.err")"
fi

# 1b. snarkjs really checks: the wrong verification key fails every proof, exit 1
rc=0
"$BENCH" --spawn "$T/small.toml" --json "$T/badvk.json" stress --mix bn128-multiplier:HIGH:5/s \
  "${WIT[@]}" --duration 1s --arrivals fixed --vk "bn128-multiplier=$FX/poseidon_vk.json" \
  > "$T/badvk.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "wrong vk: exit $rc: $(cat "$T/badvk.out")"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["snarkjs"]; \
  assert s["proofs"] == 5 and s["verified"] == 0 and s["bad"] == [0, 1, 2, 3, 4], s' \
  "$T/badvk.json" || fail "wrong vk JSON: $(cat "$T/badvk.out")"

# 2. the other commands' plots (batch, soak, compare) parse and have labelled axes
"$BENCH" --spawn "$T/small.toml" --report "$T/rep" batch --circuit bn128-poseidon \
  --witness "$FX/poseidon.wtns" -c 4 -j 2 > "$T/batch.out" 2>&1 \
  || fail "batch: $(cat "$T/batch.out")"
# (soak only for its plots here: bench_test.sh checks the slope; ASan builds grow by design)
"$BENCH" --spawn "$T/small.toml" --report "$T/rep" soak --circuit bn128-multiplier \
  --witness "$FX/multiplier.wtns" -c 12 --max-slope 1000000000 > "$T/soak.out" 2>&1 \
  || fail "soak: $(cat "$T/soak.out")"
sed 's/partition_workers = 2/partition_workers = 1/' "$T/small.toml" > "$T/pw1.toml"
"$BENCH" --report "$T/rep" compare "$T/small.toml" "$T/pw1.toml" --circuit bn128-poseidon \
  --witness "$FX/poseidon.wtns" -c 2 -j 2 --rounds 2 > "$T/cmp.out" 2>&1 \
  || fail "compare: $(cat "$T/cmp.out")"
for f in batch-memory batch-latency batch-throughput soak-rss soak-latency soak-throughput \
         compare-memory compare-latency compare-rounds; do
  [ -s "$T/rep/$f.svg" ] || fail "no $f.svg"
done
$PY "$T/svgcheck.py" "$T"/rep/batch-*.svg "$T"/rep/soak-*.svg "$T"/rep/compare-*.svg \
  || fail "batch/soak/compare SVGs"
# compare: both configurations' memory curves (2 rounds each) on one plot
$PY - "$T/rep/compare-memory.svg" <<'PYEOF' || fail "compare memory plot"
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
labels = [t.text for t in root.iter(NS + "text")]
for want in ("A round 1 RSS", "A round 2 RSS", "B round 1 RSS", "B round 2 RSS"):
    assert want in labels, labels
assert len(list(root.iter(NS + "polyline"))) == 4
PYEOF
grep -q "compare-memory.svg" "$T/rep/compare.md" || fail "compare.md does not show its plots"

# 3a. daemon killed mid-stress (--spawn)
"$BENCH" --spawn "$T/small.toml" --json "$T/kill.json" stress \
  --mix bn128-poseidon:HIGH:20/s "${WIT[@]}" --duration 60s > "$T/kill.out" 2> "$T/kill.err" &
bp=$!
kpid=
for _ in $(seq 200); do
  kpid=$(sed -n 's/^daemon: pid \([0-9]*\) .*/\1/p' "$T/kill.err" 2>/dev/null)
  [ -n "$kpid" ] && break
  sleep 0.1
done
if [ -z "$kpid" ]; then
  fail "no daemon pid line: $(cat "$T/kill.err")"
  kill "$bp" || true
else
  sleep 1.5
  kill -9 "$kpid" 2>/dev/null ||
    fail "the spawned daemon (pid $kpid) exited before it was killed: $(cat "$T/kill.err")"
  for _ in $(seq 100); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$bp" 2>/dev/null; then
    fail "stress still running 10 s after the daemon was killed"
    kill "$bp" || true
  fi
  rc=0
  wait "$bp" || rc=$?
  [ "$rc" = 1 ] || fail "killed daemon: stress exit $rc"
  grep -q "daemon exited with status -9 (killed by SIGKILL) during the run" "$T/kill.err" \
    || fail "killed daemon message: $(cat "$T/kill.err")"
  grep -q "^DAEMON DIED after" "$T/kill.out" || fail "killed daemon summary: $(cat "$T/kill.out")"
  $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); h=d["classes"]["HIGH"]; \
    assert d["daemon_died"] and d["daemon"]["died_during_run"] and d["exit_status"] == 1 \
    and "during the run" in d["error"] and h["completed"] >= 1 and h["failed"] == 0 \
    and h["submitted"] == h["completed"] + h["unfinished"] \
    and d["arrivals_sent"] < d["offered"], d' \
    "$T/kill.json" || fail "killed daemon JSON: $(cat "$T/kill.out")"
fi

# 3b. a daemon reached by --addr (no pid known) that dies mid-run
"$CUZK_DAEMON" --config "$T/small.toml" --listen 127.0.0.1:0 2> "$T/d.log" &
dpid=$!
addr=
for _ in $(seq 200); do
  addr=$(sed -n 's/.*cuzk-daemon ready, serving on \([^ ]*\).*/\1/p' "$T/d.log" 2>/dev/null)
  [ -n "$addr" ] && break
  sleep 0.1
done
if [ -z "$addr" ]; then
  fail "daemon for --addr did not start: $(cat "$T/d.log")"
else
  "$BENCH" --addr "$addr" --json "$T/addr.json" stress --mix bn128-multiplier:NORMAL:20/s \
    "${WIT[@]}" --duration 60s > "$T/addr.out" 2> "$T/addr.err" &
  bp=$!
  sleep 2
  kill -9 "$dpid" 2>/dev/null ||
    fail "the --addr daemon exited before it was killed: $(cat "$T/d.log")"
  wait "$dpid" 2>/dev/null || true  # reaped here: no "Killed" line from bash
  dpid=
  for _ in $(seq 150); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$bp" 2>/dev/null; then
    fail "stress --addr still running 15 s after the daemon was killed"
    kill "$bp" || true
  fi
  rc=0
  wait "$bp" || rc=$?
  [ "$rc" = 1 ] || fail "--addr daemon death: exit $rc: $(cat "$T/addr.err")"
  grep -q "stopped answering during the run" "$T/addr.err" \
    || fail "--addr daemon death message: $(cat "$T/addr.err")"
  $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); \
    assert d["daemon_died"] and d["classes"]["NORMAL"]["completed"] >= 1, d' "$T/addr.json" \
    || fail "--addr daemon death JSON"
fi

# 4. usage errors
expect_usage() {  # expect_usage WHAT GREP-PATTERN ARGS...
  local what=$1 pat=$2 rc=0
  shift 2
  "$BENCH" --spawn "$T/small.toml" stress "$@" > "$T/u.out" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q -- "$pat" "$T/u.out" || fail "$what: exit $rc: $(cat "$T/u.out")"
}
expect_usage "unknown circuit" "serves no circuit 'nope'" --mix nope:LOW:1/s \
  --witness "nope=$FX/multiplier.wtns" --duration 1s
expect_usage "bad priority" "priority 'urgent' is not one of" --mix bn128-multiplier:urgent:1/s \
  "${WIT[@]}" --duration 1s
expect_usage "no witness" "no --witness bn128-poseidon=FILE.wtns" --mix bn128-poseidon:LOW:1/s \
  --witness "bn128-multiplier=$FX/multiplier.wtns" --duration 1s
expect_usage "bad rate" "bad rate '5/day'" --mix bn128-multiplier:LOW:5/day "${WIT[@]}"
rc=0
$PY -S "$BENCH" status > "$T/nogrpc.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "install python3-grpcio" "$T/nogrpc.out" \
  || fail "without grpc: exit $rc: $(cat "$T/nogrpc.out")"

if [ "$fails" = 0 ]; then echo "stress_test: all passed"; else echo "stress_test: $fails failed"; fi
[ "$fails" = 0 ]
