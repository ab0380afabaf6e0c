#!/usr/bin/env python3
"""Markdown tables from a kband-bench JSON file (perf_tests/RESULTS.md).

usage: scripts/results_table.py bench.json [--algos a,b] [--layouts l1,l2]
Prints, per algorithm/layout/variant, time over the copy time of the same n and
the bandwidth (by minimum data movement) over the copy bandwidth.
"""
import json
import sys


def main():
    args = sys.argv[1:]
    path = args[0]
    algos = layouts = None
    if "--algos" in args:
        algos = args[args.index("--algos") + 1].split(",")
    if "--layouts" in args:
        layouts = args[args.index("--layouts") + 1].split(",")
    data = json.load(open(path))
    rows = data["rows"]
    ns = sorted({r["n"] for r in rows if r["algorithm"] not in ("stream-copy", "stream-scale")
                 and r["layout"] != "dense"})
    keys = []
    for r in rows:
        k = (r["algorithm"], r["layout"], r["variant"])
        if r["algorithm"].startswith("stream") or r["layout"] == "dense":
            continue
        if algos and r["algorithm"] not in algos:
            continue
        if layouts and r["layout"] not in layouts:
            continue
        if k not in keys:
            keys.append(k)
    dev = rows[0].get("device", "?")
    print(f"Device: {dev}; {rows[0].get('precision')}; points per n: {rows[0].get('points')}\n")
    print("| algorithm | layout | variant | " + " | ".join(f"n={n}" for n in ns) + " |")
    print("|---|---|---|" + "---|" * len(ns))
    for k in keys:
        cells = []
        for n in ns:
            m = [r for r in rows if (r["algorithm"], r["layout"], r["variant"]) == k and r["n"] == n]
            if not m or m[0].get("status") != "ok":
                cells.append("n/a")
            else:
                cells.append(f"{m[0]['time_ratio_to_copy']:.2f} ({m[0]['bw_ratio_to_copy']:.2f})")
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
