#!/usr/bin/env python3
"""apply.py MUTANT SRCDIR: apply one tests/mutations/*.mut to the tree at SRCDIR (in place).

A mutant is text, not a patch, so that it survives edits elsewhere in the file:
    # one line: the bug it models
    file: pam_capdelegate/core/cd_caps.c
    at: optional anchor (a snippet found once; the change applies to the first match after it)
    - the original snippet (leading/trailing blanks ignored; must occur exactly once, or after 'at')
    + its replacement (may be empty: the snippet is deleted)
Exit 0 when applied, 2 with a message when the mutant no longer matches the code.

apply.py --all SRCDIR OUTDIR MUTANT...: each mutant's result without touching SRCDIR, one
Python start for all of them (a start costs about half a second of CPU on the 2-core machine,
where a mutant's whole build and check cost about five): OUTDIR/NAME.file holds the file it
changes and OUTDIR/NAME.text that file mutated, or OUTDIR/NAME.err why it no longer applies.
"""
import os
import sys


def parse(path):
    m = {"at": None}
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ValueError("first line must be '# what bug this models'")
    m["what"] = lines[0][2:]
    for ln in lines[1:]:
        if ln.startswith("file:"):
            m["file"] = ln[5:].strip()
        elif ln.startswith("at:"):
            m["at"] = ln[3:].strip()
        elif ln.startswith("-"):
            m["old"] = ln[1:].strip()
        elif ln.startswith("+"):
            m["new"] = ln[1:].strip()
        elif ln.strip() and not ln.startswith("#"):
            raise ValueError("unexpected line: " + ln)
    for k in ("file", "old", "new"):
        if k not in m:
            raise ValueError("missing '%s'" % k)
    if m["old"] == m["new"]:
        raise ValueError("replacement equals the original")
    return m


def mutated(m, text):
    """The text with mutant m applied; ValueError when it no longer matches."""
    start = 0
    if m["at"] is not None:
        if text.count(m["at"]) != 1:
            raise ValueError("anchor found %d times: %s" % (text.count(m["at"]), m["at"]))
        start = text.index(m["at"])
    elif text.count(m["old"]) != 1:
        raise ValueError("snippet found %d times: %s" % (text.count(m["old"]), m["old"]))
    i = text.find(m["old"], start)
    if i < 0:
        raise ValueError("snippet not found: " + m["old"])
    return text[:i] + m["new"] + text[i + len(m["old"]):]


def apply(m, src):
    path = src + "/" + m["file"]
    with open(path, encoding="utf-8") as f:
        text = mutated(m, f.read())
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def apply_all(src, out, paths):
    """Each mutant's changed file into OUT (see the module's doc); 2 when one cannot be read."""
    rc = 0
    for path in paths:
        name = os.path.basename(path)[:-len(".mut")] if path.endswith(".mut") else os.path.basename(path)
        try:
            m = parse(path)
        except (ValueError, OSError) as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            rc = 2
            continue
        with open(os.path.join(out, name + ".file"), "w", encoding="utf-8") as f:
            f.write(m["file"] + "\n")
        try:
            with open(src + "/" + m["file"], encoding="utf-8") as f:
                text = mutated(m, f.read())
        except (ValueError, OSError) as e:
            with open(os.path.join(out, name + ".err"), "w", encoding="utf-8") as f:
                f.write("%s: %s\n" % (path, e))
            continue
        with open(os.path.join(out, name + ".text"), "w", encoding="utf-8") as f:
            f.write(text)
    return rc


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(sys.argv) >= 4 and sys.argv[1] == "--all":
        return apply_all(sys.argv[2], sys.argv[3], sys.argv[4:])
    if len(sys.argv) != 3:
        print("usage: apply.py MUTANT SRCDIR | apply.py --all SRCDIR OUTDIR MUTANT...", file=sys.stderr)
        return 2
    try:
        apply(parse(sys.argv[1]), sys.argv[2])
    except (ValueError, OSError) as e:
        print("%s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
