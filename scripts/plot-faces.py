#!/usr/bin/env python3
"""Per-exchange time of each Faces mode, one group of bars per run, from faces --json files.

usage: plot-faces.py FILE.json... [-o faces.png]

Bars are the average over ranks; whiskers span the fastest and slowest rank. The y axis is
logarithmic, since the small and large inputs differ by orders of magnitude. A table of the same
numbers (and the ratios to st) goes to standard output.
"""
import argparse
import json
import sys

MODE_ORDER = ["p2p", "rma", "st", "nccl"]


def label(run):
    c = run["config"]
    if run["versions"]["backend"] == "host":
        where = "host backend"
    else:
        gpus = max(1, c["ranks"] // max(1, c["ranks_per_gpu"]))
        where = "{} GPU{}".format(gpus, "s" if gpus > 1 else "")
    elements = "x".join(str(m) for m in c["elements"])
    grid = "x".join(str(g) for g in c["grid"])
    return "{} el n={}\n{} ranks ({}) on {}{}{}".format(
        elements, c["n"], c["ranks"], grid, where, ", periodic" if c["periodic"] else "",
        "\n--datatypes (rma, st)" if c.get("datatypes") else "")


def load(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        run["path"] = path
        runs.append(run)
    # Small inputs before large ones, then by rank count, then non-periodic first, packed first.
    runs.sort(key=lambda r: (r["config"]["elements"][0] * r["config"]["n"], r["config"]["ranks"],
                             r["config"]["periodic"], r["config"].get("datatypes", False)))
    return runs


def ran(run):
    return {m["mode"]: m for m in run["modes"] if "skipped" not in m}


def print_table(runs):
    print("{:<60} {:>6} {:>14} {:>10} {:>8}".format("run", "mode", "us/exchange", "vs st", "passed"))
    for run in runs:
        name = label(run).replace("\n", ", ")
        for mode, m in sorted(ran(run).items(), key=lambda kv: MODE_ORDER.index(kv[0])):
            ratio = m.get("ratio_to_st")
            print("{:<60} {:>6} {:>14.2f} {:>10} {:>8}".format(
                name, mode, m["per_exchange_us"]["avg"], "-" if ratio is None else "{:.3f}".format(ratio),
                "{}/{}".format(m["passed"], m["ranks"])))


def plot(runs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = [m for m in MODE_ORDER if any(m in ran(r) for r in runs)]
    width = 0.8 / max(1, len(modes))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.8 * len(runs) + 2), 5))
    for k, mode in enumerate(modes):
        xs, avg, low, high = [], [], [], []
        for i, run in enumerate(runs):
            m = ran(run).get(mode)
            if not m:
                continue
            t = m["per_exchange_us"]
            xs.append(i + (k - (len(modes) - 1) / 2) * width)
            avg.append(t["avg"])
            low.append(t["avg"] - t["min"])
            high.append(t["max"] - t["avg"])
        ax.bar(xs, avg, width, yerr=[low, high], capsize=2, label=mode)
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([label(r) for r in runs], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("time per exchange (us, average over ranks)")
    devices = sorted({d for r in runs for d in r.get("devices", [])})
    ax.set_title("Faces: per-exchange time by mode" + (" on " + ", ".join(devices) if devices else ""))
    ax.legend(title="mode")
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote " + out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="JSON files written by faces --json")
    parser.add_argument("-o", "--output", default="faces.png", help="PNG to write (default faces.png)")
    args = parser.parse_args()
    runs = load(args.files)
    print_table(runs)
    plot(runs, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
