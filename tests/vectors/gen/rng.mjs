// Deterministic "random" numbers for the vector generators (splitmix64), so every generated
// file regenerates byte for byte. Each generator makes its own stream from its own seed.
const M64 = (1n << 64n) - 1n;

export function splitmix64(seed) {
    let s = seed & M64;
    const rand64 = () => {
        s = (s + 0x9e3779b97f4a7c15n) & M64;
        let z = s;
        z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
        z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
        return z ^ (z >> 31n);
    };
    // A 256-bit value reduced mod r (slightly biased; fine for test vectors).
    const randBig = (r) =>
        ((rand64() << 192n) | (rand64() << 128n) | (rand64() << 64n) | rand64()) % r;
    return { rand64, randBig };
}
