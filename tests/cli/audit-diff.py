#!/usr/bin/env python3
"""audit-diff.py: differential test of `capdelegate audit --json` against an independent walk.

From a seed it builds a tree (random depth and width; names with spaces, newlines, tabs,
backslashes and invalid UTF-8; revision 2 and 3 values; symlinks to files and directories, hard
links; unreadable directories; a bind mount, a nosuid tmpfs, sometimes a nosuid bind mount and a
proc mount; sometimes a chain deeper than PATH_MAX) and a list of roots (absolute, relative, ".",
"..", trailing slashes, a symlink to the tree, a single file, overlapping roots, a missing one).
The oracle walks the same roots with os.scandir and os.getxattr, learns mounts from
/proc/self/mountinfo and decodes values itself. The capability files (path, revision, raw value,
fP, fI, fE, rootid, nosuid), every summary count and the paths of the errors must equal what
`capdelegate audit --json` reports with --threads 1 and with more threads. Half the seeds run
without capabilities (uid 0, empty bounding set: unreadable directories are errors then). The
first difference fails the seed and names its path.

usage: audit-diff.py --bin CAPDELEGATE [--work DIR] [--keep]
                     (--seed N... | --random N | --seconds S)
  --seed N     the tree of seed N (repeatable); one PASS/FAIL line per seed
  --random N   N trees from random seeds (for ./lab fuzz): one line per seed; stops at the
               first failure, which --seed reproduces
  --seconds S  random seeds, as many as S seconds allow (at least one); stops like --random
  --work DIR   where the trees go (default: a new directory below /run); every directory up to
               / must be root-owned and not group/other-writable, so the policy there is safe
  --keep       keep the trees (default: unmount and remove them)
Needs root (security.capability values, mounts, setpriv). Exit 0: all passed; 1: a seed failed;
2: bad usage or cannot run.
"""
import argparse
import errno
import json
import os
import random
import re
import stat
import subprocess
import sys
import tempfile
import time

XATTR = "security.capability"
# capdelegate(8): the pseudo and remote filesystems audit does not enter below a root.
SKIPPED_FS = {b"proc", b"sysfs", b"devpts", b"debugfs", b"tracefs", b"securityfs", b"cgroup",
              b"cgroup2", b"bpf", b"pstore", b"autofs", b"configfs", b"efivarfs", b"binfmt_misc",
              b"selinuxfs", b"mqueue", b"hugetlbfs", b"fuse", b"nfs", b"nfs4", b"smb3", b"cifs",
              b"ceph", b"9p", b"afs", b"coda", b"ncp", b"gpfs"}
NOCAPS = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"]
NAMES = [b"plain", b"with space", b"new\nline", b"bad\xffutf8", b"caf\xc3\xa9", b"tab\there",
         b"back\\slash", b"-dash", b"\xe2\x80\xaerlo", b"dot.", b" lead"]


# ---- the tree --------------------------------------------------------------------------------

def le32(*words):
    return b"".join(w.to_bytes(4, "little") for w in words)


def cap_value(rng):
    """A revision 2 value, or a revision 3 one with a rootid the host does not map to 0."""
    bits = [rng.randrange(41) for _ in range(rng.randint(1, 3))]
    fp = sum(1 << b for b in bits if rng.random() < 0.3)
    fi = sum(1 << b for b in bits) & ~fp or (1 << 13)
    magic = rng.random() < 0.4
    if rng.random() < 0.25:
        return le32(0x03000000 | magic, fp & 0xffffffff, fi & 0xffffffff, fp >> 32, fi >> 32,
                    rng.choice([1000, 4242, 65534]))
    return le32(0x02000000 | magic, fp & 0xffffffff, fi & 0xffffffff, fp >> 32, fi >> 32)


class Builder:
    def __init__(self, rng, top):
        self.rng, self.top, self.n = rng, top, 0
        self.clean_dirs = []    # readable, no mount below: usable as overlapping roots
        self.cap_files = []
        self.mounts = []
        self.features = []      # what this seed exercises beyond the basics, for the log

    def name(self):
        self.n += 1
        return self.rng.choice(NAMES) + b"%d" % self.n

    def file(self, d):
        p = os.path.join(d, self.name())
        with open(p, "wb"):
            pass
        if self.rng.random() < 0.3:
            os.setxattr(p, XATTR, cap_value(self.rng))
            self.cap_files.append(p)
        return p

    def tree(self, d, depth, budget):
        """Random subdirectories and files below d; returns the entries made."""
        made = 0
        for _ in range(self.rng.randint(0, 6)):
            self.file(d)
            made += 1
        for _ in range(self.rng.randint(0, 3) if depth > 0 else 0):
            if made >= budget:
                break
            sub = os.path.join(d, self.name())
            os.mkdir(sub)
            made += 1 + self.tree(sub, depth - 1, budget - made)
            self.clean_dirs.append(sub)
        return made

    def links(self):
        rng, top = self.rng, self.top
        some = self.clean_dirs or [top]
        os.symlink(rng.choice(some), os.path.join(rng.choice(some), b"to-dir%d" % self.n))
        if self.cap_files:
            f = rng.choice(self.cap_files)
            os.symlink(f, os.path.join(rng.choice(some), b"to-file%d" % self.n))
            os.link(f, os.path.join(rng.choice(some), b"hard%d" % self.n))
        os.symlink(b"nowhere", os.path.join(top, b"dangling"))
        os.symlink(b".", os.path.join(top, b"loop"))

    def unreadable(self):
        """Directories with files inside that uid 0 without capabilities cannot read (000) or
        cannot search (rw-). Made last: nothing is added below them afterwards."""
        for mode in (0o000, 0o600, 0o300):
            d = os.path.join(self.top, b"mode%o" % mode)
            os.mkdir(d)
            self.tree(d, 1, 6)
            os.chmod(d, mode)

    def mount(self, *argv):
        subprocess.run(["mount"] + list(argv), check=True, stderr=subprocess.DEVNULL)
        self.mounts.append(argv[-1])

    def mounts_(self):
        rng, top = self.rng, self.top
        src = os.path.join(top, b"bind-src")
        os.mkdir(src)
        self.tree(src, 1, 8)
        self.file(src)
        dst = os.path.join(top, b"bind-dst")
        os.mkdir(dst)
        self.mount("--bind", src, dst)
        if rng.random() < 0.5:
            subprocess.run(["mount", "-o", "remount,bind,nosuid", dst], check=True)
            self.features.append("nosuid-bind")
        t = os.path.join(top, b"tmpfs-nosuid")
        os.mkdir(t)
        self.mount("-t", "tmpfs", "-o", "nosuid,size=1m", "cd-audit-diff", t)
        self.tree(t, 1, 8)
        self.file(t)
        if rng.random() < 0.3:
            p = os.path.join(top, b"proc")
            os.mkdir(p)
            self.mount("-t", "proc", "proc", p)
            self.features.append("proc")

    def deep(self):
        """A chain of 200-byte names past PATH_MAX, made relative to each level's descriptor."""
        self.features.append("deep")
        fd = os.open(self.top, os.O_RDONLY | os.O_DIRECTORY)
        for i in range(self.rng.randint(21, 26)):
            name = b"d" * 197 + b"%03d" % i
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
            if i % 7 == 0:
                os.close(os.open(b"plain%d" % i, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        f = os.open(b"deep-cap", os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=fd)
        os.setxattr(f, XATTR, cap_value(self.rng))
        os.close(f)
        os.close(fd)


def build(rng, work):
    top = os.path.join(work, b"tree")
    os.mkdir(top)
    b = Builder(rng, top)
    b.tree(top, rng.randint(1, 5), rng.randint(20, 200))
    b.links()
    if rng.random() < 0.5:
        b.deep()
    b.mounts_()
    b.unreadable()
    os.symlink(b"tree", os.path.join(work, b"link"))
    return b


def pick_roots(rng, b, work):
    """(cwd, roots): the PATH forms capdelegate(8) documents, overlapping ones included."""
    sub = os.path.relpath(rng.choice(b.clean_dirs or [b.top]), work)
    forms = [
        (work, [b.top]), (work, [b"tree"]), (work, [b"tree/"]), (work, [b"./tree//"]),
        (work, [b"link"]), (work, [b"tree", sub]), (work, [os.path.join(work, sub), b"tree/"]),
        (work, [sub + b"/.."]), (b.top, [b"."]), (b.top, [b".."]),
        (b.top, [b".", os.path.relpath(os.path.join(work, sub), b.top)]),
        (work, [b"tree", b"tree/missing"]),
    ]
    if b.cap_files:
        f = os.path.relpath(rng.choice(b.cap_files), work)
        forms += [(work, [f]), (work, [f, b"tree"])]
    return rng.choice(forms)


# ---- the oracle ------------------------------------------------------------------------------

def mountinfo():
    """{mount point: (fstype, nosuid)}, the last mount on a point winning (it is on top)."""
    unescape = lambda b: re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), b)
    mounts = {}
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            parts = line.split()
            sep = parts.index(b"-")
            mounts[unescape(parts[4])] = (parts[sep + 1], b"nosuid" in parts[5].split(b","))
    return mounts


def containing(mounts, canon):
    best = b""
    for mp in mounts:
        if (canon == mp or canon.startswith(mp.rstrip(b"/") + b"/")) and len(mp) > len(best):
            best = mp
    return mounts[best]


def decode(raw):
    """(revision, fP, fI, fE, rootid) of a value getxattr showed (revision 2 or 3)."""
    magic = int.from_bytes(raw[:4], "little")
    w = [int.from_bytes(raw[i:i + 4], "little") for i in range(4, len(raw), 4)]
    rootid = w[4] if len(raw) == 24 else None
    return magic >> 24, w[0] | w[2] << 32, w[1] | w[3] << 32, bool(magic & 1), rootid


class Oracle:
    def __init__(self):
        self.mounts = mountinfo()
        self.files, self.errors = {}, set()
        self.counts = dict(directories=0, regular_files=0, skipped_mounts=0)

    def value(self, path, xpath, follow, nosuid):
        self.counts["regular_files"] += 1
        try:
            raw = os.getxattr(xpath, XATTR, follow_symlinks=follow)
        except OSError as e:
            if e.errno in (errno.ENODATA, errno.EOPNOTSUPP):    # no value
                return
            if e.errno in (errno.EINVAL, errno.EOVERFLOW, errno.ERANGE):    # one it will not show
                self.files[path] = (0, b"", None, None, None, None, nosuid)
                return
            self.errors.add(path)
            return
        if len(raw) in (20, 24):
            self.files[path] = decode(raw)[:1] + (raw,) + decode(raw)[1:] + (nosuid,)
        else:
            self.files[path] = (0, raw, 0, 0, False, None, nosuid)

    def walk(self, fd, path, canon, is_root):
        """Iterative: a stack of (fd, path, canonical path, nosuid)."""
        stack = [(fd, path, canon, is_root, None)]
        while stack:
            fd, path, canon, is_root, nosuid = stack.pop()
            mount = containing(self.mounts, canon) if is_root else self.mounts.get(canon)
            if mount is not None:
                if not is_root and mount[0] in SKIPPED_FS:
                    self.counts["skipped_mounts"] += 1
                    os.close(fd)
                    continue
                nosuid = mount[1]
            self.counts["directories"] += 1
            join = (lambda n: path + n) if path.endswith(b"/") else (lambda n: path + b"/" + n)
            with os.scandir(fd) as it:
                entries = [(os.fsencode(e.name), e.is_dir(follow_symlinks=False),
                            e.is_file(follow_symlinks=False)) for e in it]
            for name, is_dir, is_file in entries:
                if is_file:
                    self.value(join(name), b"/proc/self/fd/%d/" % fd + name, False, nosuid)
                elif is_dir:
                    try:
                        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    except OSError:
                        self.errors.add(join(name))
                        continue
                    stack.append((sub, join(name), canon + b"/" + name, False, nosuid))
            os.close(fd)

    def covered(self, canon, other, first):
        """Does the walk of other (canonical) reach canon: equal (other given first), or below
        with no skipped mount between them."""
        if canon == other:
            return first
        if not canon.startswith(other.rstrip(b"/") + b"/"):
            return False
        return not any(fs in SKIPPED_FS and mp.startswith(other.rstrip(b"/") + b"/") and
                       (canon == mp or canon.startswith(mp + b"/"))
                       for mp, (fs, _) in self.mounts.items())

    def run(self, roots):
        shown = [r.rstrip(b"/") or b"/" for r in roots]
        canon = []
        for r in shown:
            try:
                canon.append(os.fsencode(os.path.realpath(r, strict=True)))
            except OSError:
                self.errors.add(r)
                canon.append(None)
        for i, r in enumerate(shown):
            if canon[i] is None or any(canon[j] is not None and j != i and
                                       self.covered(canon[i], canon[j], j < i)
                                       for j in range(len(shown))):
                continue
            st = os.stat(r)
            if stat.S_ISREG(st.st_mode):
                self.value(r, r, True, containing(self.mounts, canon[i])[1])
            elif stat.S_ISDIR(st.st_mode):
                try:
                    fd = os.open(r, os.O_RDONLY | os.O_DIRECTORY)
                except OSError:
                    self.errors.add(r)
                    continue
                self.walk(fd, r, canon[i], True)
        return self.result()

    def result(self):
        c = dict(self.counts, capability_files=len(self.files), vanished=0, errors=len(self.errors))
        files = {p.hex(): [v[0], v[1].hex(), v[2], v[3], v[4], v[5], v[6]] for p, v in self.files.items()}
        return {"counts": c, "files": files, "errors": sorted(p.hex() for p in self.errors)}


# ---- the comparison --------------------------------------------------------------------------

def cap_numbers():
    """libcap-free name table: the kernel's own header."""
    names = {}
    with open("/usr/include/linux/capability.h") as f:
        for line in f:
            m = re.match(r"#define\s+CAP_([A-Z_]+)\s+(\d+)\s*$", line)
            if m:
                names["cap_" + m.group(1).lower()] = int(m.group(2))
    return names


def mask(names, table):
    if names is None:
        return None
    return sum(1 << (table[n] if n in table else int(n[4:])) for n in names)


def from_audit(doc, table):
    files = {}
    for f in doc["files"]:
        files[f["path_hex"]] = [f["revision"], f["raw_hex"], mask(f["permitted"], table),
                                mask(f["inheritable"], table), f["effective"], f["rootid"],
                                f["nosuid"]]
    s = doc["scan"]
    counts = {k: s.get(k) for k in ("directories", "regular_files", "capability_files",
                                "skipped_mounts", "vanished", "errors")}
    return {"counts": counts, "files": files, "errors": sorted(e["path_hex"] for e in doc.get("errors", []))}


def bypasses(files, table):
    """Whether audit must report fP-bypass, an error-level finding (exit 2): a file whose fP holds
    what the policy ("* cap_net_raw") delegates, and whose capabilities apply at exec (read,
    well formed, not on a nosuid mount, rootid 0 or none)."""
    raw = 1 << table["cap_net_raw"]
    return any(p is not None and p & raw and rev != 0 and not nosuid and rootid in (None, 0)
               for rev, _, p, _, _, rootid, nosuid in files.values())


def show(hexpath):
    return repr(bytes.fromhex(hexpath))


def first_difference(want, got):
    """A sentence naming the first differing path, or None."""
    for key in sorted(set(want["files"]) | set(got["files"])):
        w, g = want["files"].get(key), got["files"].get(key)
        if w != g:
            return "file %s: oracle %r, audit %r" % (show(key), w, g)
    for key in sorted(set(want["errors"]) ^ set(got["errors"])):
        return "error %s: in %s only" % (show(key), "oracle" if key in want["errors"] else "audit")
    if want["counts"] != got["counts"]:
        return "counts: oracle %r, audit %r" % (want["counts"], got["counts"])
    return None


def run_seed(seed, args, table):
    rng = random.Random(seed)
    work = os.path.join(args.work, b"seed-%d" % seed)
    os.mkdir(work, 0o755)
    b = None
    try:
        b = build(rng, work)
        policy = os.path.join(work, b"policy.conf")
        with open(policy, "w") as f:
            f.write("* cap_net_raw\n")
        os.chmod(policy, 0o644)
        cwd, roots = pick_roots(rng, b, work)
        prefix = NOCAPS if rng.random() < 0.5 else []
        oracle = subprocess.run(prefix + [sys.executable, os.path.abspath(__file__), "--oracle"] +
                                [r.hex() for r in roots], cwd=cwd, capture_output=True, check=True)
        want = json.loads(oracle.stdout)
        where = "seed %d (%s, cwd %r, roots %r)" % (seed, " ".join(
            ["no-capabilities" if prefix else "root"] + b.features), os.path.relpath(cwd, work), roots)
        for threads in ("1", str(rng.choice([2, 3, 4, 8]))):
            p = subprocess.run(prefix + [args.bin, "audit", "--json", "--threads", threads,
                                         "--config", policy, "--"] + roots,
                               cwd=cwd, capture_output=True)
            try:
                got = from_audit(json.loads(p.stdout), table)
            except ValueError:
                return "%s, --threads %s: no JSON (exit %d): %r" % (where, threads, p.returncode,
                                                                    p.stderr[-500:])
            diff = first_difference(want, got)
            fatal = bool(want["errors"]) or bypasses(want["files"], table)
            if diff is None and (p.returncode == 2) != fatal:
                diff = "exit status %d with %d errors%s" % (p.returncode, len(want["errors"]),
                                                            ", an fP bypass" if fatal else "")
            if diff is not None:
                return "%s, --threads %s: %s" % (where, threads, diff)
        return "ok: " + where
    finally:
        if b is not None:
            for m in reversed(b.mounts):
                subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
        if not args.keep:
            subprocess.run(["rm", "-rf", "--one-file-system", work], check=False)


def seeds_of(args):
    """The fixed seeds, or random ones for a count or until a deadline."""
    if args.seed:
        yield from args.seed
        return
    pick, deadline = random.SystemRandom(), time.monotonic() + (args.seconds or 0)
    n = 0
    while (n < args.random) if args.random is not None else (n == 0 or time.monotonic() < deadline):
        n += 1
        yield pick.randrange(1 << 32)


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--bin")
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--seed", type=int, action="append", default=[])
    ap.add_argument("--random", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("-h", "--help", action="store_true")
    args, rest = ap.parse_known_args()
    if args.help:
        print(__doc__)
        return 0
    if args.oracle:      # the oracle's own process, with the audit's privileges and cwd
        print(json.dumps(Oracle().run([bytes.fromhex(r) for r in rest])))
        return 0
    modes = bool(args.seed) + (args.random is not None) + (args.seconds is not None)
    if rest or not args.bin or modes != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("audit-diff: needs root", file=sys.stderr)
        return 2
    args.bin = os.path.abspath(args.bin)
    table = cap_numbers()
    made = args.work is None
    args.work = os.fsencode(args.work or tempfile.mkdtemp(prefix="capdelegate-audit-diff.", dir="/run"))
    failed = 0
    try:
        for seed in seeds_of(args):
            why = run_seed(seed, args, table)
            ok = why.startswith("ok: ")
            print("%s\taudit-diff: seed %d\t%s" % ("PASS" if ok else "FAIL", seed,
                                                  why[4:] if ok else why), flush=True)
            failed += not ok
            if not ok and not args.seed:
                break
    finally:
        if made and not args.keep:
            subprocess.run(["rm", "-rf", "--one-file-system", args.work], check=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
