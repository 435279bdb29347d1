#!/usr/bin/env python3
"""The house's rules, checked against the tree (doc/architecture.md, "Rooms").

1. Each product folder has a layer; a file may include its own folder's
   headers and those of folders on lower layers only. So no folder circle,
   and no include runs from a lower layer to a higher one.
2. No product file over 800 lines.
3. No product function over 80 lines (lizard's length).
4. The largest top-level folder holds under 30% of the product's lines.
5. Every path of the repository named in a product file, doc/, the README or
   scripts/ exists (file headers and docs stay true after a move).

Rules 2 and 3 have a ratchet: scripts/layout-baseline.txt names the files
and functions over their limit when the rule came in, with their size then.
Such an entry may shrink, never grow; one that is back under its limit must
be removed from the baseline (so the list only gets shorter), and nothing
new may join it.

  scripts/layout-check.py     exit 0: holds; 1: broken (says where); 2: lizard missing

Run it with a Python that has lizard (scripts/setup-python.sh installs it in
.venv): .venv/bin/python3 scripts/layout-check.py
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lower numbers are lower layers. Folders on one layer may not include each
# other: the process hosts (am, executor, submit, history) share nothing but
# what lies below them.
LAYERS = {
    "base": 0,
    "messages": 1,
    "config": 2,
    "core": 3,
    "hadoop": 3,
    "runtime": 4,
    "compat": 4,
    "web": 5,
    "actors": 5,
    "am": 6,
    "executor": 6,
    "submit": 6,
    "history": 6,
    "apps": 7,
}
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
MAX_FOLDER_SHARE = 0.30
SOURCE = (".cpp", ".hpp", ".h", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def product_files():
    for top in sorted(LAYERS):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in sorted(names):
                if name.endswith(SOURCE):
                    yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def read_baseline(path):
    files, functions = {}, {}
    if not os.path.exists(path):
        return files, functions
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            kind, size, name = line.split(None, 2)
            (files if kind == "file" else functions)[name] = int(size)
    return files, functions


def check_includes(files, problems):
    for rel in files:
        top = rel.split("/", 1)[0]
        with open(os.path.join(ROOT, rel), errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            target = m.group(1).split("/", 1)[0]
            if target not in LAYERS or target == top:
                continue
            if LAYERS[target] >= LAYERS[top]:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(
                    f"{rel}:{line}: includes {m.group(1)}: {top}/ (layer {LAYERS[top]}) "
                    f"may include only lower layers, and {target}/ is layer {LAYERS[target]}")


def ratchet(kind, sizes, limit, baseline, problems):
    for name, size in sorted(sizes.items()):
        if size <= limit:
            if name in baseline:
                problems.append(f"{name}: {size} lines, under the {kind} limit of {limit}: "
                                f"remove its line from scripts/layout-baseline.txt")
            continue
        if name not in baseline:
            problems.append(f"{name}: {size} lines, over the {kind} limit of {limit}: split it")
        elif size > baseline[name]:
            problems.append(f"{name}: {size} lines, grew past its baseline of {baseline[name]} "
                            f"(over the {kind} limit of {limit}): split it, do not grow it")
    for name in sorted(set(baseline) - set(sizes)):
        problems.append(f"{name}: in scripts/layout-baseline.txt but gone: remove its line")


def function_lengths(files):
    out = subprocess.run([sys.executable, "-m", "lizard", "-l", "cpp", "--csv"] + [os.path.join(ROOT, f) for f in files],
                         capture_output=True, text=True, check=True).stdout
    sizes = {}
    for row in out.splitlines():
        cols = row.split(",")
        # NLOC,CCN,token,PARAM,length,location,file,function,long_name,start,end
        if len(cols) < 11 or not cols[4].isdigit():
            continue
        rel = os.path.relpath(cols[6].strip('"'), ROOT)
        name = f"{rel}:{cols[7].strip(chr(34))}"
        sizes[name] = max(sizes.get(name, 0), int(cols[4]))
    return sizes


def stale_paths(problems):
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, text=True,
                             check=True).stdout.split()
    tops = sorted({p.split("/", 1)[0] for p in tracked if "/" in p})
    token = re.compile(r"(?<![\w./${-])((?:%s)/[\w./-]*\w)(?![\w*<{])" % "|".join(map(re.escape, tops)))
    readers = [p for p in tracked
               if (p.split("/", 1)[0] in LAYERS or p.startswith(("doc/", "scripts/"))
                   or p == "README.md")
               and p.endswith(SOURCE + (".md", ".sh", ".py", ".txt", ".cmake"))]
    for rel in readers:
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        for m in token.finditer(text):
            named = re.sub(r"\.\*$", "", m.group(1).rstrip("."))
            if any(c in named for c in "*<{") or named.endswith((".pb.h", ".pb.cc")):
                continue
            candidates = [named] + [named + ext for ext in (".hpp", ".cpp", ".py", ".md")]
            if any(os.path.exists(os.path.join(ROOT, c)) for c in candidates):
                continue
            ignored = subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", named]).returncode
            if ignored == 0:
                continue
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{rel}:{line}: names {named}, which does not exist")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default=os.path.join(ROOT, "scripts", "layout-baseline.txt"))
    args = ap.parse_args()
    try:
        import lizard  # noqa: F401  (run as a module below)
    except ImportError:
        print(f"layout-check: {sys.executable} has no lizard: run scripts/setup-python.sh "
              f"and use .venv/bin/python3, or pip install lizard", file=sys.stderr)
        return 2

    files = list(product_files())
    problems = []
    check_includes(files, problems)
    stale_paths(problems)

    base_files, base_functions = read_baseline(args.baseline)
    lines = {}
    for rel in files:
        with open(os.path.join(ROOT, rel), "rb") as f:
            lines[rel] = f.read().count(b"\n")
    ratchet("file", lines, MAX_FILE_LINES, base_files, problems)
    ratchet("function", function_lengths(files), MAX_FUNCTION_LINES, base_functions,
            problems)

    total = sum(lines.values())
    per_top = {}
    for rel, n in lines.items():
        per_top[rel.split("/", 1)[0]] = per_top.get(rel.split("/", 1)[0], 0) + n
    top, most = max(per_top.items(), key=lambda kv: kv[1])
    if most > MAX_FOLDER_SHARE * total:
        problems.append(f"{top}/ holds {most} of {total} product lines "
                        f"({100 * most / total:.0f}%), over {100 * MAX_FOLDER_SHARE:.0f}%")

    share = ", ".join(f"{t} {100 * n / total:.0f}%" for t, n in
                      sorted(per_top.items(), key=lambda kv: -kv[1]))
    print(f"layout-check: {len(files)} product files, {total} lines ({share})")
    print(f"layout-check: {len(base_files)} files and {len(base_functions)} functions "
          f"still over their limits (scripts/layout-baseline.txt)")
    for p in problems:
        print(f"layout-check: {p}")
    print("layout-check: " + ("holds" if not problems else f"{len(problems)} problems"))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
