#!/usr/bin/python3
"""cuzk-daemon with GPU workers (run by gpu_daemon_test.sh: on a real device, or with
--emulated-devices N on N emulated ones, gpus.emulated_devices, where there is no GPU): concurrent multi-partition jobs on both curves with B in G2 on the CPU and then
on the GPU; every partition's proof is checked with `cuzk verify` against the verification key
snarkjs wrote, the status must show the GPU stages on the device(s) and no fault or fallback.
With GPU_TEST_OUT set, the proofs are also written there (OUT/<tag>/<job>-<k>/proof.json,
public.json) so snarkjs can verify them on a machine that has node."""
import concurrent.futures as cf
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("CUZK_BIN_DIR", os.path.join(ROOT, "build/bin"))
FIX = os.path.join(ROOT, "tests/fixtures")
OUT = os.environ.get("GPU_TEST_OUT")
SNARKJS = os.path.join(ROOT, "node_modules/.bin/snarkjs")
# On emulated devices (no GPU) a smaller fixture and fewer jobs keep the test short.
EMULATED = int(sys.argv[sys.argv.index("--emulated-devices") + 1]) \
    if "--emulated-devices" in sys.argv else 0
SIM = EMULATED > 0
FX = "poseidon" if SIM else "chain"
JOBS, PARTS = (4, 3) if SIM else (6, 4)
if not (os.access(SNARKJS, os.X_OK) and shutil.which("node")):
    SNARKJS = None
spec = importlib.util.spec_from_file_location("cuzk_client", os.path.join(ROOT, "scripts/cuzk-client.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
pb = cc.pb()
COMPLETED = pb.JobState.Value("JOB_STATE_COMPLETED")
TMP = tempfile.mkdtemp(prefix="cuzk-gpu-daemon-")
checks = failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s" % what, file=sys.stderr, flush=True)
    return cond


def run_daemon(tag, g2):
    cfg = os.path.join(TMP, tag + ".toml")
    with open(cfg, "w") as f:
        f.write("""[gpus]
backend = "gpu"
emulated_devices = %d
workers_per_device = 2
g2 = "%s"
[synthesis]
partition_workers = 3
[keys]
cache_dir = "%s"
[[circuit]]
id = "bn-chain"
zkey = "%s/bn128/%s.zkey"
preload = true
[[circuit]]
id = "bls-chain"
zkey = "%s/bls12381/%s.zkey"
preload = true
""" % (EMULATED, g2, TMP, FIX, FX, FIX, FX))
    proc = subprocess.Popen([os.path.join(BIN, "cuzk-daemon"), "--config", cfg, "--listen",
                             "127.0.0.1:0", "--metrics", ""], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines, addr = [], None
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"cuzk-daemon ready, serving on (\S+)$", line.rstrip())
        if m:
            addr = m.group(1)
            break
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stderr], daemon=True).start()
    if not check(addr, "%s: daemon ready: %s" % (tag, "".join(lines[-20:]))):
        proc.kill()
        return
    client = cc.Client(addr)
    client.wait_ready(30)
    wt = {c: open(os.path.join(FIX, d + "/" + FX + ".wtns"), "rb").read()
          for c, d in (("bn-chain", "bn128"), ("bls-chain", "bls12381"))}

    def one(i):
        circ = "bn-chain" if i % 2 == 0 else "bls-chain"
        return circ, client.call("Prove", timeout=600, circuit_id=circ, witnesses=[wt[circ]] * PARTS)

    with cf.ThreadPoolExecutor(JOBS) as ex:
        results = list(ex.map(one, range(JOBS)))
    for circ, r in results:
        if not check(r.state == COMPLETED and len(r.proofs) == PARTS,
                     "%s %s: %s %s" % (tag, circ, r.state, r.error.message)):
            continue
        check(r.timings.gpu_ms > 0 and r.timings.g2_ms > 0,
              "%s %s: gpu_ms %.1f g2_ms %.1f" % (tag, circ, r.timings.gpu_ms, r.timings.g2_ms))
        fx = "bn128" if circ == "bn-chain" else "bls12381"
        for k, p in enumerate(r.proofs):
            d = os.path.join(OUT or TMP, tag, "%s-%s-%d" % (circ, r.job_id, k))
            os.makedirs(d, exist_ok=True)
            for name, text in (("proof.json", p.proof_json), ("public.json", p.public_json)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            with open(os.path.join(d, "vk"), "w") as f:
                f.write(fx + "/" + FX + "_vk.json\n")
            # snarkjs (independent) where node is installed; cuzk verify on a bare GPU host.
            args = [os.path.join(FIX, fx, FX + "_vk.json"), os.path.join(d, "public.json"),
                    os.path.join(d, "proof.json")]
            if SNARKJS:
                v = subprocess.run([SNARKJS, "groth16", "verify"] + args, capture_output=True,
                                   text=True)
                ok = v.returncode == 0 and "OK" in v.stdout
            else:
                v = subprocess.run([os.path.join(BIN, "cuzk"), "verify", "--quiet"] + args,
                                   capture_output=True, text=True)
                ok = v.returncode == 0
            check(ok, "%s %s partition %d: verify: %s %s" % (tag, circ, k, v.stdout[-200:],
                                                           v.stderr[-200:]))
    st = client.call("GetStatus")
    done = sum(g.partitions for g in st.gpus)
    check(len(st.gpus) >= 1 and done == JOBS * PARTS, "%s: GPU stages on the devices: %d of %d (%s)" %
          (tag, done, JOBS * PARTS, [(g.device, g.partitions) for g in st.gpus]))
    check(st.gpu_faults == 0 and st.cpu_fallbacks == 0,
          "%s: faults %d fallbacks %d" % (tag, st.gpu_faults, st.cpu_fallbacks))
    print("%s: %s; GPU stages per device %s" % (tag, ", ".join(st.devices),
                                                [g.partitions for g in st.gpus]), flush=True)
    client.close()
    proc.send_signal(15)
    check(proc.wait(120) == 0, "%s: daemon exits 0" % tag)


if __name__ == "__main__":
    run_daemon("g2cpu", "cpu")
    run_daemon("g2gpu", "gpu")
    print("gpu_daemon: %d checks, %d failed" % (checks, failures))
    sys.exit(1 if failures else 0)
