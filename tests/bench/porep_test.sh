#!/usr/bin/env bash
# scripts/porep-bench end to end at a tiny size (2^10 domain, BLS12-381, 3 partitions, two
# configs, one compare round): circuit, key, distinct witnesses, configs, batch, compare and the
# summary all appear with the right counts; every proof's public signals match its own
# partition's witness. --generated: the same shape with no files, proofs checked by
# snarkjs. Without python3-grpcio it stops at once with a message saying what to
# install (the GPU machine may lack it).
set -euo pipefail
cd "${CUZK_SOURCE_DIR:-$(dirname "$0")/../..}"
SRC=$PWD
BIN=${CUZK_BIN_DIR:-build/bin}
PY=/usr/bin/python3
for b in cuzk cuzk-daemon; do
  [ -x "$BIN/$b" ] || { echo "porep_test: $BIN/$b was not built" >&2; exit 1; }
done
T=$(mktemp -d /tmp/cuzk-porep-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# without grpc: a Python that does not see Debian's dist-packages (-S: no site)
printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' > "$T/nogrpc-python"
chmod +x "$T/nogrpc-python"
rc=0
CUZK_PYTHON=$T/nogrpc-python scripts/porep-bench --bin "$BIN" --out "$T/x" > "$T/nogrpc.out" 2>&1 \
  || rc=$?
[ "$rc" = 2 ] && grep -q "needs python3-grpcio and python3-protobuf" "$T/nogrpc.out" \
  || fail "without grpc: exit $rc: $(cat "$T/nogrpc.out")"
[ ! -e "$T/x/circuit" ] || fail "without grpc it still generated a circuit"

rc=0
scripts/porep-bench --bin "$BIN" --out "$T/out" --log 10 --partitions 3 --count 2 --rounds 1 \
  --grid "2:2:2 1:1:1" --budget 512MiB > "$T/run.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "porep-bench exit $rc: $(cat "$T/run.out")"
O=$T/out
for f in circuit/circuit.zkey circuit/w1.wtns circuit/w2.wtns circuit/w3.wtns gw2-pw2-j2.toml \
         gw1-pw1-j1.toml batch.json report/batch.md report/batch-memory.svg \
         compare-gw1-pw1-j1.json report-gw1-pw1-j1/compare-memory.svg summary.md; do
  [ -s "$O/$f" ] || fail "porep-bench did not write $f"
done
cmp -s "$O/circuit/w1.wtns" "$O/circuit/w2.wtns" && fail "partition witnesses are identical"
grep -q "^partition_workers = 1$" "$O/gw1-pw1-j1.toml" && grep -q "^max_jobs_in_flight = 1$" \
  "$O/gw1-pw1-j1.toml" && grep -q "^workers_per_device = 1$" "$O/gw1-pw1-j1.toml" \
  || fail "grid config: $(cat "$O/gw1-pw1-j1.toml")"
$PY - "$O" <<'PYEOF' || fail "porep-bench reports: $(cat "$T/run.out")"
import json, os, sys
o = sys.argv[1]
b = json.load(open(os.path.join(o, "batch.json")))
assert b["command"] == "batch" and b["completed"] == 2 and b["failed"] == 0, b
assert b["partitions"] == 3 and b["concurrency"] == 2 and b["checked_public"] == 2, b
assert b["daemon"]["exit_status"] == 0
c = json.load(open(os.path.join(o, "compare-gw1-pw1-j1.json")))
assert c["exit_status"] == 0 and c["rounds"] == 1 and c["partitions"] == 3, c
for k in ("s_per_proof", "peak_rss"):
    assert len(c["metrics"][k]["A"]["values"]) == 1 and c["metrics"][k]["B"]["mean"] > 0
s = open(os.path.join(o, "summary.md")).read()
assert "1008 constraints (domain 2^10), 3 partitions per proof" in s, s
assert "| gw1-pw1-j1 |" in s and "Best gw/pw/j" in s, s
PYEOF
grep -q "reusing" "$T/run.out" && fail "first run claims to reuse the circuit"
# a second run with the same size reuses circuit, key and witnesses
rc=0
scripts/porep-bench --bin "$BIN" --out "$T/out" --log 10 --partitions 3 --count 1 --no-compare \
  --budget 512MiB > "$T/run2.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "reusing" "$T/run2.out" \
  || fail "second run: exit $rc: $(cat "$T/run2.out")"
# --paths: the daemon reads the witnesses from the circuit folder (daemon.witness_dir)
rc=0
scripts/porep-bench --bin "$BIN" --out "$T/out" --log 10 --partitions 3 --count 1 --no-compare \
  --budget 512MiB --paths > "$T/run3.out" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q "^witness_dir = \"$T/out/circuit\"$" "$T/out/gw2-pw2-j2.toml" &&
  $PY -c 'import json,sys; b=json.load(open(sys.argv[1])); assert b["completed"] == 1 and b["failed"] == 0, b' \
    "$T/out/batch.json" || fail "--paths run: exit $rc: $(cat "$T/run3.out")"

# --generated: no files; the daemon makes the key and the witnesses (seeds 1..3, runs of 256
# constraints made on the partitions' threads), proofs self-verified (prover.verify on) and
# checked by snarkjs against the vk of the same key made from files (gen-circuit + setup with
# the seed's bytes + export-vk: byte-identical keys)
V=$T/vkgen
"$BIN/cuzk" gen-circuit --constraints 1008 --curve bls12381 --profile sparse-bits --seed 1 \
  --segment 256 -o "$V" --quiet
"$BIN/cuzk" setup --quiet --seed 31 "$V/circuit.r1cs" "$V/circuit.zkey" 2> /dev/null
"$BIN/cuzk" export-vk "$V/circuit.zkey" "$V/vk.json"
rc=0
scripts/porep-bench --bin "$BIN" --out "$T/gen" --log 10 --partitions 3 --count 2 --no-compare \
  --budget 512MiB --generated --segment 256 --vk "$V/vk.json" > "$T/run4.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "--generated run: exit $rc: $(cat "$T/run4.out")"
[ ! -e "$T/gen/circuit" ] || fail "--generated wrote a circuit folder"
grep -q '^generate_constraints = 1008$' "$T/gen/gw2-pw2-j2.toml" &&
  grep -q '^generate_segment = 256$' "$T/gen/gw2-pw2-j2.toml" &&
  grep -q '^verify = true$' "$T/gen/gw2-pw2-j2.toml" && ! grep -q zkey "$T/gen/gw2-pw2-j2.toml" \
  || fail "--generated config: $(cat "$T/gen/gw2-pw2-j2.toml")"
$PY - "$T/gen" <<'PYEOF' || fail "--generated reports: $(cat "$T/run4.out")"
import json, os, sys
o = sys.argv[1]
b = json.load(open(os.path.join(o, "batch.json")))
assert b["completed"] == 2 and b["failed"] == 0 and b["partitions"] == 3, b
assert b["snarkjs"]["proofs"] == 6 and b["snarkjs"]["verified"] == 6, b["snarkjs"]
assert b["stages_mean_ms"]["witness"] > 0, b["stages_mean_ms"]
assert b["memory"]["peak_rss"] > 0
for f in ("report/batch.md", "report/batch-memory.svg", "summary.md"):
    assert os.path.getsize(os.path.join(o, f)) > 0, f
s = open(os.path.join(o, "summary.md")).read()
assert "generated in the daemon's memory" in s and "snarkjs verified 6 of 6" in s, s
# the budget check: the working budget the config set, the key's bytes, the RSS against them
m = b["memory"]
assert m["budgets"]["working_budget"] == 512 << 20, m["budgets"]
assert m["peak_keys"] > 0 and m["peak_owners"]["keys"] > 0, m["peak_owners"]
assert "working budget 0.5 GB" in s and "Memory: peak RSS" in s, s
PYEOF

if [ "$fails" = 0 ]; then echo "porep_test: all passed"; else echo "porep_test: $fails failed"; fi
[ "$fails" = 0 ]
