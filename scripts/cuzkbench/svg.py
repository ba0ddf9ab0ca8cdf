"""A small SVG writer: line charts and histograms as plain SVG 1.1, axes labelled with units,
legend on the right. No plotting library: only Debian's python3 packages are assumed."""
import math


# ---------------------------------------------------------------- plots: a small SVG writer
# No plotting library (only Debian's python3 packages from scripts/install-deps): line charts and
# histograms drawn as plain SVG 1.1, axes labelled with units, legend on the right.

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def _esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _nice_step(span, n=5):
    """A step of 1, 2, 2.5 or 5 times a power of ten giving about n intervals over span."""
    if span <= 0 or span != span:
        return 1.0
    raw = span / n
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw * 0.999:
            return m * mag
    return 10 * mag


def _ticks(lo, hi, min_step=0.0):
    """(axis lo, axis hi, tick values, label decimals) covering [lo, hi] on nice steps."""
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    step = max(_nice_step(hi - lo), min_step)
    a = math.floor(lo / step + 1e-9) * step
    b = math.ceil(hi / step - 1e-9) * step
    vals = []
    v = a
    while v <= b + step * 1e-6:
        vals.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    dec = 0
    while dec < 6 and abs(round(step, dec) - step) > step * 1e-6:
        dec += 1
    return a, b, vals, dec


class SvgChart:
    """One chart: plot area with axes, tick labels, axis titles, a title and a legend."""
    W, H = 760, 440
    L, R, T, B = 78, 190, 42, 58

    def __init__(self, title, xlabel, ylabel, xr, yr, x_min_step=0.0):
        self.x0, self.x1, self.xt, self.xd = _ticks(xr[0], xr[1], x_min_step)
        self.y0, self.y1, self.yt, self.yd = _ticks(*yr)
        self.pw, self.ph = self.W - self.L - self.R, self.H - self.T - self.B
        self.out = ['<?xml version="1.0" encoding="UTF-8"?>',
                    '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                    'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' %
                    (self.W, self.H, self.W, self.H),
                    '<rect x="0" y="0" width="%d" height="%d" fill="white"/>' % (self.W, self.H),
                    '<text x="%d" y="24" font-size="15" text-anchor="middle">%s</text>' %
                    (self.L + self.pw // 2, _esc(title))]
        self.legend = []
        for v in self.xt:
            x = self.px(v)
            self.out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>' %
                            (x, self.T, x, self.T + self.ph))
            self.out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' %
                            (x, self.T + self.ph + 16, "%.*f" % (self.xd, v)))
        for v in self.yt:
            y = self.py(v)
            self.out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/>' %
                            (self.L, y, self.L + self.pw, y))
            self.out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' %
                            (self.L - 6, y + 4, "%.*f" % (self.yd, v)))
        self.out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' %
                        (self.L, self.T, self.pw, self.ph))
        self.out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' %
                        (self.L + self.pw // 2, self.H - 14, _esc(xlabel)))
        self.out.append('<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">'
                        '%s</text>' % (self.T + self.ph // 2, self.T + self.ph // 2, _esc(ylabel)))

    def px(self, v):
        return self.L + (v - self.x0) / (self.x1 - self.x0) * self.pw

    def py(self, v):
        return self.T + self.ph - (v - self.y0) / (self.y1 - self.y0) * self.ph

    def polyline(self, pts, color, label, dash=None, width=1.6):
        if pts:
            d = " ".join("%.1f,%.1f" % (self.px(x), self.py(y)) for x, y in pts)
            self.out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>'
                            % (d, color, width,
                               ' stroke-dasharray="%s"' % dash if dash else ""))
        self.legend.append((label, color, dash, False))

    def bars(self, edges, counts, color, label, opacity=0.35):
        for i, c in enumerate(counts):
            if c <= 0:
                continue
            x, x2 = self.px(edges[i]), self.px(edges[i + 1])
            y = self.py(c)
            self.out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" '
                            'fill-opacity="%.2f" stroke="%s"/>' %
                            (x, y, max(x2 - x, 0.5), self.py(0) - y, color, opacity, color))
        self.legend.append((label, color, None, True))

    def write(self, path):
        lx, ly = self.L + self.pw + 14, self.T + 8
        for i, (label, color, dash, box) in enumerate(self.legend[:24]):
            y = ly + 18 * i
            if box:
                self.out.append('<rect x="%d" y="%d" width="18" height="10" fill="%s" '
                                'fill-opacity="0.35" stroke="%s"/>' % (lx, y - 5, color, color))
            else:
                self.out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
                                'stroke-width="2"%s/>' % (lx, y, lx + 18, y, color,
                                                          ' stroke-dasharray="%s"' % dash
                                                          if dash else ""))
            self.out.append('<text x="%d" y="%d">%s</text>' % (lx + 24, y + 4, _esc(label[:26])))
        self.out.append("</svg>")
        with open(path, "w") as f:
            f.write("\n".join(self.out) + "\n")


def _scale_bytes(maxv):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if maxv >= 4 * div or unit == "MiB":
            return unit, float(div)


def line_chart(path, title, xlabel, ylabel, series, y_from_zero=True, x_min_step=0.0):
    """series: [(label, [(x, y), ...], color or None, dash or None)]."""
    xs = [p[0] for s in series for p in s[1]] or [0.0, 1.0]
    ys = [p[1] for s in series for p in s[1]] or [0.0, 1.0]
    ylo = 0.0 if y_from_zero else min(ys)
    ch = SvgChart(title, xlabel, ylabel, (min(xs), max(xs)), (min(ylo, min(ys)), max(ys)),
                  x_min_step)
    for i, (label, pts, color, dash) in enumerate(series):
        ch.polyline(pts, color or PALETTE[i % len(PALETTE)], label, dash)
    ch.write(path)


def histogram(path, title, xlabel, groups, nbins=30, ylabel="proofs (count)"):
    """groups: [(label, values)] over shared bins, drawn as translucent overlaid bars."""
    vals = [v for g in groups for v in g[1]]
    if not vals:
        vals = [0.0]
    lo, hi = min(vals), max(vals)
    if hi <= lo:
        lo, hi = lo * 0.9, lo * 1.1 + 1e-9
    edges = [lo + (hi - lo) * i / nbins for i in range(nbins + 1)]
    hists = []
    for label, v in groups:
        c = [0] * nbins
        for x in v:
            c[min(nbins - 1, max(0, int((x - lo) / (hi - lo) * nbins)))] += 1
        hists.append((label, c))
    ymax = max([max(c) for _, c in hists] + [1])
    ch = SvgChart(title, xlabel, ylabel, (lo, hi), (0, ymax))
    for i, (label, c) in enumerate(hists):
        ch.bars(edges, c, PALETTE[i % len(PALETTE)], "%s (%d)" % (label, sum(c)))
    ch.write(path)


def throughput_series(times, t_end, nbins=None):
    """Completions per second in equal time bins over [0, t_end], as a step line."""
    if t_end <= 0:
        t_end = max(times + [1e-3])
    nbins = nbins or max(1, min(40, int(t_end / 0.5) or 1))
    w = t_end / nbins
    c = [0] * nbins
    for t in times:
        c[min(nbins - 1, max(0, int(t / w)))] += 1
    pts = []
    for i, n in enumerate(c):
        pts += [(i * w, n / w), ((i + 1) * w, n / w)]
    return pts


def memory_series(samples, owners, t_shift=0.0, label_prefix="", rss_color="#000000",
                  gpu=None):
    """Memory lines from Sampler data: RSS and VmHWM (/proc or GetStatus), then each owner's
    in_use, keys and the working budget in use (GetStatus)."""
    ser = []
    if samples:
        ser.append((label_prefix + "RSS", [(s[0] - t_shift, s[1]) for s in samples],
                    rss_color, None))
        ser.append((label_prefix + "VmHWM (peak RSS)", [(s[0] - t_shift, s[2]) for s in samples],
                    "#888888", "5,3"))
    names = []
    for o in owners:
        for k in o[1]:
            if k not in names:
                names.append(k)
    for i, k in enumerate(names):
        ser.append((label_prefix + k, [(o[0] - t_shift, o[1].get(k, 0)) for o in owners],
                    PALETTE[i % len(PALETTE)], None if i < len(PALETTE) else "3,2"))
    if owners:
        ser.append((label_prefix + "keys", [(o[0] - t_shift, o[2]) for o in owners],
                    "#000080", "2,2"))
        ser.append((label_prefix + "budget in use", [(o[0] - t_shift, o[3]) for o in owners],
                    "#800000", "8,3"))
    if gpu:
        ser.append((label_prefix + "GPU (nvidia-smi)", [(g[0] - t_shift, g[1]) for g in gpu],
                    "#00a000", "1,2"))
    return ser


def memory_chart(path, title, series):
    """Like line_chart for byte-valued series, in MiB or GiB."""
    mx = max([p[1] for s in series for p in s[1]] + [1])
    unit, div = _scale_bytes(mx)
    line_chart(path, title, "time since start (s)", "memory (%s)" % unit,
               [(lab, [(x, y / div) for x, y in pts], c, d) for lab, pts, c, d in series])
