#!/usr/bin/env python3
"""coverage.py BUILDDIR DATADIR OUT: the map of which check executes which source line.

DATADIR holds one directory per check, named after it, where that check's processes wrote their
.gcda files (GCOV_PREFIX, the object's absolute path below it). Each .gcda gets its .gcno from
BUILDDIR, gcov reads the pair (--json-format --stdout). OUT lists every line with code and the
checks that executed it (none: an empty list), as JSON
{"pam_capdelegate/core/cd_policy.c": {"42": ["test_policy", ...], "43": []}}.
"""
import json
import os
import shutil
import subprocess
import sys


def gcda_files(d):
    for top, _, files in os.walk(d):
        for f in files:
            if f.endswith(".gcda"):
                yield os.path.join(top, f)


def covered(check_dir, build):
    """{source path from pam_capdelegate/: {line with code: executed?}} for one check."""
    out = {}
    gcdas = list(gcda_files(check_dir))
    for g in gcdas:
        orig = g[len(check_dir):]                    # the object's absolute path
        gcno = orig[:-len(".gcda")] + ".gcno"
        if not os.path.exists(gcno):
            sys.exit("coverage: no %s for %s" % (gcno, g))
        shutil.copyfile(gcno, g[:-len(".gcda")] + ".gcno")
    if not gcdas:
        return out
    res = subprocess.run(["gcov", "--json-format", "--stdout"] + gcdas, cwd=build,
                         capture_output=True, text=True, check=True)
    for doc in res.stdout.splitlines():
        if not doc.strip():
            continue
        for f in json.loads(doc)["files"]:
            path = f["file"]
            i = path.find("pam_capdelegate/")
            if i < 0:
                continue
            lines = out.setdefault(path[i:], {})
            for ln in f["lines"]:
                # a line with code: executed (True) or not; a line gcov does not list has none
                n = ln["line_number"]
                lines[n] = lines.get(n, False) or ln["count"] > 0
    return out


def main(argv):
    if len(argv) != 4 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    build, data, out = os.path.abspath(argv[1]), os.path.abspath(argv[2]), argv[3]
    cmap = {}
    for check in sorted(os.listdir(data)):
        for path, lines in covered(os.path.join(data, check), build).items():
            for ln, hit in lines.items():
                checks = cmap.setdefault(path, {}).setdefault(str(ln), [])
                if hit:
                    checks.append(check)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(cmap, f, sort_keys=True)
    sys.stderr.write("coverage: %d checks, %d source files, %d of %d lines with code executed\n"
                     % (len(os.listdir(data)), len(cmap),
                        sum(1 for v in cmap.values() for c in v.values() if c),
                        sum(len(v) for v in cmap.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
