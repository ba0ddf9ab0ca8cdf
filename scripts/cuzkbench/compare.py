"""compare: the same batch against two daemon configurations in alternating rounds."""
import json
import os
import sys

import grpc

from .stats import mib, stats, summarize
from .client import Bench, DaemonDied, Sampler
from .report import compare_plots
from .workloads import run_many


def cmd_compare(a):
    """The same batch against daemon configs A and B, alternating A, B for --rounds rounds on
    this machine (each round a fresh daemon), so drift hits both arms alike."""
    runs = {"A": [], "B": []}
    curves = {"A": [], "B": []}
    lats = {"A": [], "B": []}
    for r in range(a.rounds):
        for arm, cfg in (("A", a.config_a), ("B", a.config_b)):
            a.spawn = cfg
            b = Bench(a)
            s = Sampler(b)
            s.start()
            try:
                recs, wall = run_many(b, a, a.count, a.concurrency)
            finally:
                mem = s.stop()
                b.close()
            d = summarize(recs, wall, s.t0)
            if d["failed"]:
                raise RuntimeError("%s round %d: %d proofs failed: %s" %
                                   (arm, r + 1, d["failed"], d.get("errors")))
            lats[arm] += [c[1] for c in d["completions"] if c[2]]
            runs[arm].append({"s_per_proof": d["s_per_proof"], "p50_s": d["latency_s"]["p50"],
                              "p95_s": d["latency_s"]["p95"],
                              "peak_rss": mem.get("peak_rss", 0)})
            curves[arm].append(s.samples)
            print("round %d %s: %.4f s/proof, p50 %.4f s, peak RSS %s" %
                  (r + 1, arm, d["s_per_proof"], d["latency_s"]["p50"],
                   mib(mem.get("peak_rss", 0))))
    out = {"config_a": a.config_a, "config_b": a.config_b, "rounds": a.rounds, "count": a.count,
           "concurrency": a.concurrency, "partitions": a.partitions, "metrics": {},
           "memory_curves": curves, "latencies_s": lats, "runs": runs}
    print("%-12s %-28s %-28s %s" % ("metric", "A mean (min..max)", "B mean (min..max)", "B/A"))
    for k in ("s_per_proof", "p50_s", "p95_s", "peak_rss"):
        sa, sb = stats([x[k] for x in runs["A"]]), stats([x[k] for x in runs["B"]])
        ratio = sb["mean"] / sa["mean"] if sa["mean"] else None
        out["metrics"][k] = {"A": sa, "B": sb, "ratio_b_over_a": ratio}
        f = (lambda v: mib(v)) if k == "peak_rss" else (lambda v: "%.4f" % v)
        print("%-12s %-28s %-28s %s" % (
            k, "%s (%s..%s)" % (f(sa["mean"]), f(sa["min"]), f(sa["max"])),
            "%s (%s..%s)" % (f(sb["mean"]), f(sb["min"]), f(sb["max"])),
            "%.3f" % ratio if ratio is not None else "-"))
    return out, 0


def run_compare(a, mach):
    try:
        d, rc = cmd_compare(a)
    except DaemonDied as e:
        d, rc = {"error": "daemon exited with status %s during the run" % e.args[0]}, 1
    except (RuntimeError, grpc.RpcError, grpc.FutureTimeoutError) as e:
        d, rc = {"error": str(e) or "timeout"}, 1
    if "error" in d:
        print("cuzk-bench: %s" % d["error"], file=sys.stderr)
    d.update({"command": "compare", "machine": mach, "exit_status": rc})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(d, f, indent=1)
    if a.report:
        os.makedirs(a.report, exist_ok=True)
        L = ["# cuzk-bench compare", "",
             "Machine: %s, %d cores" % (mach["cpu_model"], mach["cores"]),
             "", "A = %s, B = %s; %s rounds of %s proofs, j=%s" % (
                 a.config_a, a.config_b, a.rounds, a.count, a.concurrency), "",
             "| metric | A mean | A min..max | B mean | B min..max | B/A |",
             "|---|---|---|---|---|---|"]
        for k, m in d.get("metrics", {}).items():
            L.append("| %s | %.6g | %.6g..%.6g | %.6g | %.6g..%.6g | %s |" % (
                k, m["A"]["mean"], m["A"]["min"], m["A"]["max"], m["B"]["mean"], m["B"]["min"],
                m["B"]["max"], "%.3f" % m["ratio_b_over_a"] if m["ratio_b_over_a"] else "-"))
        try:
            plots = compare_plots(a.report, d)
        except (OSError, ValueError, ZeroDivisionError) as e:
            print("cuzk-bench: plots: %s" % e, file=sys.stderr)
            plots = []
        d["plots"] = plots
        L += [""] + ["![%s](%s)" % (f, f) for f in plots]
        with open(os.path.join(a.report, "compare.md"), "w") as f:
            f.write("\n".join(L) + "\n")
        if a.json is None:
            with open(os.path.join(a.report, "compare.json"), "w") as f:
                json.dump(d, f, indent=1)
    return rc
