// Known answers for multi-scalar multiplication (tests/msm/msm_test.c), computed with
// @noble/curves, which shares no code with cuzk: each expected sum is noble's own msm() and is
// checked here against the plain sum of noble's scalar multiplications.
//
// Run from the repository root:  node tests/vectors/gen/msm.mjs
// Writes tests/vectors/msm.json, one record per line (objects of strings only):
//   {"curve":"bn254"|"bls12_381","group":"g1"|"g2","n":N,
//    "points":"x,y,x,y,..." (G2: "x.c0,x.c1,y.c0,y.c1,..."; infinity is all zeros),
//    "scalars":"k0,k1,...","x":...,"y":... (G2: "c0,c1")}   all numbers decimal.
// The point and scalar lists hold the edge cases of the bucket method: repeated points,
// opposite points, the point at infinity, scalars 0, 1, 2, r - 1, and runs of equal scalars
// (every point of such a run lands in the same bucket of every window).
import { writeFileSync } from 'node:fs';
import { bls12_381 } from '@noble/curves/bls12-381';
import { bn254 } from '@noble/curves/bn254';
import { splitmix64 } from './rng.mjs';

const { rand64, randBig } = splitmix64(0x637a6b2d6d736dn); // "czk-msm"

function record(curve, group, P, r, n) {
    const pts = [];
    const ks = [];
    const same = randBig(r);
    for (let i = 0; i < n; i++) {
        let p;
        if (i % 17 === 5) p = pts[i - 1]; // repeated point
        else if (i % 17 === 7) p = pts[i - 1].negate(); // opposite point
        else if (i % 31 === 9) p = P.ZERO; // infinity
        else p = P.BASE.multiply(1n + (rand64() % (r - 1n)));
        pts.push(p);
        let k;
        if (i % 23 === 10) k = 0n;
        else if (i % 23 === 11) k = 1n;
        else if (i % 23 === 12) k = r - 1n;
        else if (i % 23 === 13) k = 2n;
        else if (i >= n - 40) k = same; // one run of equal scalars
        else k = randBig(r);
        ks.push(k);
    }
    const naive = pts.reduce((acc, p, i) => acc.add(p.multiplyUnsafe(ks[i])), P.ZERO);
    const nz = pts.map((p, i) => [p, ks[i]]).filter(([p, k]) => !p.is0() && k !== 0n);
    const fast = P.msm(nz.map((a) => a[0]), nz.map((a) => a[1]));
    if (!fast.equals(naive)) throw new Error(`${curve} ${group}: msm and naive sum differ`);
    const co = (v) => (typeof v === 'bigint' ? [v] : [v.c0, v.c1]);
    const enc = (p) => {
        if (p.is0()) return group === 'g1' ? [0n, 0n] : [0n, 0n, 0n, 0n];
        const a = p.toAffine();
        return [...co(a.x), ...co(a.y)];
    };
    const out = enc(naive);
    const half = out.length / 2;
    return JSON.stringify({
        curve, group, n: String(n),
        points: pts.flatMap(enc).join(','),
        scalars: ks.join(','),
        x: out.slice(0, half).join(','),
        y: out.slice(half).join(','),
    });
}

const lines = [
    record('bn254', 'g1', bn254.G1.ProjectivePoint, bn254.fields.Fr.ORDER, 300),
    record('bn254', 'g2', bn254.G2.ProjectivePoint, bn254.fields.Fr.ORDER, 100),
    record('bls12_381', 'g1', bls12_381.G1.ProjectivePoint, bls12_381.fields.Fr.ORDER, 300),
    record('bls12_381', 'g2', bls12_381.G2.ProjectivePoint, bls12_381.fields.Fr.ORDER, 100),
];
writeFileSync('tests/vectors/msm.json', lines.join('\n') + '\n');
