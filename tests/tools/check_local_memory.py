#!/usr/bin/env python3
"""Fails when a kernel's latency path touches a thread's local memory.

Dependent accesses to local memory cost more than the NVLink hops they sit between (README, How it
works, "Local memory"), so the collective kernels and the epoch kernels keep none. This compiles
a kernel source to PTX and checks every .entry whose name matches one of the patterns:
  - no ld.local or st.local in its body (stack arrays, objects whose address escapes and register
    spills all show as those);
  - every function it calls matches --allow-call (out-of-line steps off the latency path: the
    timeout report, the trace write, printf), since an outlined step would hide its accesses here.

Usage: check_local_memory.py --nvcc NVCC --arch SM --source FILE [--source FILE ...] [-I DIR ...] [--flag F ...]
                             --entry REGEX [--entry REGEX ...] [--allow-call REGEX ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def entries(ptx):
    """(name, body) of every .entry in the PTX text."""
    for m in re.finditer(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)\(", ptx, re.M):
        end = ptx.find("\n}\n", m.end())
        yield m.group(1), ptx[m.end(): end if end >= 0 else len(ptx)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nvcc", required=True)
    p.add_argument("--arch", required=True)
    p.add_argument("--source", action="append", required=True)
    p.add_argument("-I", dest="includes", action="append", default=[])
    p.add_argument("--flag", action="append", default=[])
    p.add_argument("--entry", action="append", required=True)
    p.add_argument("--allow-call", action="append", default=[])
    a = p.parse_args()
    ptx = ""
    with tempfile.TemporaryDirectory() as tmp:
        for source in a.source:
            out = os.path.join(tmp, "kernel.ptx")
            cmd = [a.nvcc, f"-arch=sm_{a.arch}", "-ptx", source, "-o", out] + a.flag + [f"-I{d}" for d in a.includes]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                sys.exit(f"check_local_memory: {' '.join(cmd)} failed:\n{r.stderr}")
            ptx += open(out).read()
    names = ", ".join(os.path.basename(s) for s in a.source)
    checked, failures = 0, []
    for name, body in entries(ptx):
        if not any(re.search(e, name) for e in a.entry):
            continue
        checked += 1
        local = len(re.findall(r"\b(?:ld|st)\.local\b", re.sub(r"//[^\n]*", "", body)))
        if local:
            failures.append(f"{name}: {local} local-memory accesses")
        code = re.sub(r"//[^\n]*", "", body)  # comments name call sequences too
        calls = set(re.findall(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([A-Za-z_$][\w$]*)", code))
        bad = sorted(c for c in calls if not any(re.search(x, c) for x in a.allow_call))
        if bad:
            failures.append(f"{name}: calls out of line {', '.join(bad)}")
    if checked == 0:
        sys.exit(f"check_local_memory: no .entry in {names} matches {a.entry}")
    for f in failures:
        print(f"check_local_memory: {f}")
    print(f"check_local_memory: {checked} kernels of {names} checked, {len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
