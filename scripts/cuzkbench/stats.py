"""Statistics of a run: percentiles, latency summaries, least-squares slopes, per-class counts."""


def pct(xs, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


def mib(b):
    return "%.1f MiB" % (b / 1048576.0)


def lat_stats(lats):
    return {"p50": round(pct(lats, 50), 6), "p95": round(pct(lats, 95), 6),
            "p99": round(pct(lats, 99), 6), "min": round(min(lats), 6),
            "max": round(max(lats), 6), "mean": round(sum(lats) / len(lats), 6)}


def summarize(recs, wall, t_ref=None):
    ok = [r for r in recs if r["ok"]]
    d = {"completed": len(ok), "failed": len(recs) - len(ok), "wall_s": round(wall, 4),
         "s_per_proof": round(wall / len(recs), 6) if recs else None,
         "checked_public": sum(1 for r in recs if r.get("checked"))}
    if ok:
        d["latency_s"] = lat_stats([r["latency_s"] for r in ok])
        d["stages_mean_ms"] = {k: round(sum(r["stages_ms"][k] for r in ok) / len(ok), 3)
                               for k in ok[0]["stages_ms"]}
    errs = [r["error"] for r in recs if not r["ok"]]
    if errs:
        d["errors"] = errs[:10]
    if t_ref is not None:
        # [seconds since the memory sampler started, latency s, ok] per proof, in end order
        d["completions"] = sorted([round(r["t_end"] - t_ref, 4), round(r["latency_s"], 6),
                                   bool(r["ok"])] for r in recs)
    return d


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, my
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def class_summary(recs, deadline):
    done = [r for r in recs if r["state"] == "completed"]
    d = {"submitted": sum(1 for r in recs if r["state"] != "not_sent"),
         "completed": len(done),
         "failed": sum(1 for r in recs if r["state"] == "failed"),
         "unfinished": sum(1 for r in recs if r["state"] == "unfinished"),
         "not_sent": sum(1 for r in recs if r["state"] == "not_sent"),
         "latency_s": lat_stats([r["latency_s"] for r in done]) if done else None,
         "deadline_s": deadline}
    if deadline is not None:
        d["late"] = sum(1 for r in done if r["latency_s"] > deadline)
        d["deadline_misses"] = d["late"] + d["failed"] + d["unfinished"] + d["not_sent"]
    else:
        d["late"] = d["deadline_misses"] = None
    return d


def stats(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = (sum((x - m) ** 2 for x in xs) / (n - 1)) ** 0.5 if n > 1 else 0.0
    return {"mean": m, "stdev": sd, "min": min(xs), "max": max(xs), "values": xs}
