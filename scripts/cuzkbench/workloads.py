"""The closed-loop workloads: single, batch, soak (RSS slope), status."""
import sys
import threading
import time

from .stats import fit, mib, summarize
from .checks import snarkjs_check, snarkjs_verify, verify_records, wtns_public
from .client import DaemonDied, proc_mem, Sampler, witness_files, witnesses
from .report import print_summary


class Progress:
    """Progress on stderr: rewritten in place every 0.5 s on a terminal, else one line every
    `every` seconds (so long runs under a pipe or a batch system still show life)."""

    def __init__(self, every=10.0):
        self.tty = sys.stderr.isatty()
        self.every = 0.5 if self.tty else every
        self.last = 0.0 if self.tty else time.time()  # no line at 0 s under a pipe
        self.shown = False

    def show(self, text, force=False):
        now = time.time()
        if not force and now - self.last < self.every:
            return
        self.last = now
        self.shown = True
        if self.tty:
            sys.stderr.write("\r" + text + " \033[K")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def done(self):
        if self.tty and self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def expected_public(b, circuit, files):
    """Each partition's witness file's public values for the daemon's circuit (None if it is
    unknown there: the daemon then answers NOT_FOUND, reported as a failed proof)."""
    n = b.n_public(circuit) if files is not None else None
    if n is None:
        return None
    cache = {}
    for f in files:
        if f not in cache:
            cache[f] = wtns_public(f, n)
    return [cache[f] for f in files]


def run_many(b, a, count, conc, after_each=None):
    """COUNT proofs with CONC in flight, each result checked against the witness's public
    values. Returns (records, wall seconds)."""
    wit = witnesses(a)
    exp = expected_public(b, a.circuit, witness_files(a))
    keep = bool(getattr(a, "vk", None))
    recs = []
    lock = threading.Lock()
    nxt = [0]
    died = []
    prog = Progress()
    t0 = time.time()

    def worker():
        while not died:
            with lock:
                if nxt[0] >= count:
                    return
                nxt[0] += 1
            try:
                r = b.prove_one(a.circuit, wit, expect_public=exp, keep_proofs=keep)
            except DaemonDied as e:
                died.append(e.args[0])
                return
            r.pop("_res", None)
            with lock:
                recs.append(r)
                if after_each:
                    after_each(len(recs), r)
                n_ok = sum(x["ok"] for x in recs)
                el = time.time() - t0
                prog.show("%d/%d done (%d failed), %.1f s, %.3f s/proof" %
                          (len(recs), count, len(recs) - n_ok, el, el / len(recs)),
                          force=len(recs) == count)

    ths = [threading.Thread(target=worker, daemon=True) for _ in range(conc)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    prog.done()
    if died:
        raise DaemonDied(died[0], recs, time.time() - t0)
    return recs, time.time() - t0


def cmd_single(b, a):
    if a.vk:
        snarkjs_check([a.vk])
    r = b.prove_one(a.circuit, witnesses(a),
                    expect_public=expected_public(b, a.circuit, witness_files(a)))
    res = r.pop("_res", None)
    d = {"completed": int(r["ok"]), "failed": int(not r["ok"]),
         "latency_s": round(r["latency_s"], 6),
         "stages_ms": r["stages_ms"], "verified_by_daemon": r["ok"],
         "checked_public": int(bool(r.get("checked")))}
    if not r["ok"]:
        d["error"] = r.get("error")
    if r["ok"] and a.vk:
        n_ok, bad = snarkjs_verify([(a.vk, p.public_json, p.proof_json) for p in res.proofs])
        d["verified_by_snarkjs"] = n_ok == len(res.proofs) and not bad
    print("single %s x%d partitions: %s in %.4f s" % (
        a.circuit, a.partitions, "ok" if r["ok"] else "FAILED", r["latency_s"]))
    print("stages (ms): " + "  ".join("%s %.2f" % kv for kv in r["stages_ms"].items()))
    if "verified_by_snarkjs" in d:
        print("snarkjs verify: %s" % ("OK" if d["verified_by_snarkjs"] else "FAILED"))
    ok = r["ok"] and d.get("verified_by_snarkjs", True)
    return d, 0 if ok else 1


def cmd_batch(b, a):
    if a.vk:
        snarkjs_check([a.vk])
    s = Sampler(b)
    s.start()
    try:
        recs, wall = run_many(b, a, a.count, a.concurrency)
    finally:
        mem = s.stop()
    d = summarize(recs, wall, s.t0)
    d.update({"count": a.count, "concurrency": a.concurrency, "partitions": a.partitions,
              "memory": mem, "memory_curve": s.samples, "memory_owners_curve": s.owners})
    if a.vk:
        try:
            d["snarkjs"] = verify_records(recs, a.vk)
        except (RuntimeError, OSError, ValueError) as e:  # keep the run's data
            d["snarkjs"] = {"proofs": None, "verified": 0, "bad": [], "error": str(e)}
        if d["snarkjs"]["verified"] != d["snarkjs"]["proofs"]:
            d["failed"] += 1
            d.setdefault("errors", []).append("snarkjs rejected partition proofs %s" %
                                              d["snarkjs"]["bad"])
    print("batch %s: %d proofs, j=%d, %d partitions each" % (a.circuit, a.count, a.concurrency,
                                                              a.partitions))
    print_summary(d)
    if a.vk:
        print("snarkjs verify: %d of %d partition proofs OK" % (d["snarkjs"]["verified"],
                                                               d["snarkjs"]["proofs"]))
    if mem.get("samples"):
        if mem["source"] == "proc":
            print("daemon memory (/proc, %d samples): peak VmRSS %s, VmHWM %s" %
                  (mem["samples"], mib(mem["peak_rss"]), mib(mem["peak_hwm"])))
            if "peak_gpu" in mem:
                print("daemon GPU memory (nvidia-smi, %d samples): peak %s" %
                      (len(mem["gpu_curve"]), mib(mem["peak_gpu"])))
            if "peak_gpu_device" in mem:
                print("GPU memory in use (GetStatus, all devices): peak %s" %
                      mib(mem["peak_gpu_device"]))
        else:
            print("daemon memory (GetStatus owners + keys, %d samples): peak %s" %
                  (mem["samples"], mib(mem["peak_hwm"])))
    return d, 0 if d["failed"] == 0 else 1


def cmd_soak(b, a):
    if not b.pid:
        print("cuzk-bench: soak needs the daemon's pid (--spawn or --pid)", file=sys.stderr)
        return {"error": "no pid"}, 2
    pts = []

    def after(n, r):
        m = proc_mem(b.pid)
        if m:
            pts.append((n, m[0]))

    t_ref = time.time()
    recs, wall = run_many(b, a, a.count, a.concurrency, after)
    d = summarize(recs, wall, t_ref)
    use = [p for p in pts if p[0] > a.warmup]
    if len(use) < 2:
        print("cuzk-bench: soak needs more proofs than --warmup (%d)" % a.warmup, file=sys.stderr)
        return d, 2
    slope, icpt = fit([p[0] for p in use], [p[1] for p in use])
    passed = slope <= a.max_slope and d["failed"] == 0
    d.update({"count": a.count, "warmup": a.warmup, "slope_bytes_per_proof": round(slope, 1),
              "intercept_bytes": round(icpt), "max_slope": a.max_slope, "passed": passed,
              "rss_by_proof": pts})
    print("soak %s: %d proofs, j=%d, warm-up %d" % (a.circuit, a.count, a.concurrency, a.warmup))
    print_summary(d)
    print("RSS after warm-up: %s -> %s; slope %.0f bytes/proof (limit %d): %s" %
          (mib(use[0][1]), mib(use[-1][1]), slope, a.max_slope, "PASS" if passed else "FAIL"))
    return d, 0 if passed else 1


def cmd_status(b, a):
    st = b.client.call("GetStatus", timeout=10)
    print("uptime %.1f s; devices: %s" % (st.uptime_s, ", ".join(st.devices) or "-"))
    print("workers: %d busy of %d; jobs: %d queued, %d in flight, %d partitions pending" %
          (st.busy_workers, st.partition_workers, st.jobs_queued, st.jobs_in_flight,
           st.partitions_pending))
    print("jobs done: %d completed, %d failed, %d cancelled" %
          (st.jobs_completed, st.jobs_failed, st.jobs_cancelled))
    print("working budget: %s in use, peak %s, limit %s" %
          (mib(st.budget_in_use), mib(st.budget_peak), mib(st.budget_limit)))
    for o in st.memory:
        print("  memory %-16s in use %-12s peak %s" % (o.owner, mib(o.in_use), mib(o.peak)))
    print("keys (%s resident):" % mib(st.keys_bytes))
    for k in st.keys:
        print("  %-24s %-10s %-5s %-12s holders %d  vars %d  domain %d" %
              (k.circuit_id, k.curve, k.tier, mib(k.bytes), k.holders, k.n_vars, k.domain_size))
    from google.protobuf import json_format
    return {"status": json_format.MessageToDict(st, preserving_proto_field_name=True)}, 0
