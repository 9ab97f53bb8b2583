#!/usr/bin/env python3
"""Where the time of epoch launches goes, from MPIX_ST_TRACE files (kernels/launch_trace.h).

usage: trace-summary.py PREFIX.RANK.csv... [--skip N] [--json OUT]

Launches are grouped by what their list holds (lead = a post merged in front, waits, ops = data,
signals, trail = trailing waits, counts). For each group, the median and mean over every rank of:
  wait    enter -> waited       block 0 waiting for peers' flags (a post, or a complete)
  data    waited -> ops_done    every block's copies, until the last one is through the ticket
  signal  ops_done -> signalled the fence that orders the data, and the signal stores
  trail   signalled -> trail_done  trailing waits (a merged wait: the peers' completes)
  finish  trail_done -> exit    the counts
  launch  enter -> exit
and, per rank, `between`: from one launch's exit to the next launch's enter on that rank (any
window), the time the GPU spent on other work or between graph nodes (pack and unpack kernels,
launch gaps). Only differences within one rank are taken: clocks of different GPUs are not
compared. --skip drops each rank's first N launches (warm-up).

Collective calls form groups of their own ("collective allreduce", ...), timed by block 0:
  wait    enter -> waited       until the last of block 0's waits on a peer (a freed slot, a flag,
                                a line) ended: 0 for a call that waits for nobody
  data    waited -> ops_done    the rest of the schedule: pushes, reductions and signals after it
  finish  ops_done -> exit      the communicator's cursor advanced
"""
import argparse
import json
import statistics
import sys

PARTS = [(1, "lead"), (2, "waits"), (4, "ops"), (8, "signals"), (16, "trail"), (32, "counts")]
COLLECTIVE = 64  # launch_trace.h: kTraceCollective; the high byte is the collective's kind
KINDS = ["allreduce", "reduce", "bcast", "allgather", "alltoall", "local reduce", "local copy"]
PHASES = [("wait", "enter", "waited"), ("data", "waited", "ops_done"), ("signal", "ops_done", "signalled"),
          ("trail", "signalled", "trail_done"), ("finish", "trail_done", "exit"), ("launch", "enter", "exit")]


def parts_name(bits):
    if bits & COLLECTIVE:
        kind = bits >> 8
        return "collective " + (KINDS[kind] if kind < len(KINDS) else str(kind))
    return "+".join(name for bit, name in PARTS if bits & bit) or "none"


def read_trace(path):
    header, records = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# "):
                key, _, value = line[2:].partition(" ")
                header[key] = value
            elif line and not line.startswith("t_ns"):
                t, window, event, info = line.split(",")
                records.append((int(t), int(window), event, int(info)))
    return header, records


def launches_of(records):
    """Launches in claim order: dicts of event -> time, with `window` and `parts`."""
    out, i = [], 0
    while i < len(records):
        t, window, event, info = records[i]
        if event != "enter":
            raise ValueError("record %d: a launch starts with %s" % (i, event))
        launch = {"window": window, "parts": info, "enter": t}
        i += 1
        while i < len(records) and records[i][2] != "enter":
            launch[records[i][2]] = records[i][0]
            i += 1
        out.append(launch)
    return out


def summarize(files, skip):
    groups, between, ranks = {}, [], []
    for path in files:
        header, records = read_trace(path)
        if int(header.get("dropped", "0")):
            print("%s: %s records dropped (MPIX_ST_TRACE_RECORDS)" % (path, header["dropped"]), file=sys.stderr)
        launches = launches_of(records)[skip:]
        ranks.append(header.get("rank", path))
        for launch in launches:
            g = groups.setdefault(parts_name(launch["parts"]), {p[0]: [] for p in PHASES})
            for name, a, b in PHASES:
                if name == "finish" and "trail_done" not in launch:
                    a = "ops_done"  # a collective: its schedule ends at ops_done
                if a in launch and b in launch:
                    g[name].append((launch[b] - launch[a]) / 1000.0)
        order = sorted(launches, key=lambda l: l["enter"])
        for prev, nxt in zip(order, order[1:]):
            if "exit" in prev:
                between.append((nxt["enter"] - prev["exit"]) / 1000.0)
    return groups, between, ranks


def stats(values):
    if not values:
        return None
    return {"n": len(values), "median_us": statistics.median(values), "mean_us": statistics.fmean(values)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args()
    groups, between, ranks = summarize(args.files, args.skip)
    result = {"ranks": ranks, "skip": args.skip, "groups": {}, "between": stats(between)}
    print("# %d trace files, first %d launches of each skipped; median / mean us" % (len(args.files), args.skip))
    print("%-36s %7s " % ("launch holds", "count") + " ".join("%15s" % p[0] for p in PHASES))
    for name, phases in sorted(groups.items(), key=lambda kv: -len(kv[1]["launch"])):
        s = {p: stats(v) for p, v in phases.items()}
        result["groups"][name] = s
        count = max((x["n"] for x in s.values() if x), default=0)
        cells = " ".join("%15s" % ("%.2f / %.2f" % (x["median_us"], x["mean_us"]) if x else "-")
                         for x in (s[p[0]] for p in PHASES))
        print("%-36s %7d %s" % (name, count, cells))
    b = result["between"]
    if b:
        print("between launches (other work, graph gaps): %.2f / %.2f us over %d gaps" % (b["median_us"], b["mean_us"], b["n"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
