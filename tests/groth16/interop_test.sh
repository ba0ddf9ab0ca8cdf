#!/usr/bin/env bash
# Interop with snarkjs 0.7.6 (from the committed npm lockfile) on every fixture of both curves:
# cuzk's proofs pass `snarkjs groth16 verify`, snarkjs's proofs pass `cuzk verify`, tampered
# proofs and public inputs are rejected by both, export-vk matches snarkjs's key, and bad inputs
# give exit code 2 with a message naming the problem.
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
  if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, expected $want"; sed 's/^/    /' "$T/err" | head -5 >&2; fi
}
expect_err() { # expected_rc regex description cmd...
  local want=$1 re=$2 what=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" = "$want" ] && grep -Eq "$re" "$T/err"; then ok; else
    bad "$what: exit $rc (want $want), stderr: $(head -c 300 "$T/err")"; fi
}
[ -x "$SNARKJS" ] || { echo "interop_test: $SNARKJS missing (run npm ci)" >&2; exit 1; }
[ -x "$CUZK" ] || { echo "interop_test: $CUZK missing (build first)" >&2; exit 1; }

# Tamper with a decimal string in JSON: add 1 to the first coordinate of pi_a / first public.
tamper_proof() { node -e '
  const fs=require("fs"); const p=JSON.parse(fs.readFileSync(process.argv[1]));
  p.pi_c=p.pi_a; fs.writeFileSync(process.argv[2], JSON.stringify(p,null,1));' "$1" "$2"; }
tamper_public() { node -e '
  const fs=require("fs"); const p=JSON.parse(fs.readFileSync(process.argv[1]));
  p[0]=(BigInt(p[0])+1n).toString(); fs.writeFileSync(process.argv[2], JSON.stringify(p,null,1));' "$1" "$2"; }

n_fixtures=0
for curve in bn128 bls12381; do
  for circ in multiplier poseidon chain; do
    d=$ROOT/tests/fixtures/$curve
    z=$d/$circ.zkey w=$d/$circ.wtns vk=$d/${circ}_vk.json
    [ -f "$z" ] || continue
    n_fixtures=$((n_fixtures + 1))
    o=$T/$curve-$circ
    # cuzk proves, snarkjs verifies
    expect_rc 0 "$curve/$circ: cuzk prove" "$CUZK" prove --quiet "$z" "$w" "$o.proof.json" "$o.public.json"
    expect_rc 0 "$curve/$circ: snarkjs verifies cuzk's proof" "$SNARKJS" groth16 verify "$vk" "$o.public.json" "$o.proof.json"
    cmp -s "$o.public.json" "$d/${circ}_public.json" && ok || bad "$curve/$circ: public.json differs from snarkjs's"
    # snarkjs's proof verifies with cuzk; cuzk's with cuzk
    expect_rc 0 "$curve/$circ: cuzk verifies snarkjs's proof" "$CUZK" verify "$vk" "$d/${circ}_public.json" "$d/${circ}_proof.json"
    expect_rc 0 "$curve/$circ: cuzk verifies its own proof" "$CUZK" verify "$vk" "$o.public.json" "$o.proof.json"
    # tampered proof / public input: both reject
    tamper_proof "$o.proof.json" "$o.badproof.json"
    expect_rc 1 "$curve/$circ: cuzk rejects a tampered proof" "$CUZK" verify "$vk" "$o.public.json" "$o.badproof.json"
    "$SNARKJS" groth16 verify "$vk" "$o.public.json" "$o.badproof.json" >/dev/null 2>&1 && bad "$curve/$circ: snarkjs accepted a tampered proof" || ok
    if [ "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).length)' "$o.public.json")" -gt 0 ]; then
      tamper_public "$o.public.json" "$o.badpub.json"
      expect_rc 1 "$curve/$circ: cuzk rejects a tampered public input" "$CUZK" verify "$vk" "$o.badpub.json" "$o.proof.json"
      "$SNARKJS" groth16 verify "$vk" "$o.badpub.json" "$o.proof.json" >/dev/null 2>&1 && bad "$curve/$circ: snarkjs accepted a tampered public input" || ok
    fi
    # export-vk: the same key snarkjs exports (compared as JSON values)
    expect_rc 0 "$curve/$circ: export-vk" "$CUZK" export-vk "$z" "$o.vk.json"
    node -e '
      const fs=require("fs"); const a=JSON.parse(fs.readFileSync(process.argv[1])), b=JSON.parse(fs.readFileSync(process.argv[2]));
      process.exit(JSON.stringify(a)===JSON.stringify(b)?0:1);' "$o.vk.json" "$vk" && ok || bad "$curve/$circ: export-vk differs from snarkjs's verification key"
    cmp -s "$o.vk.json" "$vk" && ok || bad "$curve/$circ: export-vk is not byte-identical to snarkjs's"
    # --zero-blinding is deterministic and still valid
    "$CUZK" prove --quiet --zero-blinding "$z" "$w" "$o.z1.json" "$o.zp.json" && \
    "$CUZK" prove --quiet --zero-blinding --threads 1 "$z" "$w" "$o.z2.json" "$o.zp.json" && \
      cmp -s "$o.z1.json" "$o.z2.json" && ok || bad "$curve/$circ: zero-blinding proofs differ between runs/thread counts"
    expect_rc 0 "$curve/$circ: snarkjs verifies a zero-blinding proof" "$SNARKJS" groth16 verify "$vk" "$o.zp.json" "$o.z1.json"
    # inspect validates each file
    for f in "$z" "$w" "$d/$circ.r1cs"; do expect_rc 0 "$curve/$circ: inspect $(basename "$f")" "$CUZK" inspect "$f"; done
    # inspect's points at infinity per MSM set, against a count straight from the zkey's
    # sections (5 A, 6 B1, 7 B2, 8 C, 9 H; n8q from section 2; infinity is all zero bytes)
    want=$(node -e '
      const b=require("fs").readFileSync(process.argv[1]); const sec={};
      for (let o=12, k=0; k<b.readUInt32LE(8); k++) { const t=b.readUInt32LE(o), n=Number(b.readBigUInt64LE(o+4));
        sec[t]=b.subarray(o+12, o+12+n); o+=12+n; }
      const q=sec[2].readUInt32LE(0), inf=(s,pb)=>{ let c=0;
        for (let i=0; i+pb<=s.length; i+=pb) if (s.subarray(i,i+pb).every(x=>x===0)) c++; return c; };
      console.log(`at infinity: A ${inf(sec[5],2*q)}, B1 ${inf(sec[6],2*q)}, B2 ${inf(sec[7],4*q)}, C ${inf(sec[8],2*q)}, H ${inf(sec[9],2*q)}`);' "$z")
    got=$("$CUZK" inspect "$z" | grep "^at infinity:")
    [ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "$curve/$circ: inspect says '$got', the zkey's sections '$want'"
    # --r1cs check passes on the real witness
    expect_rc 0 "$curve/$circ: prove --r1cs" "$CUZK" prove --quiet --r1cs "$d/$circ.r1cs" "$z" "$w" "$o.p3.json" "$o.pub3.json"
  done
done

# BLS12-381: the compressed 192-byte proof verifies with cuzk verify
d=$ROOT/tests/fixtures/bls12381
expect_rc 0 "compressed proof" "$CUZK" prove --quiet --format compressed "$d/poseidon.zkey" "$d/poseidon.wtns" "$T/c.bin" "$T/c.pub.json"
[ "$(stat -c %s "$T/c.bin" 2>/dev/null)" = 192 ] && ok || bad "compressed proof is not 192 bytes"
expect_rc 0 "cuzk verifies a compressed proof" "$CUZK" verify "$d/poseidon_vk.json" "$T/c.pub.json" "$T/c.bin"
expect_err 2 "BLS12-381" "compressed on bn128 is refused" "$CUZK" prove --quiet --format compressed "$ROOT/tests/fixtures/bn128/poseidon.zkey" "$ROOT/tests/fixtures/bn128/poseidon.wtns" "$T/x" "$T/y"

# Bad inputs: each gives exit 2 and names the problem.
b=$ROOT/tests/fixtures/bn128
head -c 1000 "$b/poseidon.zkey" > "$T/trunc.zkey"
expect_err 2 "TRUNCATED|BAD_FORMAT" "truncated zkey" "$CUZK" prove --quiet "$T/trunc.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
head -c 100 "$b/poseidon.wtns" > "$T/trunc.wtns"
expect_err 2 "TRUNCATED|BAD_FORMAT" "truncated wtns" "$CUZK" prove --quiet "$b/poseidon.zkey" "$T/trunc.wtns" "$T/x" "$T/y"
printf 'nope' > "$T/garbage.zkey"
expect_err 2 "BAD_FORMAT|TRUNCATED" "garbage zkey" "$CUZK" prove --quiet "$T/garbage.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
expect_err 2 "SIZE_MISMATCH" "witness of another circuit" "$CUZK" prove --quiet "$b/poseidon.zkey" "$b/multiplier.wtns" "$T/x" "$T/y"
expect_err 2 "WRONG_CURVE" "zkey of the other curve" "$CUZK" prove --quiet "$ROOT/tests/fixtures/bls12381/poseidon.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
expect_err 2 "No such file|IO" "missing file" "$CUZK" prove --quiet "$T/none.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
# GPU placement options: a bad value is a usage error naming the option, on any machine.
expect_err 2 "synth must be gpu or cpu" "bad --synth" "$CUZK" prove --quiet --synth fpga "$b/poseidon.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
expect_err 2 "g2-device must be auto or a GPU number" "bad --g2-device" "$CUZK" prove --quiet --g2-device 64 "$b/poseidon.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
expect_err 2 "g2-device must be auto or a GPU number" "non-numeric --g2-device" "$CUZK" prove --quiet --g2-device one "$b/poseidon.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
# Unsatisfied witness: the multiplier's output wire (value 1) changed from 33 to 34.
node -e '
  const fs=require("fs"); const f=fs.readFileSync(process.argv[1]);
  const p=f.indexOf(Buffer.from([33,0,0,0]), 76); f[p]=34; fs.writeFileSync(process.argv[2], f);' "$b/multiplier.wtns" "$T/unsat.wtns"
expect_err 2 "WITNESS_UNSATISFIED" "unsatisfied witness" "$CUZK" prove --quiet "$b/multiplier.zkey" "$T/unsat.wtns" "$T/x" "$T/y"
expect_err 2 "constraint 0" "unsatisfied witness with --r1cs names the constraint" "$CUZK" prove --quiet --r1cs "$b/multiplier.r1cs" "$b/multiplier.zkey" "$T/unsat.wtns" "$T/x" "$T/y"
[ ! -e "$T/x" ] && ok || bad "a proof file was written for a failed prove"
# corrupt a point in the zkey's A section: not on the curve
node -e '
  const fs=require("fs"); const f=Buffer.from(fs.readFileSync(process.argv[1]));
  let p=12; const n=f.readUInt32LE(8);
  for (let i=0;i<n;i++){ const id=f.readUInt32LE(p), sz=Number(f.readBigUInt64LE(p+4));
    if(id===5){ for(let k=0;k<sz;k+=64){ if(f.subarray(p+12+k,p+12+k+64).some(x=>x)){ f[p+12+k+1]^=1; break; } } } p+=12+sz; }
  fs.writeFileSync(process.argv[2], f);' "$b/poseidon.zkey" "$T/offcurve.zkey"
expect_err 2 "NOT_ON_CURVE|NON_CANONICAL" "zkey point off the curve" "$CUZK" prove --quiet "$T/offcurve.zkey" "$b/poseidon.wtns" "$T/x" "$T/y"
expect_err 2 "NOT_ON_CURVE|NON_CANONICAL" "inspect finds the bad point" "$CUZK" inspect "$T/offcurve.zkey"
# verify: malformed inputs are exit 2, not 1
echo '{' > "$T/broken.json"
expect_err 2 "BAD_ENCODING" "broken proof JSON" "$CUZK" verify "$b/poseidon_vk.json" "$b/poseidon_public.json" "$T/broken.json"
node -e '
  const fs=require("fs"); const p=JSON.parse(fs.readFileSync(process.argv[1])); p.pi_a[0]="5";
  fs.writeFileSync(process.argv[2], JSON.stringify(p));' "$b/poseidon_proof.json" "$T/offc.json"
expect_err 2 "NOT_ON_CURVE" "proof point off the curve" "$CUZK" verify "$b/poseidon_vk.json" "$b/poseidon_public.json" "$T/offc.json"
echo '["1","2","3"]' > "$T/twopub.json"
expect_err 2 "SIZE_MISMATCH" "wrong number of public inputs" "$CUZK" verify "$b/poseidon_vk.json" "$T/twopub.json" "$b/poseidon_proof.json"
expect_err 2 "unknown option" "unknown option" "$CUZK" prove --bogus a b c d
expect_rc 0 "prove --help" "$CUZK" prove --help
expect_rc 0 "verify --help" "$CUZK" verify --help

[ "$n_fixtures" -ge 4 ] && ok || bad "expected fixtures for both curves, found $n_fixtures"
echo "interop: $n_fixtures fixtures"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
