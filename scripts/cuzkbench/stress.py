"""stress: open-loop mixed load by priority class, seeded arrivals, deadlines."""
import argparse
import os
import random
import re
import threading
import time

import grpc

from .stats import class_summary, mib
from .checks import snarkjs_check, snarkjs_verify, wtns_public
from .client import DaemonDied, Sampler
from .workloads import Progress


# ---------------------------------------------------------------- stress: open-loop mixed load
PRIORITY_NAMES = ["DEFAULT", "LOW", "NORMAL", "HIGH", "CRITICAL"]


STRESS_HELP = """\
Open-loop mixed load: proofs of several circuits at several priorities arrive at given rates for
a duration, whether or not earlier ones have finished (so queueing shows as latency).

  --mix CIRCUIT:PRIORITY:RATE[:PARTITIONS][,...]   (repeatable)
      CIRCUIT    a circuit id the daemon serves (cuzk-client.py list)
      PRIORITY   CRITICAL, HIGH, NORMAL, LOW or DEFAULT (the circuit's configured one)
      RATE       arrivals: 5/s, 0.5/s, 30/min, 100/h (a bare number means per second)
      PARTITIONS witnesses per proof (default 1)
  --witness CIRCUIT=FILE.wtns     one per circuit in the mix (repeatable)
  --duration 30s                  how long arrivals go on (ms, s, m, h; bare number: seconds)
  --deadline CLASS=DURATION[,...] latency deadline per priority class, e.g. CRITICAL=2s,LOW=30s
  --arrivals poisson|fixed        exponential gaps (default) or a fixed interval per stream
                                  (with a seeded random phase); --seed N makes both repeatable
  --drain 60s                     after the arrivals, how long to wait for proofs in flight;
                                  those still running then are cancelled and counted unfinished

Latency is measured from each proof's scheduled arrival to its result. Every result is checked
(one groth16 proof per partition, public signals equal to the witness's); --vk CIRCUIT=VK.json
also verifies every proof of that circuit with snarkjs after the run.

Per priority class the report has: submitted, completed, failed, unfinished, latency
p50/p95/p99/min/max/mean, and with a deadline: late (completed after it) and deadline_misses
(late + failed + unfinished). Exit status 1 when a proof failed or a check failed or the daemon
died; deadline misses alone do not fail the run unless --fail-on-miss.

Example:
  cuzk-bench --spawn configs/demo.toml --report out stress \\
    --mix bn128-multiplier:CRITICAL:5/s,bn128-poseidon:LOW:2/s \\
    --witness bn128-multiplier=tests/fixtures/bn128/multiplier.wtns \\
    --witness bn128-poseidon=tests/fixtures/bn128/poseidon.wtns \\
    --duration 30s --deadline CRITICAL=2s,LOW=20s
"""


def parse_duration(s):
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError("bad duration '%s' (e.g. 500ms, 30s, 2m, 1h)" % s)
    return float(m.group(1)) * {"ms": 1e-3, "s": 1, None: 1, "m": 60, "min": 60,
                                "h": 3600}[m.group(2)]


def parse_rate(s):
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:/\s*(s|sec|m|min|h))?\s*", s)
    if not m or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError("bad rate '%s' (e.g. 5/s, 30/min, 100/h)" % s)
    return float(m.group(1)) / {"s": 1, "sec": 1, None: 1, "m": 60, "min": 60,
                                "h": 3600}[m.group(2)]


def parse_mix(specs):
    out = []
    for spec in specs:
        for item in spec.split(","):
            if not item.strip():
                continue
            f = item.strip().split(":")
            if len(f) not in (3, 4):
                raise ValueError("--mix item '%s': want CIRCUIT:PRIORITY:RATE[:PARTITIONS]" % item)
            prio = f[1].upper()
            if prio not in PRIORITY_NAMES:
                raise ValueError("--mix item '%s': priority '%s' is not one of %s" %
                                 (item, f[1], ", ".join(PRIORITY_NAMES)))
            try:
                rate = parse_rate(f[2])
                parts = int(f[3]) if len(f) == 4 else 1
            except (argparse.ArgumentTypeError, ValueError) as e:
                raise ValueError("--mix item '%s': %s" % (item, e))
            if parts < 1:
                raise ValueError("--mix item '%s': partitions must be at least 1" % item)
            out.append({"circuit": f[0], "priority": prio, "rate_per_s": rate,
                        "partitions": parts, "spec": item.strip()})
    if not out:
        raise ValueError("--mix: no streams")
    return out


def parse_kv(specs, what, conv):
    out = {}
    for spec in specs or []:
        for item in spec.split(","):
            if not item.strip():
                continue
            if "=" not in item:
                raise ValueError("%s '%s': want NAME=VALUE" % (what, item))
            k, v = item.split("=", 1)
            try:
                out[k.strip()] = conv(v.strip())
            except argparse.ArgumentTypeError as e:
                raise ValueError("%s '%s': %s" % (what, item, e))
    return out


def arrival_times(streams, duration, kind, seed):
    """Sorted [(t, stream index)] over [0, duration): each stream its own seeded generator, so
    adding a stream does not move the others' arrivals."""
    arr = []
    for i, s in enumerate(streams):
        rng = random.Random("%s/%d" % (seed, i))
        rate = s["rate_per_s"]
        t = rng.expovariate(rate) if kind == "poisson" else rng.random() / rate
        while t < duration:
            arr.append((t, i))
            t += rng.expovariate(rate) if kind == "poisson" else 1.0 / rate
    arr.sort()
    return arr


def cmd_stress(b, a):
    streams = parse_mix(a.mix)
    wpaths = parse_kv(a.witness, "--witness", str)
    vks = parse_kv(a.vk, "--vk", str)
    if vks:
        snarkjs_check(vks.values())
    deadlines = parse_kv(a.deadline, "--deadline", parse_duration)
    deadlines = {k.upper(): v for k, v in deadlines.items()}
    for k in deadlines:
        if k not in PRIORITY_NAMES:
            raise ValueError("--deadline: '%s' is not a priority class (%s)" %
                             (k, ", ".join(PRIORITY_NAMES)))
    wit, exp = {}, {}
    for s in streams:
        c = s["circuit"]
        if c not in wpaths:
            raise ValueError("--mix names circuit '%s' but no --witness %s=FILE.wtns" % (c, c))
        if c not in wit:
            n_pub = b.n_public(c)
            if n_pub is None:
                raise ValueError("the daemon serves no circuit '%s' (it has: %s)" %
                                 (c, ", ".join(sorted(b._circuits)) or "none"))
            with open(wpaths[c], "rb") as f:
                wit[c] = f.read()
            exp[c] = wtns_public(wpaths[c], n_pub)
    arr = arrival_times(streams, a.duration, a.arrivals, a.seed)
    print("stress: %d streams, %d arrivals over %.1f s (%s, seed %s)" %
          (len(streams), len(arr), a.duration, a.arrivals, a.seed), flush=True)
    pb = b.pb
    recs = []       # one per arrival, in arrival order
    lock = threading.Lock()
    live = {}       # index -> future
    unavailable = threading.Event()
    stopping = False
    cancel_jobs = []
    prog = Progress()
    sampler = Sampler(b)
    sampler.start()
    t0 = sampler.t0
    died = None
    max_lag = 0.0

    def on_submitted(i, fut):
        """SubmitProof answered: wait for the job with AwaitProof (the job id lets the drain
        cancel it in the daemon, not only here)."""
        try:
            job = fut.result().job_id
        except (grpc.FutureCancelledError, grpc.RpcError):
            on_done(i, fut)  # records the error or the cancellation
            return
        with lock:
            recs[i]["job_id"] = job
            if stopping:
                live.pop(i, None)
                recs[i].update(state="unfinished", error="cancelled by cuzk-bench (unfinished)")
                cancel_jobs.append(job)
                return
            af = b.client._stubs["AwaitProof"].future(pb.AwaitProofRequest(job_id=job),
                                                      timeout=a.duration + a.drain + 600,
                                                      metadata=b.client.metadata)
            live[i] = af
        af.add_done_callback(lambda f: on_done(i, f))

    def on_done(i, fut):
        r = recs[i]
        try:
            if fut.cancelled():
                raise grpc.FutureCancelledError()
            res = fut.result()
            rec = b.record(res, r["t_sched_abs"], r["partitions"],
                           [exp[r["circuit"]]] * r["partitions"], r["circuit"] in vks)
            rec.pop("_res", None)
            state = "completed" if rec["ok"] else "failed"
            if res.state == pb.JobState.Value("JOB_STATE_CANCELLED") and stopping:
                state = "unfinished"
        except grpc.FutureCancelledError:
            rec, state = {"error": "cancelled by cuzk-bench (unfinished)"}, "unfinished"
        except grpc.RpcError as e:
            rec = {"error": "%s: %s" % (e.code().name, e.details()), "t_end": time.time()}
            state = "failed"
            if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                unavailable.set()
        except Exception as e:  # noqa: BLE001  (a callback must record something, or drain hangs)
            rec, state = {"error": "cuzk-bench: %s: %s" % (type(e).__name__, e)}, "failed"
        with lock:
            r.update(rec)
            r["state"] = state
            live.pop(i, None)

    def alive():
        if b.daemon is not None:
            return b.daemon.exited() is None
        if b.pid:
            return os.path.exists("/proc/%d" % b.pid)
        if unavailable.is_set():
            unavailable.clear()
            try:
                b.client.call("GetStatus", timeout=3)
            except grpc.RpcError:
                return False
        return True

    def progress(phase, now, force=False):
        with lock:
            st = [r["state"] for r in recs]
            late = sum(1 for r in recs if r["state"] == "completed" and
                       deadlines.get(r["priority"]) is not None and
                       r["latency_s"] > deadlines[r["priority"]])
        prog.show("stress %s %.1f/%.1f s: sent %d, completed %d, failed %d, in flight %d, late %d"
                  % (phase, now, a.duration, len(st), st.count("completed"), st.count("failed"),
                     st.count("running"), late), force=force)

    try:
        for t, i in arr:
            s = streams[i]
            while True:
                now = time.time() - t0
                if not alive():
                    raise DaemonDied(b.daemon.exited() if b.daemon else
                                     ("gone" if b.pid else "unreachable"))
                if now >= t:
                    break
                progress("arrivals", now)
                time.sleep(min(0.05, t - now))
            max_lag = max(max_lag, time.time() - t0 - t)
            idx = len(recs)
            r = {"stream": i, "circuit": s["circuit"], "priority": s["priority"],
                 "partitions": s["partitions"], "t_sched": round(t, 4),
                 "t_sched_abs": t0 + t, "state": "running"}
            with lock:
                recs.append(r)
                if len(live) >= a.max_outstanding:
                    r["state"] = "not_sent"
                    r["error"] = "client limit --max-outstanding %d reached" % a.max_outstanding
                    continue
            req = pb.SubmitProofRequest(circuit_id=s["circuit"], witnesses=[wit[s["circuit"]]] *
                                        s["partitions"],
                                        priority=PRIORITY_NAMES.index(s["priority"]))
            fut = b.client._stubs["SubmitProof"].future(req, timeout=a.duration + a.drain + 600,
                                                        metadata=b.client.metadata)
            with lock:
                live[idx] = fut
            fut.add_done_callback(lambda f, idx=idx: on_submitted(idx, f))
        t_arrivals_end = time.time() - t0
        while True:
            with lock:
                n_live = len(live)
            now = time.time() - t0
            if ((n_live == 0 and now >= a.duration) or
                    now > max(a.duration, t_arrivals_end) + a.drain):
                break
            if not alive():
                raise DaemonDied(b.daemon.exited() if b.daemon else
                                     ("gone" if b.pid else "unreachable"))
            progress("drain" if now >= a.duration else "arrivals", now)
            time.sleep(0.05)
    except DaemonDied as e:
        died = e.args[0]
    finally:
        t_stop = time.time()
        with lock:
            stopping = True
            futs = list(live.items())
        # what is still running is cancelled in the daemon too (not left to run on)
        if died is None:
            for i, f in futs:
                if recs[i].get("job_id"):
                    cancel_jobs.append(recs[i]["job_id"])
            for job in list(cancel_jobs):
                try:
                    b.client.call("CancelProof", timeout=2, job_id=job)
                except grpc.RpcError:
                    pass
        for i, f in futs:
            f.cancel()
        sent_cancel = set(cancel_jobs)
        deadline = time.time() + 10
        while time.time() < deadline:
            with lock:
                if not live:
                    break
            time.sleep(0.02)
        if died is None:
            for job in set(cancel_jobs) - sent_cancel:  # submitted while stopping
                try:
                    b.client.call("CancelProof", timeout=2, job_id=job)
                except grpc.RpcError:
                    pass
        mem = sampler.stop()
        wall = t_stop - t0
        progress("end", wall, force=True)
        prog.done()
    with lock:
        for r in recs:
            if r["state"] == "running":   # the callback did not run (should not happen)
                r["state"], r["error"] = "unfinished", "no result"
            # once the daemon is dead, an RPC that failed (not a job the daemon failed, not a
            # result check) was lost with it
            if died is not None and (r["state"] == "unfinished" or (
                    r["state"] == "failed" and
                    not r.get("error", "").startswith(("JOB_STATE", "result check")))):
                r["state"], r["error"] = "unfinished", "daemon died"

    classes = {}
    for p in PRIORITY_NAMES[::-1]:
        rs = [r for r in recs if r["priority"] == p]
        if rs or p in deadlines:
            classes[p] = class_summary(rs, deadlines.get(p))
    per_stream = []
    for i, s in enumerate(streams):
        rs = [r for r in recs if r["stream"] == i]
        e = dict(s)
        e.update(class_summary(rs, deadlines.get(s["priority"])))
        e["offered"] = len(rs)
        per_stream.append(e)
    done = [r for r in recs if r["state"] == "completed"]
    errs = [r["error"] for r in recs if r["state"] in ("failed",) and "error" in r]
    d = {"duration_s": a.duration, "arrivals": a.arrivals, "seed": a.seed, "drain_s": a.drain,
         "wall_s": round(wall, 4), "offered": len(arr), "max_send_lag_s": round(max_lag, 4),
         "streams": per_stream, "classes": classes,
         "total": class_summary(recs, None),
         "checked_public": sum(1 for r in recs if r.get("checked")),
         "throughput_per_s": round(len(done) / wall, 4) if wall > 0 else None,
         "memory": mem, "memory_curve": sampler.samples, "memory_owners_curve": sampler.owners,
         "completions": sorted([round(r["t_end"] - t0, 4), round(r["latency_s"], 6),
                                r["state"] == "completed", r["priority"]]
                               for r in recs if "t_end" in r and "latency_s" in r),
         "daemon_died": died is not None}
    if errs:
        d["errors"] = errs[:10]
    if vks:
        items = []
        for r in recs:
            for pub, prf in r.pop("_proofs", []):
                items.append((vks[r["circuit"]], pub, prf))
        try:
            n_ok, bad = snarkjs_verify(items) if items else (0, [])
            d["snarkjs"] = {"proofs": len(items), "verified": n_ok, "bad": bad[:20],
                            "circuits": sorted(vks)}
        except (RuntimeError, OSError, ValueError) as e:  # keep the run's data
            d["snarkjs"] = {"proofs": len(items), "verified": 0, "bad": [],
                            "circuits": sorted(vks), "error": str(e)}
    else:
        for r in recs:
            r.pop("_proofs", None)
    if died is not None:
        d["_died"] = died
        d["error"] = {"unreachable": "daemon stopped answering during the run",
                      "gone": "daemon exited during the run"}.get(
                          died, "daemon exited with status %s during the run" % died)

    d["arrivals_sent"] = sum(1 for r in recs if r["state"] != "not_sent")
    print("stress over %.1f s (wall %.1f s): %d offered, %d completed, %.3f proofs/s" %
          (a.duration, wall, len(arr), len(done), d["throughput_per_s"] or 0))
    if died is not None:
        print("DAEMON DIED after %.1f s (%s): arrivals stopped after %d of %d; %d proofs lost" %
              (wall, died, len(recs), len(arr), d["total"]["unfinished"]))
    print("%-9s %9s %9s %6s %10s %8s %8s %8s %8s %6s" % (
        "class", "submitted", "completed", "failed", "unfinished", "p50 s", "p95 s", "p99 s",
        "deadline", "misses"))
    for p, c in classes.items():
        l = c["latency_s"] or {}
        print("%-9s %9d %9d %6d %10d %8s %8s %8s %8s %6s" % (
            p, c["submitted"], c["completed"], c["failed"], c["unfinished"] + c["not_sent"],
            "%.4f" % l["p50"] if l else "-", "%.4f" % l["p95"] if l else "-",
            "%.4f" % l["p99"] if l else "-",
            "%gs" % c["deadline_s"] if c["deadline_s"] is not None else "-",
            c["deadline_misses"] if c["deadline_misses"] is not None else "-"))
    print("results checked (public signals = witness's): %d of %d completed" %
          (d["checked_public"], len(done)))
    if "snarkjs" in d:
        print("snarkjs verify: %d of %d partition proofs OK" % (d["snarkjs"]["verified"],
                                                               d["snarkjs"]["proofs"]))
    if mem.get("samples"):
        print("daemon memory (%s, %d samples): peak RSS %s%s" % (
            mem["source"], mem["samples"], mib(mem["peak_rss"]),
            ", peak GPU %s (nvidia-smi)" % mib(mem["peak_gpu"]) if "peak_gpu" in mem else ""))
    for e in d.get("errors", [])[:3]:
        print("error: %s" % e)
    bad = (d["total"]["failed"] > 0 or died is not None or
           ("snarkjs" in d and d["snarkjs"]["verified"] != d["snarkjs"]["proofs"]) or
           (a.fail_on_miss and any((c["deadline_misses"] or 0) > 0 for c in classes.values())))
    # groups for the plots: latency and throughput per priority class
    d["_latency_groups"] = [(p, [c[1] for c in d["completions"] if c[2] and c[3] == p])
                            for p in classes]
    d["_throughput_groups"] = [("all", [c[0] for c in d["completions"] if c[2]])] + [
        (p, [c[0] for c in d["completions"] if c[2] and c[3] == p]) for p in classes]
    return d, 1 if bad else 0
