"""Independent checks of the daemon's results: the public values read from each .wtns, the
shape of every proof, and snarkjs's groth16.verify over them after a run (--vk)."""
import json
import os
import shutil
import subprocess
import tempfile

from . import paths


def wtns_public(path, n_public):
    """Public values (decimal strings) of a .wtns file: witness[1 .. n_public] (iden3 wtns:
    "wtns", version, sections; section 1 = n8, prime, count; section 2 = the values, n8 bytes
    each, little-endian, canonical). Read independently of the daemon to check its results."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"wtns":
        raise ValueError("%s: not a .wtns file" % path)
    nsec = int.from_bytes(data[8:12], "little")
    off, n8, vals = 12, None, None
    for _ in range(nsec):
        typ = int.from_bytes(data[off:off + 4], "little")
        size = int.from_bytes(data[off + 4:off + 12], "little")
        body = off + 12
        if typ == 1:
            n8 = int.from_bytes(data[body:body + 4], "little")
        elif typ == 2:
            vals = body
        off = body + size
    if n8 is None or vals is None:
        raise ValueError("%s: wtns without header or values" % path)
    return [str(int.from_bytes(data[vals + n8 * i:vals + n8 * (i + 1)], "little"))
            for i in range(1, n_public + 1)]


def check_result(res, expect_public, n_parts):
    """None when the result has one groth16 proof per partition whose public signals are its
    witness's (expect_public[k] for partition k); else what is wrong."""
    if len(res.proofs) != n_parts:
        return "%d proofs for %d partitions" % (len(res.proofs), n_parts)
    for k, p in enumerate(res.proofs):
        try:
            pub, prf = json.loads(p.public_json), json.loads(p.proof_json)
        except ValueError as e:
            return "partition %d: bad JSON: %s" % (k, e)
        if pub != expect_public[k]:
            return "partition %d: public signals %s, witness has %s" % (k, pub[:3],
                                                                      expect_public[k][:3])
        if prf.get("protocol") != "groth16" or not all(
                isinstance(prf.get(x), list) for x in ("pi_a", "pi_b", "pi_c")):
            return "partition %d: proof.json is not a groth16 proof" % k
    return None


SNARKJS_VERIFY_JS = r"""
const fs = require("fs");
const snarkjs = require(process.argv[2]);
(async () => {
  const items = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  const vks = {};
  const bad = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (!vks[it.vk]) vks[it.vk] = JSON.parse(fs.readFileSync(it.vk, "utf8"));
    const ok = await snarkjs.groth16.verify(vks[it.vk], JSON.parse(it.pub), JSON.parse(it.proof),
                                            {info() {}, debug() {}, warn() {}, error() {}});
    if (!ok) bad.push(i);
  }
  process.stdout.write(JSON.stringify({n: items.length, bad: bad}) + "\n");
  process.exit(0);
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def snarkjs_check(vks):
    """Before a run: --vk needs node, the repository's snarkjs and readable keys."""
    mod = os.path.join(paths.SRC, "node_modules/snarkjs")
    if not os.path.isdir(mod) or not shutil.which("node"):
        raise ValueError("--vk needs node and snarkjs (%s); leave --vk out on a machine "
                         "without them (the daemon still self-verifies every proof)" % mod)
    for v in vks:
        with open(v) as f:
            json.load(f)


def snarkjs_verify(items):
    """Verifies [(vk_path, public_json, proof_json)] with snarkjs's groth16.verify in one node
    process (independent of the daemon's own check). Returns (verified, [bad indexes])."""
    mod = os.path.join(paths.SRC, "node_modules/snarkjs")
    if not os.path.isdir(mod) or not shutil.which("node"):
        raise RuntimeError("--vk needs node and snarkjs (%s)" % mod)
    with tempfile.TemporaryDirectory() as td:
        js, data = os.path.join(td, "verify.js"), os.path.join(td, "items.json")
        with open(js, "w") as f:
            f.write(SNARKJS_VERIFY_JS)
        with open(data, "w") as f:
            json.dump([{"vk": os.path.abspath(v), "pub": p, "proof": q} for v, p, q in items], f)
        v = subprocess.run(["node", js, mod, data], capture_output=True, text=True)
    if v.returncode != 0:
        raise RuntimeError("snarkjs verify failed: %s" % v.stderr.strip()[-500:])
    out = json.loads(v.stdout.strip().splitlines()[-1])
    return out["n"] - len(out["bad"]), out["bad"]


def verify_records(recs, vk):
    """snarkjs-verifies every partition proof kept in recs; returns the report entry."""
    items = [(vk, pub, prf) for r in recs for pub, prf in r.pop("_proofs", [])]
    if not items:
        return {"proofs": 0, "verified": 0}
    n_ok, bad = snarkjs_verify(items)
    return {"proofs": len(items), "verified": n_ok, "bad": bad[:20]}
