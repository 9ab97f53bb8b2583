#!/usr/bin/env python3
"""ctest's settings.check: the settings table (src/settings/settings.def) is complete and its
documentation current.
  1. Every MPIX_ST_* name in a string literal of the library's sources (src/, kernels/, include/)
     is an entry of the table, except the few names of ALLOWED (not environment variables).
  2. No code outside src/settings/ calls getenv (or secure_getenv) with an MPIX_ST_* name, or with a
     name it computes (which could be one): the table's reader is the only one.
  3. scripts/settings-doc.py --check: doc/guide/environment.md and the ENVIRONMENT section of
     doc/man/mpixst.7.md are what the table gives.
Usage: tests/settings/check_settings.py [repository root]   (exit 1, one line per problem)
"""
import importlib.util
import os
import re
import subprocess
import sys

SCANNED = ("src", "kernels", "include")
SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh", ".def")
READER = os.path.join("src", "settings") + os.sep
NAME = re.compile(r"MPIX_ST_[A-Z0-9_]+")
# Names in string literals that are not environment variables. Keep this short: a name here is one
# the check cannot see added to the code without an entry.
ALLOWED = {
    "MPIX_ST_FLOAT16": "datatype handle of include/mpix/mpix_st.h, named in error messages",
    "MPIX_ST_BFLOAT16": "datatype handle of include/mpix/mpix_st.h, named in error messages",
    "MPIX_ST_OFI": "the CMake option of the libfabric transport, named where a build lacks it",
}
GETENV = re.compile(r"\b(?:secure_)?getenv\s*\(\s*")


def lex(text):
    """The code with comments removed and each string literal replaced by "\\0<index>\\0", and the
    literals' contents with their line numbers."""
    code, literals = [], []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            code.append(" ")
            i = j
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^(\s]{0,16})\(', text[i:])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            end = n if end < 0 else end
            literals.append((text[i + raw.end():end], line))
            line += text.count("\n", i, end)
            code.append(f'"\0{len(literals) - 1}\0"')
            i = end + len(raw.group(1)) + 2
            continue
        if c in "\"'":
            j, out = i + 1, []
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    out.append(text[j:j + 2])
                    j += 2
                    continue
                out.append(text[j])
                j += 1
            if c == '"':
                literals.append(("".join(out), line))
                code.append(f'"\0{len(literals) - 1}\0"')
            else:
                code.append("' '")
            i = j + 1
            continue
        if c == "\n":
            line += 1
        code.append(c)
        i += 1
    return "".join(code), literals


def source_files(root):
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def table_names(root):
    spec = importlib.util.spec_from_file_location("settings_doc", os.path.join(root, "scripts", "settings-doc.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {e["name"] for e in module.parse_table(root)}


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = []
    try:
        table = table_names(root)
    except Exception as err:  # the table itself is malformed: settings-doc.py says how
        print(f"check_settings: the table cannot be read: {err}")
        return 1
    files = list(source_files(root))
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            code, literals = lex(f.read())
        for content, line in literals:
            for name in NAME.findall(content):
                if name not in table and name not in ALLOWED:
                    problems.append(f"{rel}:{line}: {name} is read or named in the code but has no entry in "
                                    f"src/settings/settings.def")
        if rel.startswith(READER):
            continue
        for m in GETENV.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            arg = re.match(r'"\0(\d+)\0"', code[m.end():])
            if not arg:
                problems.append(f"{rel}:{line}: getenv of a name computed at run time: read settings through "
                                "src/settings (settings::get or settings::read)")
                continue
            name = literals[int(arg.group(1))][0]
            if name.startswith("MPIX_ST_"):
                problems.append(f"{rel}:{line}: getenv(\"{name}\"): read it through src/settings "
                                "(settings::get or settings::read), not getenv")
    doc = subprocess.run([sys.executable, os.path.join(root, "scripts", "settings-doc.py"), "--check", root],
                         capture_output=True, text=True)
    if doc.returncode != 0:
        sys.stdout.write(doc.stdout)
        sys.stdout.write(doc.stderr)
        problems.append("the generated settings docs are stale: run scripts/settings-doc.py")
    for p in problems:
        print(p)
    if problems:
        print(f"check_settings: {len(problems)} problem(s)")
        return 1
    print(f"check_settings: {len(table)} settings, {len(files)} source files, docs current: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
