#!/usr/bin/env python3
"""Seed inputs for fuzz/fuzz_point.c, written into fuzz/corpus/point/ (run by
scripts/fuzz-smoke.sh with FUZZ_SEED_REFRESH=1; the output is committed).

An input is a selector byte (low nibble: the decoder, fuzz_point.c's switch; high nibble: the
subgroup-check mode) and the decoder's bytes. The points come from the snarkjs fixtures in
tests/fixtures: alpha1 and beta2 of each multiplier.zkey's Groth16 header (snarkjs binary:
little-endian Montgomery words), the same points from its verification key JSON (decimal
strings, NUL-separated), and for BLS12-381 their ZCash encodings, compressed and uncompressed
(big-endian, Fp2 as c1 then c0, flags 0x80 compressed, 0x40 infinity, 0x20 larger y), made here
with Python integers, independently of src/ec/encode.c. Plus the points at infinity."""
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus", "point")

# decoder numbers of fuzz_point.c: BIN g1, g2; JSON g1, g2; ZCash g1, g2
CURVES = {
    "bn128": {"bin": (0, 1), "json": (4, 5), "zc": None},
    "bls12381": {"bin": (2, 3), "json": (6, 7), "zc": (8, 9)},
}


def zkey_header(path):
    """(n8q, q, alpha1 bytes, beta2 bytes) from the Groth16 header section (id 2)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"zkey":
        sys.exit(f"point-seeds: {path}: not a zkey")
    nsec = struct.unpack_from("<I", data, 8)[0]
    off = 12
    for _ in range(nsec):
        sid, size = struct.unpack_from("<IQ", data, off)
        off += 12
        if sid == 2:
            h = off
            n8q = struct.unpack_from("<I", data, h)[0]
            q = int.from_bytes(data[h + 4:h + 4 + n8q], "little")
            h += 4 + n8q
            n8r = struct.unpack_from("<I", data, h)[0]
            h += 4 + n8r + 12  # r, nVars, nPublic, domainSize
            alpha1 = data[h:h + 2 * n8q]
            h += 4 * n8q  # alpha1, beta1
            beta2 = data[h:h + 4 * n8q]
            return n8q, q, alpha1, beta2
        off += size
    sys.exit(f"point-seeds: {path}: no header section")


def words(b, n8q, q, k):
    """k field elements of b (little-endian Montgomery, R = 2^(8 n8q)) as integers."""
    rinv = pow(1 << (8 * n8q), -1, q)
    return [int.from_bytes(b[i * n8q:(i + 1) * n8q], "little") * rinv % q for i in range(k)]


def zcash(coords, q, nbytes, compressed):
    """coords: [x] + [y] (G1) or [x0, x1, y0, y1] (G2), plain integers."""
    half = len(coords) // 2
    x, y = coords[:half], coords[half:]
    be = lambda v: v.to_bytes(nbytes, "big")
    body = b"".join(be(c) for c in reversed(x))  # Fp2: c1 first
    if not compressed:
        body += b"".join(be(c) for c in reversed(y))
        return body
    # the larger y: compare the last nonzero coefficient from c1 down, against q - y
    key = next((c for c in reversed(y) if c), 0)
    flag = 0x80 | (0x20 if key > q - key else 0)
    return bytes([body[0] | flag]) + body[1:]


def main():
    os.makedirs(OUT, exist_ok=True)
    n = 0

    def put(name, sel, payload):
        nonlocal n
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes([sel]) + payload)
        n += 1

    for curve, dec in CURVES.items():
        fx = os.path.join(ROOT, "tests", "fixtures", curve)
        n8q, q, a1, b2 = zkey_header(os.path.join(fx, "multiplier.zkey"))
        with open(os.path.join(fx, "multiplier_vk.json")) as f:
            vk = json.load(f)
        g1j = "\0".join(vk["vk_alpha_1"]).encode()
        g2j = "\0".join(s for pair in vk["vk_beta_2"] for s in pair).encode()
        for chk in range(3):
            s = chk << 4
            put(f"{curve}_g1_bin_c{chk}", s | dec["bin"][0], a1)
            put(f"{curve}_g2_bin_c{chk}", s | dec["bin"][1], b2)
            put(f"{curve}_g1_json_c{chk}", s | dec["json"][0], g1j)
            put(f"{curve}_g2_json_c{chk}", s | dec["json"][1], g2j)
        put(f"{curve}_g1_bin_inf", dec["bin"][0], bytes(len(a1)))
        put(f"{curve}_g2_bin_inf", dec["bin"][1], bytes(len(b2)))
        put(f"{curve}_g1_json_inf", dec["json"][0], b"0\x001\x000")
        put(f"{curve}_g2_json_inf", dec["json"][1], b"0\x000\x001\x000\x000\x000")
        if dec["zc"]:
            g1 = words(a1, n8q, q, 2)
            g2 = words(b2, n8q, q, 4)
            for chk in range(3):
                s = chk << 4
                for comp in (True, False):
                    tag = "c" if comp else "u"
                    put(f"{curve}_g1_zc{tag}_c{chk}", s | dec["zc"][0], zcash(g1, q, n8q, comp))
                    put(f"{curve}_g2_zc{tag}_c{chk}", s | dec["zc"][1], zcash(g2, q, n8q, comp))
            put(f"{curve}_g1_zc_inf", dec["zc"][0], bytes([0xC0]) + bytes(n8q - 1))
            put(f"{curve}_g2_zc_inf", dec["zc"][1], bytes([0xC0]) + bytes(2 * n8q - 1))
    print(f"point-seeds: {n} seeds in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
