#!/usr/bin/python3
"""Oversubscription of the daemon's memory budgets, end to end: cuzk-daemon with a generated
BLS12-381 sparse-bits key (domain 2^15), a working budget that holds 2 partitions' working sets,
8 partition workers, and 20 partitions submitted at once (3 jobs of 6 witness seeds, 1 job of 2
.wtns witnesses). Checks that every job completes with every proof self-verified
(prover.verify; a proof that fails it fails its job), that GetStatus sampled through the run
keeps each budget's use within its limit and names the owners of the bytes (witnesses, working
sets by owner, keys), and that the daemon's peak resident memory over the run stays below
key bytes + working_budget + witness_budget + OVERHEAD.

No snarkjs here: the daemon has no RPC that returns a generated key's verification key;
daemon_test.py's test_generated checks proofs of a generated key with snarkjs."""
import concurrent.futures as cf
import ctypes
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                         os.path.join(ROOT, "build/bin/cuzk-daemon"))
CUZK = os.path.join(os.path.dirname(DAEMON), "cuzk")

spec = importlib.util.spec_from_file_location("cuzk_client",
                                              os.path.join(ROOT, "scripts/cuzk-client.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)
pb = cc.pb()
COMPLETED = pb.JobState.Value("JOB_STATE_COMPLETED")

MIB = 1 << 20
CONSTRAINTS = 32512          # domain 2^15: a partition's working set is about 13 MiB
WORKERS = 8                  # synthesis.partition_workers
FIT = 2                      # partitions whose working sets the working budget holds at once
SEED_JOBS = [list(range(1 + 6 * j, 7 + 6 * j)) for j in range(3)]  # seeds 1..18
WTNS_SEEDS = [5, 6]          # the .wtns job: the witnesses of seeds 5 and 6, sent as bytes
WITNESS_BUDGET = 4 * MIB     # holds the .wtns job's 2 witnesses (about 1 MiB each)
# What the daemon holds beside its keys and budgets: code, libraries, gRPC, thread stacks, the
# allocator's arenas for allocations below 1 MiB, requests and results in flight. The idle
# daemon's resident memory less its key measured 17-18 MiB (CPU build, 8 workers); the rest is
# margin for what a run adds outside the budgets.
OVERHEAD = 40 * MIB

checks = 0
failures = 0
TMP = tempfile.mkdtemp(prefix="cuzk-oversub-test-")
DAEMONS = []


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s" % what, file=sys.stderr, flush=True)
    return cond


def die_with_parent():
    """The daemon gets SIGKILL when this process dies, however it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def proc_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"%s:\s+(\d+) kB" % field, f.read()).group(1)) * 1024


class Daemon:
    def __init__(self, name, body):
        path = os.path.join(TMP, name + ".toml")
        with open(path, "w") as f:
            f.write(body)
        self.lines = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen([DAEMON, "--config", path, "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=die_with_parent)
        DAEMONS.append(self.proc)
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(120):
            raise RuntimeError("%s: no ready line:\n%s" % (name, "".join(self.lines)))
        self.addr = re.search(r"serving on (\S+)$", self.ready_line).group(1)
        self.client = cc.Client(self.addr)
        self.client.wait_ready(30)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            if "cuzk-daemon ready, serving on " in line:
                self.ready_line = line.rstrip()
                self.ready.set()

    def call(self, method, **kw):
        return self.client.call(method, timeout=300, **kw)

    def metric(self, name):
        m = re.search(r"^%s (\S+)$" % re.escape(name), self.call("GetMetrics").text, re.M)
        return float(m.group(1)) if m else None

    def stop(self):
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def circuit_toml(preload):
    return """
[[circuit]]
id = "gen"
generate_curve = "bls12381"
generate_profile = "sparse-bits"
generate_constraints = %d
generate_seed = "1"
preload = %s
""" % (CONSTRAINTS, "true" if preload else "false")


def sample(d, out, stop):
    """GetStatus and the daemon's VmRSS every 20 ms until stop is set."""
    while not stop.is_set():
        try:
            out.append((d.call("GetStatus"), proc_kib(d.proc.pid, "VmRSS")))
        except Exception as ex:  # the daemon died: the checks after the run say so
            out.append((None, repr(ex)))
            return
        stop.wait(0.02)


def run():
    asan = "libasan" in subprocess.run(["ldd", DAEMON], capture_output=True, text=True).stdout

    # The working set of one partition, as the daemon computes it (its registration log line);
    # preload off, so this daemon generates no key.
    probe = Daemon("probe", "[metrics]\nlisten = \"\"\n[gpus]\nhost_threads = 1\n" +
                   circuit_toml(False))
    m = None
    for line in probe.lines:
        m = m or re.search(r"circuit registered circuit=gen .*n_vars=(\d+) "
                           r".* partition_bytes=(\d+) .*seed_scratch_bytes=(\d+)", line)
    check(probe.stop() == 0, "probe daemon exits 0")
    if not check(m, "partition_bytes logged: %s" % "".join(probe.lines)):
        return
    n_vars, part, scratch = map(int, m.groups())
    # A seeded partition's reservation also holds its witness (32 bytes a wire) and, while the
    # witness is made, the generator's buffers.
    budget = (part + 32 * n_vars + scratch) * FIT + part // 2
    check(4 * MIB < part < 64 * MIB, "partition working set %d bytes" % part)

    # The .wtns job's witnesses, made from the same seeds as partitions of the seeded jobs.
    cdir = os.path.join(TMP, "circuit")
    subprocess.run([CUZK, "gen-circuit", "--constraints", str(CONSTRAINTS), "--curve", "bls12381",
                    "--profile", "sparse-bits", "--seed", "1", "-o", cdir, "--quiet"], check=True)
    wtns = []
    for s in WTNS_SEEDS:
        w = os.path.join(cdir, "w%d.wtns" % s)
        subprocess.run([CUZK, "gen-witness", "--circuit", cdir, "--seed", str(s), "-o", w,
                        "--quiet"], check=True)
        with open(w, "rb") as f:
            wtns.append(f.read())

    d = Daemon("oversub", """
[metrics]
listen = ""
[synthesis]
partition_workers = %d
[gpus]
host_threads = 1
[prover]
verify = true
[memory]
working_budget = %d
witness_budget = %d
""" % (WORKERS, budget, WITNESS_BUDGET) + circuit_toml(True))
    check(re.search(r"engine started partition_workers=%d .*verify=true" % WORKERS,
                    "".join(d.lines)), "engine started with 8 workers, self-verification on")
    st = d.call("GetStatus")
    key = [k for k in st.keys if k.circuit_id == "gen"]
    if not check(key and key[0].bytes > 0 and st.keys_bytes == key[0].bytes,
                 "the generated key is resident: %s" % st.keys):
        return
    keys = st.keys_bytes
    check(st.budget_limit == budget and st.witness_budget_limit == WITNESS_BUDGET and
          st.budget_in_use == 0 and st.witness_in_use == 0, "idle budgets: %s" % st)

    # Baseline: the idle daemon's resident memory beside its key. Then the peak is reset
    # (clear_refs 5: VmHWM := VmRSS) so that the run's peak is not the key generation's.
    idle = proc_kib(d.proc.pid, "VmRSS")
    base = idle - keys
    if not asan:
        check(base < OVERHEAD, "idle RSS %.1f MiB less key %.1f MiB = %.1f MiB, not below the "
              "stated constant %d MiB" % (idle / MIB, keys / MIB, base / MIB, OVERHEAD // MIB))
    reset = True
    try:
        with open("/proc/%d/clear_refs" % d.proc.pid, "w") as f:
            f.write("5")
    except OSError as ex:
        reset = False  # then the sampled VmRSS bounds the run instead of VmHWM
        print("oversub: cannot reset the daemon's VmHWM (%s): checking sampled RSS" % ex)

    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=sample, args=(d, samples, stop))
    sampler.start()
    t0 = time.time()
    try:
        # Submitted in this order, so the .wtns job's witnesses wait in their budget meanwhile.
        jobs = [(d.call("SubmitProof", circuit_id="gen", witness_seeds=s).job_id, s)
                for s in SEED_JOBS]
        jobs.append((d.call("SubmitProof", circuit_id="gen", witnesses=wtns).job_id, WTNS_SEEDS))
        with cf.ThreadPoolExecutor(len(jobs)) as ex:
            res = list(ex.map(lambda j: d.call("AwaitProof", job_id=j[0]), jobs))
    finally:
        stop.set()
        sampler.join()
    wall = time.time() - t0
    hwm = proc_kib(d.proc.pid, "VmHWM")
    total = sum(len(s) for _, s in jobs)

    # Every job completed; every proof is a BLS12-381 Groth16 proof, self-verified by the
    # engine; a seed gives the same public signals as its witness sent as bytes.
    public = {}
    for r, (_, seeds) in zip(res, jobs):
        if not check(r.state == COMPLETED and len(r.proofs) == len(seeds),
                     "job %s: state %d, %d proofs, %s" % (r.job_id, r.state, len(r.proofs),
                                                          r.error.message)):
            continue
        for s, p in zip(seeds, r.proofs):
            pj = json.loads(p.proof_json)
            check(pj["protocol"] == "groth16" and pj["curve"] == "bls12381" and
                  len(p.proof_compressed) == 192, "proof of seed %d: %s" % (s, p.proof_json[:200]))
            public.setdefault(s, set()).add(p.public_json)
    check(all(len(v) == 1 for v in public.values()) and
          len({next(iter(v)) for v in public.values()}) == len(public) == 18,
          "public signals: one per seed, distinct seeds differ: %s" %
          {s: len(v) for s, v in public.items()})
    st = d.call("GetStatus")
    check(st.jobs_completed == len(jobs) and st.jobs_failed == 0 and st.budget_in_use == 0 and
          st.witness_in_use == 0 and st.working_allocated == 0, "after the run: %s" % st)
    check(part <= st.budget_peak <= budget, "budget peak %d within %d" % (st.budget_peak, budget))
    check(d.metric("cuzk_partitions_proved_total") == total,
          "%d partitions proved (and self-verified)" % total)
    check(d.metric("cuzk_budget_waits_total") > 0, "partitions waited for working memory")

    # GetStatus through the run: within the limits, the working owners add up to the budget's
    # use, the keys' owner is the resident key, and the run was oversubscribed.
    live = [s for s, _ in samples if s is not None]
    check(len(live) == len(samples) and len(live) >= 5,
          "GetStatus answered through the run: %d of %d" % (len(live), len(samples)))
    owners = set()
    for s in live:
        mem = {o.owner: o.in_use for o in s.memory}
        owners.update(o for o, v in mem.items() if v)
        working = sum(v for o, v in mem.items() if not o.startswith("keys_"))
        if not (check(s.budget_in_use <= s.budget_limit == budget, "working %d of %d" %
                      (s.budget_in_use, s.budget_limit)) and
                check(s.witness_in_use <= s.witness_budget_limit, "witnesses %d of %d" %
                      (s.witness_in_use, s.witness_budget_limit)) and
                check(working == s.budget_in_use, "owners %s sum to %d" % (mem, s.budget_in_use))
                and check(mem.get("keys_host") == s.keys_bytes == keys, "keys_host %s, keys %d" %
                          (mem.get("keys_host"), s.keys_bytes))):
            break
    check(max(s.busy_workers for s in live) > FIT, "more workers took partitions than fit: %d" %
          max(s.busy_workers for s in live))
    check(max(s.budget_in_use for s in live) > part, "two working sets held at once")
    check(max(s.witness_in_use for s in live) >= sum(map(len, wtns)) - 4096,
          "the .wtns job's witnesses held in the witness budget")
    check({"witness", "abc", "keys_host"} <= owners, "owners named during the run: %s" % owners)

    # Peak resident memory: the keys, the two budgets and the stated constant.
    limit = keys + budget + WITNESS_BUDGET + OVERHEAD
    rss = max([r for s, r in samples if s is not None] or [0])
    peak = hwm if reset else rss
    if asan:
        print("oversub: daemon built with ASan: peak RSS not checked (its quarantine holds memory)")
    else:
        check(peak <= limit, "peak RSS %.1f MiB over key %.1f + working %.1f + witness %.1f + "
              "%d MiB" % (peak / MIB, keys / MIB, budget / MIB, WITNESS_BUDGET / MIB,
                          OVERHEAD // MIB))
    check(d.stop() == 0, "daemon exits 0")
    print("oversub: %d partitions (%d fit the working budget, %d workers) in %.1fs; idle RSS "
          "%.1f MiB (key %.1f MiB), run peak %.1f MiB of %.1f MiB allowed; %d status samples" %
          (total, FIT, WORKERS, wall, idle / MIB, keys / MIB, peak / MIB, limit / MIB,
           len(samples)), flush=True)


def on_signal(sig, _frame):
    raise SystemExit(128 + sig)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    t0 = time.time()
    try:
        run()
    finally:
        for p in DAEMONS:
            if p.poll() is None:
                p.kill()
                p.wait(10)
        subprocess.run(["rm", "-rf", TMP])
    print("oversub: %d checks, %d failed (%.1fs)" % (checks, failures, time.time() - t0))
    sys.exit(1 if failures else 0)
