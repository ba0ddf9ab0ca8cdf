#!/usr/bin/python3
"""The cost of TLS + bearer tokens: proofs per second on the demo circuits (configs/demo.toml's
four fixtures) and GetStatus calls per second, against a plaintext daemon without tokens, same
machine, same run. Both daemons run the same engine settings; the arms alternate per round
(A B A B ...) so drift hits both. The certificate (EC P-256) and token are made here.

Usage: bench/auth-overhead.py [--daemon build/bin/cuzk-daemon] [--rounds 3] [--proofs 40]
                              [--calls 500] [-j 4]
Runs with /usr/bin/python3 (python3-grpcio) and openssl; prints a table, asserts nothing."""
import argparse
import concurrent.futures as cf
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests/fixtures")
spec = importlib.util.spec_from_file_location("cuzk_client",
                                              os.path.join(ROOT, "scripts/cuzk-client.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)

CIRCUITS = [("bn128-multiplier", "bn128/multiplier"), ("bn128-poseidon", "bn128/poseidon"),
            ("bls12381-multiplier", "bls12381/multiplier"),
            ("bls12381-poseidon", "bls12381/poseidon")]
TOKEN = "bench-token-0123456789abcdef0123456789"


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True)


def make_pki(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", d + "/ca.key", "-out", d + "/ca.pem", "-days", "1",
            "-subj", "/CN=bench-ca")
    openssl("req", *ec, "-keyout", d + "/srv.key", "-out", d + "/srv.csr", "-subj", "/CN=srv")
    with open(d + "/ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", d + "/srv.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
            "-CAcreateserial", "-out", d + "/srv.pem", "-days", "1", "-extfile", d + "/ext")
    with open(d + "/tokens", "w") as f:
        f.write("prove %s\n" % TOKEN)
    os.chmod(d + "/tokens", 0o600)


class Daemon:
    def __init__(self, binary, cfg, client_kw):
        self.proc = subprocess.Popen([binary, "--config", cfg, "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addr, ready = None, threading.Event()

        def read():
            for line in self.proc.stderr:
                m = re.search(r"ready, serving on (\S+)", line)
                if m:
                    self.addr = m.group(1)
                    ready.set()
        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(120):
            self.proc.kill()
            raise SystemExit("auth-overhead: %s printed no ready line" % cfg)
        self.client = cc.Client(self.addr, **client_kw)
        self.client.wait_ready(30)

    def stop(self):
        self.client.close()
        self.proc.terminate()
        self.proc.wait(60)


def proofs_per_s(c, wit, n, j):
    jobs = [CIRCUITS[i % len(CIRCUITS)] for i in range(n)]
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(j) as ex:
        for r in ex.map(lambda cw: c.call("Prove", circuit_id=cw[0], witnesses=[wit[cw[1]]],
                                          timeout=600), jobs):
            if r.state != cc.pb().JobState.Value("JOB_STATE_COMPLETED"):
                raise SystemExit("auth-overhead: a proof failed: %s" % r.error.message)
    return n / (time.perf_counter() - t0)


def calls_per_s(c, n, j):
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(j) as ex:
        list(ex.map(lambda _: c.call("GetStatus", timeout=60), range(n)))
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemon", default=os.path.join(ROOT, "build/bin/cuzk-daemon"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--proofs", type=int, default=40, help="proofs per arm and round")
    ap.add_argument("--calls", type=int, default=500, help="GetStatus calls per arm and round")
    ap.add_argument("-j", type=int, default=4, help="calls in flight")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cuzk-auth-bench-")
    try:
        make_pki(tmp)
        body = "[metrics]\nlisten = \"\"\n[keys]\ncache = false\n[logging]\nlevel = \"info\"\n"
        for cid, f in CIRCUITS:
            body += "[[circuit]]\nid = \"%s\"\nzkey = \"%s/%s.zkey\"\npreload = true\n" % (
                cid, FIX, f)
        secure = body + ("[daemon.auth]\ntokens_file = \"%s/tokens\"\n[daemon.tls]\n"
                         "cert = \"%s/srv.pem\"\nkey = \"%s/srv.key\"\n" % (tmp, tmp, tmp))
        arms = {"plaintext": (body, {}),
                "tls+tokens": (secure, {"token": TOKEN, "tls_ca": tmp + "/ca.pem"})}
        wit = {}
        for _, f in CIRCUITS:
            with open("%s/%s.wtns" % (FIX, f), "rb") as fh:
                wit[f] = fh.read()
        res = {k: {"proofs": [], "calls": []} for k in arms}
        for rnd in range(a.rounds):
            for name, (cfg_text, kw) in arms.items():
                cfg = "%s/%s.toml" % (tmp, name.replace("+", "_"))
                with open(cfg, "w") as f:
                    f.write(cfg_text)
                d = Daemon(a.daemon, cfg, kw)
                try:
                    proofs_per_s(d.client, wit, len(CIRCUITS), a.j)  # warm-up
                    res[name]["proofs"].append(proofs_per_s(d.client, wit, a.proofs, a.j))
                    res[name]["calls"].append(calls_per_s(d.client, a.calls, a.j))
                finally:
                    d.stop()
                print("round %d %-10s proofs/s %.1f  GetStatus/s %.0f" % (
                    rnd + 1, name, res[name]["proofs"][-1], res[name]["calls"][-1]),
                    file=sys.stderr, flush=True)
        print("%-12s %16s %16s" % ("arm", "proofs/s (mean)", "GetStatus/s"))
        for name in arms:
            p, c = res[name]["proofs"], res[name]["calls"]
            print("%-12s %9.1f ±%5.1f %9.0f ±%5.0f" % (
                name, statistics.mean(p), statistics.pstdev(p), statistics.mean(c),
                statistics.pstdev(c)))
        base, sec = res["plaintext"], res["tls+tokens"]
        print("tls+tokens / plaintext: proofs %.3f, GetStatus %.3f (%d rounds, %d proofs and %d "
              "calls per arm and round, -j %d, cores %d)" % (
                  statistics.mean(sec["proofs"]) / statistics.mean(base["proofs"]),
                  statistics.mean(sec["calls"]) / statistics.mean(base["calls"]), a.rounds,
                  a.proofs, a.calls, a.j, os.cpu_count()))
    finally:
        shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
