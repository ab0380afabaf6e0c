#!/usr/bin/env python3
"""Log-log SVG plot of CG time to solution vs problem size from the JSON of
`kband-bench cg`, beside seed 003's A100 (CUDA Fortran) times (Tables 4-6).

usage: scripts/plot_cg.py RESULTS.json [MORE.json ...] [-o kband-cg.svg]

One panel per matrix (1D Laplacian, 2D Poisson, dense SPD). Each input file
is one series per kband variant (plain CG, the line and zebra line
preconditioners), labelled
with its device; rows capped at a fixed iteration count (per-iteration
figures only) are left out. Pure Python (no matplotlib).
"""
import argparse
import json
import math
import sys

# seed 003, CUDA Fortran on an A100: log2(n) -> seconds
SEED_A100 = {
    "laplace1d": {4: 5.388e-4, 6: 1.564e-3, 8: 6.800e-3, 10: 2.788e-2, 12: 1.1109e-1, 14: 4.526e-1,
                  16: 1.827, 18: 7.712, 20: 72.84},
    "poisson2d": {4: 2.055e-4, 6: 5.358e-4, 8: 1.561e-3, 10: 3.313e-3, 12: 6.459e-3, 14: 1.351e-2,
                  16: 2.751e-2, 18: 6.022e-2, 20: 0.3000},
    "dense": {4: 8.985e-4, 6: 5.011e-3, 8: 3.126e-2, 10: 2.047e-1, 12: 2.534},
}
# kband series: the bench's algorithm names and their labels
PRECS = {"cg-kband": "", "cg-kband-line": " + line prec.", "cg-kband-zebra": " + zebra line prec."}
TITLES = {"laplace1d": "1D Laplacian (CDS)", "poisson2d": "2D Poisson (CDS)", "dense": "dense SPD"}
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def load(files):
    series = {m: [] for m in SEED_A100}
    for f in files:
        with open(f) as fh:
            data = json.load(fh)
        dev = data.get("meta", {}).get("device", f)
        prec = data.get("meta", {}).get("precision", "")
        groups = {}
        for r in data.get("rows", []):
            if r.get("algorithm") not in PRECS or "capped" in r.get("note", ""):
                continue
            if r.get("layout") not in series or not r.get("time_median_s"):
                continue
            key = (r["layout"], r["algorithm"])
            groups.setdefault(key, []).append((r["n"], r["time_median_s"]))
        for (m, algo), pts in groups.items():
            label = "kband%s, %s%s" % (PRECS[algo], dev,
                                       ", " + prec if prec and prec != "double" else "")
            series[m].append((label, sorted(pts)))
    for m, pts in SEED_A100.items():
        series[m].append(("seed 003, CUDA Fortran, A100", sorted((2 ** k, t) for k, t in pts.items())))
    return series


def panel(out, x0, y0, w, h, title, series):
    pts = [p for _, s in series for p in s if p[1] > 0]
    if not pts:
        return
    lx = [math.log10(p[0]) for p in pts]
    ly = [math.log10(p[1]) for p in pts]
    xmin, xmax = math.floor(min(lx)), math.ceil(max(lx))
    ymin, ymax = math.floor(min(ly)), math.ceil(max(ly))
    xmax = max(xmax, xmin + 1)
    ymax = max(ymax, ymin + 1)
    ml, mb, mt = 60, 40, 30

    def X(v):
        return x0 + ml + (math.log10(v) - xmin) / (xmax - xmin) * (w - ml - 10)

    def Y(v):
        return y0 + mt + (ymax - math.log10(v)) / (ymax - ymin) * (h - mt - mb)

    out.append('<text x="%.1f" y="%.1f" font-size="14" text-anchor="middle">%s</text>' % (x0 + w / 2, y0 + 18, title))
    out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>'
               % (x0 + ml, y0 + mt, w - ml - 10, h - mt - mb))
    for e in range(xmin, xmax + 1):
        xx = X(10 ** e)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>' % (xx, y0 + mt, xx, y0 + h - mb))
        out.append('<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">1e%d</text>' % (xx, y0 + h - mb + 15, e))
    for e in range(ymin, ymax + 1):
        yy = Y(10 ** e)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>' % (x0 + ml, yy, x0 + w - 10, yy))
        out.append('<text x="%.1f" y="%.1f" font-size="11" text-anchor="end">1e%d s</text>' % (x0 + ml - 4, yy + 4, e))
    out.append('<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">unknowns n</text>'
               % (x0 + ml + (w - ml) / 2, y0 + h - 8))
    for i, (label, s) in enumerate(series):
        seed = label.startswith("seed")
        color = "#000" if seed else COLORS[i % len(COLORS)]
        path = " ".join("%s%.1f,%.1f" % ("M" if j == 0 else "L", X(p[0]), Y(p[1])) for j, p in enumerate(s) if p[1] > 0)
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>'
                   % (path, color, ' stroke-dasharray="6,4"' if seed else ""))
        for p in s:
            if p[1] > 0:
                out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (X(p[0]), Y(p[1]), color))
        ly0 = y0 + mt + 8 + 14 * i
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>'
                   % (x0 + ml + 8, ly0, x0 + ml + 28, ly0, color, ' stroke-dasharray="6,4"' if seed else ""))
        out.append('<text x="%.1f" y="%.1f" font-size="10">%s</text>' % (x0 + ml + 32, ly0 + 4, label))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("-o", "--out", default="kband-cg.svg")
    a = ap.parse_args()
    series = load(a.json)
    w, h = 480, 360
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (3 * w, h),
           '<rect width="100%" height="100%" fill="white"/>']
    for i, m in enumerate(["laplace1d", "poisson2d", "dense"]):
        panel(out, i * w, 0, w, h, "CG time to solution: " + TITLES[m], series[m])
    out.append("</svg>")
    with open(a.out, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
