// Writes tests/vectors/roots.json: the 2^k-th roots of unity w[k], k = 0..two-adicity, that
// snarkjs uses for Fr of bn128 and bls12381, taken from ffjavascript's Fr.w (the field object
// snarkjs's prover and setup use), as decimal strings. Run from the repository root:
//   node tests/vectors/gen/roots.mjs
import { buildBn128, buildBls12381 } from "ffjavascript";
import { writeFileSync } from "fs";

const out = {};
for (const [name, build] of [["bn254", buildBn128], ["bls12_381", buildBls12381]]) {
    const curve = await build(true);
    const Fr = curve.Fr;
    const w = [];
    for (let k = 0; k <= Fr.s; k++) w.push(Fr.toString(Fr.w[k], 10));
    out[name] = { two_adicity: Fr.s, r_minus_1: Fr.toString(Fr.negone, 10), w };
    await curve.terminate();
}
writeFileSync(new URL("../roots.json", import.meta.url), JSON.stringify(out, null, 1) + "\n");
