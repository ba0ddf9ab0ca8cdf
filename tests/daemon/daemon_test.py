#!/usr/bin/python3
"""End-to-end tests of cuzk-daemon: the real binary, a real gRPC client (python3-grpcio through
scripts/cuzk-client.py), loopback only, ports chosen by the kernel (listen on port 0; the ready
line names the port). Proofs are checked with snarkjs (an independent verifier) against the
verification keys snarkjs wrote for the fixtures."""
import concurrent.futures as cf
import importlib.util
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build/bin/cuzk-daemon")
SNARKJS = os.path.join(ROOT, "node_modules/.bin/snarkjs")
FIX = os.path.join(ROOT, "tests/fixtures")

spec = importlib.util.spec_from_file_location("cuzk_client", os.path.join(ROOT, "scripts/cuzk-client.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
pb = cc.pb()
COMPLETED = pb.JobState.Value("JOB_STATE_COMPLETED")
FAILED = pb.JobState.Value("JOB_STATE_FAILED")
CANCELLED = pb.JobState.Value("JOB_STATE_CANCELLED")

checks = 0
failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s" % what, file=sys.stderr, flush=True)
    return cond


def read(rel):
    with open(os.path.join(FIX, rel), "rb") as f:
        return f.read()


W = {k: read(k + ".wtns") for k in ("bn128/multiplier", "bn128/poseidon",
                                     "bls12381/multiplier", "bls12381/poseidon")}
TMP = tempfile.mkdtemp(prefix="cuzk-daemon-test-")

CIRCUITS = """
[keys]
cache = false
[[circuit]]
id = "bn-mul"
zkey = "%(f)s/bn128/multiplier.zkey"
preload = true
[[circuit]]
id = "bn-pos"
zkey = "%(f)s/bn128/poseidon.zkey"
preload = true
[[circuit]]
id = "bls-mul"
zkey = "%(f)s/bls12381/multiplier.zkey"
preload = true
[[circuit]]
id = "bls-pos"
zkey = "%(f)s/bls12381/poseidon.zkey"
""" % {"f": FIX}


SVC_PREFIX = "/cuzk.v1.ProvingService/"
DAEMONS = []  # every daemon started, killed at exit if a failed test left one running


class Daemon:
    def __init__(self, name, body, extra_args=(), client_kw=None):
        self.path = os.path.join(TMP, name + ".toml")
        with open(self.path, "w") as f:
            f.write(body)
        self.lines = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen(
            [DAEMON, "--config", self.path, "--listen", "127.0.0.1:0"] + list(extra_args),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        DAEMONS.append(self.proc)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(60):
            raise RuntimeError("%s: no ready line:\n%s" % (name, "".join(self.lines)))
        m = re.search(r"cuzk-daemon ready, serving on (\S+)$", self.ready_line)
        self.addr = m.group(1)
        self.client = cc.Client(self.addr, **(client_kw or {}))
        self.client.wait_ready(30)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            if "cuzk-daemon ready, serving on " in line:
                self.ready_line = line.rstrip()
                self.ready.set()

    def call(self, method, **kw):
        return self.client.call(method, timeout=120, **kw)

    def metric(self, name):
        text = self.call("GetMetrics").text
        m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
        return float(m.group(1)) if m else None

    def stop(self, sig=signal.SIGTERM, timeout=60):
        self.client.close()
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout)
        self.reader.join(5)
        bad = [l for l in self.lines if "Sanitizer" in l or "runtime error" in l]
        check(not bad, "sanitizer reports: %s" % "".join(bad[:20]))
        return rc


def snarkjs_verify(vk, public_json, proof_json, tag):
    d = tempfile.mkdtemp(dir=TMP)
    pf, uf = os.path.join(d, "proof.json"), os.path.join(d, "public.json")
    with open(pf, "w") as f:
        f.write(proof_json)
    with open(uf, "w") as f:
        f.write(public_json)
    r = subprocess.run([SNARKJS, "groth16", "verify", os.path.join(FIX, vk), uf, pf],
                       capture_output=True, text=True)
    return check(r.returncode == 0 and "OK" in r.stdout, "snarkjs verifies %s: %s %s" %
                 (tag, r.stdout[-300:], r.stderr[-300:]))


def expect_error(fn, code, needle, what):
    try:
        fn()
    except grpc.RpcError as e:
        ok = e.code() == code and needle in (e.details() or "")
        return check(ok, "%s: got %s %r" % (what, e.code(), e.details()))
    return check(False, "%s: no error" % what)


def test_main():
    t0 = time.time()
    d = Daemon("main", """
[daemon]
max_message_size = "1MiB"
shutdown_grace = "60s"
[metrics]
listen = "127.0.0.1:0"
[synthesis]
partition_workers = 2
[gpus]
host_threads = 1
[memory]
working_budget = "256MiB"
""" + CIRCUITS)
    ready = [l for l in d.lines if "ready, serving on" in l]
    check(len(ready) == 1, "exactly one ready line")
    check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z INFO cuzk_daemon: ", ready[0]) is not None,
          "ready line format: %r" % ready[0])

    # Prove on both curves, single and multi-partition; snarkjs verifies every partition.
    cases = [("bn-mul", "bn128/multiplier", 1), ("bn-pos", "bn128/poseidon", 2),
             ("bls-mul", "bls12381/multiplier", 1), ("bls-pos", "bls12381/poseidon", 2)]
    with cf.ThreadPoolExecutor(4) as ex:
        futs = {c: ex.submit(d.call, "Prove", circuit_id=c, witnesses=[W[w]] * n)
                for c, w, n in cases}
        for c, w, n in cases:
            r = futs[c].result()
            if not check(r.state == COMPLETED and len(r.proofs) == n, "Prove %s: %s" % (c, r)):
                continue
            for k, p in enumerate(r.proofs):
                snarkjs_verify(w + "_vk.json", p.public_json, p.proof_json, "%s[%d]" % (c, k))
                check(len(p.proof_compressed) == (192 if c.startswith("bls") else 0),
                      "compressed proof size %s" % c)
            check(r.timings.total_ms > 0 and r.timings.prove_ms > 0, "timings %s" % c)

    # The same request_id twice: one job.
    sub0 = d.metric("cuzk_jobs_submitted_total")
    a = d.call("SubmitProof", circuit_id="bn-pos", request_id="rid-1", witnesses=[W["bn128/poseidon"]])
    b = d.call("SubmitProof", circuit_id="bn-pos", request_id="rid-1", witnesses=[W["bn128/poseidon"]])
    check(a.job_id == b.job_id and not a.existing and b.existing, "idempotent request_id")
    ra = d.call("AwaitProof", job_id=a.job_id)
    rb = d.call("Prove", circuit_id="bn-pos", request_id="rid-1", witnesses=[W["bn128/poseidon"]])
    check(ra.state == COMPLETED and rb.job_id == a.job_id and
          rb.proofs[0].proof_json == ra.proofs[0].proof_json, "Prove with a known request_id returns that job")
    check(d.metric("cuzk_jobs_submitted_total") == sub0 + 1, "one job submitted for three calls")
    expect_error(lambda: d.call("SubmitProof", circuit_id="bn-pos", request_id="rid-1",
                                witnesses=[W["bn128/poseidon"]] * 2),
                 grpc.StatusCode.INVALID_ARGUMENT, "already used", "request_id reused with other witnesses")

    # Bad requests fail alone while a good job runs beside them.
    good = d.call("SubmitProof", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"]] * 4)
    corrupt = bytearray(W["bn128/poseidon"])
    corrupt[0:4] = b"xxxx"
    expect_error(lambda: d.call("Prove", circuit_id="nope", witnesses=[W["bn128/poseidon"]]),
                 grpc.StatusCode.NOT_FOUND, "unknown circuit 'nope'", "unknown circuit")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witnesses=[bytes(corrupt)]),
                 grpc.StatusCode.INVALID_ARGUMENT, "BAD_FORMAT", "corrupt witness")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"][:-32]]),
                 grpc.StatusCode.INVALID_ARGUMENT, "witness 0", "truncated witness")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/multiplier"]]),
                 grpc.StatusCode.INVALID_ARGUMENT, "expects 520", "wrong witness length")
    expect_error(lambda: d.call("Prove", circuit_id="bls-pos", witnesses=[W["bn128/poseidon"]]),
                 grpc.StatusCode.INVALID_ARGUMENT, "WRONG_CURVE", "wrong curve")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witnesses=[]),
                 grpc.StatusCode.INVALID_ARGUMENT, "no witness", "no witness")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"]] * 70),
                 grpc.StatusCode.RESOURCE_EXHAUSTED, "larger than max", "oversized message")
    unsat = bytearray(W["bn128/poseidon"])
    unsat[-32] ^= 1  # the last witness value, still < r
    r = d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"], bytes(unsat)])
    check(r.state == FAILED and r.error.code == "WITNESS_UNSATISFIED" and "partition 1" in r.error.message
          and len(r.proofs) == 0, "unsatisfied witness: %s" % r.error)
    # The daemon's output reaches d.lines through a reader thread: wait for the line.
    t_end = time.time() + 10
    ended = []
    while not ended and time.time() < t_end:
        ended = [l for l in d.lines if "job ended" in l and "state=failed" in l]
        if not ended:
            time.sleep(0.05)
    check(ended and re.search(r" total_ms=[\d.]+ error=\"partition 1: ", ended[-1]),
          "a failed job's log line: total_ms and error apart: %s" % ended[-1:])
    rg = d.call("AwaitProof", job_id=good.job_id)
    check(rg.state == COMPLETED and len(rg.proofs) == 4, "the good job beside the bad ones completes")
    snarkjs_verify("bn128/poseidon_vk.json", rg.proofs[3].public_json, rg.proofs[3].proof_json, "good[3]")
    expect_error(lambda: d.call("AwaitProof", job_id="j999-0"), grpc.StatusCode.NOT_FOUND, "unknown job",
                 "await unknown job")

    # Cancel: a long job is stopped at a partition boundary and its memory is released.
    # 60 partitions: long enough that the cancel lands while it runs (cancel as soon as one
    # partition is done, not after a fixed sleep: proving speed varies by machine).
    long = d.call("SubmitProof", circuit_id="bls-pos", witnesses=[W["bls12381/poseidon"]] * 60)
    for _ in range(600):
        if d.call("AwaitProof", job_id=long.job_id, timeout_ms=5).partitions_done >= 1:
            break
    c = d.call("CancelProof", job_id=long.job_id)
    check(c.cancelled, "cancel reports a live job")
    r = d.call("AwaitProof", job_id=long.job_id)
    check(r.state == CANCELLED and r.partitions_done < 60 and r.error.code == "CANCELLED",
          "cancelled job: %s" % r)
    c2 = d.call("CancelProof", job_id=long.job_id)
    check(not c2.cancelled and c2.state == CANCELLED, "second cancel is a no-op")
    st = d.call("GetStatus")
    check(st.budget_in_use == 0 and st.jobs_in_flight == 0, "nothing reserved after cancel: %d" % st.budget_in_use)
    check(st.budget_peak <= st.budget_limit and st.jobs_cancelled == 1, "status counters")
    check(any(k.circuit_id == "bls-pos" and k.tier == "host" for k in st.keys), "status lists keys")
    check(list(st.devices) == ["cpu"], "devices")

    # Keys: evict and reload.
    e = d.call("EvictKey", circuit_id="bn-mul")
    check(e.was_loaded and e.bytes_freed > 0, "evict a resident key")
    lc = d.call("ListCircuits")
    check([x.resident for x in lc.circuits if x.id == "bn-mul"] == [False], "evicted key is cold")
    check(len(lc.circuits) == 4, "four circuits listed")
    r = d.call("Prove", circuit_id="bn-mul", witnesses=[W["bn128/multiplier"]])
    check(r.state == COMPLETED, "prove after eviction reloads the key")
    p = d.call("PreloadKey", circuit_id="bn-mul")
    check(p.was_loaded, "preload of a resident key")
    expect_error(lambda: d.call("EvictKey", circuit_id="nope"), grpc.StatusCode.NOT_FOUND, "unknown", "evict unknown")

    # Metrics over gRPC and HTTP.
    text = d.call("GetMetrics").text
    check('cuzk_jobs_finished_total{state="completed"}' in text and "# TYPE cuzk_budget_peak_bytes gauge" in text,
          "GetMetrics text")
    mline = [l for l in d.lines if "metrics endpoint listening" in l]
    if check(len(mline) == 1, "metrics endpoint logged"):
        url = re.search(r"addr=(\S+)", mline[0]).group(1)
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        check("cuzk_partitions_proved_total" in body, "HTTP /metrics")

    # SIGTERM drains: calls in flight complete, then exit 0.
    with cf.ThreadPoolExecutor(3) as ex:
        futs = [ex.submit(d.call, "Prove", circuit_id="bls-pos", witnesses=[W["bls12381/poseidon"]] * 2)
                for _ in range(3)]
        time.sleep(0.3)
        d.proc.send_signal(signal.SIGTERM)
        states = []
        for f in futs:
            try:
                states.append(f.result().state)
            except grpc.RpcError as e:
                states.append(str(e.code()))
    rc = d.stop(timeout=60)
    check(states == [COMPLETED] * 3, "in-flight proofs complete during drain: %s" % states)
    check(rc == 0, "exit status 0 after SIGTERM (got %s)" % rc)
    check(any("cuzk-daemon stopped" in l for l in d.lines), "stop logged")
    print("main daemon: %.1fs" % (time.time() - t0), flush=True)


def test_priority():
    d = Daemon("prio", """
[metrics]
listen = ""
[synthesis]
partition_workers = 1
[gpus]
host_threads = 1
""" + CIRCUITS)
    w = [W["bls12381/poseidon"]]
    # The first LOW job has 16 partitions: the one partition worker is busy with it while the
    # other submissions arrive (a one-partition job had finished before them on a fast run,
    # so a second LOW job could start before the CRITICAL one was even submitted).
    lows = [d.call("SubmitProof", circuit_id="bls-pos", priority=1, witnesses=w * (16 if i == 0 else 1))
            for i in range(5)]
    crit = d.call("SubmitProof", circuit_id="bls-pos", priority=4, witnesses=w)
    rc = d.call("AwaitProof", job_id=crit.job_id)
    rl = [d.call("AwaitProof", job_id=j.job_id) for j in lows]
    check(rc.state == COMPLETED and all(r.state == COMPLETED for r in rl), "all complete")
    before = sum(1 for r in rl if r.completion_seq < rc.completion_seq)
    print("priority: LOW completion order %s, CRITICAL %d" % ([r.completion_seq for r in rl], rc.completion_seq))
    check(before <= 1, "CRITICAL overtakes queued LOW jobs (%d LOW finished first; seqs %s vs %d)" %
          (before, [r.completion_seq for r in rl], rc.completion_seq))
    check([r.completion_seq for r in rl[1:]] == sorted(r.completion_seq for r in rl[1:]), "FIFO within LOW")
    check(d.stop() == 0, "prio daemon exits 0")


def test_budget():
    # A budget of 2.5 partitions, 3 workers, 20 concurrent jobs of 3 partitions each.
    probe = Daemon("probe", "[metrics]\nlisten = \"\"\n[gpus]\nhost_threads = 1\n" + CIRCUITS)
    part = None
    for line in probe.lines:
        m = re.search(r"circuit=bn-pos .*partition_bytes=(\d+)", line)
        if m:
            part = int(m.group(1))
    probe.stop()
    if not check(part, "partition bytes logged"):
        return
    budget = part * 5 // 2
    d = Daemon("budget", """
[metrics]
listen = ""
[synthesis]
partition_workers = 3
[gpus]
host_threads = 1
[scheduler]
max_jobs_in_flight = 20
[memory]
working_budget = %d
""" % budget + CIRCUITS)
    t0 = time.time()
    with cf.ThreadPoolExecutor(20) as ex:
        futs = [ex.submit(d.call, "Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"]] * 3)
                for _ in range(20)]
        res = [f.result() for f in futs]
    check(all(r.state == COMPLETED and len(r.proofs) == 3 for r in res), "20 jobs x 3 partitions complete")
    st = d.call("GetStatus")
    check(st.budget_limit == budget and st.budget_peak <= budget and st.budget_peak >= part,
          "peak %d within budget %d" % (st.budget_peak, budget))
    check(d.metric("cuzk_budget_waits_total") > 0, "partitions waited for memory")
    check(st.jobs_completed == 20 and st.budget_in_use == 0, "counters after the storm")
    with open("/proc/%d/status" % d.proc.pid) as f:
        hwm = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) * 1024
    # Budget + resident keys (< 1 MiB here) + a fixed margin for code, gRPC and 60 witnesses.
    check(hwm < budget + (1 << 20) + (96 << 20), "peak RSS %d bytes" % hwm)
    snarkjs_verify("bn128/poseidon_vk.json", res[19].proofs[2].public_json, res[19].proofs[2].proof_json,
                   "budget job")
    check(d.stop() == 0, "budget daemon exits 0")
    print("budget storm: %.1fs, peak RSS %.1f MiB" % (time.time() - t0, hwm / 2**20), flush=True)


def test_demo():
    """`make run`'s script with the demo config, driven by the command-line client."""
    env = dict(os.environ, CUZK_BIN_DIR=os.path.dirname(DAEMON))
    proc = subprocess.Popen([os.path.join(ROOT, "scripts/run-demo"), "--listen", "127.0.0.1:0",
                             "--metrics", ""], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    DAEMONS.append(proc)
    addr = None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"cuzk-daemon ready, serving on (\S+)$", line.rstrip())
        if m:
            addr = m.group(1)
            break
    threading.Thread(target=lambda: [lines.append(l) for l in proc.stderr], daemon=True).start()
    if not check(addr, "run-demo ready: %s" % "".join(lines)):
        proc.kill()
        return
    for circ, fx in (("bn128-poseidon", "bn128/poseidon"), ("bls12381-multiplier", "bls12381/multiplier")):
        out = tempfile.mkdtemp(dir=TMP)
        r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts/cuzk-client.py"), "--addr", addr,
                            "prove", circ, os.path.join(FIX, fx + ".wtns"), "--out", out],
                           capture_output=True, text=True, timeout=120)
        if check(r.returncode == 0 and "JOB_STATE_COMPLETED" in r.stdout, "client prove %s: %s %s" %
                 (circ, r.stdout, r.stderr)):
            with open(os.path.join(out, "proof.json")) as f:
                proof = f.read()
            with open(os.path.join(out, "public.json")) as f:
                public = f.read()
            snarkjs_verify(fx + "_vk.json", public, proof, "demo " + circ)
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts/cuzk-client.py"), "--addr", addr,
                        "prove", "bn128-poseidon", os.path.join(FIX, "bn128/multiplier.wtns")],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "INVALID_ARGUMENT" in r.stderr and "expects 520" in r.stderr,
          "client reports a gRPC error: %s" % r.stderr)
    proc.send_signal(signal.SIGTERM)
    check(proc.wait(60) == 0, "run-demo daemon exits 0 on SIGTERM")


def run_bad_config(name, body, needles, args=()):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(body)
    try:
        r = subprocess.run([DAEMON, "--config", path] + list(args), capture_output=True,
                           text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return check(False, "bad config %s: the daemon started instead of refusing it" % name)
    check(r.returncode == 2 and all(n % {"p": path} in r.stderr for n in needles),
          "bad config %s: rc=%d %s" % (name, r.returncode, r.stderr.strip()))


def test_config():
    run_bad_config("unknown.toml", "[gpus]\nworkers_per_device = 2\nwrkers = 1\n",
                   ["%(p)s:3", "gpus.wrkers"])
    run_bad_config("type.toml", "[scheduler]\nmax_jobs_in_flight = \"many\"\n",
                   ["%(p)s:2", "scheduler.max_jobs_in_flight"])
    run_bad_config("size.toml", "[memory]\nworking_budget = \"50 GiBs\"\n", ["%(p)s:2", "memory.working_budget"])
    run_bad_config("gpub.toml", "[memory]\ngpu_budget = \"lots\"\n", ["%(p)s:2", "memory.gpu_budget"])
    run_bad_config("pinb.toml", "[memory]\n\npinned_budget = -1\n", ["%(p)s:3", "memory.pinned_budget"])
    run_bad_config("sbatch.toml", "[gpus]\nstream_batch = 0\n", ["%(p)s:2", "gpus.stream_batch"])
    run_bad_config("zkey.toml", "[[circuit]]\nid = \"x\"\nzkey = \"/nonexistent.zkey\"\n",
                   ["circuit 'x'", "/nonexistent.zkey"])
    # Ports beyond 65535 are refused (gRPC would bind the port modulo 65536).
    run_bad_config("port.toml", "[daemon]\nlisten = \"127.0.0.1:99999\"\n",
                   ["%(p)s:2", "daemon.listen", "99999", "1 to 65535"])
    run_bad_config("port6.toml", "[daemon]\nlisten = \"[::1]:65536\"\n",
                   ["daemon.listen", "65536"])
    run_bad_config("noport.toml", "[daemon]\nlisten = \"127.0.0.1\"\n", ["daemon.listen", "port"])
    run_bad_config("mport.toml", "[metrics]\nlisten = \"127.0.0.1:70000\"\n",
                   ["%(p)s:2", "metrics.listen", "70000"])
    run_bad_config("cliport.toml", "", ["--listen", "99999"], ["--listen", "127.0.0.1:99999"])
    # witness_dir must be a directory.
    wfile = os.path.join(TMP, "not-a-dir")
    with open(wfile, "w") as f:
        f.write("x")
    run_bad_config("wdirfile.toml", "[metrics]\nlisten = \"\"\n[daemon]\nwitness_dir = \"%s\"\n" % wfile,
                   ["daemon.witness_dir", "not a directory"])
    # A network address without authentication needs daemon.insecure = true.
    run_bad_config("open.toml", "[metrics]\nlisten = \"\"\n[daemon]\nlisten = \"0.0.0.0:0\"\n",
                   ["daemon.listen '0.0.0.0:0'", "daemon.insecure = true"])
    run_bad_config("open6.toml", "[metrics]\nlisten = \"\"\n", ["daemon.insecure"],
                   ["--listen", "[::]:0"])
    run_bad_config("openhost.toml", "[metrics]\nlisten = \"\"\n", ["daemon.insecure"],
                   ["--listen", "example.com:0"])
    d = Daemon("insecure", "[daemon]\ninsecure = true\n", ["--listen", "0.0.0.0:0", "--metrics", ""])
    check(d.addr.startswith("0.0.0.0:") and any("daemon.insecure" in l for l in d.lines),
          "insecure = true serves on 0.0.0.0 with a warning: %s" % d.addr)
    check(d.stop() == 0, "insecure daemon exits 0")
    # An empty file works (every key has a default).
    d = Daemon("empty", "", ["--metrics", ""])
    check(len(d.call("ListCircuits").circuits) == 0, "empty config serves no circuits")
    # A second daemon on the same port fails to start (no silent SO_REUSEPORT sharing).
    r = subprocess.run([DAEMON, "--listen", d.addr, "--metrics", ""], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 2 and "cannot listen" in r.stderr, "port in use: rc=%d %s" % (r.returncode, r.stderr[-300:]))
    check(d.stop(signal.SIGINT) == 0, "SIGINT exits 0")


def load_ms(d, circuit):
    """(source, ms) of the daemon's "proving key loaded" line for a circuit."""
    for l in d.lines:
        if "proving key loaded" in l and "circuit=%s " % circuit in l:
            m = re.search(r"source=(\w+) ms=([\d.]+)", l)
            if m:
                return m.group(1), float(m.group(2))
    return None, None


def test_cache():
    """The preprocessed key cache: the first start loads the zkey and writes the cache, a
    restart loads the cache, a corrupt cache is refused with a warning and rewritten,
    and proofs from a cached key verify with snarkjs."""
    import shutil
    zk = os.path.join(TMP, "chain.zkey")
    shutil.copyfile(os.path.join(FIX, "bls12381/chain.zkey"), zk)
    cache_dir = os.path.join(TMP, "keycache")
    os.mkdir(cache_dir)
    body = ('[keys]\ncache_dir = "%s"\n[[circuit]]\nid = "chain"\nzkey = "%s"\npreload = true\n'
            % (cache_dir, zk))
    wtns = read("bls12381/chain.wtns")

    def start_prove_stop(tag):
        d = Daemon("cache-" + tag, body, ["--metrics", ""])
        src, ms = load_ms(d, "chain")
        r = d.call("Prove", circuit_id="chain", witnesses=[wtns])
        if check(r.state == COMPLETED, "%s: proof %s" % (tag, r.error.message)):
            snarkjs_verify("bls12381/chain_vk.json", r.proofs[0].public_json,
                           r.proofs[0].proof_json, "cache " + tag)
        st = d.call("GetStatus")
        check(d.stop() == 0, "%s: exits 0" % tag)
        return d, src, ms, st

    d1, src1, ms1, st1 = start_prove_stop("first")
    files = os.listdir(cache_dir)
    check(src1 == "zkey" and len(files) == 1 and files[0].startswith("chain.zkey."),
          "first start loads the zkey and writes the cache: %s %s" % (src1, files))
    check(st1.keys_from_cache == 0, "first start: keys_from_cache 0")
    d2, src2, ms2, st2 = start_prove_stop("restart")
    check(src2 == "cache" and st2.keys_from_cache == 1, "restart loads the cache: %s" % src2)
    # Both loads report their time; which is faster is a benchmark's claim (docs/PERFORMANCE.md,
    # daemon key cache), not a test's: on a loaded 2-core machine the small fixture's two loads
    # are within noise of each other.
    check(ms2 is not None and ms1 is not None, "both loads report ms: %s / %s" % (ms1, ms2))
    print("key cache: first start %.1f ms (zkey), restart %.1f ms (cache)" % (ms1 or -1, ms2 or -1),
          flush=True)
    # Corrupt one payload byte: refused (hash), the zkey is loaded, the cache rewritten.
    cpath = os.path.join(cache_dir, files[0])
    size = os.path.getsize(cpath)
    with open(cpath, "r+b") as f:
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0x40]))
    d3, src3, _, _ = start_prove_stop("corrupt")
    warned = any("key cache not used" in l and "hash" in l for l in d3.lines)
    check(src3 == "zkey" and warned, "a corrupt cache is refused with a warning: %s" % src3)
    d4, src4, _, _ = start_prove_stop("rewritten")
    check(src4 == "cache", "the cache was rewritten after the corrupt one: %s" % src4)
    # A changed zkey (new mtime) makes the cache stale.
    os.utime(zk, (time.time() + 5, time.time() + 5))
    d5, src5, _, _ = start_prove_stop("stale")
    check(src5 == "zkey" and any("stale" in l for l in d5.lines), "a stale cache is refused: %s" % src5)


def test_tiers():
    """Key residency tiers on an emulated GPU (gpus.emulated_devices: the GPU tier's accounting
    without a device): a GPU budget that holds exactly bn-pos's staged copy unstages bn-mul
    for it; the unstaged key stays pinned; an evicted key with a valid cache is "mapped" and
    reloads from the cache (keys_from_cache rises, snarkjs verifies the proof); GetStatus,
    its memory owners and the metrics report the bytes per tier and the evictions."""
    cache_dir = os.path.join(TMP, "tiercache")
    os.mkdir(cache_dir)
    d0 = Daemon("tiers-probe", '[keys]\ncache = false\n[[circuit]]\nid = "bn-pos"\nzkey = "%s"\n'
                % os.path.join(FIX, "bn128/poseidon.zkey"), ["--metrics", ""])
    info = {c.id: c for c in d0.call("ListCircuits").circuits}["bn-pos"]
    check(d0.stop() == 0, "probe daemon exits 0")
    # Staged bytes from the key's dimensions (BN254 G1 points are 64 bytes): A, B1 and C (n_vars
    # each: C's set is padded with n_public + 1 points at infinity), H (domain size), each set
    # with its map of points at infinity (a bit per point in 32-bit words); B in G2 stays on the
    # CPU (g2 = "cpu"), and so does synthesis (synth = "cpu": no A and B rows staged); no
    # fixed-base tables (msm_tables = false; engine_test checks staging with them).
    nv, n = info.n_vars, info.domain_size
    g_pos = (3 * nv + n) * 64 + 3 * ((nv + 31) // 32 * 4) + (n + 31) // 32 * 4
    body = ('[gpus]\nemulated_devices = 1\ng2 = "cpu"\nsynth = "cpu"\nmsm_tables = false\n'
            'workers_per_device = 1\n'
            '[keys]\ncache_dir = "%s"\n'
            '[memory]\ngpu_budget = %d\npinned_budget = "auto"\n'
            '[[circuit]]\nid = "bn-mul"\nzkey = "%s"\npreload = true\n'
            '[[circuit]]\nid = "bn-pos"\nzkey = "%s"\n'
            % (cache_dir, g_pos, os.path.join(FIX, "bn128/multiplier.zkey"),
               os.path.join(FIX, "bn128/poseidon.zkey")))
    d = Daemon("tiers", body, ["--metrics", ""])

    def keys():
        st = d.call("GetStatus")
        return st, {k.circuit_id: k for k in st.keys}

    st, k = keys()
    check(k["bn-mul"].tier == "gpu" and k["bn-pos"].tier == "cold",
          "start: bn-mul staged, bn-pos cold: %s %s" % (k["bn-mul"].tier, k["bn-pos"].tier))
    check(list(k["bn-mul"].gpus) == [0] and st.gpus[0].key_budget == g_pos,
          "bn-mul on device 0, budget %d: %s %d" % (g_pos, list(k["bn-mul"].gpus), st.gpus[0].key_budget))
    g_mul = k["bn-mul"].gpu_bytes
    check(0 < g_mul < g_pos and st.gpus[0].key_bytes == g_mul, "bn-mul staged bytes %d" % g_mul)
    check(k["bn-mul"].pinned_bytes > g_mul and st.keys_pinned_bytes == k["bn-mul"].pinned_bytes,
          "bn-mul pinned (B in G2 included): %d" % k["bn-mul"].pinned_bytes)
    r = d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"]])
    if check(r.state == COMPLETED, "tiers: bn-pos proof %s" % r.error.message):
        snarkjs_verify("bn128/poseidon_vk.json", r.proofs[0].public_json, r.proofs[0].proof_json,
                       "tiers bn-pos")
    st, k = keys()
    check(k["bn-pos"].tier == "gpu" and k["bn-pos"].gpu_bytes == g_pos,
          "bn-pos staged, %d bytes: %s %d" % (g_pos, k["bn-pos"].tier, k["bn-pos"].gpu_bytes))
    check(k["bn-mul"].tier == "pinned" and k["bn-mul"].gpu_bytes == 0,
          "bn-mul unstaged, still pinned: %s" % k["bn-mul"].tier)
    check(st.gpu_unstages == 1 and st.gpus[0].key_unstages == 1 and st.gpus[0].key_bytes == g_pos
          and st.keys_gpu_bytes == g_pos and st.gpus[0].key_peak == g_pos,
          "one unstage, device full: %d %d %d" % (st.gpu_unstages, st.gpus[0].key_bytes, st.gpus[0].key_peak))
    mem = {m.owner: m for m in st.memory}
    check(mem["keys_gpu"].in_use == g_pos and mem["keys_pinned"].in_use == st.keys_pinned_bytes
          and mem["keys_host"].in_use == st.keys_bytes and st.keys_pinned_bytes > 0,
          "memory by owner: keys_gpu %d keys_pinned %d keys_host %d" % (
              mem["keys_gpu"].in_use, mem["keys_pinned"].in_use, mem["keys_host"].in_use))
    # Evict bn-pos: its cache (written on the first load) makes it "mapped".
    files = [f for f in os.listdir(cache_dir) if f.startswith("poseidon.zkey.")]
    ev = d.call("EvictKey", circuit_id="bn-pos")
    st, k = keys()
    size = os.path.getsize(os.path.join(cache_dir, files[0])) if len(files) == 1 else -1
    check(ev.was_loaded and k["bn-pos"].tier == "mapped" and k["bn-pos"].mapped_bytes == size
          and st.keys_mapped_bytes == size and k["bn-pos"].bytes == 0,
          "evicted bn-pos is mapped (%d cache bytes): %s %d" % (size, k["bn-pos"].tier, k["bn-pos"].mapped_bytes))
    check(st.gpus[0].key_bytes == 0 and st.keys_gpu_bytes == 0, "eviction frees the staged copy")
    before = st.keys_from_cache
    r = d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"]])
    if check(r.state == COMPLETED, "tiers: mapped reload proof %s" % r.error.message):
        snarkjs_verify("bn128/poseidon_vk.json", r.proofs[0].public_json, r.proofs[0].proof_json,
                       "tiers mapped reload")
    st, k = keys()
    check(st.keys_from_cache == before + 1 and k["bn-pos"].tier == "gpu",
          "mapped -> host reload from the cache: keys_from_cache %d -> %d, tier %s" % (
              before, st.keys_from_cache, k["bn-pos"].tier))
    check(load_ms_all(d, "bn-pos") == ["zkey", "cache"], "bn-pos loads: %s" % load_ms_all(d, "bn-pos"))
    for name, want in (("cuzk_keys_gpu_bytes", g_pos), ("cuzk_gpu_key_unstages_total", 1),
                       ("cuzk_pinned_key_unpins_total", 0), ("cuzk_keys_mapped_bytes", 0),
                       ("cuzk_keys_pinned_bytes", st.keys_pinned_bytes)):
        got = d.metric(name)
        check(got == want, "metric %s = %s, expected %s" % (name, got, want))
    text = d.call("GetMetrics").text
    check('cuzk_key_tier{circuit="bn-mul",tier="pinned"} 1' in text and
          'cuzk_keys_in_tier{tier="gpu"} 1' in text, "tier metrics")
    check(d.stop() == 0, "tiers daemon exits 0")


def load_ms_all(d, circuit):
    """Sources of every "proving key loaded" line for a circuit, in order."""
    out = []
    for l in d.lines:
        m = re.search(r"source=(\w+) ", l)
        if "proving key loaded" in l and "circuit=%s " % circuit in l and m:
            out.append(m.group(1))
    return out


def test_witness_paths():
    """SubmitProof may name .wtns files inside daemon.witness_dir instead of sending them;
    anything outside it (also through a symlink), a missing file, or both forms at once is
    refused with its own status, and a daemon without witness_dir refuses paths."""
    wdir = os.path.join(TMP, "wdir")
    os.mkdir(wdir)
    import shutil
    for fx in ("bn128/poseidon", "bls12381/multiplier"):
        shutil.copyfile(os.path.join(FIX, fx + ".wtns"), os.path.join(wdir, fx.replace("/", "-") + ".wtns"))
    os.symlink("/etc/passwd", os.path.join(wdir, "escape.wtns"))
    d = Daemon("wpaths", CIRCUITS + '[daemon]\nwitness_dir = "%s"\n' % wdir, ["--metrics", ""])
    r = d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(wdir, "bn128-poseidon.wtns")] * 2)
    if check(r.state == COMPLETED and len(r.proofs) == 2, "witness_paths prove: %s" % r.error.message):
        snarkjs_verify("bn128/poseidon_vk.json", r.proofs[1].public_json, r.proofs[1].proof_json,
                       "witness_paths bn-pos")
    try:
        r = d.call("Prove", circuit_id="bls-mul", witness_paths=["bls12381-multiplier.wtns"])
        check(r.state == COMPLETED, "a relative witness path names a file in the dir: %s" % r.error.message)
    except grpc.RpcError as e:
        check(False, "a relative witness path names a file in the dir: %s" % e.details())
    # '..' is refused even where it would lead back inside: names are resolved beneath the
    # dir, never through its parent.
    expect_error(lambda: d.call("Prove", circuit_id="bls-mul",
                                witness_paths=[wdir + "/../wdir/bls12381-multiplier.wtns"]),
                 grpc.StatusCode.PERMISSION_DENIED, "'..'", "witness path with '..'")
    # A symlink inside the dir is not followed, wherever it points.
    os.symlink(os.path.join(wdir, "bn128-poseidon.wtns"), os.path.join(wdir, "inner.wtns"))
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(wdir, "inner.wtns")]),
                 grpc.StatusCode.PERMISSION_DENIED, "symlink", "symlink inside the dir")
    # A FIFO would block a reader forever, a directory or device is no witness: all refused
    # at once (a 10 s deadline: a daemon that opens the FIFO for reading hangs on it).
    os.mkfifo(os.path.join(wdir, "fifo.wtns"))
    os.mkdir(os.path.join(wdir, "sub.wtns"))
    for name, kind in (("fifo.wtns", "FIFO"), ("sub.wtns", "directory")):
        expect_error(lambda: d.client.call("Prove", timeout=10, circuit_id="bn-pos",
                                           witness_paths=[os.path.join(wdir, name)]),
                     grpc.StatusCode.INVALID_ARGUMENT, "not a regular file (%s)" % kind,
                     "witness path naming a %s" % kind)
    if os.geteuid() == 0:
        os.mknod(os.path.join(wdir, "null.wtns"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        expect_error(lambda: d.client.call("Prove", timeout=10, circuit_id="bn-pos",
                                           witness_paths=[os.path.join(wdir, "null.wtns")]),
                     grpc.StatusCode.INVALID_ARGUMENT, "not a regular file (device)",
                     "witness path naming a device")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(FIX, "bn128/poseidon.wtns")]),
                 grpc.StatusCode.PERMISSION_DENIED, "outside daemon.witness_dir", "path outside the dir")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(wdir, "escape.wtns")]),
                 grpc.StatusCode.PERMISSION_DENIED, "outside daemon.witness_dir", "symlink out of the dir")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(wdir, "none.wtns")]),
                 grpc.StatusCode.NOT_FOUND, "none.wtns", "missing witness file")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witnesses=[W["bn128/poseidon"]],
                                witness_paths=[os.path.join(wdir, "bn128-poseidon.wtns")]),
                 grpc.StatusCode.INVALID_ARGUMENT, "not both", "witnesses and witness_paths")
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(wdir, "bls12381-multiplier.wtns")]),
                 grpc.StatusCode.INVALID_ARGUMENT, "witness 0", "a path to the wrong curve's witness")
    check(d.stop() == 0, "witness_paths daemon exits 0")
    d = Daemon("nopaths", CIRCUITS, ["--metrics", ""])
    expect_error(lambda: d.call("Prove", circuit_id="bn-pos", witness_paths=[os.path.join(wdir, "bn128-poseidon.wtns")]),
                 grpc.StatusCode.FAILED_PRECONDITION, "daemon.witness_dir", "paths refused without witness_dir")
    check(d.stop() == 0, "nopaths daemon exits 0")


def test_generated():
    """A circuit whose key the daemon generates in memory, proved from witness seeds; the
    proofs verify with snarkjs against the vk of the same key made from files (gen-circuit +
    setup + export-vk). Seeds for a zkey circuit, and a working budget below one partition,
    are refused at submission."""
    cuzk = os.path.join(os.path.dirname(DAEMON), "cuzk")
    gen = """
[[circuit]]
id = "gen"
generate_curve = "bls12381"
generate_profile = "sparse-bits"
generate_constraints = 300
generate_seed = "porep-7"
preload = true
"""
    d = Daemon("generated", CIRCUITS + gen, ["--metrics", ""])
    log = "".join(d.lines)
    check("generated test key: secrets known to whoever made it" in log and
          "source=generated" in log, "the log notes the generated key")
    li = {c.id: c for c in d.call("ListCircuits").circuits}
    g = li.get("gen")
    if check(g is not None, "gen listed"):
        check(g.zkey == "" and g.resident and "secrets known" in g.note and
              g.generate == "bls12381 sparse-bits 300 constraints seed porep-7" and
              li["bn-mul"].note == "", "ListCircuits: %s" % g)
    r = d.call("Prove", circuit_id="gen", witness_seeds=[1, 2, 3])
    ok = check(r.state == COMPLETED and len(r.proofs) == 3 and r.timings.witness_ms > 0,
               "seeded prove: %s" % r.error.message)
    cdir = os.path.join(TMP, "gen-files")
    subprocess.run([cuzk, "gen-circuit", "--constraints", "300", "--curve", "bls12381", "--profile",
                    "sparse-bits", "--seed", "porep-7", "-o", cdir, "--quiet"], check=True)
    subprocess.run([cuzk, "setup", "--quiet", "--seed", b"porep-7".hex(), cdir + "/circuit.r1cs",
                    cdir + "/circuit.zkey"], check=True, stderr=subprocess.DEVNULL)
    vk = cdir + "/vk.json"
    subprocess.run([cuzk, "export-vk", cdir + "/circuit.zkey", vk], check=True)
    if ok:
        snarkjs_verify(vk, r.proofs[2].public_json, r.proofs[2].proof_json, "generated key, seed 3")
        # Seed 2's public inputs are those of `cuzk gen-witness --seed 2`'s witness.
        subprocess.run([cuzk, "gen-witness", "--circuit", cdir, "--seed", "2", "-o",
                        cdir + "/w2.wtns", "--quiet"], check=True)
        r2 = d.call("Prove", circuit_id="gen", witnesses=[open(cdir + "/w2.wtns", "rb").read()])
        check(r2.state == COMPLETED and r2.proofs[0].public_json == r.proofs[1].public_json,
              "seed 2 = gen-witness --seed 2")
    expect_error(lambda: d.call("Prove", circuit_id="bn-mul", witness_seeds=[1]),
                 grpc.StatusCode.INVALID_ARGUMENT, "'bn-mul'", "seeds for a zkey circuit")
    st = d.call("GetStatus")
    check(st.host_rss > 0 and st.host_rss_peak >= st.host_rss and st.working_allocated == 0 and
          st.budget_in_use == 0 and st.witness_in_use == 0, "status memory: %s" % st)
    gk = [k for k in st.keys if k.circuit_id == "gen"]
    check(gk and "secrets known" in gk[0].note and gk[0].bytes > 0, "GetStatus key note")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts/cuzk-client.py"), "--addr",
                          d.addr, "status", "--memory"], capture_output=True, text=True)
    check(out.returncode == 0 and "daemon resident peak" in out.stdout and
          "working sets reserved" in out.stdout, "cuzk-client status --memory: %s %s" %
          (out.stdout, out.stderr))
    check(d.stop() == 0, "generated daemon exits 0")
    d = Daemon("tinybudget", CIRCUITS + gen + "[memory]\nworking_budget = 4096\n",
               ["--metrics", ""])
    expect_error(lambda: d.call("SubmitProof", circuit_id="gen", witness_seeds=[1]),
                 grpc.StatusCode.RESOURCE_EXHAUSTED, "memory.working_budget",
                 "working budget below one partition")
    check(d.stop() == 0, "tinybudget daemon exits 0")
    print("generated: seeded proofs verified by snarkjs", flush=True)


def test_witness_race():
    """A witness file rewritten and truncated while SubmitProof reads it: each such request
    fails alone (or succeeds with whatever it read), the daemon keeps serving."""
    wdir = os.path.join(TMP, "wrace")
    os.mkdir(wdir)
    path = os.path.join(wdir, "w.wtns")
    good = W["bls12381/poseidon"]
    with open(path, "wb") as f:
        f.write(good)
    d = Daemon("wrace", CIRCUITS + '[daemon]\nwitness_dir = "%s"\n' % wdir, ["--metrics", ""])
    stop = threading.Event()

    def churn():
        # Truncate and regrow in place: a reader that mapped the file sees pages vanish.
        while not stop.is_set():
            with open(path, "r+b") as f:
                f.truncate(0)
                f.write(good[:len(good) // 3])
                f.flush()
                f.truncate(0)
                f.seek(0)
                f.write(good)

    codes = {}

    def submit():
        for _ in range(150):
            try:
                r = d.client.call("SubmitProof", timeout=30, circuit_id="bls-pos",
                                  witness_paths=[path] * 16)
                codes["OK"] = codes.get("OK", 0) + 1
                d.client.call("CancelProof", timeout=30, job_id=r.job_id)
            except grpc.RpcError as e:
                codes[e.code().name] = codes.get(e.code().name, 0) + 1
                if e.code() == grpc.StatusCode.UNAVAILABLE:
                    return

    churners = [threading.Thread(target=churn) for _ in range(2)]
    for t in churners:
        t.start()
    with cf.ThreadPoolExecutor(4) as ex:
        list(ex.map(lambda _: submit(), range(4)))
    stop.set()
    for t in churners:
        t.join()
    alive = d.proc.poll() is None
    check(alive, "the daemon survives witness files changing under it (exit %s, signal %s)" %
          (d.proc.returncode, -d.proc.returncode if d.proc.returncode else None))
    check(set(codes) <= {"OK", "INVALID_ARGUMENT", "NOT_FOUND", "RESOURCE_EXHAUSTED"},
          "only per-request errors: %s" % codes)
    print("witness race: %s" % codes, flush=True)
    if alive:
        with open(path, "wb") as f:
            f.write(good)
        r = d.call("Prove", circuit_id="bls-pos", witness_paths=[path])
        check(r.state == COMPLETED, "a proof after the race: %s" % r.error.message)
        check(d.stop() == 0, "witness race daemon exits 0")
    else:
        d.reader.join(5)


def test_log_json():
    """JSON logs: a failed job's total_ms is a number and its error a field of its own."""
    import json
    d = Daemon("logjson", CIRCUITS + '[logging]\nformat = "json"\n', ["--metrics", ""])
    unsat = bytearray(W["bn128/poseidon"])
    unsat[-32] ^= 1
    r = d.call("Prove", circuit_id="bn-pos", request_id="rid-json", witnesses=[bytes(unsat)])
    check(r.state == FAILED, "unsatisfied witness fails")
    check(d.stop() == 0, "json daemon exits 0")
    recs = [json.loads(l) for l in d.lines if l.startswith("{")]
    ended = [x for x in recs if x.get("message") == "job ended"]
    f = ended[-1]["fields"] if ended else {}
    check(isinstance(f.get("total_ms"), (int, float)) and "partition 0" in f.get("error", ""),
          "json job ended fields: %s" % f)
    acc = [x["fields"] for x in recs if x.get("message") == "job accepted"]
    check(acc and acc[-1].get("partitions") == 1 and acc[-1].get("request_id") == "rid-json",
          "json job accepted fields: %s" % acc[-1:])


def test_stale_cache_tmp():
    """A key-cache write killed midway leaves ZKEY.cuzkcache.tmp.PID: the next start removes
    those whose process is gone, and leaves a live writer's file alone."""
    import shutil
    kdir = os.path.join(TMP, "stale")
    os.mkdir(kdir)
    zk = os.path.join(kdir, "mul.zkey")
    shutil.copyfile(os.path.join(FIX, "bn128/multiplier.zkey"), zk)
    p = subprocess.Popen(["true"])
    p.wait()
    dead = zk + ".cuzkcache.tmp.%d" % p.pid
    live = zk + ".cuzkcache.tmp.%d" % os.getpid()
    other = os.path.join(kdir, "other.zkey.cuzkcache.tmp.%d" % p.pid)  # no circuit names it
    for f in (dead, live, other):
        with open(f, "wb") as fh:
            fh.write(b"partial")
    d = Daemon("stale", '[[circuit]]\nid = "m"\nzkey = "%s"\n' % zk, ["--metrics", ""])
    check(not os.path.exists(dead), "a dead writer's temp file is removed")
    check(os.path.exists(live) and os.path.exists(other), "a live writer's and an unrelated file stay")
    check(any("stale key-cache temp file" in l and dead in l for l in d.lines),
          "the removal is logged: %s" % [l for l in d.lines if "stale" in l])
    check(d.stop() == 0, "stale daemon exits 0")


def test_idle_shutdown():
    """SIGTERM while clients hold idle connections: no silent grace-period stall. With no call
    open the daemon closes them and exits at once; with a call open (its request not sent) it
    logs what it waits for."""
    import socket

    def stop_timed(d):
        t0 = time.time()
        d.proc.send_signal(signal.SIGTERM)
        rc = d.proc.wait(30)
        took = time.time() - t0
        d.reader.join(5)
        d.client.close()
        return rc, took

    d = Daemon("idle", "", ["--metrics", ""])  # its client's channel is connected and idle
    host, port = d.addr.rsplit(":", 1)
    raw = socket.create_connection((host, int(port)))  # a connection that never speaks
    time.sleep(0.2)
    rc, took = stop_timed(d)
    raw.close()
    check(rc == 0 and took < 2, "idle connections: exit %s after %.1f s: %s" %
          (rc, took, "".join(d.lines[-3:])))
    check(any("closing idle client connections" in l for l in d.lines), "idle close logged")
    print("idle shutdown: %.1f s" % took, flush=True)

    d = Daemon("idle-call", "", ["--metrics", ""])
    st = d.client.channel.stream_unary(SVC_PREFIX + "GetStatus", request_serializer=bytes,
                                       response_deserializer=bytes)
    never = threading.Event()

    def no_request():
        never.wait(30)
        return
        yield b""
    f = st.future(no_request())
    time.sleep(0.3)
    rc, took = stop_timed(d)
    never.set()
    f.cancel()
    check(rc == 0, "open call: exit %s" % rc)
    logged = [l for l in d.lines if "shutdown: waiting up to 5.0 s for 1 open calls" in l]
    check(logged, "the wait for an open call is logged: %s" % "".join(d.lines[-4:]))
    print("open-call shutdown: %.1f s" % took, flush=True)


def test_handler_threads():
    """2,000 AwaitProof calls parked on one long job hold no thread each: the daemon's thread
    count stays near its idle count plus the handler pool, GetStatus still answers, calls past
    daemon.max_pending_calls are refused, and the job's end answers every parked call."""
    d = Daemon("threads", CIRCUITS + """
[daemon]
handler_threads = 4
max_pending_calls = 2100
[synthesis]
partition_workers = 1
[gpus]
host_threads = 1
""", ["--metrics", ""])

    def threads():
        with open("/proc/%d/status" % d.proc.pid) as f:
            return int(re.search(r"Threads:\s+(\d+)", f.read()).group(1))

    base = threads()
    long = d.call("SubmitProof", circuit_id="bls-pos", witnesses=[W["bls12381/poseidon"]] * 1000)
    stub = d.client._stubs["AwaitProof"]
    req = d.client.pb.AwaitProofRequest(job_id=long.job_id)
    futs = [stub.future(req, timeout=120) for _ in range(2000)]
    peak, t0 = 0, time.time()
    while time.time() - t0 < 20:
        peak = max(peak, threads())
        if (d.metric("cuzk_rpc_calls_parked") or 0) >= 2000:
            break
        time.sleep(0.05)
    pend = d.metric("cuzk_rpc_calls_parked")
    check(pend == 2000, "2000 calls parked: %s" % pend)
    for _ in range(20):
        peak = max(peak, threads())
        time.sleep(0.05)
    print("handler threads: idle %d, peak %d with 2000 parked calls" % (base, peak), flush=True)
    check(peak <= base + 4 + 16, "threads %d, idle %d + pool 4 + 16" % (peak, base))
    st = d.client.call("GetStatus", timeout=10)
    check(st.jobs_in_flight == 1, "GetStatus answers under 2000 parked calls")
    over = [stub.future(req, timeout=60) for _ in range(200)]
    t1 = time.time()
    while time.time() - t1 < 20 and sum(f.done() for f in over) < 100:
        time.sleep(0.05)

    def refused(f):
        return f.done() and f.exception() is not None and \
            f.exception().code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    nref = sum(refused(f) for f in over)
    check(nref >= 100, "calls past max_pending_calls refused: %d of 200" % nref)
    # The admitted ones are parked too: cancelled by the client, they leave the daemon's
    # count (else the full daemon would refuse even the CancelProof below).
    for f in over:
        if not refused(f):
            f.cancel()
    t1, pend = time.time(), None
    while time.time() - t1 < 20:
        try:
            pend = d.metric("cuzk_rpc_calls_parked")
        except grpc.RpcError:
            pend = None
        if pend == 2000:
            break
        time.sleep(0.1)
    check(pend == 2000, "calls cancelled by the client leave the parked list: %s" % pend)
    d.call("CancelProof", job_id=long.job_id)
    states = []
    for f in futs:
        try:
            states.append(f.result(timeout=60).state)
        except Exception as e:  # noqa: BLE001 - any failure is counted below
            states.append(repr(e)[:80])
    bad = [x for x in states if x != CANCELLED]
    check(not bad, "every parked call answered CANCELLED by the job's end: %d bad, e.g. %s" %
          (len(bad), bad[:3]))
    check(d.stop() == 0, "threads daemon exits 0")


def test_inputs():
    """Circuits with circom's witness program (wasm) prove from circuit inputs: proofs verify
    with snarkjs and carry the public signals of `snarkjs wtns calculate` + `cuzk prove`; bad
    inputs are refused at submission naming the signal; a failed assert fails only its job;
    witness_cmd runs another generator (success, failure with its output, timeout); a wasm of
    the wrong curve or without wasm2c stops the daemon at start."""
    cuzk = os.path.join(os.path.dirname(DAEMON), "cuzk")
    wfx = os.path.join(ROOT, "tests/witness/fixtures")
    wci = os.path.join(ROOT, "tests/witness/circuits")
    d0 = os.path.join(TMP, "inputs")
    os.makedirs(d0)
    cache, scratch = os.path.join(d0, "wasm-cache"), os.path.join(d0, "scratch")
    os.makedirs(scratch)
    zkey, vk = os.path.join(d0, "arrays.zkey"), os.path.join(d0, "arrays_vk.json")
    subprocess.run([cuzk, "setup", "--quiet", "--seed", "01", wfx + "/bn128/arrays.r1cs", zkey],
                   check=True, stderr=subprocess.DEVNULL)
    subprocess.run([cuzk, "export-vk", zkey, vk], check=True)
    copy_sh, fail_sh = os.path.join(d0, "copy.sh"), os.path.join(d0, "fail.sh")
    with open(copy_sh, "w") as f:
        f.write('#!/bin/sh\n[ "$2" = input.json ] && [ -s input.json ] && cp "$1" "$3"\n')
    with open(fail_sh, "w") as f:
        f.write("#!/bin/sh\necho 'reading input.json'\necho 'bad input: signal x missing' >&2\n"
                "exit 1\n")
    for sh in (copy_sh, fail_sh):
        os.chmod(sh, 0o755)
    body = """
[metrics]
listen = ""
[keys]
cache = false
[[circuit]]
id = "bn-mul"
zkey = "%(f)s/bn128/multiplier.zkey"
[[circuit]]
id = "arr"
zkey = "%(z)s"
wasm = "%(w)s/bn128/arrays.wasm"
wasm_cache = "%(c)s"
[[circuit]]
id = "bls-mul"
zkey = "%(f)s/bls12381/multiplier.zkey"
wasm = "%(f)s/bls12381/multiplier.wasm"
wasm_cache = "%(c)s"
[[circuit]]
id = "cmd-ok"
zkey = "%(f)s/bn128/multiplier.zkey"
witness_cmd = "%(cp)s %(f)s/bn128/multiplier.wtns"
witness_scratch_dir = "%(s)s"
[[circuit]]
id = "cmd-fail"
zkey = "%(f)s/bn128/multiplier.zkey"
witness_cmd = ["%(fl)s"]
witness_scratch_dir = "%(s)s"
[[circuit]]
id = "cmd-slow"
zkey = "%(f)s/bn128/multiplier.zkey"
witness_cmd = ["sh", "-c", "sleep 30", "sh"]
witness_timeout = "1s"
witness_scratch_dir = "%(s)s"
""" % {"f": FIX, "z": zkey, "w": wfx, "c": cache, "cp": copy_sh, "fl": fail_sh, "s": scratch}
    d = Daemon("inputs", body)
    log = "".join(d.lines)
    check(log.count("witness program ready") == 2 and "built=true" in log,
          "the programs are built at start: %s" % [l for l in d.lines if "witness program" in l])
    good = open(os.path.join(wci, "arrays.input.json")).read()
    other = '{"a": [[1, 2, 3], [4, 5, 6]], "k": 3}'
    r = d.call("Prove", circuit_id="arr", inputs_json=[good, other])
    if check(r.state == COMPLETED and len(r.proofs) == 2 and r.timings.witness_ms > 0,
             "prove from inputs: %s %s" % (r.state, r.error.message)):
        for k in range(2):
            snarkjs_verify(vk, r.proofs[k].public_json, r.proofs[k].proof_json,
                           "arrays from inputs %d" % k)
        # The same public signals as snarkjs's witness proved by the cuzk CLI.
        inp, wt = os.path.join(d0, "in.json"), os.path.join(d0, "s.wtns")
        with open(inp, "w") as f:
            f.write(good)
        subprocess.run([SNARKJS, "wtns", "calculate", wfx + "/bn128/arrays.wasm", inp, wt],
                       check=True, capture_output=True)
        pp, up = os.path.join(d0, "p.json"), os.path.join(d0, "u.json")
        subprocess.run([cuzk, "prove", "--quiet", zkey, wt, pp, up], check=True)
        check(json.loads(open(up).read()) == json.loads(r.proofs[0].public_json),
              "public signals as snarkjs wtns calculate + cuzk prove: %s vs %s" %
              (open(up).read(), r.proofs[0].public_json))
        check(json.loads(r.proofs[1].public_json) == ["18", "360", "3"],
              "second partition's public signals: %s" % r.proofs[1].public_json)
    m = read("bls12381/multiplier.input.json").decode()
    r = d.call("Prove", circuit_id="bls-mul", inputs_json=[m])
    if check(r.state == COMPLETED, "bls12381 from inputs: %s" % r.error.message):
        snarkjs_verify("bls12381/multiplier_vk.json", r.proofs[0].public_json,
                       r.proofs[0].proof_json, "bls12381 multiplier from inputs")
        check(r.proofs[0].public_json == read("bls12381/multiplier_public.json").decode() or
              json.loads(r.proofs[0].public_json) ==
              json.loads(read("bls12381/multiplier_public.json")), "bls public signals")
    # Refused at submission, naming what is wrong.
    inv = grpc.StatusCode.INVALID_ARGUMENT
    for inputs, needle, what in [
            (['{"a": [[2,3,4],[5,6,7]], "k": 1'], "inputs 0", "bad JSON"),
            ([good, '{"a": [[2,3,4],[5,6,7]], "k": 1, "zz": 2}'], 'signal "zz" is not an input',
             "unknown signal"),
            (['{"a": [[2,3,4],[5,6,7]]}'], 'input signal "k"', "missing signal"),
            (['{"a": [[2,3,4],[5,6]], "k": 1}'], 'signal "a" takes 6 values, 5 given',
             "short array"),
            (['{"a": [[2,3,"x"],[5,6,7]], "k": 1}'], 'a[0][2] = "x" is not a number',
             "not a number"),
            (['[1, 2]'], "JSON object", "not an object")]:
        expect_error(lambda: d.call("SubmitProof", circuit_id="arr", inputs_json=inputs), inv,
                     needle, what)
    expect_error(lambda: d.call("Prove", circuit_id="bn-mul", inputs_json=[m]), inv,
                 "circuit 'bn-mul' has no witness program", "inputs for a circuit without wasm")
    expect_error(lambda: d.call("Prove", circuit_id="arr", inputs_json=[good],
                                witnesses=[W["bn128/multiplier"]]), inv, "one of",
                 "inputs and witnesses together")
    # A failed assert fails that job with the circuit's message; the next request proves.
    r = d.call("Prove", circuit_id="arr", inputs_json=['{"a": [[2,3,4],[5,6,7]], "k": 7}'])
    check(r.state == FAILED and r.error.code == "WITNESS_UNSATISFIED" and
          "Assert Failed. Error in template Arrays_0 line: 18" in r.error.message,
          "failed assert: %s %s %r" % (r.state, r.error.code, r.error.message))
    r = d.call("Prove", circuit_id="arr", inputs_json=[other])
    check(r.state == COMPLETED, "prove after a failed assert: %s" % r.error.message)
    # witness_cmd: a command that writes out.wtns, one that fails, one that hangs.
    r = d.call("Prove", circuit_id="cmd-ok", inputs_json=[m, m])
    if check(r.state == COMPLETED and len(r.proofs) == 2, "witness_cmd: %s" % r.error.message):
        snarkjs_verify("bn128/multiplier_vk.json", r.proofs[1].public_json,
                       r.proofs[1].proof_json, "witness_cmd")
    r = d.call("Prove", circuit_id="cmd-fail", inputs_json=[m])
    check(r.state == FAILED and "exited with status 1" in r.error.message and
          "bad input: signal x missing" in r.error.message and "reading input.json" in
          r.error.message, "failing witness_cmd: %s %r" % (r.error.code, r.error.message))
    t0 = time.time()
    r = d.call("Prove", circuit_id="cmd-slow", inputs_json=[m])
    check(r.state == FAILED and r.error.code == "TIMEOUT" and "witness_timeout" in
          r.error.message and time.time() - t0 < 20,
          "witness_cmd past its timeout: %s %r" % (r.error.code, r.error.message))
    check(os.listdir(scratch) == [], "scratch directories removed: %s" % os.listdir(scratch))
    r = d.call("Prove", circuit_id="cmd-ok", inputs_json=[m])
    check(r.state == COMPLETED, "witness_cmd after failures: %s" % r.error.message)
    # cuzk-client.py --input, one file per partition.
    i2 = os.path.join(d0, "in2.json")
    with open(i2, "w") as f:
        f.write(other)
    cli = [sys.executable, os.path.join(ROOT, "scripts/cuzk-client.py"), "--addr", d.addr]
    out_dir = os.path.join(d0, "client-out")
    c = subprocess.run(cli + ["prove", "arr", "--input", inp, "--input", i2, "--out", out_dir],
                       capture_output=True, text=True)
    if check(c.returncode == 0 and '"JOB_STATE_COMPLETED"' in c.stdout,
             "cuzk-client prove --input: %s %s" % (c.stdout, c.stderr)):
        snarkjs_verify(vk, open(os.path.join(out_dir, "public_1.json")).read(),
                       open(os.path.join(out_dir, "proof_1.json")).read(), "cuzk-client --input")
    with open(i2, "w") as f:
        f.write('{"a": [[1, 2, 3], [4, 5, 6]]}')
    c = subprocess.run(cli + ["submit", "arr", "--input", i2], capture_output=True, text=True)
    check(c.returncode == 2 and "INVALID_ARGUMENT" in c.stderr and 'signal "k"' in c.stderr,
          "cuzk-client submit --input, missing signal: %s" % c.stderr)
    st = d.call("GetStatus")
    check(st.witness_in_use == 0 and st.budget_in_use == 0 and st.working_allocated == 0,
          "budgets released: %s" % st)
    check(d.stop() == 0, "inputs daemon exits 0")
    # Refused at start: a program of the other curve, wasm2c missing.
    run_bad_config("wasmcurve.toml", "[metrics]\nlisten = \"\"\n[[circuit]]\nid = \"x\"\n"
                   "zkey = \"%s/bn128/multiplier.zkey\"\nwasm = \"%s/bls12381/multiplier.wasm\"\n"
                   "wasm_cache = \"%s\"\n" % (FIX, FIX, cache),
                   ["circuit 'x'", "computes witnesses on bls12381, its key is on bn128"])
    run_bad_config("wasmbad.toml", "[metrics]\nlisten = \"\"\n[[circuit]]\nid = \"x\"\n"
                   "zkey = \"%s/bn128/multiplier.zkey\"\nwasm = \"%s/bn128/multiplier.zkey\"\n"
                   "wasm_cache = \"%s\"\n" % (FIX, FIX, cache),
                   ["circuit 'x'", "not a WebAssembly module"])
    run_bad_config("wasmcmd.toml", "[[circuit]]\nid = \"x\"\nzkey = \"z.zkey\"\n"
                   "wasm = \"a.wasm\"\nwitness_cmd = \"gen\"\n", ["witness_cmd", "not both"])
    path = os.path.join(TMP, "nowasm2c.toml")
    with open(path, "w") as f:
        f.write("[metrics]\nlisten = \"\"\n[[circuit]]\nid = \"x\"\nzkey = \"%s\"\n"
                "wasm = \"%s/bn128/arrays.wasm\"\nwasm_cache = \"%s\"\n" %
                (zkey, wfx, os.path.join(d0, "fresh-cache")))
    r = subprocess.run([DAEMON, "--config", path, "--listen", "127.0.0.1:0"], capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, PATH="/nonexistent"))
    check(r.returncode != 0 and "circuit 'x'" in r.stderr and "wasm2c" in r.stderr and
          "wabt" in r.stderr, "no wasm2c: rc=%d %s" % (r.returncode, r.stderr[-400:]))
    print("inputs: proofs from circuit inputs verified by snarkjs", flush=True)


def test_multi_gpu():
    """Several GPUs through the daemon, on 4 emulated devices (gpus.emulated_devices): device 1
    faults on every stage (gpus.emulated_faulty_devices) and device 3 runs B in G2 alone
    (gpus.g2_device). Every proof completes and snarkjs verifies them; GetStatus shows device 1
    disabled with its stages retried on the others, device 3 with every partition's B in G2 and
    no G1 stage, and devices 0 and 2 with the G1 stages; the metrics carry the same per device.
    A dedicated device with B in G2 kept on the CPU is refused at start."""
    body = ('[gpus]\nemulated_devices = 4\nemulated_faulty_devices = [1]\ng2 = "gpu"\n'
            'g2_device = 3\nworkers_per_device = 2\n[synthesis]\npartition_workers = 4\n'
            '[metrics]\nlisten = ""\n' + CIRCUITS)
    d = Daemon("multigpu", body)
    jobs = [d.call("SubmitProof", circuit_id="bn-pos" if i % 2 == 0 else "bls-pos",
                   witnesses=[W["bn128/poseidon" if i % 2 == 0 else "bls12381/poseidon"]] * 3)
            for i in range(4)]
    for i, j in enumerate(jobs):
        r = d.call("AwaitProof", job_id=j.job_id)
        if check(r.state == COMPLETED and len(r.proofs) == 3,
                 "multi_gpu job %d: %s" % (i, r.error.message)):
            vk = "bn128/poseidon_vk.json" if i % 2 == 0 else "bls12381/poseidon_vk.json"
            snarkjs_verify(vk, r.proofs[i % 3].public_json, r.proofs[i % 3].proof_json,
                           "multi_gpu job %d" % i)
    st = d.call("GetStatus")
    g = {x.device: x for x in st.gpus}
    check(sorted(g) == [0, 1, 2, 3], "four devices: %s" % sorted(g))
    check(g[1].disabled and g[1].faults >= 3 and g[1].partitions == 0 and
          st.gpu_faults == g[1].faults and st.gpu_retries == st.gpu_faults and
          st.cpu_fallbacks == 0,
          "device 1 disabled, its stages retried: faults %d retries %d fallbacks %d" % (
              g[1].faults, st.gpu_retries, st.cpu_fallbacks))
    check(g[3].g2_only and g[3].g2_partitions == 12 and g[3].partitions == 0,
          "device 3: B in G2 alone: g2 %d g1 %d" % (g[3].g2_partitions, g[3].partitions))
    check(g[0].partitions > 0 and g[2].partitions > 0 and g[0].partitions + g[2].partitions == 12
          and g[0].g2_partitions == 0 and not g[0].disabled and not g[2].disabled,
          "G1 stages on devices 0 and 2: %d %d" % (g[0].partitions, g[2].partitions))
    text = d.call("GetMetrics").text
    check('cuzk_gpu_disabled{device="1"} 1' in text and 'cuzk_gpu_disabled{device="0"} 0' in text
          and 'cuzk_gpu_g2_partitions_total{device="3"} 12' in text, "per-device metrics")
    check(d.stop() == 0, "multi_gpu daemon exits 0")
    run_bad_config("g2cpu.toml", '[gpus]\nemulated_devices = 2\ng2 = "cpu"\ng2_device = 1\n',
                   ["gpus.g2_device = 1", "keeps it on the CPU"])
    run_bad_config("g2dev.toml", '[gpus]\nemulated_devices = 2\ng2_device = 5\n',
                   ["gpus.g2_device = 5 is not one of the 2 devices"])
    print("multi_gpu: 4 emulated devices, a faulty one and one for B in G2 alone", flush=True)


TESTS = ["config", "demo", "main", "priority", "budget", "cache", "tiers", "witness_paths",
         "witness_race", "log_json", "stale_cache_tmp", "idle_shutdown",
         "handler_threads", "generated", "inputs", "multi_gpu"]

if __name__ == "__main__":
    t0 = time.time()
    # Optional test names after the binary run only those (default: all, in this order).
    try:
        for name in sys.argv[2:] or TESTS:
            globals()["test_" + name]()
    finally:
        for p in DAEMONS:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    print("daemon: %d checks, %d failed (%.1fs)" % (checks, failures, time.time() - t0))
    sys.exit(1 if failures else 0)
