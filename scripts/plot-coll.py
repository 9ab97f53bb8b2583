#!/usr/bin/env python3
"""Time and bus bandwidth against message size, one panel pair per collective, one line per
implementation (mpix-st algorithm, vendor, MPI), from coll_bench --json files.

usage: plot-coll.py FILE.json... [-o coll.png]

A table of the best mpix-st time per size divided by the vendor's (where both exist) goes to
standard output.
"""
import argparse
import json
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--output", default="coll.png")
    args = ap.parse_args()
    runs = [json.load(open(f)) for f in args.files]
    for run in runs:
        best = defaultdict(lambda: float("inf"))
        vendor = {}
        for r in run["results"]:
            key = (r["coll"], r["bytes"])
            if r["impl"] == "mpixst":
                best[key] = min(best[key], r["time_us"])
            elif r["impl"] == "vendor":
                vendor[key] = r["time_us"]
        print("# {} ranks, {} ({}), vendor {}".format(run["ranks"], run["device"], run["backend"], run["vendor"]))
        print("{:<10} {:>12} {:>12} {:>12} {:>8}".format("coll", "bytes", "mpixst_us", "vendor_us", "ratio"))
        for (coll, size), t in sorted(best.items()):
            v = vendor.get((coll, size))
            print("{:<10} {:>12} {:>12.2f} {:>12} {:>8}".format(
                coll, size, t, "{:.2f}".format(v) if v else "-", "{:.2f}".format(t / v) if v else "-"))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot-coll.py: matplotlib is missing; table only")
        return
    colls = sorted({r["coll"] for run in runs for r in run["results"]})
    fig, axes = plt.subplots(len(colls), 2 * len(runs), figsize=(7 * len(runs), 3.2 * len(colls)), squeeze=False)
    for j, run in enumerate(runs):
        for i, coll in enumerate(colls):
            lines = defaultdict(list)
            for r in run["results"]:
                if r["coll"] == coll:
                    lines["{} {}".format(r["impl"], r["algo"])].append((r["bytes"], r["time_us"], r["busbw_GBs"]))
            for name, pts in sorted(lines.items()):
                pts.sort()
                x = [p[0] for p in pts]
                axes[i][2 * j].plot(x, [p[1] for p in pts], marker=".", label=name)
                axes[i][2 * j + 1].plot(x, [p[2] for p in pts], marker=".", label=name)
            for k, ylabel in ((2 * j, "time (us)"), (2 * j + 1, "bus bandwidth (GB/s)")):
                ax = axes[i][k]
                ax.set_xscale("log", base=2)
                if k == 2 * j:
                    ax.set_yscale("log")
                ax.set_title("{}, {} ranks".format(coll, run["ranks"]))
                ax.set_xlabel("bytes")
                ax.set_ylabel(ylabel)
                ax.grid(True, alpha=0.3)
            axes[i][2 * j].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print("plot-coll.py: wrote", args.output)


if __name__ == "__main__":
    main()
