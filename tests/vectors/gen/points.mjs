// Known answers for point encodings (tests/ec/encode_test.c), from two implementations that
// share no code with cuzk: @noble/curves (coordinates, ZCash encodings, subgroup membership)
// and ffjavascript, snarkjs's own curve library (snarkjs binary and JSON encodings).
//
// Run from the repository root:  node tests/vectors/gen/points.mjs
// Writes tests/vectors/points_bn254.json and tests/vectors/points_bls12_381.json. Each file
// is JSON with one record per line (objects of strings only), so the C test can read it
// line by line:
//   {"kind":"point","group":"g1"|"g2","k":..., "x"... (decimal), "json":"s0,s1,...",
//    "snarkjs":hex, ["compressed":hex, "uncompressed":hex]}
//   {"kind":"invalid","group":..,"enc":"compressed"|"uncompressed"|"snarkjs"|"json",
//    "data":hex or comma-joined decimals,"error":"NOT_IN_SUBGROUP"|...,"why":...}
import { writeFileSync } from 'node:fs';
import { bls12_381 } from '@noble/curves/bls12-381';
import { bn254 } from '@noble/curves/bn254';
import { buildBn128, buildBls12381 } from 'ffjavascript';
import { splitmix64 } from './rng.mjs';

const hex = (b) => Buffer.from(b).toString('hex');
const be = (v, n) => {
    const out = new Uint8Array(n);
    for (let i = n - 1; i >= 0; i--) {
        out[i] = Number(v & 0xffn);
        v >>= 8n;
    }
    return out;
};
const le = (v, n) => be(v, n).reverse();
const cat = (...a) => {
    const out = new Uint8Array(a.reduce((s, x) => s + x.length, 0));
    let o = 0;
    for (const x of a) {
        out.set(x, o);
        o += x.length;
    }
    return out;
};

// Deterministic "random" scalars (splitmix64), so the files regenerate identically.
const { rand64, randBig } = splitmix64(0x637a6b2d656e63n); // "czk-enc"

// Plain double-and-add with the point's own group law: r*P == 0 for any point of the curve,
// independent of the library's (endomorphism-based) isTorsionFree.
function naiveInSubgroup(P, r) {
    let acc = P.constructor.ZERO;
    for (let i = BigInt(r.toString(2).length) - 1n; i >= 0n; i--) {
        acc = acc.double();
        if ((r >> i) & 1n) acc = acc.add(P);
    }
    return acc.is0();
}

const line = (o) => JSON.stringify(o);

async function gen(name, noble, ffj, n8, zcash) {
    const Fp = noble.fields.Fp;
    const Fp2 = noble.fields.Fp2;
    const p = Fp.ORDER;
    const r = noble.fields.Fr.ORDER;
    const R = 1n << BigInt(8 * n8); // Montgomery radix of ffjavascript's field
    const mont = (v) => le((v * R) % p, n8);
    const out = [];
    const scalars = [0n, 1n, 2n, 3n, randBig(r), randBig(r), randBig(r), r - 1n];
    for (const group of ['g1', 'g2']) {
        const G = group === 'g1' ? noble.G1.ProjectivePoint : noble.G2.ProjectivePoint;
        const FG = group === 'g1' ? ffj.G1 : ffj.G2;
        for (const k of scalars) {
            const P = k === 0n ? G.ZERO : G.BASE.multiply(k);
            const rec = { kind: 'point', group, k: k.toString() };
            const a = P.is0() ? null : P.toAffine();
            const comps = a === null ? (group === 'g1' ? [0n, 0n] : [0n, 0n, 0n, 0n])
                : group === 'g1' ? [a.x, a.y] : [a.x.c0, a.x.c1, a.y.c0, a.y.c1];
            if (group === 'g1') [rec.x, rec.y] = comps.map(String);
            else [rec.x_c0, rec.x_c1, rec.y_c0, rec.y_c1] = comps.map(String);
            // ffjavascript: compute k*G itself and check it agrees with noble.
            const FP = FG.toAffine(FG.timesScalar(FG.g, k));
            const obj = FG.toObject(FP);
            const flat = obj.flat().map(String);
            if (a !== null && flat.slice(0, comps.length).join() !== comps.map(String).join())
                throw new Error(`${name} ${group} k=${k}: noble and ffjavascript disagree`);
            rec.json = flat.join(',');
            const buf = new Uint8Array(FG.F.n8 * 2);
            FG.toRprLEM(buf, 0, FP);
            rec.snarkjs = hex(buf);
            if (hex(cat(...comps.map(mont))) !== rec.snarkjs)
                throw new Error(`${name} ${group} k=${k}: Montgomery bytes disagree`);
            if (zcash) {
                rec.compressed = P.toHex(true);
                rec.uncompressed = P.toHex(false);
            }
            out.push(line(rec));
        }
    }
    return out;
}

// Shared invalid inputs, built by hand and classified with noble.
function invalid(name, noble, n8, zcash) {
    const Fp = noble.fields.Fp, Fp2 = noble.fields.Fp2;
    const p = Fp.ORDER;
    const r = noble.fields.Fr.ORDER;
    const R = 1n << BigInt(8 * n8);
    const mont = (v) => le((v * R) % p, n8);
    const out = [];
    const bad = (group, enc, data, error, why) =>
        out.push(line({
            kind: 'invalid', group, enc,
            data: typeof data === 'string' ? data : hex(data), error, why,
        }));
    const isSq = (F, v) => {
        try {
            F.sqrt(v);
            return true;
        } catch {
            return false;
        }
    };

    for (const group of ['g1', 'g2']) {
        const G = group === 'g1' ? noble.G1.ProjectivePoint : noble.G2.ProjectivePoint;
        const F = group === 'g1' ? Fp : Fp2;
        const b = (group === 'g1' ? noble.G1 : noble.G2).CURVE.b;
        const mk = (i) => (group === 'g1' ? BigInt(i) : Fp2.fromBigTuple([BigInt(i), 1n]));
        const parts = (v) => (group === 'g1' ? [v] : [v.c0, v.c1]);
        const rhs = (x) => F.add(F.mul(F.sqr(x), x), b);
        // An x with no point, and an on-curve point outside the subgroup (smallest such x of
        // the form i or i + u).
        // BN254 G1 has cofactor 1: no such point exists there.
        const wantOff = !(name === 'bn254' && group === 'g1');
        let xn = null, off = null;
        for (let i = 1; xn === null || (wantOff && off === null); i++) {
            const x = mk(i);
            if (!isSq(F, rhs(x))) {
                if (xn === null) xn = x;
                continue;
            }
            if (off !== null || !wantOff) continue;
            const y = F.sqrt(rhs(x));
            const P = G.fromAffine({ x, y });
            if (naiveInSubgroup(P, r)) continue;
            if (P.isTorsionFree()) throw new Error('noble isTorsionFree disagrees with r*P');
            off = { x, y };
        }
        // (x, y + 1) of the generator: not on the curve.
        const g = G.BASE.toAffine();
        const gy1 = F.add(g.y, F.ONE);
        const flat = (pt) => [...parts(pt.x), ...parts(pt.y)];
        const snark = (vals) => cat(...vals.map(mont));
        const decs = (vals, z) => [...vals, ...z].map(String).join(',');
        const one = group === 'g1' ? [1n] : [1n, 0n];
        if (off) {
            const why = 'on the curve, r*P != 0 (noble)';
            bad(group, 'snarkjs', snark(flat(off)), 'NOT_IN_SUBGROUP', why);
            bad(group, 'json', decs(flat(off), one), 'NOT_IN_SUBGROUP', why);
        }
        if (F.eql(F.sqr(gy1), rhs(g.x))) throw new Error('(x, y+1) on the curve?');
        const gOff = { x: g.x, y: gy1 };
        bad(group, 'snarkjs', snark(flat(gOff)), 'NOT_ON_CURVE', 'generator with y+1');
        bad(group, 'json', decs(flat(gOff), one), 'NOT_ON_CURVE', 'generator with y+1');
        const nonc = flat(g);
        nonc[nonc.length - 1] = nonc[nonc.length - 1] + p;
        bad(group, 'json', decs(nonc, one), 'NON_CANONICAL', 'last y component + p');
        // Montgomery bytes equal to p (>= p) in the first x component.
        const rawp = cat(le(p, n8), snark(flat(g)).slice(n8));
        bad(group, 'snarkjs', rawp, 'NON_CANONICAL', 'x (Montgomery) = p');
        const nan = decs(flat(g), one).replace(/^\d+/, '12a4');
        bad(group, 'json', nan, 'BAD_ENCODING', 'not a number');
        if (!zcash) continue;

        const L = n8; // 48
        const beF = (v) => cat(...parts(v).reverse().map((c) => be(c, L)));
        const P = G.BASE.multiply(5n);
        const comp = P.toRawBytes(true), unc = P.toRawBytes(false);
        const flagged = (bytes, f) => {
            const c = bytes.slice();
            c[0] |= f;
            return c;
        };
        // ZCash's sign: y > -y, deciding on c1 unless it is zero.
        const big = (v) => v * 2n > p;
        const sortBit = (y) =>
            (group === 'g1' ? big(y) : y.c1 === 0n ? big(y.c0) : big(y.c1)) ? 0x20 : 0;
        const compOf = (pt) => flagged(beF(pt.x), 0x80 | sortBit(pt.y));
        const uncOf = (pt) => cat(beF(pt.x), beF(pt.y));
        const csize = comp.length, usize = unc.length;
        const inf = (n, f) => {
            const c = new Uint8Array(n);
            c[0] = f;
            return c;
        };
        let c;
        c = comp.slice(); c[0] &= 0x7f;
        bad(group, 'compressed', c, 'BAD_ENCODING', 'compression flag cleared');
        bad(group, 'uncompressed', flagged(unc, 0x80), 'BAD_ENCODING', 'compression flag set');
        bad(group, 'uncompressed', flagged(unc, 0x20), 'BAD_ENCODING', 'sign flag set');
        bad(group, 'compressed', inf(csize, 0xe0), 'BAD_ENCODING', 'infinity with sign flag');
        c = inf(csize, 0xc0); c[csize - 1] = 1;
        bad(group, 'compressed', c, 'BAD_ENCODING', 'infinity with a nonzero bit');
        c = inf(csize, 0xc1);
        bad(group, 'compressed', c, 'BAD_ENCODING', 'infinity with a nonzero bit under the flags');
        c = inf(usize, 0x40); c[usize - 1] = 1;
        bad(group, 'uncompressed', c, 'BAD_ENCODING', 'infinity with a nonzero bit');
        bad(group, 'uncompressed', inf(usize, 0x60), 'BAD_ENCODING', 'infinity with sign flag');
        // x >= p: every component in turn.
        for (let i = 0; i < parts(P.toAffine().x).length; i++) {
            c = comp.slice();
            c.set(be(p, L), i * L);
            c[0] |= 0x80;
            bad(group, 'compressed', c, 'NON_CANONICAL', `x component ${i} (in byte order) = p`);
            c = unc.slice();
            c.set(be(p + 1n, L), i * L);
            bad(group, 'uncompressed', c, 'NON_CANONICAL',
                `x component ${i} (in byte order) = p + 1`);
            c = unc.slice();
            c.set(be(p, L), csize + i * L);
            bad(group, 'uncompressed', c, 'NON_CANONICAL', `y component ${i} (in byte order) = p`);
        }
        c = flagged(beF(xn), 0x80);
        bad(group, 'compressed', c, 'NOT_ON_CURVE', 'x^3 + b is not a square (noble sqrt fails)');
        bad(group, 'uncompressed', uncOf({ x: g.x, y: gy1 }), 'NOT_ON_CURVE', 'generator with y+1');
        bad(group, 'uncompressed', new Uint8Array(usize), 'NOT_ON_CURVE',
            '(0, 0) without the infinity flag');
        bad(group, 'compressed', compOf(off), 'NOT_IN_SUBGROUP', 'on the curve, r*P != 0 (noble)');
        bad(group, 'uncompressed', uncOf(off), 'NOT_IN_SUBGROUP', 'on the curve, r*P != 0 (noble)');
        if (group === 'g1') {
            // x = 0: y = +-2, a point of order 3.
            const P0 = G.fromAffine({ x: 0n, y: 2n });
            if (naiveInSubgroup(P0, r)) throw new Error('(0, 2) in G1?');
            bad(group, 'compressed', inf(csize, 0x80), 'NOT_IN_SUBGROUP',
                'x = 0: (0, +-2) has order 3');
        }
    }
    return out;
}

const bn = await buildBn128(true);
const bls = await buildBls12381(true);
for (const [name, noble, ffj, n8, zcash] of [
    ['bn254', bn254, bn, 32, false],
    ['bls12_381', bls12_381, bls, 48, true],
]) {
    const lines = [...(await gen(name, noble, ffj, n8, zcash)), ...invalid(name, noble, n8, zcash)];
    const file = `tests/vectors/points_${name}.json`;
    const head = JSON.stringify({
        curve: name, generator: 'tests/vectors/gen/points.mjs',
        noble: '@noble/curves 1.9.7', ffjavascript: '0.3.1',
    });
    writeFileSync(file, '{"meta":' + head + ',\n"records":[\n' + lines.join(',\n') + '\n]}\n');
    console.log(`${file}: ${lines.length} records`);
}
await bn.terminate();
await bls.terminate();
