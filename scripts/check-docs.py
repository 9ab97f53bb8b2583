#!/usr/bin/env python3
"""Checks the project's documentation (run by ctest as docs.check):
  - README.md is at most 300 lines (it is the front door; the handbook is doc/);
  - every link in a Markdown file of the repository stays inside it and resolves: the file or
    folder exists, and a #fragment names a heading of the target page;
  - no text of the project cites material outside the repository or narrates how the work was done.
Usage: scripts/check-docs.py [repository root]   (exit 1 and one line per problem when any fails)
"""
import os
import re
import subprocess
import sys

README_MAX_LINES = 300
# Names and phrases that point outside the repository or tell the story of the work, not the code.
FORBIDDEN = re.compile(r"\.\./shared|seed 00[0-9]|not lent|device time", re.IGNORECASE)
FORBIDDEN_DIRS = ["README.md", "doc", "src", "kernels", "include", "examples", "scripts", "tests"]
SELF = os.path.join("scripts", "check-docs.py")

LINK = re.compile(r"(?<!\\)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)


def tracked_files(root):
    """The repository's files (git's view where there is one; else every file outside build folders)."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
        return sorted(p for p in out.decode().split("\0") if p and os.path.exists(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(top, n), root) for n in names]
        return sorted(files)


def prose_lines(text):
    """The lines of a Markdown text outside fenced code blocks, with inline code blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence is None and marker in ("```", "~~~"):
            fence = marker
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, re.sub(r"`+[^`]*`+", "", line)


def slug(heading):
    """A heading's anchor as Git forges make it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*?|__?|~~", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        names, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in prose_lines(text):
            names.update(m.group(1) for m in ANCHOR.finditer(line))
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            names.add(base if count == 0 else f"{base}-{count}")
        cache[path] = names
    return cache[path]


def check_links(root, md_path, problems):
    with open(os.path.join(root, md_path), encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(md_path)
    for number, line in prose_lines(text):
        targets = [m.group(1) for m in LINK.finditer(line)] + [m.group(1) for m in HTML_LINK.finditer(line)]
        ref = REF_DEF.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            where = f"{md_path}:{number}: link {target}"
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                problems.append(f"{where} leaves the repository")
                continue
            path_part, _, fragment = target.partition("#")
            if path_part.startswith("/"):
                problems.append(f"{where} is absolute: write it relative to {md_path}")
                continue
            resolved = os.path.normpath(os.path.join(here, path_part)) if path_part else md_path
            if resolved == ".." or resolved.startswith(".." + os.sep):
                problems.append(f"{where} leaves the repository")
                continue
            full = os.path.join(root, resolved)
            if not os.path.exists(full):
                problems.append(f"{where}: {resolved} does not exist")
                continue
            if fragment and full.endswith(".md") and fragment not in anchors_of(full):
                problems.append(f"{where}: {resolved} has no heading #{fragment}")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    files = tracked_files(root)

    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        lines = f.read().count("\n")
    if lines > README_MAX_LINES:
        problems.append(f"README.md: {lines} lines, at most {README_MAX_LINES} (move detail into doc/)")

    for path in files:
        if path.endswith(".md"):
            check_links(root, path, problems)

    for path in files:
        top = path.split("/", 1)[0]
        if path == SELF or (top not in FORBIDDEN_DIRS and path not in FORBIDDEN_DIRS):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            m = FORBIDDEN.search(line)
            if m:
                problems.append(f"{path}:{number}: '{m.group(0)}': cite the repository's own documents "
                                "(doc/design.md, doc/references.md) and describe the code, not the work")

    for p in problems:
        print(p)
    if problems:
        print(f"check-docs: {len(problems)} problem(s)")
        return 1
    print(f"check-docs: {len(files)} files, README.md {lines} lines: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
