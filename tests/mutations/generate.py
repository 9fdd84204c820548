#!/usr/bin/env python3
"""generate.py: mutants made by a program, not by the tests' authors.

usage: generate.py list [--root DIR]                   every mutant, one per line
       generate.py sample --seed S --sample N [--root DIR] [--coverage MAP] [--id ID]...
                                                        N of them, chosen by seed S, as TSV
                                                        (or the mutants named by --id)
       generate.py apply ID SRCDIR                      apply mutant ID to the tree at SRCDIR
       generate.py --help

Reads the C sources of pam_capdelegate/core/, module/ and cli/ (comments, strings, character
constants and preprocessor lines are left alone) and derives, inside function bodies:
  ror      a relational operator moved across its boundary or inverted (< <=, > >=, == !=)
  lcr      && and || swapped
  neg      an if/while condition negated (not when it is one == or != comparison: ror has it)
  const    an integer constant off by one (+1, and -1 when it is above 0; not in case labels)
  ignore   a call's result ignored: CALL becomes ((void)CALL, 0), the call still made, its value
           0 (in if/while conditions, and as the whole right-hand side of = or an initializer)
  del      a statement removed: an expression statement, or a return/break/continue/goto in an
           if or else branch (an early exit). Calls that only release memory (free, *_free, free_*) are
           not removed: the plain tests cannot see a leak (the sanitizer builds can); nor is
           (void)x;, which only silences a warning.
A mutant's ID is FILE:LINE:COL:KIND:REPLACEMENT. Sampling ranks each mutant by a hash of the
seed and of what the mutant is (file, the text of its line, where in the line, kind,
replacement), not of its line number, so that an edit elsewhere in a file leaves the sample
mostly unchanged. Mutants listed in tests/mutations/equivalent.txt (the same key, with a reason)
are never sampled.

The sample is TSV: ID, the covering checks (comma-separated, "-" for none; with --coverage MAP,
else "?"), FUNCTION, then a human-readable description.
"""
import hashlib
import json
import os
import re
import sys

DIRS = ("pam_capdelegate/core", "pam_capdelegate/module", "pam_capdelegate/cli")
HERE = os.path.dirname(os.path.abspath(__file__))
EQUIV = os.path.join(HERE, "equivalent.txt")

KEYWORDS = {
    "if", "else", "while", "for", "do", "switch", "case", "default", "return", "break",
    "continue", "goto", "sizeof", "typedef", "struct", "union", "enum", "static", "const",
    "extern", "inline", "volatile", "register", "unsigned", "signed", "int", "char", "long",
    "short", "void", "double", "float", "_Bool", "bool", "__attribute__", "alignof",
    "_Alignof", "offsetof", "__typeof__", "typeof", "_Static_assert", "va_arg",
}
TYPE_WORDS = {
    "const", "static", "struct", "enum", "union", "unsigned", "signed", "int", "char", "long",
    "short", "void", "double", "float", "volatile", "_Bool", "bool", "register", "extern",
    "typedef", "inline",
}
ROR = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
LCR = {"&&": "||", "||": "&&"}
ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
RELEASE = re.compile(r"^(free|\w+_free|free_\w+)$")

TOKEN = re.compile(r"""
    (?P<num>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)(?![.\w])
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op><<=|>>=|->|\+\+|--|&&|\|\||<=|>=|==|!=|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|\.\.\.|[^\s\w])
  | (?P<other>\S)
""", re.X)


def mask(text):
    """The text with comments, strings, character constants and preprocessor lines blanked
    (newlines kept), so that offsets and line numbers stay those of the file."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def tokenize(masked):
    return [(m.lastgroup, m.group(), m.start(), m.end()) for m in TOKEN.finditer(masked)]


class Scanner:
    """A small statement parser over the tokens of one file: enough to find function bodies,
    conditions, statements and early exits. It never needs to be right about types: a mutant
    that does not compile is reported as stillborn."""

    def __init__(self, path, text):
        self.path, self.text = path, text
        self.toks = tokenize(mask(text))
        self.muts = []
        self.func = "?"
        self.case_label = set()     # token indexes inside case labels: no constant mutants

    def match(self, i):
        """Index of the token closing the bracket at i."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        o, c, d = self.toks[i][1], pairs[self.toks[i][1]], 0
        while i < len(self.toks):
            t = self.toks[i][1]
            if t == o:
                d += 1
            elif t == c:
                d -= 1
                if d == 0:
                    return i
            i += 1
        raise ValueError("%s: unbalanced %s" % (self.path, o))

    def add(self, kind, start, end, new, what):
        label = {"neg": "!(...)", "del": ";"}.get(kind, new)
        if kind == "ignore":
            label = "(void)" + self.text[start:self.text.index("(", start)]
        self.muts.append({"file": self.path, "start": start, "end": end, "kind": kind,
                          "old": self.text[start:end], "new": new, "func": self.func,
                          "what": what, "label": label})

    def run(self):
        toks, i = self.toks, 0
        while i < len(toks):
            t = toks[i][1]
            if t in "([{":
                j = self.match(i)
                # a function definition: NAME ( ... ) [__attribute__((...))] {
                if t == "(" and i > 0 and toks[i - 1][0] == "id":
                    k = j + 1
                    while k < len(toks) and toks[k][1] == "__attribute__":
                        k = self.match(k + 1) + 1
                    if k < len(toks) and toks[k][1] == "{":
                        self.func = toks[i - 1][1]
                        end = self.block(k, False)
                        self.tokens_in(k, end)
                        i = end + 1
                        continue
                i = j + 1
                continue
            i += 1
        return self.muts

    # ---- statements -----------------------------------------------------------------------
    def block(self, i, cond):
        """Statements of the block opening at i; returns the index of its '}'."""
        i += 1
        while self.toks[i][1] != "}":
            i = self.stmt(i, cond)
        return i

    def cond(self, i, negate):
        """The parenthesised condition at i (an if/while): neg and ignore mutants."""
        j = self.match(i)
        s, e = self.toks[i + 1][2], self.toks[j - 1][3]
        inner = self.toks[i + 1:j]
        depth, top = 0, []
        for _, t, _, _ in inner:
            depth += t in "([{"
            depth -= t in ")]}"
            if depth == 0 and t in ("==", "!=", "&&", "||", "<", "<=", ">", ">=", "?"):
                top.append(t)
        if negate and not (len(top) == 1 and top[0] in ("==", "!=")):
            self.add("neg", s, e, "!(%s)" % self.text[s:e], "condition negated")
        self.calls(i + 1, j)
        return j

    def calls(self, a, b):
        """Each call NAME(...) between token a and b: its result ignored."""
        for k in range(a, b - 1):
            kind, t, s, _ = self.toks[k]
            if kind == "id" and t not in KEYWORDS and self.toks[k + 1][1] == "(" \
                    and not t.isupper() and (k == 0 or self.toks[k - 1][1] not in (".", "->")):
                e = self.toks[self.match(k + 1)][3]
                self.add("ignore", s, e, "((void)%s, 0)" % self.text[s:e],
                         "the result of %s() ignored (0)" % t)

    def stmt(self, i, in_branch):
        toks = self.toks
        t = toks[i][1]
        if t == "{":
            return self.block(i, in_branch) + 1
        if t == ";":
            return i + 1
        if t == "if":
            j = self.cond(i + 1, True)
            i = self.stmt(j + 1, True)
            if i < len(toks) and toks[i][1] == "else":
                i = self.stmt(i + 1, True)
            return i
        if t == "while":
            j = self.cond(i + 1, True)
            return self.stmt(j + 1, False)
        if t in ("for", "switch"):
            return self.stmt(self.match(i + 1) + 1, False)
        if t == "do":
            i = self.stmt(i + 1, False)          # at 'while'
            j = self.cond(i + 1, True)
            return j + 2
        if t in ("case", "default"):
            k = i
            while toks[k][1] != ":":
                self.case_label.add(k)
                k += 1
            return k + 1
        if toks[i][0] == "id" and toks[i + 1][1] == ":" and t not in KEYWORDS:
            return i + 2                          # a label
        end = self.stmt_end(i)
        s, e = toks[i][2], toks[end][3]
        if t in ("return", "break", "continue", "goto"):
            if in_branch:
                self.add("del", s, e, ";", "early %s removed" % t)
            return end + 1
        decl = t in TYPE_WORDS or (toks[i][0] == "id" and toks[i + 1][0] == "id") \
            or (toks[i][0] == "id" and toks[i + 1][1] == "*")
        if not decl:
            call = toks[i][0] == "id" and toks[i + 1][1] == "(" and self.match(i + 1) == end - 1
            # (void)x; only silences a warning
            silencer = t == "(" and end - i == 4 and toks[i + 1][1] == "void"
            if not (call and RELEASE.match(t)) and not silencer:
                self.add("del", s, e, ";", "statement removed")
        self.rhs_call(i, end)
        return end + 1

    def stmt_end(self, i):
        while self.toks[i][1] != ";":
            i = self.match(i) + 1 if self.toks[i][1] in "([{" else i + 1
        return i

    def rhs_call(self, i, end):
        """X = CALL(...); or TYPE x = CALL(...);: the call's result ignored."""
        for k in range(i, end):
            if self.toks[k][1] in ("(", "[", "{"):
                return
            if self.toks[k][1] in ASSIGN:
                if self.toks[k + 1][0] == "id" and self.toks[k + 2][1] == "(" \
                        and self.match(k + 2) == end - 1 and self.toks[k + 1][1] not in KEYWORDS:
                    self.calls(k + 1, k + 3)
                return

    # ---- operators and constants ----------------------------------------------------------
    def tokens_in(self, a, b):
        for k in range(a, b):
            kind, t, s, e = self.toks[k]
            if t in ROR:
                self.add("ror", s, e, ROR[t], "%s -> %s" % (t, ROR[t]))
            elif t in LCR:
                self.add("lcr", s, e, LCR[t], "%s -> %s" % (t, LCR[t]))
            elif kind == "num" and k not in self.case_label:
                m = re.match(r"(0[xX])?([0-9a-fA-F]+)([uUlL]*)$", t)
                v = int(m.group(2), 16 if m.group(1) else 10)
                for nv in ([v + 1, v - 1] if v > 0 else [v + 1]):
                    new = ("0x%x" % nv if m.group(1) else str(nv)) + m.group(3)
                    self.add("const", s, e, new, "%s -> %s" % (t, new))


def line_col(text, off):
    line = text.count("\n", 0, off) + 1
    return line, off - (text.rfind("\n", 0, off) + 1) + 1


def finish(m, text):
    """ID, stable key and line of a mutant."""
    line, col = line_col(text, m["start"])
    m["line"], m["col"] = line, col
    m["id"] = "%s:%d:%d:%s:%s" % (m["file"], line, col, m["kind"], m["label"])
    ls = text.rfind("\n", 0, m["start"]) + 1
    le = text.find("\n", m["start"])
    src_line = text[ls:le if le >= 0 else len(text)]
    m["src"] = " ".join(src_line.split())
    # occurrences of the same line text before this one: tells identical lines apart
    nth = sum(1 for l in text[:ls].split("\n") if " ".join(l.split()) == m["src"])
    lead = len(src_line) - len(src_line.lstrip())
    m["key"] = "%s|%s|%d|%d|%s|%s" % (m["file"], m["src"], nth, col - lead, m["kind"], m["label"])
    return m


def all_mutants(root):
    out = []
    for d in DIRS:
        for f in sorted(os.listdir(os.path.join(root, d))):
            if not f.endswith(".c"):
                continue
            path = "%s/%s" % (d, f)
            with open(os.path.join(root, path), encoding="utf-8") as fh:
                text = fh.read()
            seen = set()
            for m in Scanner(path, text).run():
                if (m["start"], m["end"], m["new"]) in seen:
                    continue
                seen.add((m["start"], m["end"], m["new"]))
                out.append(finish(m, text))
    return out


def equivalents():
    """Keys listed in equivalent.txt: 'KEY<TAB>reason' lines (# comments)."""
    keys = {}
    if os.path.exists(EQUIV):
        with open(EQUIV, encoding="utf-8") as f:
            for n, l in enumerate(f, 1):
                l = l.rstrip("\n")
                if not l or l.startswith("#"):
                    continue
                parts = l.split("\t")
                if len(parts) < 3 or not parts[2].strip():
                    sys.exit("%s:%d: expected ID<TAB>KEY<TAB>reason" % (EQUIV, n))
                keys[parts[1]] = parts[2]
    return keys


def rank(seed, m):
    return hashlib.sha256(("%s\0%s" % (seed, m["key"])).encode()).hexdigest()


def covering(cov, m):
    """The checks that execute the mutant's line. gcov lists the lines where code starts
    (executed or not); a mutant on a continuation line takes the nearest listed line above."""
    lines = cov.get(m["file"])
    if lines is None:
        return []
    for ln in range(m["line"], max(0, m["line"] - 6), -1):
        if str(ln) in lines:
            return lines[str(ln)]
    return []


def cmd_sample(args):
    seed, n, root, covfile, ids = "1", 150, ".", None, []
    while args:
        a = args.pop(0)
        if a == "--seed":
            seed = args.pop(0)
        elif a == "--sample":
            n = int(args.pop(0))
        elif a == "--root":
            root = args.pop(0)
        elif a == "--coverage":
            covfile = args.pop(0)
        elif a == "--id":
            ids.append(args.pop(0))
        else:
            sys.exit("sample: unknown argument %s" % a)
    muts = all_mutants(root)
    eq = equivalents()
    skipped = [m for m in muts if m["key"] in eq]
    pool = [m for m in muts if m["key"] not in eq]
    pool.sort(key=lambda m: rank(seed, m))
    if ids:
        pool = [m for m in muts if m["id"] in ids]
        missing = set(ids) - {m["id"] for m in pool}
        if missing:
            sys.exit("generate: no such mutant: %s" % ", ".join(sorted(missing)))
        n = len(pool)
    cov = None
    if covfile:
        with open(covfile, encoding="utf-8") as f:
            cov = json.load(f)
    sys.stderr.write("generate: %d mutants in %d files, %d listed as equivalent and skipped; "
                     "sample of %d, seed %s\n"
                     % (len(muts), len({m["file"] for m in muts}), len(skipped), min(n, len(pool)), seed))
    # an entry whose line was since rewritten names no mutant: its reason may no longer hold
    # for the line's new mutants, which are drawn again; the entry is only clutter
    stale = sorted(set(eq) - {m["key"] for m in muts})
    if stale:
        sys.stderr.write("generate: %d entries of %s match no mutant (their line changed): "
                         "remove them\n" % (len(stale), EQUIV))
    for m in sorted(pool[:n], key=lambda m: (m["file"], m["start"], m["new"])):
        checks = "?" if cov is None else (",".join(covering(cov, m)) or "-")
        print("\t".join([m["id"], checks, m["func"],
                         "%s: %s   [%s]" % (m["what"], m["src"], m["key"])]))


def cmd_apply(mid, src):
    path = mid.split(":")[0]
    for m in all_mutants(src):
        if m["id"] == mid:
            with open(os.path.join(src, path), encoding="utf-8") as f:
                text = f.read()
            text = text[:m["start"]] + m["new"] + text[m["end"]:]
            with open(os.path.join(src, path), "w", encoding="utf-8") as f:
                f.write(text)
            return 0
    sys.stderr.write("no mutant %s in %s\n" % (mid, src))
    return 2


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    if argv[1] == "list":
        root = argv[3] if len(argv) > 3 and argv[2] == "--root" else "."
        eq = equivalents()
        for m in all_mutants(root):
            print("%s\t%s\t%s%s" % (m["id"], m["key"], m["what"],
                                    "\t(equivalent: %s)" % eq[m["key"]] if m["key"] in eq else ""))
        return 0
    if argv[1] == "sample":
        cmd_sample(argv[2:])
        return 0
    if argv[1] == "apply" and len(argv) == 4:
        return cmd_apply(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
