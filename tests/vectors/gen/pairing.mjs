// Known-answer vectors for cuzk's pairings, computed by @noble/curves (an independent
// implementation). Run from the repository root:
//   node tests/vectors/gen/pairing.mjs
// Writes tests/vectors/pairing_bn254.json and tests/vectors/pairing_bls12_381.json.
//
// Fp12 elements are 12 decimal strings in the order c0.c0.c0, c0.c0.c1, c0.c1.c0, c0.c1.c1,
// c0.c2.c0, c0.c2.c1, c1.c0.c0, ..., c1.c2.c1, for the tower Fp12 = Fp6[w]/(w^2 - v),
// Fp6 = Fp2[v]/(v^3 - xi), Fp2 = Fp[u]/(u^2 + 1), which is noble's and cuzk's.
// For each case: "e" is noble's pairing(aG1, bG2) (its fast final exponentiation gives
// e(P, Q)^m with m = 2x(6x^2 + 3x + 1) for BN254 and m = 3 for BLS12-381, which the script
// checks), "e_plain" is noble's Miller loop raised to (p^12 - 1)/r here, i.e. e(P, Q) itself.
// "multi" is noble's pairingBatch of a few pairs (same power m).
// Every "e" is also recomputed with ffjavascript (snarkjs's arithmetic, a second independent
// implementation) and the script fails unless both agree coefficient for coefficient; this is
// also why cuzk's pairing returns e^m: snarkjs's vk_alphabeta_12 is this value.
import { writeFileSync } from 'node:fs';
import { bn254 } from '@noble/curves/bn254';
import { bls12_381 } from '@noble/curves/bls12-381';
import { buildBn128, buildBls12381 } from 'ffjavascript';

// Deterministic scalars (xorshift64*, fixed seed), so the output is reproducible.
let state = 0x243f6a8885a308d3n;
const M64 = (1n << 64n) - 1n;
function rand64() {
  state ^= (state >> 12n); state ^= (state << 25n) & M64; state ^= (state >> 27n);
  return (state * 0x2545f4914f6cdd1dn) & M64;
}
function randScalar(r) {
  let v = 0n;
  for (let i = 0; i < 4; i++) v = (v << 64n) | rand64();
  return (v % (r - 1n)) + 1n;
}

const dec = (v) => v.toString(10);
function fp12(F, x) {
  const out = [];
  for (const c6 of [x.c0, x.c1]) {
    for (const c2 of [c6.c0, c6.c1, c6.c2]) out.push(dec(c2.c0), dec(c2.c1));
  }
  return out;
}

// ffjavascript's pairing of the same points, flattened in the same coefficient order.
function ffjPairing(ffj, P, Q) {
  const a = P.toAffine(), b = Q.toAffine();
  const p1 = ffj.G1.fromObject([a.x, a.y, 1n]);
  const p2 = ffj.G2.fromObject([[b.x.c0, b.x.c1], [b.y.c0, b.y.c1], [1n, 0n]]);
  return ffj.Gt.toObject(ffj.pairing(p1, p2)).flat(3).map(dec);
}

function sameFp12(x, y) {
  return x.length === 12 && x.every((v, i) => v === y[i]);
}

function gen(name, c, m, ffj) {
  const F = c.fields.Fp12, p = c.fields.Fp.ORDER, r = c.fields.Fr.ORDER;
  const G1 = c.G1.Point.BASE, G2 = c.G2.Point.BASE;
  const full = (p ** 12n - 1n) / r;
  const pt1 = (P) => {
    const a = P.toAffine();
    return [dec(a.x), dec(a.y)];
  };
  const pt2 = (Q) => {
    const a = Q.toAffine();
    return [[dec(a.x.c0), dec(a.x.c1)], [dec(a.y.c0), dec(a.y.c1)]];
  };
  const scalars = [[1n, 1n], [2n, 3n]];
  for (let i = 0; i < 2; i++) scalars.push([randScalar(r), randScalar(r)]);
  const cases = [];
  for (const [a, b] of scalars) {
    const P = G1.multiply(a), Q = G2.multiply(b);
    const e = c.pairing(P, Q);
    const ePlain = F.pow(c.pairing(P, Q, false), full);
    if (!F.eql(F.pow(ePlain, m), e)) throw new Error(name + ': noble pairing is not e^m');
    if (!sameFp12(ffjPairing(ffj, P, Q), fp12(F, e))) {
      throw new Error(name + ': ffjavascript != noble');
    }
    cases.push({
      a: dec(a), b: dec(b), P: pt1(P), Q: pt2(Q), e: fp12(F, e), e_plain: fp12(F, ePlain),
    });
  }
  const pairs = [];
  for (let i = 0; i < 3; i++) {
    pairs.push({ g1: G1.multiply(randScalar(r)), g2: G2.multiply(randScalar(r)) });
  }
  const eMulti = c.pairingBatch(pairs);
  const out = {
    curve: name,
    generator: 'tests/vectors/gen/pairing.mjs with @noble/curves 1.9.7',
    final_exp_power_m: dec(m),
    ncases: String(cases.length),
    cases,
    multi: {
      npairs: String(pairs.length),
      pairs: pairs.map((q) => ({ P: pt1(q.g1), Q: pt2(q.g2) })),
      e: fp12(F, eMulti),
    },
  };
  writeFileSync(`tests/vectors/pairing_${name}.json`, JSON.stringify(out, null, 1) + '\n');
}

const X_BN = 4965661367192848881n;
const ffjBn = await buildBn128(true);
gen('bn254', bn254, 2n * X_BN * (6n * X_BN * X_BN + 3n * X_BN + 1n), ffjBn);
await ffjBn.terminate();
const ffjBls = await buildBls12381(true);
gen('bls12_381', bls12_381, 3n, ffjBls);
await ffjBls.terminate();
