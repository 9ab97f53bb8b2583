#!/usr/bin/env python3
"""Time and bus bandwidth against message size, one panel pair per collective, one line per
implementation (mpix-st algorithm, vendor, MPI), from coll_bench --json files.

usage: plot-coll.py FILE.json... [-o coll.png]

A table of mpix-st's time per size divided by the vendor's goes to standard output: the auto
algorithm and the best one, eager against the vendor's eager calls and replayed (--graph) against
the vendor's replayed ones.
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
        # time by (coll, bytes), per implementation row: eager with eager, replayed with replayed
        times = defaultdict(dict)
        for r in run["results"]:
            times[(r["coll"], r["bytes"])][(r["impl"], r["algo"])] = r["time_us"]
        print("# {} ranks, {} ({}), vendor {}".format(run["ranks"], run["device"], run["backend"], run["vendor"]))
        print("# ratios of mpix-st's time to the vendor's: auto and the best algorithm, eager (mpixst / vendor)"
              " and replayed (mpixst-graph / vendor-graph)")
        print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}".format(
            "coll", "bytes", "vendor_us", "auto", "best", "vgraph_us", "auto_g", "best_g"))

        def ratio(t, v):
            return "{:.2f}".format(t / v) if t is not None and v else "-"

        for (coll, size), row in sorted(times.items()):
            def pick(impl, algo=None):
                ts = [t for (i, a), t in row.items() if i == impl and (algo is None or a == algo)]
                return min(ts) if ts else None
            v, vg = pick("vendor"), pick("vendor-graph")
            # alltoall has one algorithm, named for itself rather than auto
            auto, auto_g = pick("mpixst", "auto") or pick("mpixst"), pick("mpixst-graph", "auto") or pick("mpixst-graph")
            print("{:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}".format(
                coll, size, "{:.2f}".format(v) if v else "-", ratio(auto, v), ratio(pick("mpixst"), v),
                "{:.2f}".format(vg) if vg else "-", ratio(auto_g, vg), ratio(pick("mpixst-graph"), vg)))
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
