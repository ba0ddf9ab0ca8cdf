"""Reports: the terminal summary, COMMAND.md (Markdown) and the SVG plots of --report DIR."""
import os

from .svg import _scale_bytes, histogram, line_chart, memory_chart, memory_series, throughput_series
from .stats import mib


def write_plots(report, cmd, d):
    """memory.svg, latency.svg and throughput.svg for batch, soak and stress; returns names."""
    os.makedirs(report, exist_ok=True)
    files = []
    mc, oc = d.get("memory_curve") or [], d.get("memory_owners_curve") or []
    if mc or oc:
        memory_chart(os.path.join(report, "%s-memory.svg" % cmd),
                     "cuzk-daemon memory by owner (%s, %s)" % (cmd, (d.get("memory") or {})
                                                               .get("source", "?")),
                     memory_series(mc, oc, gpu=(d.get("memory") or {}).get("gpu_curve")))
        files.append("%s-memory.svg" % cmd)
    rbp = d.get("rss_by_proof") or []
    if rbp:
        unit, div = _scale_bytes(max(p[1] for p in rbp))
        ser = [("RSS after proof", [(n, v / div) for n, v in rbp], "#000000", None)]
        if d.get("slope_bytes_per_proof") is not None:
            xs = [n for n, _ in rbp if n > d.get("warmup", 0)] or [rbp[0][0]]
            ser.append(("fit: %.0f B/proof" % d["slope_bytes_per_proof"],
                        [(x, (d["intercept_bytes"] + d["slope_bytes_per_proof"] * x) / div)
                         for x in (xs[0], xs[-1])], "#d62728", "5,3"))
        line_chart(os.path.join(report, "%s-rss.svg" % cmd), "daemon RSS against proofs done",
                   "proofs completed (count)", "RSS (%s)" % unit, ser, y_from_zero=False,
                   x_min_step=1)
        files.append("%s-rss.svg" % cmd)
    comp = d.get("completions") or []
    groups = d.get("_latency_groups")
    if groups is None:
        groups = [("all", [c[1] for c in comp if c[2]])]
    histogram(os.path.join(report, "%s-latency.svg" % cmd),
              "proof latency (%s)" % cmd, "latency (s)", groups)
    files.append("%s-latency.svg" % cmd)
    t_end = max([c[0] for c in comp] + [d.get("wall_s") or 0, 1e-3])
    tgroups = d.get("_throughput_groups")
    if tgroups is None:
        tgroups = [("all proofs", [c[0] for c in comp if c[2]])]
    line_chart(os.path.join(report, "%s-throughput.svg" % cmd),
               "throughput over time (%s)" % cmd, "time since start (s)",
               "completed proofs per second (1/s)",
               [(lab, throughput_series(ts, t_end), None, None) for lab, ts in tgroups])
    files.append("%s-throughput.svg" % cmd)
    return files


def print_summary(d):
    print("proofs: %d completed, %d failed" % (d["completed"], d["failed"]))
    if d.get("s_per_proof") is not None:
        print("throughput: %.4f s/proof (wall %.3f s)" % (d["s_per_proof"], d["wall_s"]))
    if "latency_s" in d:
        l = d["latency_s"]
        print("latency: p50 %.4f s  p95 %.4f s  p99 %.4f s  (min %.4f, max %.4f)" %
              (l["p50"], l["p95"], l["p99"], l["min"], l["max"]))
        print("stages (mean ms a proof; queue and total the job's, the others summed over its "
              "partitions): " + "  ".join("%s %.2f" % kv for kv in d["stages_mean_ms"].items()))
    if "checked_public" in d:
        print("results checked (public signals = witness's): %d of %d completed" %
              (d["checked_public"], d["completed"]))
    for e in d.get("errors", [])[:3]:
        print("error: %s" % e)


def compare_plots(report, d):
    """compare-memory.svg (both configurations' RSS curves, every round, on one plot),
    compare-latency.svg (both latency distributions), compare-rounds.svg (s/proof by round)."""
    files = []
    curves = d.get("memory_curves") or {}
    if curves.get("A") or curves.get("B"):
        ser = []
        for arm, color in (("A", "#1f77b4"), ("B", "#d62728")):
            for k, smp in enumerate(curves.get(arm, [])):
                ser.append(("%s round %d RSS" % (arm, k + 1), [(x[0], x[1]) for x in smp], color,
                            None if k == 0 else ("5,3" if k == 1 else "2,2")))
        memory_chart(os.path.join(report, "compare-memory.svg"),
                     "daemon RSS: A = %s (blue), B = %s (red)" % (
                         os.path.basename(d.get("config_a", "?")),
                         os.path.basename(d.get("config_b", "?"))), ser)
        files.append("compare-memory.svg")
    lats = d.get("latencies_s") or {}
    if lats:
        histogram(os.path.join(report, "compare-latency.svg"), "proof latency, A vs B",
                  "latency (s)", [("A", lats.get("A", [])), ("B", lats.get("B", []))])
        files.append("compare-latency.svg")
    runs = d.get("runs") or {}
    if runs.get("A"):
        line_chart(os.path.join(report, "compare-rounds.svg"), "seconds per proof by round",
                   "round (number)", "seconds per proof (s)",
                   [(arm, [(k + 1, x["s_per_proof"]) for k, x in enumerate(runs.get(arm, []))],
                     c, None) for arm, c in (("A", "#1f77b4"), ("B", "#d62728"))], x_min_step=1)
        files.append("compare-rounds.svg")
    return files


def write_markdown(path, cmd, d):
    os.makedirs(path, exist_ok=True)
    m = d["machine"]
    L = ["# cuzk-bench %s" % cmd, "", "Machine: %s, %d cores" % (m["cpu_model"], m["cores"]), ""]
    for k in ("completed", "failed", "s_per_proof", "wall_s", "slope_bytes_per_proof", "passed",
              "checked_public", "offered", "throughput_per_s", "duration_s", "arrivals",
              "daemon_died"):
        if k in d:
            L.append("- %s: %s" % (k, d[k]))
    if "latency_s" in d and isinstance(d["latency_s"], dict):
        L.append("- latency p50/p95/p99 (s): %s / %s / %s" %
                 (d["latency_s"]["p50"], d["latency_s"]["p95"], d["latency_s"]["p99"]))
    if isinstance(d.get("latency_s"), float):
        L.append("- latency (s): %s" % d["latency_s"])
    for k in ("verified_by_daemon", "verified_by_snarkjs", "error"):
        if k in d:
            L.append("- %s: %s" % (k, d[k]))
    if "stages_ms" in d:
        L += ["", "| stage | ms |", "|---|---|"]
        L += ["| %s | %.3f |" % kv for kv in d["stages_ms"].items()]
    if "stages_mean_ms" in d:
        L.append("")
        L.append("| stage (queue and total: the job's; the others: summed over its partitions) "
                 "| mean ms a proof |")
        L.append("|---|---|")
        L += ["| %s | %.3f |" % kv for kv in d["stages_mean_ms"].items()]
    if "snarkjs" in d:
        L.append("- snarkjs verify: %d of %d partition proofs OK" % (d["snarkjs"]["verified"],
                                                                    d["snarkjs"]["proofs"]))
    if "classes" in d:
        L += ["", "| class | submitted | completed | failed | unfinished | p50 s | p95 s | p99 s "
              "| deadline s | late | misses |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for p, c in d["classes"].items():
            lt = c["latency_s"] or {}
            L.append("| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s |" % (
                p, c["submitted"], c["completed"], c["failed"], c["unfinished"] + c["not_sent"],
                lt.get("p50", "-"), lt.get("p95", "-"), lt.get("p99", "-"),
                "-" if c["deadline_s"] is None else c["deadline_s"],
                "-" if c["late"] is None else c["late"],
                "-" if c["deadline_misses"] is None else c["deadline_misses"]))
        L += ["", "Streams:", ""]
        for st in d["streams"]:
            L.append("- `%s`: %.3g/s offered, %d arrivals, %d completed" %
                     (st["spec"], st["rate_per_s"], st["offered"], st["completed"]))
    mem = d.get("memory")
    if mem and mem.get("samples"):
        L += ["", "Daemon memory (%s): peak RSS %s, VmHWM %s" %
              (mem["source"], mib(mem["peak_rss"]), mib(mem["peak_hwm"]))]
    if d.get("plots"):
        L += [""] + ["![%s](%s)" % (f, f) for f in d["plots"]]
    with open(os.path.join(path, "%s.md" % cmd), "w") as f:
        f.write("\n".join(L) + "\n")
