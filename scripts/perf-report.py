#!/usr/bin/env python3
"""perf-report.py: doc/performance.md from the run folders under bench/results/.

usage:
  scripts/perf-report.py                  write doc/performance.md from bench/results/*/run.json,
                                          and README.md's headline table (between its markers)
  scripts/perf-report.py --check          exit 1 with a diff when doc/performance.md or README.md's
                                          table is not what this script writes
  scripts/perf-report.py --runs DIR... [--output -]
                                          the same page for the named run folders only (to standard
                                          output with --output -), e.g. to read a fresh run
  scripts/perf-report.py --manifest DIR --title TEXT [...]
                                          write DIR/run.json for the JSON results in DIR (used by
                                          scripts/bench-*.sh and scripts/ab-bench.sh; --help lists
                                          the options)

A run folder holds the JSON results of one job on one machine, the command that made them
(command.sh) and run.json, the manifest this script reads:
  {"title": "...", "machine": "...", "gpus": "4 x NVIDIA H200", "mpi": "...", "software": "...",
   "settings": {"VAR": "value", ...}, "date": "YYYY-MM-DD", "commit": "abcdef0",
   "command": "command.sh", "note": "...",
   "ab": {"base": "<sha>", "head": "<sha>", "rounds": N, ...},     (A/B runs of ab-bench.sh only)
   "files": [{"file": "x.json", "benchmark": "faces", "what": "...", "round": 1, "side": "head",
              "env": {"VAR": "value"}, "throttle": "static"}, ...]}
"software", "settings", "note", "ab" and a file's "round", "side", "env" and "throttle" are
optional. "benchmark" is faces, rma_bench, p2p_bench, coll_bench, dtype_bench, or throttle (a Faces
JSON of scripts/bench-throttle.sh, whose "throttle" names the mode: static, adaptive or app). Where
"gpus" counts fewer GPUs than a Faces or p2p_bench file has ranks, the page says the ranks share them.

Python 3 standard library only. The output depends on the run folders alone (sorted, fixed float
formats, no time of generation), so two runs anywhere write the same bytes.
"""
import argparse
import datetime
import difflib
import json
import math
import os
import re
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "bench", "results")
OUTPUT = os.path.join(REPO, "doc", "performance.md")
README = os.path.join(REPO, "README.md")  # its headline table, between two markers
BENCHMARKS = ("faces", "rma_bench", "p2p_bench", "coll_bench", "dtype_bench", "throttle")
LINK_BASE = [os.path.dirname(OUTPUT)]  # links are relative to the page's folder
REQUIRED = ("title", "machine", "gpus", "mpi", "date", "commit", "command", "files")


class ManifestError(Exception):
    pass


# ---- reading -------------------------------------------------------------------------------------

class Run:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.name = os.path.basename(self.path.rstrip(os.sep))
        manifest = os.path.join(self.path, "run.json")
        try:
            with open(manifest, encoding="utf-8") as f:
                self.meta = json.load(f)
        except (OSError, ValueError) as e:
            raise ManifestError("{}: {}".format(manifest, e))
        missing = [k for k in REQUIRED if k not in self.meta]
        if missing:
            raise ManifestError("{}: missing {}".format(manifest, ", ".join(missing)))
        self.entries = []
        for entry in self.meta["files"]:
            if "file" not in entry or entry.get("benchmark") not in BENCHMARKS:
                raise ManifestError("{}: a file entry needs 'file' and a 'benchmark' of {}: {}".format(
                    manifest, ", ".join(BENCHMARKS), entry))
            if entry["benchmark"] == "throttle" and entry.get("throttle") not in ("static", "adaptive", "app"):
                raise ManifestError("{}: {}: a throttle entry names its mode (static, adaptive, app)".format(
                    manifest, entry["file"]))
            try:
                with open(os.path.join(self.path, entry["file"]), encoding="utf-8") as f:
                    data = json.load(f)
            except (OSError, ValueError) as e:
                raise ManifestError("{}: {}: {}".format(manifest, entry["file"], e))
            self.entries.append((entry, data))
        self.ab = self.meta.get("ab")

    def of(self, benchmark):
        return [(e, d) for e, d in self.entries if e["benchmark"] == benchmark]

    def link(self, rel, text=None):
        target = os.path.relpath(os.path.join(self.path, rel), LINK_BASE[0]).replace(os.sep, "/")
        return "[{}]({})".format(text or rel, target)


def load_runs(paths):
    runs = [Run(p) for p in paths]
    # newest first, then the most GPUs, then by folder name
    runs.sort(key=lambda r: (-date_key(r.meta["date"]), -gpu_count(r.meta["gpus"]), r.name))
    return runs


def gpu_count(text):
    counts = [int(n) for n in re.findall(r"([0-9]+) x ", str(text))]
    return max(counts) if counts else 0


def date_key(text):
    digits = re.sub(r"[^0-9]", "", str(text))[:8]
    return int(digits) if digits else 0


# ---- formatting ------------------------------------------------------------------------------------

def num(x, digits=2):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "-"
    return "{:,.{}f}".format(x, digits)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def rat(x):
    return num(x, 3)


def size_text(n):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return "{} {}".format(n // scale, unit)
    return "{} B".format(n)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        out.append("| " + " | ".join(row) + " |")
    return out


def chart(title, labels, y_label, bar=None, line=None, least_top=0.0):
    """A Mermaid xychart-beta block: one bar series and/or one line series over the labels; the y axis
    from 0 to at least least_top (1 for ratios: parity stays in view)."""
    values = [v for series in (bar, line) if series for v in series if v is not None]
    if not values or len(labels) < 1:
        return []
    top = max(max(values) * 1.1, least_top)
    step = 10 ** (math.floor(math.log10(top)) - 1) if top > 0 else 1
    top = math.ceil(top / step) * step
    digits = max(0, -int(math.floor(math.log10(step))))
    out = ["```mermaid", "xychart-beta", '    title "{}"'.format(title.replace('"', "'")),
           "    x-axis [{}]".format(", ".join('"{}"'.format(l.replace('"', "'")) for l in labels)),
           '    y-axis "{}" 0 --> {}'.format(y_label, "{:.{}f}".format(top, digits))]
    for kind, series in (("bar", bar), ("line", line)):
        if series:
            out.append("    {} [{}]".format(kind, ", ".join("{:.3f}".format(v if v is not None else 0.0)
                                                           for v in series)))
    out.append("```")
    return out


def run_header(run, entries):
    m = run.meta
    lines = ["### `{}`: {}, commit `{}`".format(run.name, m["gpus"] if m["gpus"] != "none" else "no GPU",
                                                 m["commit"]), ""]
    lines.append("- Run: {}.".format(m["title"]))
    lines.append("- Machine: {}; GPUs: {}; MPI: {}{}.".format(
        m["machine"], m["gpus"], m["mpi"], "; " + m["software"] if m.get("software") else ""))
    if m.get("settings"):
        lines.append("- Environment of every command: {}.".format(
            ", ".join("`{}={}`".format(k, v) for k, v in sorted(m["settings"].items()))))
    if run.ab:
        lines.append("- Code: base `{}` against head `{}`, {} rounds.".format(
            run.ab["base"][:7], run.ab["head"][:7], run.ab.get("rounds", "?")))
    lines.append("- Measured: {}.".format(m["date"]))
    lines.append("- Command: {}; manifest: {}.".format(run.link(m["command"]), run.link("run.json")))
    files = []
    for e, _ in entries:
        if e["file"] not in files:
            files.append(e["file"])
    lines.append("- JSON: {}.".format(", ".join(run.link(f) for f in files)))
    if m.get("note"):
        lines.append("- Note: {}".format(m["note"]))
    lines.append("")
    return lines


def placement(run, ranks):
    """How the ranks sit on the run's GPUs: one per GPU, unless the manifest counts fewer GPUs."""
    gpus = gpu_count(run.meta["gpus"])
    if gpus and max(ranks) > gpus:
        return "sharing {} GPU{}".format(gpus, "" if gpus == 1 else "s")
    return "one per GPU"


def env_text(entry):
    env = entry.get("env") or {}
    return ", ".join("`{}={}`".format(k, v) for k, v in sorted(env.items()))


# ---- Faces -----------------------------------------------------------------------------------------

def faces_input(c):
    return "{} {} {} {} {} {} {}".format(*c["elements"], c["n"], c["niface"], c["niel"], c["nshare"])


def faces_case(c):
    grid = "x".join(str(g) for g in c["grid"])
    parts = [grid]
    if c.get("periodic"):
        parts.append("wrap-around")
    if c.get("datatypes"):
        parts.append("--datatypes")
    if c.get("launch_overlap") == "on":
        parts.append("--launch-overlap")
    short = grid + "".join(s for f, s in ((c.get("periodic"), " wrap"), (c.get("datatypes"), " dt"),
                                         (c.get("launch_overlap") == "on", " lo")) if f)
    return ", ".join(parts), short


def faces_groups(entries):
    """Faces files merged by case and round (st and nccl may come from separate files of one round)."""
    groups = []
    index = {}
    for e, d in entries:
        c = d["config"]
        key = (tuple(c["grid"]), faces_input(c), bool(c.get("periodic")), bool(c.get("datatypes")),
               c.get("launch_overlap"), bool(c.get("graph")), e.get("round", 1), e.get("side", ""),
               env_text(e))
        if key not in index:
            index[key] = len(groups)
            groups.append({"config": c, "entry": e, "modes": {}})
        for m in d["modes"]:
            if "skipped" not in m:
                groups[index[key]]["modes"][m["mode"]] = m["per_exchange_us"]["avg"]
        groups[index[key]]["single"] = groups[index[key]].get("single", True) and c.get("mode") != "all"
        groups[index[key]]["key"] = key
    # NCCL and p2p always pack: a round's NCCL or p2p file of its own stands beside the --datatypes
    # st row of that round too
    for g in groups:
        for other in groups:
            k, o = g["key"], other["key"]
            if other is not g and other["single"] and k[:3] + k[4:] == o[:3] + o[4:] and k[3] and not o[3]:
                for mode in ("nccl", "p2p"):
                    if mode not in g["modes"] and mode in other["modes"]:
                        g["modes"][mode] = other["modes"][mode]
    groups.sort(key=lambda g: (g["key"][0], g["key"][1], g["key"][2], g["key"][3], str(g["key"][4]),
                               g["key"][5], g["key"][6], g["key"][7], g["key"][8]))
    return groups


def faces_section(runs):
    out = []
    for run in runs:
        entries = run.of("faces")
        if not entries or run.ab:
            continue
        groups = faces_groups(entries)
        out += run_header(run, entries)
        inputs = sorted({faces_input(g["config"]) for g in groups})
        graphs = sorted({bool(g["config"].get("graph")) for g in groups})
        rounds = any("round" in g["entry"] for g in groups)
        envs = any(env_text(g["entry"]) for g in groups)
        ranks = sorted({g["config"]["ranks"] for g in groups})
        two_sided = [m for m in TWO_SIDED if any(m in g["modes"] for g in groups)]
        text = "Microseconds per exchange (average over ranks), {} rank{} ({}). ".format(
            " and ".join(str(r) for r in ranks), "" if ranks == [1] else "s", placement(run, ranks))
        if len(inputs) == 1:
            text += "Input `mx my mz n niface niel nshare` = `{}`{}. ".format(
                inputs[0], " (communication only)" if inputs[0].endswith("-100") else "")
        if len(graphs) == 1:
            text += ("st and NCCL captured once and replayed (`--graph`); rma and p2p eager."
                     if graphs[0] else "Every mode eager.")
        if two_sided:
            text = text.rstrip() + " {}: the two-sided mode's time over st's (above 1: st took less time).".format(
                " and ".join("{}/st".format(m) for m in two_sided))
        skipped = faces_skipped(entries)
        if skipped:
            text = text.rstrip() + " Skipped: {}.".format("; ".join(
                "{} ({})".format(m, "; ".join(why)) for m, why in skipped))
        out += [text, ""]
        header = ["case"] + (["input"] if len(inputs) > 1 else []) + (["st, NCCL"] if len(graphs) > 1 else [])
        header += (["round"] if rounds else []) + (["settings"] if envs else [])
        others = [m for m in ("nccl", "rma", "p2p") if any(m in g["modes"] for g in groups)]
        names = {"nccl": "NCCL", "rma": "rma", "p2p": "p2p"}
        header += ["st/" + names[m] for m in others] + ["{}/st".format(m) for m in two_sided]
        header += ["st us"] + [names[m] + " us" for m in others] + ["{} us".format(m) for m in two_sided]
        rows, labels, bars, lines_ = [], [], [], []
        for g in groups:
            c, e, modes = g["config"], g["entry"], g["modes"]
            case, short = faces_case(c)
            st = modes.get("st")
            row = [case] + (["`{}`".format(faces_input(c))] if len(inputs) > 1 else [])
            row += (["replayed" if c.get("graph") else "eager"] if len(graphs) > 1 else [])
            row += ([str(e.get("round", 1))] if rounds else []) + ([env_text(e)] if envs else [])
            row += [rat(ratio(st, modes.get(m))) for m in others]
            row += [rat(ratio(modes.get(m), st)) for m in two_sided]
            row += [num(modes.get(m)) for m in ["st"] + others + two_sided]
            rows.append(row)
            labels.append(short + (" r{}".format(e["round"]) if "round" in e else ""))
            bars.append(ratio(st, modes.get("nccl")))
            lines_.append(ratio(st, modes.get("rma")))
        out += table(header, rows) + [""]
        bar = bars if all(v is not None for v in bars) else None
        line = lines_ if all(v is not None for v in lines_) else None
        if bar or line:
            used = [t for k, t in (("dt", "dt: --datatypes"), ("wrap", "wrap: wrap-around"),
                                   ("lo", "lo: --launch-overlap"), ("r1", "rN: round N"))
                    if any(k in label.split() for label in labels)]
            if used:
                out += ["Chart labels: {}.".format(", ".join(used)), ""]
            what = " and ".join(t for t, s in (("st / NCCL (bars)", bar), ("st / rma (line)", line)) if s)
            out += chart("Faces {}: {}, time per exchange".format(run.name, what), labels, "time ratio",
                         bar, line, 1.0) + [""]
        out += faces_two_sided_chart(run, groups, labels, two_sided)
    return out


def faces_skipped(entries):
    """(mode, sorted reasons) of the modes a Faces file reports skipped, by mode name."""
    why = {}
    for _, d in entries:
        for m in d["modes"]:
            if "skipped" in m:
                why.setdefault(m["mode"], set()).add(m["skipped"])
    return [(m, sorted(why[m])) for m in sorted(why)]


TWO_SIDED = ("queue", "enqueue")  # Faces' two-sided stream modes, shown as their time over st's


def faces_intro(runs):
    """The Faces section's first paragraph; it names the two-sided modes where a run has them."""
    two_sided = any(m["mode"] in TWO_SIDED and "skipped" not in m
                    for run in runs if not run.ab for _, d in run.of("faces") for m in d["modes"])
    return ("The Faces halo exchange (examples/faces): the same exchange made with stream-triggered RMA (`st`), "
            "NCCL send/receive (`nccl`), host-driven active RMA (`rma`){} MPI point-to-point staged through host "
            "memory (`p2p`){}, every mode checked against a reference.".format(
                "," if two_sided else " and",
                " and two-sided stream messages (`queue`: HPE's `MPIX_Queue` calls; `enqueue`: MPICH's "
                "`MPIX_Isend_enqueue`, `MPIX_Irecv_enqueue` and `MPIX_Waitall_enqueue` on a stream "
                "communicator)" if two_sided else ""))


def faces_two_sided_chart(run, groups, labels, two_sided):
    """queue / st (bars) and enqueue / st (line), where every case has them."""
    series = {}
    for m in two_sided:
        values = [ratio(g["modes"].get(m), g["modes"].get("st")) for g in groups]
        series[m] = values if all(v is not None for v in values) else None
    bar, line = series.get("queue"), series.get("enqueue")
    if not (bar or line):
        return []
    what = " and ".join(t for t, s in (("queue / st (bars)", bar), ("enqueue / st (line)", line)) if s)
    return chart("Faces {}: {}, time per exchange".format(run.name, what), labels, "time ratio",
                 bar, line, 1.0) + [""]


# ---- rma_bench -------------------------------------------------------------------------------------

def rma_rows(d):
    g = d.get("graph") or {}
    calls = d.get("host_us_per_call") or {}
    per_call = None
    if all(k in calls for k in ("post_stream", "complete_stream", "wait_stream")):
        per_call = (calls["post_stream"] + calls["complete_stream"] + calls["wait_stream"]) / 3
    put = d["config"].get("put_bytes", 8)
    ratios = []
    if g:
        ratios += [("replayed st / replayed floor", ratio(g.get("st_round_trip_us"), g.get("floor_round_trip_us"))),
                   ("replayed st / host-driven RMA", ratio(g.get("st_round_trip_us"), d.get("host_round_trip_us"))),
                   ("replayed st / replayed raw 3-kernel epoch",
                    ratio(g.get("st_round_trip_us"), g.get("raw_epoch_round_trip_us")))]
    ratios += [("eager st / eager floor", ratio(d.get("st_round_trip_us"), d.get("floor_round_trip_us"))),
               ("eager st / host-driven RMA", ratio(d.get("st_round_trip_us"), d.get("host_round_trip_us"))),
               ("eager st / eager raw 3-kernel epoch",
                ratio(d.get("st_round_trip_us"), d.get("raw_epoch_round_trip_us"))),
               ("host time per MPIX call / raw launch", ratio(per_call, d.get("raw_launch_host_us")))]
    for b in d.get("bandwidth", []):
        ratios.append(("{} MiB put / copy engine".format(b["mib"]), ratio(b.get("st_gbps"), b.get("copy_engine_gbps"))))
    times = []
    if g:
        times += [("replayed floor (raw stream-signal round trip)", g.get("floor_round_trip_us")),
                  ("replayed raw 3-kernel epoch", g.get("raw_epoch_round_trip_us")),
                  ("replayed st epoch round trip ({} B put)".format(put), g.get("st_round_trip_us")),
                  ("replayed st epoch round trip without data", g.get("st_no_data_round_trip_us"))]
    times += [("eager floor", d.get("floor_round_trip_us")),
              ("eager raw 3-kernel epoch", d.get("raw_epoch_round_trip_us")),
              ("eager st epoch round trip ({} B put)".format(put), d.get("st_round_trip_us")),
              ("host-driven active RMA round trip", d.get("host_round_trip_us")),
              ("host time of one raw launch", d.get("raw_launch_host_us")),
              ("host time per MPIX_*_stream call (post, complete, wait)", per_call)]
    bw = []
    for b in d.get("bandwidth", []):
        bw += [("{} MiB put, st".format(b["mib"]), b.get("st_gbps")),
               ("{} MiB put, copy engine".format(b["mib"]), b.get("copy_engine_gbps"))]
    return ratios, times, bw


def rma_section(runs):
    out = []
    for run in runs:
        entries = run.of("rma_bench")
        if not entries or run.ab:
            continue
        out += run_header(run, entries)
        out += ["Two ranks (one per GPU on GPU machines). Round trips of an 8-byte put epoch (post, start, put, "
                "complete, wait on both ranks); replayed: captured once into a graph and replayed; floor: a raw "
                "cross-process stream-signal ping-pong without MPI or the library.", ""]
        cols = [e["file"] for e, _ in entries]
        per_file = [rma_rows(d) for _, d in entries]
        for idx, (title, unit, digits) in enumerate((("ratio", "", 3), ("time", "us", 2), ("bandwidth", "GB/s", 2))):
            names = []
            for f in per_file:
                names += [n for n, _ in f[idx] if n not in names]
            if not names:
                continue
            rows = []
            for name in names:
                rows.append([name + (" ({})".format(unit) if unit else "")] +
                            [num(dict(f[idx]).get(name), digits) for f in per_file])
            out += table([title] + ["`{}`".format(c) for c in cols], rows) + [""]
        e0, d0 = entries[0]
        g = d0.get("graph") or {}
        labels, values = [], []
        for label, value in (("replayed floor", g.get("floor_round_trip_us")),
                             ("replayed raw epoch", g.get("raw_epoch_round_trip_us")),
                             ("replayed st", g.get("st_round_trip_us")),
                             ("eager floor", d0.get("floor_round_trip_us")),
                             ("eager raw epoch", d0.get("raw_epoch_round_trip_us")),
                             ("eager st", d0.get("st_round_trip_us")),
                             ("host-driven RMA", d0.get("host_round_trip_us"))):
            if value is not None:
                labels.append(label)
                values.append(value)
        out += chart("rma_bench {}: round trip (us), {}".format(run.name, e0["file"]), labels, "us", bar=values)
        out += [""]
    return out


# ---- p2p_bench -------------------------------------------------------------------------------------

P2P_WAYS = ("enqueue", "queue", "host_mpi", "rma_stream", "nccl")  # the ways of a row, in this order
P2P_RATIOS = (("enqueue", "rma_stream"), ("queue", "rma_stream"))  # the chart's bars, then its line
P2P_NCCL_RATIO = ("rma_stream", "nccl")  # a further column of every table, where NCCL ran
P2P_QUEUE_NCCL_RATIO = ("queue", "nccl")  # and of the replayed and bandwidth tables
# The row lists a p2p_bench file may hold beside round_trip_us: key, unit, the lead of its table.
P2P_MORE = (
    ("replayed_round_trip_us", "us",
     "Replayed (`--graph`): the round trips of one timing captured once into a graph, each replay timed; "
     "microseconds per round trip."),
    ("bandwidth_GBs", "GB/s",
     "Streaming bandwidth (`--bandwidth`), GB/s by message size: per round rank 0 sends a window of "
     "messages and rank 1 answers with an 8-byte acknowledgement, window x bytes over the slower rank's "
     "time per round; rma_stream puts a window in one epoch. `over the mailbox`: a two-sided message "
     "larger than a mailbox, which the library refuses."),
    ("replayed_bandwidth_GBs", "GB/s",
     "Streaming bandwidth replayed (`--graph`): the rounds of one timing captured once into a graph, each "
     "replay timed; GB/s."))


def p2p_value(r, way):
    """A row's number for a way; None where it has none (absent, or the reason there is none)."""
    v = r.get(way)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def p2p_cell(r, way):
    v = r.get(way)
    return v if isinstance(v, str) else num(v)


def p2p_config_text(d):
    c = d.get("config", {})
    host = {"staged": "staged through pinned host memory (the MPI is not taken as GPU-aware)",
            "device": "from the device buffers"}.get(c.get("host_mpi"), c.get("host_mpi", "?"))
    per = "{} round trips per timing".format(c.get("iters", "?"))
    if c.get("mode") == "bandwidth":
        per = ("{} messages and an acknowledgement per round, {} rounds per timing (fewer above 1 MiB per "
               "round)".format(c.get("window", "?"), c.get("iters", "?")))
    text = "{}, median of {} timings, host_mpi {}, data check {}".format(
        per, c.get("reps", "?"), host, d.get("data_check", "?"))
    nccl = d.get("nccl", {})
    if nccl.get("status") == "measured":
        text += ", {}".format(nccl.get("version", "NCCL"))
    elif nccl.get("status") == "skipped":
        text += ", NCCL skipped ({})".format(nccl.get("reason", "?"))
    return text


def p2p_table(entries, key, unit, ratios):
    """The rows of `key` of every file by size (and round), the ratio columns where both ways have numbers,
    then a column per way that has a number somewhere."""
    rounds = any("round" in e for e, _ in entries)
    settings = any(e.get("env") for e, _ in entries)  # files run with different settings: a column
    ways = [w for w in P2P_WAYS if any(p2p_value(r, w) is not None for _, d in entries for r in d.get(key, []))]
    pairs = [(a, b) for a, b in ratios if a in ways and b in ways]
    found = []
    for e, d in entries:
        for r in d.get(key, []):
            found.append((r["bytes"], env_text(e), e.get("round", 1), e["file"], r))
    found.sort(key=lambda x: x[:4])
    rows = []
    for size, env, rnd, name, r in found:
        rows.append([size_text(size)] + ([env or "defaults"] if settings else []) + ([str(rnd)] if rounds else []) +
                    [rat(ratio(p2p_value(r, a), p2p_value(r, b))) for a, b in pairs] + [p2p_cell(r, w) for w in ways])
    return table(["bytes"] + (["settings"] if settings else []) + (["round"] if rounds else []) +
                 ["{}/{}".format(a, b) for a, b in pairs] + ["{} {}".format(w, unit) for w in ways], rows) + [""]


def p2p_absent(entries, key):
    """The ways whose cells of `key` all say why there is no number (e.g. not capturable)."""
    cells = [(w, r[w]) for _, d in entries for r in d.get(key, []) for w in P2P_WAYS if w in r]
    return [w for w in P2P_WAYS if any(c == w for c, _ in cells) and
            all(isinstance(v, str) for c, v in cells if c == w)]


def p2p_section(runs):
    out = []
    for run in runs:
        entries = sorted(run.of("p2p_bench"), key=lambda ed: (ed[0].get("round", 1), ed[0]["file"]))
        if not entries or run.ab:
            continue
        out += run_header(run, entries)
        ranks = sorted({d.get("config", {}).get("ranks", 2) for _, d in entries})
        latency = [(e, d) for e, d in entries if d.get("round_trip_us")]
        if latency:
            out += p2p_latency(run, latency, ranks, p2p_configs(latency))
        else:
            out += ["{} ranks ({}).".format(" and ".join(str(r) for r in ranks), placement(run, ranks)), ""]
        described = [e["file"] for e, _ in latency]  # files whose configuration the page has given
        for key, unit, lead in P2P_MORE:
            block = [(e, d) for e, d in entries if d.get(key)]
            if not block:
                continue
            absent = p2p_absent(block, key)
            fresh = [(e, d) for e, d in block if e["file"] not in described]
            described += [e["file"] for e, _ in fresh]
            out += [lead + ("".join(" {}.".format(c) for c in p2p_configs(fresh))) +
                    (" No column: {} ({}).".format(", ".join(absent), p2p_reasons(block, key, absent))
                     if absent else ""), ""]
            out += p2p_table(block, key, unit, (P2P_QUEUE_NCCL_RATIO, P2P_NCCL_RATIO))
        host = [(e, d) for e, d in entries if d.get("host_time_us")]
        if host:
            out += p2p_host_time(host)
    return out


P2P_RAW = "stream operation"  # the host-time rows' reference: one raw stream operation


def p2p_host_time(entries):
    """Host time per call (`--host-time`): a row per way and side, over the same rank's raw stream operation."""
    out = ["Host time per call (`--host-time`): rank 0 makes each way's sending calls while rank 1 makes the "
           "receiving ones, 8-byte messages, the fastest of blocks of 100 calls; x: over one raw stream "
           "operation on the same rank (a one-block kernel launch; the host backend's stream task); stream ops: "
           "the library's stream operations per call.", ""]
    rounds = any("round" in e for e, _ in entries)
    rows = []
    for e, d in sorted(entries, key=lambda ed: (ed[0].get("round", 1), ed[0]["file"])):
        raw = {r["side"]: r["us"] for r in d["host_time_us"] if r["way"] == P2P_RAW}
        for r in d["host_time_us"]:
            rows.append(([str(e.get("round", 1))] if rounds else []) +
                        [r["way"], r["side"], num(r["us"]), rat(ratio(r["us"], raw.get(r["side"]))),
                         num(r["stream_ops"]), "`{}`".format(r["calls"])])
    return out + table((["round"] if rounds else []) + ["way", "side", "us per call", "x", "stream ops", "calls"],
                       rows) + [""]


def p2p_configs(entries):
    """The files' configuration texts, each once, in order."""
    configs = []
    for _, d in entries:
        if p2p_config_text(d) not in configs:
            configs.append(p2p_config_text(d))
    return configs


def p2p_reasons(entries, key, ways):
    """The reasons the files give for the ways' missing numbers, as one text."""
    reasons = sorted({r[w] for _, d in entries for r in d.get(key, []) for w in ways if isinstance(r.get(w), str)})
    return ", ".join(reasons)


def p2p_latency(run, entries, ranks, configs):
    """The eager round trips: the table, then the chart of the first file's ratios."""
    nccl = any(p2p_value(r, "nccl") is not None for _, d in entries for r in d["round_trip_us"])
    out = ["{} ranks ({}). Microseconds per round trip of a stream-ordered ping-pong, by message size: "
           "the round trips enqueued back to back and one stream synchronisation, the slower rank's "
           "time; {}. A ratio is the two-sided way's time over rma_stream's (above 1: rma_stream took "
           "less time){}.".format(" and ".join(str(r) for r in ranks), placement(run, ranks), "; ".join(configs),
                                  ", and rma_stream's over NCCL's" if nccl else ""), ""]
    out += p2p_table(entries, "round_trip_us", "us", P2P_RATIOS + (P2P_NCCL_RATIO,))
    ways = [w for w in P2P_WAYS if any(w in r for _, d in entries for r in d["round_trip_us"])]
    pairs = [(a, b) for a, b in P2P_RATIOS if a in ways and b in ways]
    e0, d0 = entries[0]
    bar, line = (p2p_series(d0, pair) if pair in pairs else None for pair in P2P_RATIOS)
    if bar or line:
        what = " and ".join("{} / {} ({})".format(a, b, kind) for (a, b), kind, v in
                            zip(P2P_RATIOS, ("bars", "line"), (bar, line)) if v)
        out += chart("p2p_bench {}: {}, round trip, {}".format(run.name, what, e0["file"]),
                     [size_text(r["bytes"]) for r in d0["round_trip_us"]], "time ratio", bar, line, 1.0)
        out += [""]
    return out


def p2p_series(d, pair):
    """One file's time ratio of a pair of ways by size, where every size has both."""
    values = [ratio(p2p_value(r, pair[0]), p2p_value(r, pair[1])) for r in d["round_trip_us"]]
    return values if values and all(v is not None for v in values) else None


# ---- coll_bench ------------------------------------------------------------------------------------

COLL_ORDER = ["allreduce", "reduce", "bcast", "allgather", "alltoall"]
SMALL_LIMIT = 1 << 20  # below: time; from here: bus bandwidth


def coll_table(data_list):
    """(coll, bytes) -> impl -> result row; mpix-st rows are the automatic choice (alltoall: its one
    algorithm) where several algorithms were measured."""
    rows = {}
    for d in data_list:
        for r in d["results"]:
            impl = r["impl"]
            if impl.startswith("mpixst"):
                if r["algo"] not in ("auto", "direct"):
                    continue
                slot = rows.setdefault((r["coll"], r["bytes"]), {})
                if impl in slot and r["algo"] != "auto":
                    continue
                slot[impl] = r
            else:
                rows.setdefault((r["coll"], r["bytes"]), {})[impl] = r
    return rows


def coll_key(k):
    coll, size = k
    return (COLL_ORDER.index(coll) if coll in COLL_ORDER else len(COLL_ORDER), coll, size)


def vendor_text(v):
    m = re.fullmatch(r"nccl ([0-9]+)", v)
    if m and len(m.group(1)) == 5:  # NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch
        code = int(m.group(1))
        return "NCCL {}.{}.{}".format(code // 10000, code // 100 % 100, code % 100)
    return v


def t(slot, impl):
    r = slot.get(impl)
    return r["time_us"] if r else None


def bw(slot, impl):
    r = slot.get(impl)
    return r["busbw_GBs"] if r else None


def coll_section(runs):
    out = []
    for run in runs:
        entries = run.of("coll_bench")
        if not entries or run.ab:
            continue
        groups = {}
        for e, d in entries:
            groups.setdefault((d["ranks"], e.get("round", 1), e.get("side", "")), []).append((e, d))
        out += run_header(run, entries)
        for (ranks, rnd, side), members in sorted(groups.items()):
            data = [d for _, d in members]
            rows = coll_table(data)
            d0 = data[0]
            head = "{} ranks, {} ({}), vendor {}, MPI buffers {}".format(
                ranks, d0.get("device", "?"), d0.get("backend", "?"), vendor_text(d0.get("vendor", "?")),
                d0.get("mpi_buffers", "?"))
            if len(groups) > 1:
                head += ", round {}".format(rnd)
            out += ["**{}** (`{}`). Time of one call, median of {} timings; mpix-st's automatic choice; "
                    "eager against NCCL eager, replayed (one captured graph of calls) against NCCL "
                    "replayed. Below 1 MiB the time, from 1 MiB bus bandwidth (nccl-tests' factors). "
                    "Ratios below 1 for time and above 1 for bandwidth favour mpix-st.".format(
                        head, "`, `".join(e["file"] for e, _ in members), d0.get("reps", "?")), ""]
            colls = sorted({k[0] for k in rows}, key=lambda c: coll_key((c, 0)))
            summary = []
            for coll in colls:
                small = [(k, rows[k]) for k in sorted(rows, key=coll_key) if k[0] == coll and k[1] < SMALL_LIMIT]
                large = [(k, rows[k]) for k in sorted(rows, key=coll_key) if k[0] == coll and k[1] >= SMALL_LIMIT]
                eager = [ratio(t(s, "mpixst"), t(s, "vendor")) for _, s in small]
                graph = [ratio(t(s, "mpixst-graph"), t(s, "vendor-graph")) for _, s in small]
                eager = [x for x in eager if x is not None]
                graph = [x for x in graph if x is not None]
                big = large[-1] if large else None
                summary.append([coll,
                                rat(statistics.median(eager)) if eager else "-",
                                rat(statistics.median(graph)) if graph else "-",
                                rat(max(graph)) if graph else "-",
                                size_text(big[0][1]) if big else "-",
                                rat(ratio(bw(big[1], "mpixst"), bw(big[1], "vendor"))) if big else "-",
                                rat(ratio(bw(big[1], "mpixst-graph"), bw(big[1], "vendor-graph"))) if big else "-",
                                num(bw(big[1], "mpixst-graph")) if big else "-",
                                num(bw(big[1], "vendor-graph")) if big else "-"])
            out += table(["collective", "time / NCCL < 1 MiB, eager (median)", "replayed (median)",
                          "replayed (highest)", "largest size", "busbw / NCCL, eager", "replayed",
                          "mpix-st replayed GB/s", "NCCL replayed GB/s"], summary) + [""]
            small_rows, large_rows = [], []
            has_mpi = any("mpi" in s for s in rows.values())
            for k in sorted(rows, key=coll_key):
                s = rows[k]
                if k[1] < SMALL_LIMIT:
                    small_rows.append([k[0], size_text(k[1]), rat(ratio(t(s, "mpixst"), t(s, "vendor"))),
                                       rat(ratio(t(s, "mpixst-graph"), t(s, "vendor-graph"))),
                                       num(t(s, "mpixst")), num(t(s, "vendor")), num(t(s, "mpixst-graph")),
                                       num(t(s, "vendor-graph"))] + ([num(t(s, "mpi"))] if has_mpi else []))
                else:
                    large_rows.append([k[0], size_text(k[1]), rat(ratio(bw(s, "mpixst"), bw(s, "vendor"))),
                                       rat(ratio(bw(s, "mpixst-graph"), bw(s, "vendor-graph"))),
                                       num(bw(s, "mpixst")), num(bw(s, "vendor")), num(bw(s, "mpixst-graph")),
                                       num(bw(s, "vendor-graph"))])
            if small_rows:
                out += table(["collective", "bytes", "time / NCCL, eager", "replayed", "mpix-st us",
                              "NCCL us", "mpix-st replayed us", "NCCL replayed us"] +
                             (["MPI us (host-staged)"] if has_mpi else []), small_rows) + [""]
            if large_rows:
                out += table(["collective", "bytes", "busbw / NCCL, eager", "replayed", "mpix-st GB/s",
                              "NCCL GB/s", "mpix-st replayed GB/s", "NCCL replayed GB/s"], large_rows) + [""]
            for coll in colls:
                keys = [k for k in sorted(rows, key=coll_key) if k[0] == coll]
                labels = [size_text(k[1]) for k in keys]
                graph = [ratio(t(rows[k], "mpixst-graph"), t(rows[k], "vendor-graph")) for k in keys]
                eager = [ratio(t(rows[k], "mpixst"), t(rows[k], "vendor")) for k in keys]
                bar = graph if all(v is not None for v in graph) else None
                line = eager if all(v is not None for v in eager) else None
                what = " and ".join(x for x, s in (("replayed (bars)", bar), ("eager (line)", line)) if s)
                if what:
                    out += chart("{}, {} ranks: mpix-st time / NCCL time, {}".format(coll, ranks, what),
                                 labels, "time ratio", bar, line, 1.0) + [""]
    return out


# ---- dtype_bench -----------------------------------------------------------------------------------

def dtype_section(runs):
    out = []
    for run in runs:
        entries = run.of("dtype_bench")
        if not entries or run.ab:
            continue
        out += run_header(run, entries)
        out += ["Two ranks. Each puts the `block`-byte blocks of a source strided at twice the block size "
                "into the other's window, one epoch per put: with a derived datatype (vector), against a "
                "contiguous put of the same bytes and against a pack kernel followed by a contiguous put. "
                "Recording: the host time `MPI_Put` adds with a cached derived type.", ""]
        rows, labels, bars = [], [], []
        for e, d in entries:
            rows.append(["`{}`".format(e["file"]), size_text(d["block"]), size_text(d["bytes"]),
                         rat(d.get("vector_over_contiguous_bw")),
                         rat(ratio(d.get("vector_us"), d.get("pack_put_us"))),
                         num(d["record_derived_us"] - d["record_predefined_us"], 3),
                         num(d.get("contiguous_us")), num(d.get("vector_us")), num(d.get("pack_put_us")),
                         "yes" if d.get("correct") else "NO"])
            labels.append("{} blocks{}".format(size_text(d["block"]),
                                               " r{}".format(e["round"]) if "round" in e else ""))
            bars.append(d.get("vector_over_contiguous_bw"))
        out += table(["file", "block", "bytes per put", "vector bandwidth / contiguous", "vector time / pack + put",
                      "recording + us", "contiguous us", "vector us", "pack + put us", "checked"], rows) + [""]
        if all(v is not None for v in bars):
            out += chart("dtype_bench {}: vector-type put bandwidth / contiguous put".format(run.name), labels,
                         "bandwidth ratio", bar=bars, least_top=1.0) + [""]
    return out


# ---- throttling ------------------------------------------------------------------------------------

def throttle_section(runs):
    out = []
    for run in runs:
        entries = run.of("throttle")
        if not entries or run.ab:
            continue
        out += run_header(run, entries)
        out += ["Faces `--mode st`, microseconds per exchange, under each throttling mode "
                "(`MPIX_ST_THROTTLE`; app: `--throttle-sync 1`).", ""]
        cases, order = {}, []
        for e, d in entries:
            c = d["config"]
            key = (c["ranks"], tuple(c["grid"]), faces_input(c), bool(c.get("periodic")), e.get("round", 1))
            if key not in cases:
                cases[key] = {}
                order.append(key)
            cases[key][e["throttle"]] = d["modes"][0]["per_exchange_us"]["avg"]
        rows, labels, bars, lines_ = [], [], [], []
        for key in order:
            ranks, grid, inp, periodic, rnd = key
            m = cases[key]
            rows.append(["{} ranks, {}{}".format(ranks, "x".join(map(str, grid)), ", wrap-around" if periodic else ""),
                         "`{}`".format(inp), rat(ratio(m.get("adaptive"), m.get("static"))),
                         rat(ratio(m.get("adaptive"), m.get("app"))),
                         num(m.get("static"), 1), num(m.get("adaptive"), 1), num(m.get("app"), 1)])
            labels.append("{} ranks, {}".format(ranks, "x".join(inp.split()[:3])))
            bars.append(ratio(m.get("adaptive"), m.get("static")))
            lines_.append(ratio(m.get("adaptive"), m.get("app")))
        out += table(["case", "input", "adaptive / static", "adaptive / app", "static us", "adaptive us", "app us"],
                     rows) + [""]
        bar = bars if all(v is not None for v in bars) else None
        line = lines_ if all(v is not None for v in lines_) else None
        if bar or line:
            out += chart("Throttling {}: adaptive / static (bars), adaptive / app (line)".format(run.name),
                         labels, "time ratio", bar, line, 1.0) + [""]
    return out


# ---- A/B runs --------------------------------------------------------------------------------------

def ab_metrics(benchmark, d):
    """(name, value) pairs of one JSON file, compared between base and head."""
    if benchmark in ("faces", "throttle"):
        case, _ = faces_case(d["config"])
        return [("{}: {} us per exchange".format(case, m["mode"]), m["per_exchange_us"]["avg"])
                for m in d["modes"] if "skipped" not in m]
    if benchmark == "rma_bench":
        ratios, times, _ = rma_rows(d)
        return times + ratios
    if benchmark == "p2p_bench":
        return [("{}: {} {}".format(size_text(r["bytes"]), w, what), p2p_value(r, w))
                for key, what in (("round_trip_us", "round trip us"),
                                  ("replayed_round_trip_us", "replayed round trip us"),
                                  ("bandwidth_GBs", "GB/s"), ("replayed_bandwidth_GBs", "replayed GB/s"))
                for r in d.get(key, []) for w in P2P_WAYS if p2p_value(r, w) is not None]
    if benchmark == "dtype_bench":
        block = size_text(d["block"])
        return [("{} blocks: vector-type put us".format(block), d.get("vector_us")),
                ("{} blocks: contiguous put us".format(block), d.get("contiguous_us")),
                ("{} blocks: vector bandwidth / contiguous".format(block), d.get("vector_over_contiguous_bw"))]
    return []


def ab_rows(benchmark, base, head):
    """(measure, base value, head value, head / base) for one file of one round."""
    if benchmark != "coll_bench":
        b = dict(ab_metrics(benchmark, base))
        return [(name, b.get(name), value, ratio(value, b.get(name))) for name, value in ab_metrics(benchmark, head)]
    # collectives: per size, mpix-st's time / NCCL's in each build, and head's own time / base's; medians
    rb, rh = coll_table([base]), coll_table([head])
    rows = []
    for coll in sorted({k[0] for k in rh}, key=lambda c: coll_key((c, 0))) + [None]:
        for impl, vendor, label in (("mpixst", "vendor", "eager"), ("mpixst-graph", "vendor-graph", "replayed")):
            keys = [k for k in sorted(rh) if coll in (None, k[0]) and k in rb]
            vb = [ratio(t(rb[k], impl), t(rb[k], vendor)) for k in keys]
            vh = [ratio(t(rh[k], impl), t(rh[k], vendor)) for k in keys]
            own = [ratio(t(rh[k], impl), t(rb[k], impl)) for k in keys]
            vb, vh, own = ([x for x in v if x is not None] for v in (vb, vh, own))
            if own:
                rows.append(("{} {}: mpix-st / NCCL time, median over sizes".format(coll or "every collective", label),
                             statistics.median(vb) if vb else None, statistics.median(vh) if vh else None,
                             statistics.median(own)))
    return rows


ALTERNATED = "odd rounds base then head, even rounds head then base"


def ab_section(runs):
    out = []
    for run in runs:
        if not run.ab:
            continue
        out += run_header(run, run.entries)
        order = run.ab.get("order") or ALTERNATED
        out += ["Rounds on the same machine, %s. head / base is the head's figure over the base's (for "
                "collectives: the median over sizes of the head's own time over the base's); below 1 the "
                "head took less time." % order, ""]
        by = {}
        for e, d in run.entries:
            rel = e["file"].split("/", 1)[-1]
            by.setdefault((e["benchmark"], rel, e.get("round", 1)), {})[e.get("side", "")] = d
        rows = []
        for (benchmark, rel, rnd) in sorted(by):
            sides = by[(benchmark, rel, rnd)]
            if "base" not in sides or "head" not in sides:
                continue
            for name, b, h, r in ab_rows(benchmark, sides["base"], sides["head"]):
                rows.append(["`{}`".format(rel), name, str(rnd), num(b, 3), num(h, 3), rat(r)])
        out += table(["file", "measure", "round", "base", "head", "head / base"], rows) + [""]
    return out


# ---- the page --------------------------------------------------------------------------------------

def render(runs, results_rel="bench/results"):
    out = ["# Performance", "",
           "This page is generated by `scripts/perf-report.py` from the run folders under `{}/`: each "
           "holds a job's JSON results, the command that made them (`command.sh`) and a manifest "
           "(`run.json`: machine, GPUs, MPI, date, commit, what each file is). Regenerate it with "
           "`python3 scripts/perf-report.py`; `--check` says whether it is current. Do not edit it by "
           "hand.".format(results_rel), "",
           "Every ratio compares figures measured in one run on one machine (one process, or one job "
           "alternating builds). Times from different runs or machines are not compared. A time ratio "
           "below 1 means mpix-st (`st`) took less time than the other side; a bandwidth ratio above 1 "
           "means it moved data faster.", ""]
    out += ["## Runs", ""]
    rows = []
    for run in runs:
        kinds = []
        for e, _ in run.entries:
            if e["benchmark"] not in kinds:
                kinds.append(e["benchmark"])
        rows.append([run.link("run.json", run.name), run.meta["title"], ", ".join(kinds), run.meta["gpus"],
                     run.meta["date"], "`{}`".format(run.meta["commit"])])
    out += table(["run", "what", "benchmarks", "GPUs", "date", "commit"], rows) + [""]
    for title, intro, section in (
            ("Faces", faces_intro(runs), faces_section),
            ("rma_bench", "The stream-triggered epoch against its floors and host-driven RMA "
             "(examples/bench/rma_bench.cpp).", rma_section),
            ("p2p_bench", "Two-sided stream messages against the stream RMA epoch and host MPI, one message "
             "each way per round trip (examples/bench/p2p_bench.cpp): `enqueue`: MPICH's "
             "`MPIX_Isend_enqueue`, `MPIX_Irecv_enqueue` and `MPIX_Waitall_enqueue`; `queue`: HPE's "
             "`MPIX_Queue` calls; `host_mpi`: `MPI_Isend` and `MPI_Irecv` after a stream synchronisation; "
             "`rma_stream`: one stream-triggered put epoch per message.", p2p_section),
            ("coll_bench", "The stream collectives against NCCL and the MPI's own collectives on the same "
             "buffers (examples/bench/coll_bench.cpp).", coll_section),
            ("dtype_bench", "Puts with derived datatypes (examples/bench/dtype_bench.cpp).", dtype_section),
            ("Throttling", "Faces st across virtual nodes of one rank (`MPIX_ST_VNODE_SIZE=1`: every peer "
             "remote, libfabric `sockets` provider) with a budget of triggered operations "
             "(scripts/bench-throttle.sh).", throttle_section),
            ("A/B runs", "Two commits built side by side and alternated by scripts/ab-bench.sh.", ab_section)):
        body = section(runs)
        if body:
            out += ["## " + title, "", intro, ""] + body
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


# ---- README.md's headline table --------------------------------------------------------------------

README_BEGIN = "<!-- perf-report:headline:begin -->"
README_END = "<!-- perf-report:headline:end -->"


def newest(runs, benchmark, keep=None):
    """The newest run of a benchmark (ties: more GPUs), A/B runs and runs that keep refuses left out."""
    have = [r for r in runs if r.of(benchmark) and not r.ab and (keep is None or keep(r))]
    return max(have, key=lambda r: (date_key(r.meta["date"]), gpu_count(r.meta["gpus"]), r.name), default=None)


def span(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    lo, hi = min(values), max(values)
    return rat(lo) if rat(lo) == rat(hi) else "{}-{}".format(rat(lo), rat(hi))


def widest_faces(runs):
    """The replayed Faces run of the most GPUs (ties: the newest): the headline's exchange figure stands
    for the largest machine measured, not for whichever smaller run came last."""
    have = [r for r in runs if r.of("faces") and not r.ab
            and any(g["config"].get("graph") for g in faces_groups(r.of("faces")))]
    return max(have, key=lambda r: (gpu_count(r.meta["gpus"]), date_key(r.meta["date"]), r.name), default=None)


def headline_rows(runs):
    rows = []
    run = widest_faces(runs)
    if run:
        groups = [g for g in faces_groups(run.of("faces")) if g["config"].get("graph")]
        widest = max((g["config"]["ranks"] for g in groups), default=0)
        packed = [g for g in groups if g["config"]["ranks"] == widest and not g["config"].get("periodic")
                  and not g["config"].get("datatypes") and g["config"].get("launch_overlap") != "on"]
        if packed:
            c = packed[0]["config"]
            grid = "x".join(str(x) for x in c["grid"])
            # The input decides the ratio (small faces cost latency, large ones bandwidth): named.
            given = " ".join(str(v) for v in list(c.get("elements", [])) +
                             [c.get(k) for k in ("n", "niface", "niel", "nshare") if c.get(k) is not None])
            where = "Faces {}{}".format(grid, " (input `{}`)".format(given) if given else "")
            for other, name in (("nccl", "NCCL"), ("rma", "host-driven RMA (`rma`)")):
                value = span(ratio(g["modes"].get("st"), g["modes"].get(other)) for g in packed)
                if value:
                    rows.append(["{}, replayed: time per exchange, st / {}".format(where, name), value, run])
    run = newest(runs, "rma_bench")
    if run:
        ratios = [dict(rma_rows(d)[0]) for _, d in run.of("rma_bench")]
        for key, text in (("replayed st / replayed floor", "the raw stream-signal floor"),
                          ("replayed st / host-driven RMA", "host-driven RMA")):
            value = span(r.get(key) for r in ratios)
            if value:
                rows.append(["rma_bench, replayed 8-byte epoch round trip, st / " + text, value, run])
    run = newest(runs, "coll_bench")
    if run:
        slots = coll_table([d for _, d in run.of("coll_bench")])
        small = [ratio(t(s, "mpixst-graph"), t(s, "vendor-graph")) for (_, size), s in slots.items()
                 if size < SMALL_LIMIT]
        small += [ratio(t(s, "mpixst"), t(s, "vendor")) for (_, size), s in slots.items() if size < SMALL_LIMIT]
        sizes = [k for k in slots if k[1] >= SMALL_LIMIT]
        largest = max((k[1] for k in sizes), default=None)
        big = [ratio(bw(slots[k], "mpixst"), bw(slots[k], "vendor")) for k in sizes if k[1] == largest]
        if span(small):
            rows.append(["Collectives below {}, eager and replayed: time, mpix-st / NCCL".format(
                size_text(SMALL_LIMIT)), span(small), run])
        if span(big):
            rows.append(["Collectives at {}: bus bandwidth, mpix-st / NCCL".format(size_text(largest)), span(big),
                         run])
    return rows


def readme_block(runs):
    lines = [README_BEGIN, "| figure | ratio | run |", "|---|---|---|"]
    for what, value, run in headline_rows(runs):
        lines.append("| {} | {} | [{}](doc/performance.md), {}, {} |".format(
            what, value, run.name, run.meta["gpus"], run.meta["date"]))
    return "\n".join(lines + [README_END])


def with_readme_block(text, runs):
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        return None
    return text[:begin] + readme_block(runs) + text[end + len(README_END):]


def run_dirs(results):
    dirs = []
    for name in sorted(os.listdir(results)):
        if os.path.isfile(os.path.join(results, name, "run.json")):
            dirs.append(os.path.join(results, name))
    return dirs


# ---- manifests -------------------------------------------------------------------------------------

def sh(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def detect_gpus():
    names = [re.sub(r"^GPU \d+: (.*?)( \(UUID.*)?$", r"\1", l) for l in sh(["nvidia-smi", "-L"]).splitlines()
             if l.startswith("GPU ")]
    if not names:
        return "none"
    kinds = sorted(set(names))
    return ", ".join("{} x {}".format(names.count(k), k) for k in kinds)


def detect_machine(gpus):
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    text = "{}{} cores".format(model + ", " if model else "", os.cpu_count())
    return text + ("" if gpus == "none" else ", " + gpus)


def detect_mpi():
    text = sh(["mpiexec", "--version"])
    m = re.search(r"Open MPI\)? ?v?([0-9.]+)|OpenRTE\)? ([0-9.]+)", text)
    if m:
        return "Open MPI " + (m.group(1) or m.group(2))
    m = re.search(r"Version:\s+([0-9.]+)", text)
    if "HYDRA" in text and m:
        return "MPICH " + m.group(1)
    return text.splitlines()[0].strip() if text.strip() else "unknown"


def detect_commit():
    sha = sh(["git", "-C", REPO, "rev-parse", "--short=7", "HEAD"]).strip()
    if not re.fullmatch(r"[0-9a-f]{7,}", sha):
        return "unknown"
    changed = sh(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no", "--", "src", "kernels",
                  "include", "examples", "cmake", "CMakeLists.txt"]).strip()
    return sha + (" with local changes" if changed else "")


def describe(benchmark, d):
    if benchmark == "faces":
        c = d["config"]
        flags = "".join(s for f, s in ((c.get("graph"), " --graph"), (c.get("datatypes"), " --datatypes"),
                                       (c.get("periodic"), " --periodic"),
                                       (c.get("launch_overlap") == "on", " --launch-overlap")) if f)
        return "Faces {}, {} ranks, --mode {}{}, input {}".format(
            "x".join(map(str, c["grid"])), c["ranks"], c.get("mode", "?"), flags, faces_input(c))
    if benchmark == "rma_bench":
        c = d["config"]
        return "rma_bench, 2 ranks{}, {} B put, bandwidth at {} MiB".format(
            ", --graph" if c.get("graph") else "", c.get("put_bytes", 8),
            ", ".join(str(b["mib"]) for b in d.get("bandwidth", [])) or "-")
    if benchmark == "p2p_bench" and d.get("host_time_us"):
        ways = []
        for r in d["host_time_us"]:
            if r["way"] not in ways:
                ways.append(r["way"])
        return "p2p_bench, 2 ranks, --host-time, {} calls, {}".format(
            d.get("config", {}).get("calls", "?"), ", ".join(ways))
    if benchmark == "p2p_bench":
        rows = d.get("round_trip_us") or d.get("bandwidth_GBs", [])
        sizes = [r["bytes"] for r in rows]
        ways = [w for w in P2P_WAYS if any(w in r for r in rows)]
        flags = "".join(s for f, s in ((d.get("bandwidth_GBs"), ", --bandwidth"),
                                       (d.get("config", {}).get("graph"), ", --graph")) if f)
        return "p2p_bench, {} ranks{}, {} to {}, {}".format(
            d.get("config", {}).get("ranks", 2), flags, size_text(min(sizes)), size_text(max(sizes)), ", ".join(ways))
    if benchmark == "coll_bench":
        res = d["results"]
        return "coll_bench, {} ranks, {}, {} to {}, {}".format(
            d["ranks"], ", ".join(sorted({r["coll"] for r in res}, key=lambda c: coll_key((c, 0)))),
            size_text(min(r["bytes"] for r in res)), size_text(max(r["bytes"] for r in res)),
            ", ".join(sorted({r["impl"] for r in res})))
    if benchmark == "dtype_bench":
        return "dtype_bench, 2 ranks, {} in {} blocks".format(size_text(d["bytes"]), size_text(d["block"]))
    return benchmark


def set_key(entry, key, value):
    if key.startswith("env."):
        entry.setdefault("env", {})[key[4:]] = value
    elif key == "round":
        entry[key] = int(value)
    else:
        entry[key] = value


def write_manifest(args):
    folder = os.path.abspath(args.manifest)
    files = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".json") and not (root == folder and name == "run.json"):
                files.append(os.path.relpath(os.path.join(root, name), folder))
    files.sort()
    meta_by_file = {}
    for path, kv in args.file_meta:
        if "=" not in kv:
            sys.exit("perf-report.py: --file-meta {} {}: KEY=VALUE expected".format(path, kv))
        meta_by_file.setdefault(os.path.normpath(path), []).append(kv.split("=", 1))
    entries = []
    for rel in files:
        try:
            with open(os.path.join(folder, rel), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print("perf-report.py: {}: {} (left out)".format(rel, e), file=sys.stderr)
            continue
        benchmark = data.get("benchmark") if isinstance(data, dict) else None
        if benchmark not in BENCHMARKS:
            print("perf-report.py: {}: no known benchmark (left out)".format(rel), file=sys.stderr)
            continue
        entry = {"file": rel, "benchmark": benchmark, "what": describe(benchmark, data)}
        m = re.match(r"(base|head)-([0-9]+)/", rel)
        if m:
            entry["side"], entry["round"] = m.group(1), int(m.group(2))
        for key, value in meta_by_file.get(os.path.normpath(rel), []):
            set_key(entry, key, value)
        entries.append(entry)
    gpus = args.gpus or detect_gpus()
    meta = {"title": args.title, "machine": args.machine or detect_machine(gpus), "gpus": gpus,
            "mpi": args.mpi or detect_mpi(),
            "date": args.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "commit": args.commit or detect_commit(), "command": args.command, "files": entries}
    if args.software:
        meta["software"] = args.software
    if args.note:
        meta["note"] = args.note
    if args.setting:
        meta["settings"] = dict(kv.split("=", 1) for kv in args.setting)
    if args.base or args.head:
        meta["ab"] = {"base": args.base, "head": args.head, "rounds": args.rounds,
                      "order": args.order,
                      "run_command": args.run_command, "cmake_args": args.cmake_args,
                      "exit_status": [{"side": s, "round": int(r), "rc": int(rc)} for s, r, rc in args.round_status]}
    with open(os.path.join(folder, "run.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    print("perf-report.py: wrote {} ({} files)".format(os.path.join(args.manifest, "run.json"), len(entries)))


# ---- main ------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module text (head of this file) for run.json.")
    ap.add_argument("--check", action="store_true", help="exit 1 with a diff when the output is not current")
    ap.add_argument("--results", default=RESULTS, help="the folder of run folders (default bench/results)")
    ap.add_argument("--runs", nargs="+", metavar="DIR", help="only these run folders")
    ap.add_argument("--output", default=None, help="the page to write (default doc/performance.md; - for stdout)")
    g = ap.add_argument_group("--manifest DIR: write DIR/run.json")
    g.add_argument("--manifest", metavar="DIR")
    g.add_argument("--title")
    g.add_argument("--machine", help="default: the CPU model, cores and GPUs seen here")
    g.add_argument("--gpus", help="default: from nvidia-smi -L, or none")
    g.add_argument("--mpi", help="default: from mpiexec --version")
    g.add_argument("--software", help="e.g. CUDA and NCCL versions")
    g.add_argument("--commit", help="default: this checkout's HEAD")
    g.add_argument("--date", help="default: today (UTC)")
    g.add_argument("--command", default="command.sh", help="the command file, relative to DIR")
    g.add_argument("--note")
    g.add_argument("--setting", action="append", default=[], metavar="VAR=VALUE",
                   help="environment of every command (repeatable)")
    g.add_argument("--file-meta", nargs=2, action="append", default=[], metavar=("FILE", "KEY=VALUE"),
                   help="set a key of FILE's entry, e.g. benchmark=throttle, throttle=static, round=2, "
                        "env.VAR=value (repeatable)")
    g.add_argument("--base")
    g.add_argument("--head")
    g.add_argument("--rounds", type=int)
    g.add_argument("--order", default=ALTERNATED, help="the order of base and head within rounds")
    g.add_argument("--run-command")
    g.add_argument("--cmake-args")
    g.add_argument("--round-status", nargs=3, action="append", default=[], metavar=("SIDE", "ROUND", "RC"))
    args = ap.parse_args()

    if args.manifest:
        if not args.title:
            ap.error("--manifest needs --title")
        write_manifest(args)
        return 0
    output = args.output or OUTPUT
    try:
        if args.runs:
            runs = load_runs(args.runs)
            results_rel = "bench/results"
        else:
            runs = load_runs(run_dirs(args.results))
            results_rel = os.path.relpath(os.path.abspath(args.results), REPO)
    except ManifestError as e:
        print("perf-report.py: {}".format(e), file=sys.stderr)
        return 2
    LINK_BASE[0] = os.path.dirname(os.path.abspath(output)) if output != "-" else os.path.dirname(OUTPUT)
    pages = [(output, render(runs, results_rel))]
    if output == OUTPUT and not args.runs:
        # README.md's headline table comes from the same runs.
        with open(README, encoding="utf-8") as f:
            readme = with_readme_block(f.read(), runs)
        if readme is None:
            print("perf-report.py: README.md lacks the {} ... {} markers".format(README_BEGIN, README_END),
                  file=sys.stderr)
            return 2
        pages.append((README, readme))
    if output == "-":
        sys.stdout.write(pages[0][1])
        return 0
    stale = 0
    for path, text in pages:
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = ""
        if current == text:
            if args.check:
                print("perf-report.py: {} is current".format(os.path.relpath(path)))
            continue
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                       os.path.relpath(path), "generated"))
            print("perf-report.py: {} is not current: run python3 scripts/perf-report.py".format(
                os.path.relpath(path)), file=sys.stderr)
            stale = 1
            continue
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("perf-report.py: wrote {}".format(os.path.relpath(path)))
    return stale


if __name__ == "__main__":
    sys.exit(main())
