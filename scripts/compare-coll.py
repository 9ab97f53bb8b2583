#!/usr/bin/env python3
"""Compares coll_bench runs of two builds taken in one job, alternated (A1 B1 A2 B2 ...).

Usage: compare-coll.py A1.json B1.json [A2.json B2.json ...]
Prints, per collective and over all, the median over sizes of mpix-st's time / the vendor's in
each run (auto algorithm, eager and replayed), and the median of B's own time / A's own time for
each A-B pair. Ratios only within one run or one pair: runs on other machines do not compare.
"""
import json
import statistics
import sys


def load(path):
    times = {}
    for r in json.load(open(path))["results"]:
        if r["impl"].startswith("vendor") or r["algo"] in ("auto", "direct"):
            times[(r["coll"], r["impl"], r["bytes"])] = r["time_us"]
    return times


def median_or_dash(values):
    return f"{statistics.median(values):.3f}" if values else "-"


def main(paths):
    if len(paths) < 2 or len(paths) % 2:
        sys.exit(__doc__)
    runs = [(p, load(p)) for p in paths]
    colls = sorted({k[0] for _, t in runs for k in t})
    for impl, vendor in (("mpixst-graph", "vendor-graph"), ("mpixst", "vendor")):
        print(f"== {impl} / {vendor} (median over sizes), then B / A own time per pair")
        for coll in colls + ["all"]:
            def pick(key):
                return key[1] == impl and (coll == "all" or key[0] == coll)
            vs_vendor = []
            for _, t in runs:
                vs_vendor.append(median_or_dash([t[k] / t[(k[0], vendor, k[2])] for k in t
                                                 if pick(k) and (k[0], vendor, k[2]) in t]))
            own = []
            for (_, a), (_, b) in zip(runs[0::2], runs[1::2]):
                own.append(median_or_dash([b[k] / a[k] for k in b if pick(k) and k in a]))
            print(f"{coll:10s} vendor {' '.join(vs_vendor)}   B/A {' '.join(own)}")


if __name__ == "__main__":
    main(sys.argv[1:])
