#!/usr/bin/env bash
# cuzk setup / gen-circuit / gen-witness against snarkjs 0.7.6 on both curves:
#   gen-circuit's r1cs + wtns pass `snarkjs wtns check`; keys from `cuzk setup` pass
#   `snarkjs zkey export verificationkey`, and proofs made with them by `cuzk prove` and by
#   `snarkjs groth16 prove` pass `snarkjs groth16 verify`; on the circom fixtures the
#   coefficient section equals the one snarkjs wrote for the same r1cs; same seed -> same
#   bytes, other seed -> other key; a 9000-constraint circuit and key have fixed hashes;
#   gen-witness gives another witness that still proves; a segmented circuit's constraints
#   read only their own run (in snarkjs's reading of the r1cs) and prove; bad inputs (malformed or
#   non-canonical r1cs, memory limit) fail with exit 2 and a clear message.
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
SNARKJS=$ROOT/node_modules/.bin/snarkjs
CUZK=$BIN/cuzk
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # expected_rc description cmd...
  local want=$1 what=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, expected $want"; sed 's/^/    /' "$T/err" "$T/out" | head -8 >&2; fi
}
expect_err() { # expected_rc regex description cmd...
  local want=$1 re=$2 what=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" = "$want" ] && grep -Eq "$re" "$T/err"; then ok; else
    bad "$what: exit $rc (want $want), stderr: $(head -c 300 "$T/err")"; fi
}
[ -x "$SNARKJS" ] || { echo "setup_test: $SNARKJS missing (run npm ci)" >&2; exit 1; }
[ -x "$CUZK" ] || { echo "setup_test: $CUZK missing (build first)" >&2; exit 1; }

# Section `id` of a binfile: "SIZE:SHA256" (hex=1: the bytes in hex instead of the hash).
section_hex() { node -e '
  const b=require("fs").readFileSync(process.argv[1]); let p=12; const n=b.readUInt32LE(8);
  let out="";
  for (let i=0;i<n;i++){ const id=b.readUInt32LE(p), sz=Number(b.readBigUInt64LE(p+4));
    if (id===+process.argv[2]) { const s=b.subarray(p+12,p+12+sz);
      out=process.argv[3]==="1" ? s.toString("hex")
        : sz+":"+require("crypto").createHash("sha256").update(s).digest("hex"); }
    p+=12+sz; }
  console.log(out);' "$1" "$2" "${3:-0}"; }
section_size() { section_hex "$1" "$2" | cut -d: -f1; }

# ---- round trip on both curves, one profile each (the third profile runs on bn128 below)
for cfg in "bn128 dense 300" "bls12381 sparse-bits 260"; do
  set -- $cfg; curve=$1 profile=$2 n=$3
  d=$T/$curve
  expect_rc 0 "$curve: gen-circuit" "$CUZK" gen-circuit --quiet --constraints "$n" --curve "$curve" --profile "$profile" --seed s1 -o "$d"
  for f in circuit.r1cs circuit.wtns input.json circuit.json; do [ -s "$d/$f" ] && ok || bad "$curve: gen-circuit did not write $f"; done
  expect_rc 0 "$curve: snarkjs wtns check accepts the generated r1cs + wtns" "$SNARKJS" wtns check "$d/circuit.r1cs" "$d/circuit.wtns"
  expect_err 0 "testing and benchmarking only" "$curve: setup (prints the testing-only warning)" "$CUZK" setup --quiet --seed 0a0b "$d/circuit.r1cs" "$d/k.zkey"
  expect_rc 0 "$curve: cuzk inspect accepts the key" "$CUZK" inspect "$d/k.zkey"
  expect_rc 0 "$curve: snarkjs zkey export verificationkey" "$SNARKJS" zkey export verificationkey "$d/k.zkey" "$d/vk.json"
  grep -q "\"curve\": \"$curve\"" "$d/vk.json" && ok || bad "$curve: vk curve"
  expect_rc 0 "$curve: cuzk prove" "$CUZK" prove --quiet "$d/k.zkey" "$d/circuit.wtns" "$d/proof.json" "$d/public.json"
  expect_rc 0 "$curve: snarkjs verifies cuzk's proof" "$SNARKJS" groth16 verify "$d/vk.json" "$d/public.json" "$d/proof.json"
  expect_rc 0 "$curve: snarkjs groth16 prove with the cuzk key" "$SNARKJS" groth16 prove "$d/k.zkey" "$d/circuit.wtns" "$d/sproof.json" "$d/spublic.json"
  expect_rc 0 "$curve: snarkjs verifies its own proof with the cuzk key" "$SNARKJS" groth16 verify "$d/vk.json" "$d/spublic.json" "$d/sproof.json"
  cmp -s "$d/public.json" "$d/spublic.json" && ok || bad "$curve: cuzk and snarkjs public.json differ"
  # a proof of the other circuit's statement must not verify (the key is not vacuous)
  node -e '
    const fs=require("fs"); const p=JSON.parse(fs.readFileSync(process.argv[1]));
    p[0]=(BigInt(p[0])+1n).toString(); fs.writeFileSync(process.argv[2], JSON.stringify(p));' "$d/public.json" "$d/badpub.json"
  "$SNARKJS" groth16 verify "$d/vk.json" "$d/badpub.json" "$d/proof.json" >/dev/null 2>&1 && bad "$curve: snarkjs accepted a wrong public input" || ok

  # determinism: same seed -> same bytes; other seed / OS randomness -> other key
  expect_rc 0 "$curve: setup again, same seed, 1 thread" "$CUZK" setup --quiet --threads 1 --seed 0a0b "$d/circuit.r1cs" "$d/k2.zkey"
  cmp -s "$d/k.zkey" "$d/k2.zkey" && ok || bad "$curve: same seed gave different keys"
  expect_rc 0 "$curve: setup, other seed" "$CUZK" setup --quiet --seed 0a0c "$d/circuit.r1cs" "$d/k3.zkey"
  cmp -s "$d/k.zkey" "$d/k3.zkey" && bad "$curve: different seeds gave the same key" || ok
  [ "$(section_hex "$d/k.zkey" 4)" = "$(section_hex "$d/k3.zkey" 4)" ] && ok || bad "$curve: section 4 depends on the seed"
  expect_rc 0 "$curve: setup, OS randomness" "$CUZK" setup --quiet "$d/circuit.r1cs" "$d/k4.zkey"
  cmp -s "$d/k.zkey" "$d/k4.zkey" && bad "$curve: random setup equals the seeded one" || ok
  expect_rc 0 "$curve: cuzk proves with the random key (self-verified)" "$CUZK" prove --quiet "$d/k4.zkey" "$d/circuit.wtns" "$d/p4.json" "$d/pub4.json"

  # gen-circuit is deterministic
  expect_rc 0 "$curve: gen-circuit again" "$CUZK" gen-circuit --quiet --constraints "$n" --curve "$curve" --profile "$profile" --seed s1 -o "$d/again"
  for f in circuit.r1cs circuit.wtns input.json; do cmp -s "$d/$f" "$d/again/$f" && ok || bad "$curve: gen-circuit not deterministic ($f)"; done
  expect_rc 0 "$curve: gen-circuit, other seed" "$CUZK" gen-circuit --quiet --constraints "$n" --curve "$curve" --profile "$profile" --seed s2 -o "$d/other"
  cmp -s "$d/circuit.r1cs" "$d/other/circuit.r1cs" && bad "$curve: other seed, same r1cs" || ok

  # gen-witness: another witness of the same circuit, which the same key proves
  expect_rc 0 "$curve: gen-witness" "$CUZK" gen-witness --quiet --circuit "$d" --seed w2 -o "$d/w2.wtns"
  cmp -s "$d/circuit.wtns" "$d/w2.wtns" && bad "$curve: gen-witness gave the same witness" || ok
  expect_rc 0 "$curve: snarkjs wtns check accepts the new witness" "$SNARKJS" wtns check "$d/circuit.r1cs" "$d/w2.wtns"
  expect_rc 0 "$curve: cuzk prove, new witness" "$CUZK" prove --quiet "$d/k.zkey" "$d/w2.wtns" "$d/proof2.json" "$d/public2.json"
  expect_rc 0 "$curve: snarkjs verifies the new witness's proof" "$SNARKJS" groth16 verify "$d/vk.json" "$d/public2.json" "$d/proof2.json"
  cmp -s "$d/public.json" "$d/public2.json" && bad "$curve: the new witness has the same public inputs" || ok
  expect_rc 0 "$curve: gen-witness with the circuit seed" "$CUZK" gen-witness --quiet --circuit "$d" --seed s1 -o "$d/w1.wtns"
  cmp -s "$d/circuit.wtns" "$d/w1.wtns" && ok || bad "$curve: gen-witness with the circuit's seed differs from gen-circuit's witness"
done

# ---- segmented (bls12381 sparse-bits, runs of 40, the last one short): snarkjs accepts the
# r1cs + witnesses and the proof; in snarkjs's own reading of the r1cs every constraint's
# operands are inputs or earlier outputs of its own run; the runs change the circuit
d=$T/seg
expect_rc 0 "segment: gen-circuit" "$CUZK" gen-circuit --quiet --constraints 150 --curve bls12381 --profile sparse-bits --seed s1 --segment 40 -o "$d"
grep -q '"segment": 40' "$d/circuit.json" && ok || bad "segment: circuit.json does not record the runs"
expect_rc 0 "segment: snarkjs wtns check" "$SNARKJS" wtns check "$d/circuit.r1cs" "$d/circuit.wtns"
expect_rc 0 "segment: snarkjs r1cs export json" "$SNARKJS" r1cs export json "$d/circuit.r1cs" "$d/r1cs.json"
node -e '
  const r=JSON.parse(require("fs").readFileSync(process.argv[1])); const L=40;
  const base=2+r.nPubInputs+r.nPrvInputs; let bad=0, cross=0;
  r.constraints.forEach((c,k)=>{ const lo=k-k%L;
    for (const lc of c) for (const w of Object.keys(lc).map(Number)) {
      if (w<base) continue; const j=w-base;            // output of constraint j
      if (j===k) continue;                             // its own output
      if (j<lo || j>k) bad++; else if (j<k) cross++; } });
  if (bad || !cross || r.nConstraints!==150) { console.log("bad "+bad+" local "+cross); process.exit(1); }' \
  "$d/r1cs.json" && ok || bad "segment: a constraint reads another run's outputs (or none of its own)"
expect_rc 0 "segment: gen-circuit without runs" "$CUZK" gen-circuit --quiet --constraints 150 --curve bls12381 --profile sparse-bits --seed s1 -o "$d/one"
cmp -s "$d/circuit.r1cs" "$d/one/circuit.r1cs" && bad "segment: the runs did not change the circuit" || ok
expect_rc 0 "segment: gen-witness (reads the runs from circuit.json)" "$CUZK" gen-witness --quiet --circuit "$d" --seed w2 -o "$d/w2.wtns"
expect_rc 0 "segment: snarkjs wtns check, new witness" "$SNARKJS" wtns check "$d/circuit.r1cs" "$d/w2.wtns"
expect_rc 0 "segment: setup" "$CUZK" setup --quiet --seed 01 "$d/circuit.r1cs" "$d/k.zkey"
expect_rc 0 "segment: cuzk prove" "$CUZK" prove --quiet "$d/k.zkey" "$d/w2.wtns" "$d/proof.json" "$d/public.json"
expect_rc 0 "segment: snarkjs zkey export verificationkey" "$SNARKJS" zkey export verificationkey "$d/k.zkey" "$d/vk.json"
expect_rc 0 "segment: snarkjs verifies" "$SNARKJS" groth16 verify "$d/vk.json" "$d/public.json" "$d/proof.json"
expect_err 2 "segment" "segment: a bad --segment" "$CUZK" gen-circuit --constraints 10 --segment x -o "$d/x"
sed 's/"segment": 40/"segment": "40"/' "$d/circuit.json" >"$d/c2.json" && mkdir -p "$d/b" && cp "$d/c2.json" "$d/b/circuit.json"
expect_err 2 "not a gen-circuit description" "segment: gen-witness refuses a malformed segment" "$CUZK" gen-witness --circuit "$d/b" --seed 1 -o "$d/b/w.wtns"

# ---- mixed profile (bn128): r1cs and witness accepted by snarkjs, proof verifies
d=$T/mixed
expect_rc 0 "mixed: gen-circuit" "$CUZK" gen-circuit --quiet --constraints 200 --profile mixed --seed m -o "$d"
expect_rc 0 "mixed: snarkjs wtns check" "$SNARKJS" wtns check "$d/circuit.r1cs" "$d/circuit.wtns"
expect_rc 0 "mixed: setup" "$CUZK" setup --quiet --seed 01 "$d/circuit.r1cs" "$d/k.zkey"
expect_rc 0 "mixed: cuzk prove" "$CUZK" prove --quiet "$d/k.zkey" "$d/circuit.wtns" "$d/proof.json" "$d/public.json"
expect_rc 0 "mixed: cuzk export-vk" "$CUZK" export-vk "$d/k.zkey" "$d/vk.json"
expect_rc 0 "mixed: snarkjs verifies" "$SNARKJS" groth16 verify "$d/vk.json" "$d/public.json" "$d/proof.json"

# ---- fixed bytes: a circuit over several ranges of rows and its key are the ones every
# earlier release made for the same seeds (users keep such files as fixtures)
d=$T/golden
expect_rc 0 "golden: gen-circuit" "$CUZK" gen-circuit --quiet --constraints 9000 --curve bn128 --profile mixed --seed s1 -o "$d"
expect_rc 0 "golden: setup" "$CUZK" setup --quiet --threads 2 --seed 0a0b "$d/circuit.r1cs" "$d/k.zkey"
for fh in circuit.r1cs:13e482284356f2cfd88e317e712e855609d168e3f26138d7b57fefaef4303aab \
          circuit.wtns:b2dc7b098f925e71f88df5d3c350eda3d187932a656f51c224b29af607ab5a60 \
          input.json:120cd2bc223296ad22c0cf61c58ce30ae82aac4983e380838381f7c57e75909e \
          k.zkey:88b88ad9ff69165609e48d5f3d6202e0445c50abf558f86588d8ac8d4b34ce56; do
  h=$(sha256sum "$d/${fh%%:*}" 2>/dev/null | cut -d' ' -f1)
  [ "$h" = "${fh#*:}" ] && ok || bad "golden: ${fh%%:*} differs from the bytes of earlier releases"
done

# ---- circom fixtures: setup on their r1cs, prove their witness, snarkjs verifies; the
# coefficient section is byte-identical to the one snarkjs's own setup wrote.
for curve in bn128 bls12381; do
  f=$ROOT/tests/fixtures/$curve
  d=$T/fx-$curve; mkdir -p "$d"
  expect_rc 0 "fixture $curve: setup on poseidon.r1cs" "$CUZK" setup --quiet --seed 1234 "$f/poseidon.r1cs" "$d/k.zkey"
  expect_rc 0 "fixture $curve: cuzk prove" "$CUZK" prove --quiet "$d/k.zkey" "$f/poseidon.wtns" "$d/proof.json" "$d/public.json"
  expect_rc 0 "fixture $curve: export vk" "$SNARKJS" zkey export verificationkey "$d/k.zkey" "$d/vk.json"
  expect_rc 0 "fixture $curve: snarkjs verifies" "$SNARKJS" groth16 verify "$d/vk.json" "$d/public.json" "$d/proof.json"
  cmp -s "$d/public.json" "$f/poseidon_public.json" && ok || bad "fixture $curve: public inputs differ from snarkjs's"
  for s in 1 4; do
    a=$(section_hex "$d/k.zkey" $s) b=$(section_hex "$f/poseidon.zkey" $s)
    [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "fixture $curve: section $s differs from snarkjs's zkey"
  done
  # every point that matters, recomputed from the definition by an independent implementation
  # (node SHA-256 for the secrets, BigInt Lagrange products, ffjavascript curve arithmetic)
  expect_rc 0 "fixture $curve: independent recomputation of the key's points" node "$ROOT/tests/groth16/setup_keycheck.cjs" "$f/poseidon.r1cs" "$d/k.zkey" 1234
  # header integers (n8q, q, n8r, r, nVars, nPublic, domainSize) equal snarkjs's
  a=$(section_hex "$d/k.zkey" 2 1) b=$(section_hex "$f/poseidon.zkey" 2 1)
  nb=$(( (4 + $( [ $curve = bn128 ] && echo 32 || echo 48 ) + 4 + 32 + 12) * 2 ))
  [ "${a:0:$nb}" = "${b:0:$nb}" ] && ok || bad "fixture $curve: header integers differ from snarkjs's"
  # section sizes equal snarkjs's (3, 5..9)
  for s in 3 5 6 7 8 9; do
    [ "$(section_size "$d/k.zkey" $s)" = "$(section_size "$f/poseidon.zkey" $s)" ] && ok || bad "fixture $curve: section $s size differs"
  done
done

# ---- errors
f=$ROOT/tests/fixtures/bn128
printf 'r1cs\001\000\000\000' > "$T/garbage.r1cs"
expect_err 2 "BAD_FORMAT|TRUNCATED" "malformed r1cs" "$CUZK" setup --quiet "$T/garbage.r1cs" "$T/x.zkey"
head -c 200 "$f/poseidon.r1cs" > "$T/trunc.r1cs"
expect_err 2 "BAD_FORMAT|TRUNCATED" "truncated r1cs" "$CUZK" setup --quiet "$T/trunc.r1cs" "$T/x.zkey"
# a coefficient >= r: the multiplier's first A coefficient set to all ones
node -e '
  const fs=require("fs"); const b=Buffer.from(fs.readFileSync(process.argv[1]));
  let p=12; const n=b.readUInt32LE(8);
  for (let i=0;i<n;i++){ const id=b.readUInt32LE(p), sz=Number(b.readBigUInt64LE(p+4));
    if (id===2) { b.fill(0xff, p+12+4+4, p+12+4+4+32); } p+=12+sz; }
  fs.writeFileSync(process.argv[2], b);' "$f/multiplier.r1cs" "$T/noncanon.r1cs"
expect_err 2 "NON_CANONICAL" "r1cs coefficient >= r" "$CUZK" setup --quiet "$T/noncanon.r1cs" "$T/x.zkey"
expect_err 2 "OUT_OF_BUDGET.*|max-memory" "r1cs too large for the memory limit" "$CUZK" setup --quiet --max-memory 1M "$f/poseidon.r1cs" "$T/x.zkey"
grep -q "MiB" "$T/err" && ok || bad "memory-limit message does not state the sizes"
[ ! -e "$T/x.zkey" ] && ok || bad "a failed setup left a zkey behind"
expect_err 2 "No such file|IO" "missing r1cs" "$CUZK" setup --quiet "$T/none.r1cs" "$T/x.zkey"
expect_err 2 "hex" "bad seed" "$CUZK" setup --quiet --seed xyz "$f/poseidon.r1cs" "$T/x.zkey"
expect_err 2 "unknown option" "unknown option" "$CUZK" setup --bogus a b
expect_err 2 "constraints" "gen-circuit without --constraints" "$CUZK" gen-circuit -o "$T/g"
expect_err 2 "profile" "gen-circuit, bad profile" "$CUZK" gen-circuit --constraints 10 --profile nope -o "$T/g"
expect_err 2 "circuit.json" "gen-witness without a circuit" "$CUZK" gen-witness --circuit "$T/nowhere" --seed 1 -o "$T/w.wtns"
for c in setup gen-circuit gen-witness; do expect_rc 0 "$c --help" "$CUZK" $c --help; done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
