#!/usr/bin/env python3
"""diff.py: the policy model (policy_model.py, written from capdelegate.conf(5) alone) against
the real pam_capdelegate.so through real PAM transactions (libpam, pam_wrapper, nss_wrapper)
and against `capdelegate explain`, on generated policies, drop-ins and NSS fixtures.

usage: diff.py [--bin CAPDELEGATE] [--seeds S,S,...] [--cases N] [--seconds T] [--explain-users K]
               [--tsv] [--keep]

Fixed seeds (--seeds, the suite `model` of ./lab test, after a catalogue that puts each of the
malformed lines and near misses of BAD_LINES once into a valid policy) or random seeds for
--seconds (./lab fuzz).
Each seed makes one NSS fixture (users, groups, primary gids, member lists) and N cases; each case
is a main policy file and a drop-in directory. For each case every user of the fixture (and one
unknown to NSS) logs in through libpam in one login process (pam_setcred, then pam_open_session,
pI read back from /proc/self/status after each), and K of them through `capdelegate explain`.
Compared with the model: pI (the grant within the bounding set), the module's NOTICE line
(granted=, via=, rules=, policy=), the FILE:LINE of every policy error logged, and explain's pI,
policy and match records. A disagreement is shrunk (drop-ins, then lines, for the one user it
showed for) to the smallest policy that still shows it, printed with both answers.

Needs root (the policy must be root-owned below root-owned directories; pI is set by capset).
Exit status: 0 when everything agreed, 1 on a disagreement, 2 when it could not run.
--tsv prints one PASS/FAIL line per seed for ./lab test (details on stderr).
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import policy_model as M  # noqa: E402

LIBDIR = "/usr/lib/x86_64-linux-gnu"


COVER = Counter()   # what the generator made and what the model answered, for the report


def log(*a):
    print("model-diff:", *a, file=sys.stderr, flush=True)


# ---- NSS fixture ----------------------------------------------------------------------------

USER_POOL = [b"alice", b"bob", b"carol", b"dave", b"Alice", b"erin", b"root",
             b"sue@corp.example.com", b"CORP\\alice", b"CORP\\100234", b"host$", b"jos\xc3\xa9",
             b"a.b-c_d", b"123", b"hash#tag", b"dol$lar", b"space man", b"x" * 256, b"y" * 257,
             b"O'Brien", b"a,b", b"back\\", b"CORP\\134", b"CORP\\400123", b"$", b"m$"]
GROUP_POOL = [b"netops", b"NETOPS", b"staff", b"linux admins", b"domain users@corp",
              b"grp$", b"g\\x", b"wheel", b"\xc3\xa9quipe", b"g" * 256, b"h" * 257, b"audit",
              b"a.b", b"100", b"G\\040"]


def make_fixture(rnd):
    """Users (name, uid, primary gid) and groups (name, gid, members) for one seed."""
    names = rnd.sample(USER_POOL, rnd.randint(5, 10))
    gnames = rnd.sample(GROUP_POOL, rnd.randint(3, 7))
    groups = [M.Group(g, 3000 + i, []) for i, g in enumerate(gnames)]
    users = []
    for i, n in enumerate(names):
        uid = 0 if n == b"root" else 1000 + i
        # A user-private group with the user's name, or a shared group as the primary group
        # (membership through the primary gid, the group's member list maybe empty).
        if rnd.random() < 0.4 and groups:
            gid = rnd.choice(groups).gid
        else:
            gid = 2000 + i
            if rnd.random() < 0.5:
                groups.append(M.Group(n, gid, []))
        users.append(M.User(n, uid, gid))
    for g in groups:
        for u in users:
            if b"," not in u.name and rnd.random() < 0.35:
                g.members.append(u.name)
    # a group whose entry lists no members at all (members through the primary gid only, or a
    # directory that leaves member lists out): it cannot show who is outside it
    # (pam_capdelegate(8), GROUPS)
    if rnd.random() < 0.5:
        rnd.choice(groups).members.clear()
    return users, groups


def write_fixture(dirpath, users, groups):
    with open(os.path.join(dirpath, "passwd"), "wb") as f:
        for u in users:
            f.write(b"%s:x:%d:%d::/nonexistent:/bin/sh\n" % (u.name, u.uid, u.gid))
    with open(os.path.join(dirpath, "group"), "wb") as f:
        for g in groups:
            f.write(b"%s:x:%d:%s\n" % (g.name, g.gid, b",".join(g.members)))


# ---- policy generator -----------------------------------------------------------------------

def written_name(rnd, name):
    """A name as a policy writes it (5: \\ooo for any other byte; an ordinary byte may be
    escaped too; a backslash that three octal digits follow is \\134)."""
    pieces = []
    for i, c in enumerate(name):
        plain = (c in M.NAME_BYTES or c == 0x5C or (c == 0x40 and i > 0)
                 or (c == 0x24 and i == len(name) - 1))
        pieces.append(bytes([c]) if plain and rnd.random() > 0.08 else b"\\%03o" % c)
        if not plain:
            COVER["name: escape needed"] += 1
        elif len(pieces[-1]) == 4:
            COVER["name: ordinary byte escaped"] += 1
    for i in range(len(pieces) - 2, -1, -1):
        rest = b"".join(pieces[i + 1:])
        # \\4xx to \\7xx are no escapes: a plain backslash may stay (messages show \\134).
        if pieces[i] == b"\\" and re.match(rb"[0-7]{3}", rest) and (
                rest[0] in b"0123" or rnd.random() > 0.5):
            pieces[i] = b"\\134"
    return b"".join(pieces)


FAVOURITE_CAPS = ["cap_net_raw", "cap_net_admin", "cap_kill", "cap_syslog", "cap_bpf",
                  "cap_perfmon", "cap_checkpoint_restore", "cap_sys_resource", "cap_chown",
                  "cap_audit_read", "cap_wake_alarm"]


def cap_token(rnd):
    name = rnd.choice(FAVOURITE_CAPS) if rnd.random() < 0.7 else rnd.choice(sorted(M.CAPS))
    r = rnd.random()
    if r < 0.15:
        COVER["caps: upper case"] += 1
        return name.upper()
    if r < 0.25:
        COVER["caps: mixed case"] += 1
        return "".join(ch.upper() if rnd.random() < 0.5 else ch for ch in name)
    return name


def blanks(rnd, least=0):
    return "".join(rnd.choice(" \t" if rnd.random() < 0.3 else " ")
                   for _ in range(rnd.choice([least, least, least + 1, least + 3])))


def caps_field(rnd):
    if rnd.random() < 0.15:
        COVER["caps: none"] += 1
        return rnd.choice(["none", "none", "NONE", "None"])
    toks = [cap_token(rnd) for _ in range(rnd.choice([1, 1, 2, 3, 5]))]
    if rnd.random() < 0.1:
        toks.append(toks[0])                       # a duplicate
        COVER["caps: duplicate"] += 1
    return "".join((blanks(rnd) + "," + blanks(rnd) if i else "") + t for i, t in enumerate(toks))


def subject(rnd, users, groups):
    r = rnd.random()
    if r < 0.12:
        COVER["subject: *"] += 1
        return b"*"
    if r < 0.46:
        COVER["subject: @group"] += 1
        return b"@" + written_name(rnd, rnd.choice(groups).name)
    if r < 0.5:
        # a group NSS does not know: when its line gives less than *, whoever falls to * cannot
        # be shown outside it (pam_capdelegate(8), GROUPS)
        COVER["subject: @group unknown to NSS"] += 1
        return b"@" + written_name(rnd, rnd.choice([b"ghosts", b"retired", b"netops-old"]))
    if r < 0.58:
        COVER["subject: user unknown to NSS"] += 1
        return written_name(rnd, rnd.choice([b"nobody", b"zed", b"Bob", b"netops"]))
    COVER["subject: user"] += 1
    return written_name(rnd, rnd.choice(users).name)


# Lines the page says are malformed, and near misses; each must reject the whole policy.
BAD_LINES = [
    b"alice cap_bogus", b"alice cap_sys_admin-i", b"alice cap_setuid2", b"alice all",
    b"alice ALL", b"alice 12", b"alice cap_net_raw,,cap_kill", b"alice cap_net_raw,",
    b",cap_net_raw alice", b"alice cap_net_raw cap_kill", b"alice none,cap_kill",
    b"alice cap_kill, none", b"alice none,none", b"alice", b"@netops", b"*", b"@ cap_kill",
    b"alice\\000 cap_kill", b"ali\\001ce cap_kill", b"ali\\400ce cap_kill", b"a\\477 cap_kill",
    b"ali$ce cap_kill", b"-alice cap_kill", b"@-ops cap_kill", b"@@ops cap_kill",
    b"*x cap_kill", b"@* cap_kill", b"al*ice cap_kill", b"ali\x01ce cap_kill",
    b"alice cap_kill\x00", b"alice\x7f cap_kill", b"alice cap_kill\r\r", b"alice\rcap_kill",
    b"jos\xc3\xa9 cap_kill", b"x" * 257 + b" cap_kill", b"@" + b"g" * 257 + b" cap_kill",
    b"alice cap_net", b"alice cap_sys", b"alice cap_net_raw_", b"alice cap_net_raw.",
    b"alice cap_net_raw;cap_kill", b"alice \"cap_kill\"", b"alice 0x2000", b"alice cap_kill=i",
    b"alice +cap_kill", b"alice cap_kill,cap_", b"alice,bob cap_kill", b"$ cap_kill",
    b"@$ cap_kill", b"\\044 cap_kill", b"alice\\100 cap_kill", b"alice cap_kill # \x02",
    b"\\100alice cap_kill", b"\\055alice cap_kill", b"ali ce cap_kill",
    # 5 WINDOWS
    b"alice cap_kill until 2030-01-01", b"alice cap_kill until 2030-01-01T08:00",
    b"alice cap_kill until 2030-01-01T08:00:00", b"alice cap_kill until 2030-01-01T08:00+00:00",
    b"alice cap_kill until 2030-01-01T08:00z", b"alice cap_kill from 2030-02-29T00:00Z",
    b"alice cap_kill from 2100-02-29T00:00Z", b"alice cap_kill until 2030-01-01T24:00Z",
    b"alice cap_kill until 2030-01-01T23:60Z", b"alice cap_kill until 2016-12-31T23:59:60Z",
    b"alice cap_kill until 1969-12-31T23:59:59Z",
    b"alice cap_kill from 2030-01-01T08:00Z until 2030-01-01T08:00Z",
    b"alice cap_kill until 2030-01-01T07:00Z from 2030-01-01T08:00Z",
    b"alice cap_kill until 2030-01-01T08:00Z until 2030-01-02T08:00Z",
    b"alice cap_kill from", b"alice cap_kill until # 2030-01-01T08:00Z",
    b"alice cap_kill until 2030-01-01T08:00Z junk", b"alice from 2030-01-01T08:00Z",
    b"alice cap_kill UNTIL 2030-01-01T08:00Z", b"alice cap_kill, until 2030-01-01T08:00Z",
    b"alice cap_kill until 2030-1-01T08:00Z", b"alice cap_kill until 30-01-01T08:00Z",
    b"alice cap_kill until\t2030-01-01T08:00Z\x1b", b"alice cap_kill till 2030-01-01T08:00Z",
]


# The clock of the seed's cases (CLOCK[0], minute-aligned), set by open_lab: windows are drawn
# around it, and each case's clock is a second or a minute from it, so that the edges are met
# exactly, a second before and a second after.
CLOCK = [0]
EDGES = [-86400 * 400, -60, -1, 0, 1, 60, 86400 * 366 * 40]


def utc_text(t, seconds=True):
    """A time as capdelegate.conf(5) writes it, by Python's calendar (not the code's)."""
    d = datetime.fromtimestamp(t, tz=timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%SZ" if seconds or d.second else "%Y-%m-%dT%H:%MZ")


def window(rnd):
    """" from T", " until T" or both (either order), edges around the seed's clock."""
    start = CLOCK[0] + rnd.choice(EDGES)
    end = start + rnd.choice([1, 60, 86400, 86400 * 366 * 40]) if rnd.random() < 0.5 else None
    if rnd.random() < 0.3:
        start = None
        end = CLOCK[0] + rnd.choice(EDGES)
    words = []
    if start is not None:
        words.append("from " + utc_text(start, rnd.random() < 0.5))
    if end is not None:
        words.append("until " + utc_text(end, rnd.random() < 0.5))
    if rnd.random() < 0.3:
        words.reverse()
    COVER["window: %s" % " ".join(w.split()[0] for w in words)] += 1
    return blanks(rnd, 1) + (blanks(rnd, 1)).join(words)


def random_line(rnd, users, groups, bad_rate):
    r = rnd.random()
    if r < bad_rate:
        COVER["line: bad or near miss (%d kinds)" % len(BAD_LINES)] += 1
        return rnd.choice(BAD_LINES)
    if r < bad_rate + 0.05:
        COVER["line: empty"] += 1
        return b""
    if r < bad_rate + 0.1:
        COVER["line: comment"] += 1
        return (blanks(rnd) + "#" + rnd.choice([" comment", "alice cap_sys_admin", "", "#"])).encode()
    if r < bad_rate + 0.13:
        COVER["line: blanks only"] += 1
        return blanks(rnd, 1).encode()
    COVER["line: rule"] += 1
    lead = rnd.random() < 0.1
    COVER["line: leading blanks"] += lead
    line = (blanks(rnd).encode() if lead else b"") + subject(rnd, users, groups)
    line += blanks(rnd, 1).encode() + caps_field(rnd).encode()
    if rnd.random() < 0.25:
        line += window(rnd).encode()
    line += blanks(rnd).encode()
    if rnd.random() < 0.15:
        COVER["line: trailing comment"] += 1
        line += (blanks(rnd) + "# " + rnd.choice(["why", "cap_kill", "x,y", "#"])).encode()
    return line


def random_file(rnd, users, groups, bad_rate):
    lines = [random_line(rnd, users, groups, bad_rate)
             for _ in range(rnd.choice([0, 1, 2, 3, 4, 6, 10]))]
    crlf = rnd.random() < 0.1
    COVER["file: CRLF"] += crlf
    text = b"".join(l + (b"\r\n" if crlf else b"\n") for l in lines)
    if text and rnd.random() < 0.1:
        COVER["file: no final newline"] += 1
        text = text.rstrip(b"\r\n")               # no newline at the end
    return text


DROPIN_NAMES = [b"10-ops.conf", b"20-dev.conf", b"9-late.conf", b"B.conf", b"a.conf",
                b"a.conf.conf", b"x.conf~", b".hidden.conf", b"notes.txt", b"README",
                b"UPPER.CONF", b".conf", b"z.conf.bak", b"sp ace.conf", b"-dash.conf",
                b"x.con", b"conf"]


def make_case(rnd, users, groups):
    bad_rate = rnd.choice([0, 0, 0, 0.02, 0.1])
    main = random_file(rnd, users, groups, bad_rate)
    if rnd.random() < 0.03:
        main = None                               # missing main file
        COVER["case: main file missing"] += 1
    dropins = None
    if rnd.random() < 0.6:
        dropins = {}
        for name in rnd.sample(DROPIN_NAMES, rnd.choice([0, 1, 2, 3, 4])):
            dropins[name] = random_file(rnd, users, groups, bad_rate)
            COVER["drop-in: read" if M.dropin_is_read(name) else "drop-in: not read (name)"] += 1
        if rnd.random() < 0.02:
            dropins[b"sub.conf"] = "dir"          # not a regular file: unsafe
            COVER["drop-in: a directory"] += 1
    if main is not None and rnd.random() < 0.02:
        # The size limit, all files together: exactly 1 MiB, or one byte more.
        total = len(main) + sum(len(v) for k, v in (dropins or {}).items()
                                if M.dropin_is_read(k) and v != "dir")
        pad = M.MAX_SIZE - total - 3 + rnd.choice([0, 1])
        if pad > 0:
            main += b"#" + b"p" * pad + b"\n\n"
            COVER["case: size limit, 1 MiB %s" % ("+ 1" if pad + total + 3 > M.MAX_SIZE else "exactly")] += 1
    return main, dropins


# ---- running the code -----------------------------------------------------------------------

class Lab:
    """A work directory under /run (policies must sit below root-owned, non-writable
    directories), the fixture, and the PAM driver process."""

    def __init__(self, bin_, users, groups, keep=False):
        self.bin = bin_
        self.build = os.path.dirname(os.path.abspath(bin_))
        self.users, self.groups = users, groups
        self.keep = keep
        base = "/run" if os.geteuid() == 0 else tempfile.gettempdir()
        self.dir = tempfile.mkdtemp(prefix="cd-model-", dir=base)
        os.chmod(self.dir, 0o755)
        self.conf = os.path.join(self.dir, "policy.conf")
        self.confdir = os.path.join(self.dir, "capdelegate.d")
        self.empty = os.path.join(self.dir, "empty")
        os.mkdir(self.empty)
        os.mkdir(os.path.join(self.dir, "services"))
        write_fixture(self.dir, users, groups)
        module = os.path.join(self.build, ".libs", "pam_capdelegate.so")
        args = "config=%s confdir=%s" % (self.conf, self.confdir)
        with open(os.path.join(self.dir, "services", "model"), "w") as f:
            f.write("auth required pam_permit.so\nauth optional %s %s\n"
                    "session required %s %s\n" % (module, args, module, args))
        fault = os.path.join(self.build, "tests", "stack", ".libs", "nss_fault.so")
        clock = os.path.join(self.build, "tests", "stack", ".libs", "fake_clock.so")
        self.nss_env = dict(os.environ, NSS_WRAPPER_PASSWD=os.path.join(self.dir, "passwd"),
                            NSS_WRAPPER_GROUP=os.path.join(self.dir, "group"),
                            LD_PRELOAD="%s:%s/libnss_wrapper.so" % (fault, LIBDIR))
        pam_env = dict(self.nss_env, PAM_WRAPPER="1", PAM_WRAPPER_DEBUGLEVEL="2",
                       PAM_WRAPPER_SERVICE_DIR=os.path.join(self.dir, "services"),
                       LD_PRELOAD="%s:%s:%s/libpam_wrapper.so:%s/libnss_wrapper.so"
                       % (clock, fault, LIBDIR, LIBDIR))
        argv, env = in_own_tmp([sys.executable, os.path.join(HERE, "pam_driver.py")], pam_env,
                               keep=[HERE, self.build, sys.executable])
        # the driver's own complaints (each login's log goes elsewhere: pam_driver.py), and
        # own-tmp.sh's, say why when it dies
        self.driver_err = os.path.join(self.dir, "driver.err")
        with open(self.driver_err, "wb") as err:
            self.driver = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=err, env=env)

    def close(self):
        self.driver.stdin.close()
        self.driver.wait()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def install(self, main, dropins):
        for p in (self.conf,):
            if os.path.lexists(p):
                os.unlink(p)
        shutil.rmtree(self.confdir, ignore_errors=True)
        if main is not None:
            write_root_file(self.conf, main)
        if dropins is not None:
            os.mkdir(self.confdir)
            os.chmod(self.confdir, 0o755)
            for name, data in dropins.items():
                p = os.path.join(self.confdir.encode(), name)
                if data == "dir":
                    os.mkdir(p)
                    os.chmod(p, 0o755)
                else:
                    write_root_file(p, data)

    def pam(self, names, fault=None, now=None):
        """One login process, a transaction per name. pam_wrapper's own set-up (a copy of the
        service directory under /tmp/pam.X, one letter of names shared with every process on
        the machine) fails now and then under load: pam_start fails, then the batch is run
        again, twice at most."""
        clock = {"CD_TEST_CLOCK": str(now)} if now is not None else {}
        env = ["env:" + ("%s=%s" % kv).encode().hex() for kv in dict(fault or {}, **clock).items()]
        words = ["model"] + env + [n.hex() for n in names]
        for _ in range(3):
            self.driver.stdin.write((" ".join(words) + "\n").encode())
            self.driver.stdin.flush()
            line = self.driver.stdout.readline()
            if not line:
                with open(self.driver_err, "rb") as f:
                    why = f.read()[-2000:].decode("utf-8", "backslashreplace").strip()
                try:
                    rc = self.driver.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    rc = "none yet"
                raise RuntimeError("the PAM driver died (exit status %s): %s"
                                   % (rc, why or "it said nothing"))
            res = json.loads(line)
            if isinstance(res, dict):
                raise RuntimeError("PAM driver: %s" % res["error"])
            if all(r.get("start") == 0 for r in res):
                break
            COVER["harness: pam_start failed, batch run again"] += 1
        return res

    def explain(self, name, fault=None, now=None):
        at = ["--at", utc_text(now)] if now is not None else []
        p = subprocess.run([self.bin, "explain", name, "--config", self.conf, "--confdir",
                            self.confdir, "--tsv"] + at + [self.empty],
                           env=dict(self.nss_env, **(fault or {})), capture_output=True)
        return p.returncode, p.stdout, p.stderr


def in_own_tmp(argv, env, keep):
    """@argv and @env, changed so that the PAM driver gets a /tmp of its own, as root
    (tests/own-tmp.sh, as tests/stack/stack.sh does for the stack tests), where the directories
    in @keep stay reachable. pam_wrapper copies the service directory into /tmp/pam.X, X one
    letter chosen from the pid, and two processes that pick the same letter at the same moment
    share the directory: the later copy rewrites the other's service file. Four drivers starting
    at once (--jobs) did that under load: a login ran another worker's stack, read that worker's
    policy and got its grant (seen once: dave with none where the policy's "*" gave him
    cap_sys_ptrace), or pam_start failed on a half-copied file. The wrappers are preloaded only
    into the driver: loaded into unshare, bash or mount, the library would make (and leave) a
    directory of its own in the real /tmp."""
    preload = {k: v for k, v in env.items() if k == "LD_PRELOAD" or k.startswith("PAM_WRAPPER")}
    rest = {k: v for k, v in env.items() if k not in preload}
    kept = [a for k in keep for a in ("--keep", k)]
    return ([os.path.join(HERE, "..", "own-tmp.sh")] + kept + ["--", "env"]
            + ["%s=%s" % kv for kv in preload.items()] + argv, rest)


def write_root_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o644)


def bounding_set():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapBnd:"):
                return int(line.split()[1], 16)
    return 0


BOUNDING = bounding_set()


def mask(caps):
    return sum(1 << c for c in caps)


def caps_of_text(text):
    if text == "none":
        return frozenset()
    return frozenset(M.CAPS.get(n, -1) for n in text.split(","))


# ---- comparing ------------------------------------------------------------------------------

def short(name):
    """A name for a report: escaped, long ones cut."""
    t = repr(name)[2:-1]
    return t if len(t) <= 40 else "%s...(%d bytes)" % (t[:24], len(name))


def esc(name):
    """A name in the messages' form (5: every message shows a name in the form a policy
    writes it): ordinary bytes as they are, any other byte \\ooo, a backslash that three
    octal digits follow \\134."""
    return written_name(NO_RANDOM, name).decode("ascii")


class NoRandom:
    @staticmethod
    def random():
        return 1.0


NO_RANDOM = NoRandom()


def esc_location(path):
    """The FILE of a FILE:LINE location as capdelegate(8) prints it: backslash, control
    characters (C0, DEL, C1), invisible format characters (Cf, Zl, Zp) and bytes that are not
    UTF-8 as \\xNN per byte, and a space too (a location is one word)."""
    out = []
    text = path.encode("latin-1").decode("utf-8", "surrogateescape")
    for ch in text:
        o = ord(ch)
        raw = ch.encode("utf-8", "surrogateescape")
        if (0xDC80 <= o <= 0xDCFF or ch == "\\" or o < 0x20 or 0x7F <= o <= 0x9F
                or unicodedata.category(ch) in ("Cf", "Zl", "Zp") or ch == " "):
            out.append("".join("\\x%02x" % x for x in raw))
        else:
            out.append(ch)
    return "".join(out)


def rules_text(rules, cut=None):
    """FILE:LINE,... of @rules; after @cut of them (8: 16 in the log line) ",...N_rules"."""
    shown = rules if cut is None or len(rules) <= cut else rules[:cut]
    text = ",".join("%s:%d" % (esc_location(r.file), r.line) for r in shown) or "none"
    return text if len(shown) == len(rules) else "%s,...%d_rules" % (text, len(rules))


def notice_fields(logtext):
    for line in logtext.splitlines():
        m = re.search(r"SYSLOG\(5\): (user=.*)", line)
        if m:
            return dict(kv.split("=", 1) for kv in m.group(1).split(" ") if "=" in kv)
    return None


def error_locations(logtext, paths):
    """The FILE:LINE of each policy error the module logged, FILE as @paths spell it."""
    shown = {esc_location(p): p for p in paths}
    locs = set()
    for line in logtext.splitlines():
        m = re.search(r"SYSLOG\(3\): (\S*?):(\d+): ", line)
        if m and m.group(1) in shown:
            locs.add((shown[m.group(1)], int(m.group(2))))
    return locs


STATUS_WORDS = {"ok": "ok", "missing": "missing", "syntax error": "syntax error",
                "unsafe": "unsafe"}


class Login:
    """What the model expects of one login: @typed, the name given to PAM (or explain); the
    account NSS answers (5: matched by its canonical name; nss_fault.so's case folding stands
    for a case-insensitive backend); whether its lookup fails (an outage); the grant."""

    def __init__(self, policy, case, typed):
        fault = case.fault or {}
        key = typed.lower() if fault.get("CD_FAULT_CASEFOLD") else typed
        self.typed = typed
        self.user = next((u for u in LAB_USERS[0] if u.name == key), None)
        self.failed = self.user is not None and self.user.name in fault_names(
            fault, "CD_FAULT_USERS")
        unreachable = fault_names(fault, "CD_FAULT_GROUPS")
        if self.user is None or self.failed:
            self.grant = M.Grant(frozenset(), "none", [], self.failed)
        else:
            self.grant = M.resolve(policy, self.user, LAB_GROUPS[0], unreachable)
        self.outage = self.grant.lookup_failed


def fault_names(fault, var):
    """The names an nss_fault.so variable lists (NAME or NAME:GID, comma-separated)."""
    return {w.split(":")[0].encode("utf-8", "surrogateescape")
            for w in fault.get(var, "").split(",") if w}


def compare_pam(policy, login, res, paths):
    """Disagreements (strings) between the model and one PAM transaction."""
    d = []
    if res.get("start") != 0:
        return ["pam_start failed: %r" % res]
    g = login.grant
    want = mask(g.caps) & BOUNDING
    for step in ("setcred", "session"):
        if res[step] != 0:
            d.append("pam_%s returned %d, want PAM_SUCCESS (no strict)" % (step, res[step]))
        if res["pi_" + step] != want:
            d.append("pI after %s is %s, model %s" % (
                step, M.cap_text(c for c in range(64) if res["pi_" + step] >> c & 1),
                M.cap_text(c for c in range(64) if want >> c & 1)))
    if login.user is None:
        return d
    f = notice_fields(res["log"])
    if login.outage:
        # 8 WHAT IS REFUSED: an NSS lookup failed: nothing granted, LOG_ERR naming the cause;
        # 8 LOGGING: the login's NOTICE line still says so (granted=none, nss=failed)
        if "no capabilities granted" not in res["log"]:
            d.append("an NSS outage that decides: want a LOG_ERR line naming the cause")
        if f is None or (f.get("granted"), f.get("via"), f.get("nss")) != ("none", "none", "failed"):
            d.append("an NSS outage that decides: want a NOTICE line with granted=none via=none "
                     "nss=failed, got %r" % (f,))
        return d
    if f is None:
        return d + ["no NOTICE line in the module's log"]
    # 8: one line per login at LOG_NOTICE, though setcred and session both apply the grant
    n = len(re.findall(r"SYSLOG\(5\): user=", res["log"]))
    if n != 1:
        d.append("%d NOTICE lines in one transaction, want 1" % n)
    # 8: granted is what pI holds; dropped_bounding what the bounding set kept out.
    kept = frozenset(c for c in g.caps if BOUNDING >> c & 1)
    if caps_of_text(f.get("granted", "")) != kept:
        d.append("log granted=%s, model %s" % (f.get("granted"), M.cap_text(kept)))
    if caps_of_text(f.get("dropped_bounding", "")) != g.caps - kept:
        d.append("log dropped_bounding=%s, model %s" % (f.get("dropped_bounding"),
                                                         M.cap_text(g.caps - kept)))
    if f.get("via") != g.via:
        d.append("log via=%s, model %s" % (f.get("via"), g.via))
    if f.get("policy", "").replace("_", " ") != policy.status:
        d.append("log policy=%s, model %s" % (f.get("policy"), policy.status))
    if policy.status == "ok" and f.get("rules") != rules_text(g.rules, 16):
        d.append("log rules=%s, model %s" % (f.get("rules"), rules_text(g.rules, 16)))
    logged, want_user = f.get("user", ""), esc(login.user.name)
    if logged != want_user and not (logged.endswith("...") and want_user.startswith(logged[:-3])):
        d.append("log user=%s, model %s" % (logged, want_user))
    if (login.typed != login.user.name) != ("login_name" in f):
        d.append("log login_name=%s for a login typed %s" % (f.get("login_name", "(none)"),
                                                              esc(login.typed)))
    want_errs = {(p, n) for p, n, _ in policy.errors}
    if policy.status == "syntax error" and len(want_errs) <= 5:
        got = error_locations(res["log"], paths)
        if got != want_errs:
            d.append("errors logged at %s, model at %s" % (
                fmt_locs(got), fmt_locs(want_errs)))
    return d


def fmt_locs(locs):
    return ", ".join("%s:%d" % (os.path.basename(p), n) for p, n in sorted(locs)) or "none"


def compare_explain(policy, login, rc, out, err):
    d = []
    recs = [l.split("\t") for l in out.decode("utf-8", "backslashreplace").splitlines()]
    pi = [r for r in recs if r[0] == "pI"]
    g = login.grant
    if login.user is None or login.outage:
        if rc != 2 or any(r[1] != "none" for r in pi):
            d.append("explain of a user NSS %s: exit %d, want 2 and no grant" % (
                "fails to look up" if login.outage else "does not know", rc))
        return d
    if len(pi) != 1:
        return ["explain printed no pI record (exit %d): %s" % (rc, err.decode(errors="replace"))]
    if caps_of_text(pi[0][1]) != g.caps or pi[0][2] != g.via:
        d.append("explain pI %s via %s, model %s via %s" % (pi[0][1], pi[0][2],
                                                              M.cap_text(g.caps), g.via))
    st = [r for r in recs if r[0] == "policy"]
    if not st or st[0][2] != policy.status:
        d.append("explain policy status %s, model %s" % (st[0][2] if st else "-", policy.status))
    matches = [r[1] for r in recs if r[0] == "match"]
    if policy.status == "ok" and matches != ["%s:%d" % (esc_location(r.file), r.line)
                                             for r in g.rules]:
        d.append("explain match lines %s, model %s" % (",".join(matches) or "none",
                                                        rules_text(g.rules)))
    want_rc = 0 if policy.status == "ok" else 2
    if rc != want_rc:
        d.append("explain exit %d, want %d" % (rc, want_rc))
    return d


LAB_GROUPS = [None]   # the current fixture's groups (set per seed)
LAB_USERS = [None]    # and users


class Case:
    """A main file (None: missing), a drop-in directory (None: none) and an NSS fault (the
    environment of nss_fault.so, or None)."""

    def __init__(self, main, dropins, fault=None, now=None):
        self.main, self.dropins, self.fault, self.now = main, dropins, fault, now

    def but(self, **kw):
        return Case(kw.get("main", self.main), kw.get("dropins", self.dropins), self.fault,
                    self.now)

    def policy(self, lab):
        """The policy as the module reads it at the case's clock (5 WINDOWS: the lines outside
        their window as if they were not in the file; errors and status as read)."""
        p = M.load(lab.conf, self.main, lab.confdir, self.dropins)
        return M.judged(p, self.now) if self.now is not None else p

    def paths(self, lab):
        return {lab.conf} | {os.path.join(lab.confdir, n.decode("latin-1"))
                             for n in (self.dropins or {})}


def check_case(lab, case, names, explain_names):
    """Run one case for the logins @names (and explain for @explain_names); returns
    [(typed name, channel, [disagreements])]."""
    lab.install(case.main, case.dropins)
    policy = case.policy(lab)
    paths = case.paths(lab)
    COVER["model: policy %s" % policy.status] += 1
    out = []
    for name, res in zip(names, lab.pam(names, case.fault, case.now)):
        login = Login(policy, case, name)
        COVER["model: grant via %s" % login.grant.via] += 1
        d = compare_pam(policy, login, res, paths)
        if d:
            out.append((name, "pam", d))
    for name in explain_names:
        rc, so, se = lab.explain(name, case.fault, case.now)
        d = compare_explain(policy, Login(policy, case, name), rc, so, se)
        if d:
            out.append((name, "explain", d))
    return out


# ---- shrinking ------------------------------------------------------------------------------

def still_fails(lab, case, name, channel):
    lab.install(case.main, case.dropins)
    policy = case.policy(lab)
    login = Login(policy, case, name)
    if channel == "pam":
        res = lab.pam([name], case.fault, case.now)[0]
        return bool(compare_pam(policy, login, res, case.paths(lab)))
    rc, so, se = lab.explain(name, case.fault, case.now)
    return bool(compare_explain(policy, login, rc, so, se))


def split_lines(data):
    return data.splitlines(keepends=True) if data else []


def shrink(lab, case, name, channel, budget=300):
    """Fewer drop-ins, then fewer lines (halves, then one at a time), while it still fails."""
    tries = [0]

    def fails(c):
        tries[0] += 1
        return tries[0] <= budget and still_fails(lab, c, name, channel)

    if case.dropins:
        for n in list(case.dropins):
            smaller = dict(case.dropins)
            del smaller[n]
            if fails(case.but(dropins=smaller)):
                case = case.but(dropins=smaller)
        if not case.dropins and fails(case.but(dropins=None)):
            case = case.but(dropins=None)

    def shrink_text(get, put):
        nonlocal case
        lines = split_lines(get(case))
        chunk = max(1, len(lines) // 2)
        while chunk >= 1 and lines:
            i = 0
            while i < len(lines):
                cand = lines[:i] + lines[i + chunk:]
                c = put(case, b"".join(cand))
                if fails(c):
                    lines, case = cand, c
                else:
                    i += chunk
            chunk //= 2

    if case.main is not None:
        shrink_text(lambda c: c.main, lambda c, t: c.but(main=t))
    for n in list(case.dropins or {}):
        if case.dropins[n] != "dir":
            shrink_text(lambda c, n=n: c.dropins[n],
                        lambda c, t, n=n: c.but(dropins={**c.dropins, n: t}))
    return case


def show_case(lab, case, name, channel, groups):
    policy = case.policy(lab)
    lab.install(case.main, case.dropins)
    login = Login(policy, case, name)
    lines = ["smallest case (%s):" % channel]

    def show_file(label, data):
        if data is None:
            lines.append("  %s: missing" % label)
        elif data == "dir":
            lines.append("  %s: a directory" % label)
        else:
            lines.append("  %s:" % label)
            for i, l in enumerate(split_lines(data), 1):
                lines.append("    %3d| %s" % (i, repr(l)[2:-1]))
    show_file("policy.conf", case.main)
    if case.dropins is not None:
        lines.append("  capdelegate.d/: %s" % (", ".join(repr(n)[2:-1] for n in case.dropins)
                                               or "empty"))
        for n, data in case.dropins.items():
            show_file("capdelegate.d/" + repr(n)[2:-1], data)
    if case.now is not None:
        lines.append("  clock: %s (%d)" % (utc_text(case.now), case.now))
    if case.fault:
        lines.append("  NSS fault (nss_fault.so): %s" % " ".join(
            "%s=%s" % kv for kv in case.fault.items()))
    user = login.user
    if user is None:
        lines.append("  login: %s (unknown to NSS)" % short(name))
    else:
        mine = sorted(M.groups_of(user, groups))
        lines.append("  login: %s, account %s (gid %d; groups %s)" % (
            short(name), short(user.name), user.gid, ", ".join(short(g) for g in mine) or "none"))
    g = login.grant
    lines.append("  model: policy %s; grant %s via %s%s" % (
        policy.status, M.cap_text(g.caps), g.via, " (NSS outage)" if login.outage else ""))
    for f, n, why in policy.errors[:5]:
        lines.append("    model error %s:%d: %s" % (os.path.basename(f), n, why))
    if channel == "pam":
        res = lab.pam([name], case.fault, case.now)[0]
        lines.append("  code:  " + "; ".join(compare_pam(policy, login, res, case.paths(lab))))
        for l in res.get("log", "").splitlines():
            if "SYSLOG" in l and "no default config" not in l:
                lines.append("    log: " + l.split("SYSLOG", 1)[1])
    else:
        rc, so, se = lab.explain(name, case.fault, case.now)
        lines.append("  code:  " + "; ".join(compare_explain(policy, login, rc, so, se)))
        for l in (so + se).decode(errors="replace").splitlines():
            lines.append("    explain: " + l)
    return "\n".join(lines)


def make_fault(rnd, users, groups):
    """Now and then an NSS fault: a group's or a user's lookup failing (a directory outage),
    or a case-insensitive backend (logins typed in another case)."""
    r = rnd.random()
    if r < 0.06:
        # nss_fault.so's list is NAME:GID,...: a name with ',' or ':' cannot be listed; the
        # name's own bytes go into the environment (surrogateescape), not a re-encoding of them
        g = rnd.choice([g for g in groups if b"," not in g.name and b":" not in g.name] or groups)
        COVER["NSS: a group unreachable"] += 1
        return {"CD_FAULT_GROUPS": "%s:%d" % (g.name.decode("utf-8", "surrogateescape"), g.gid)}
    if r < 0.09:
        u = rnd.choice([u for u in users if b"," not in u.name])
        COVER["NSS: a user's lookup fails"] += 1
        return {"CD_FAULT_USERS": u.name.decode("utf-8", "surrogateescape")}
    if r < 0.13:
        COVER["NSS: case-insensitive backend"] += 1
        return {"CD_FAULT_CASEFOLD": "1"}
    return None


def typed_names(rnd, users, fault):
    """The names logins are typed with: each account's, in another case under case folding;
    and one no account has."""
    names = [u.name for u in users]
    if fault and fault.get("CD_FAULT_CASEFOLD"):
        names = [bytes(c ^ 0x20 if rnd.random() < 0.5 and chr(c).isalpha() and c < 128 else c
                       for c in n) for n in names]
    return names + [b"nosuchuser"]


# ---- driver ---------------------------------------------------------------------------------

def open_lab(args, seed):
    """The fixture of @seed, installed, and its random stream."""
    rnd = random.Random(seed)
    users, groups = make_fixture(rnd)
    # a minute of 1990 to 2200: before and past 2038, leap days and centuries among them
    CLOCK[0] = rnd.randrange(631152000, 7258118400) // 60 * 60
    LAB_USERS[0], LAB_GROUPS[0] = users, groups
    return rnd, users, groups, Lab(args.bin, users, groups, args.keep)


def report(lab, case, bad, groups, label, found):
    """Shrink the first disagreement of @bad, log it and add it to @found."""
    name, channel, d = bad[0]
    text = show_case(lab, shrink(lab, case, name, channel), name, channel, groups)
    found.append((label, name, channel, d, text))
    log("%s: %s: %s" % (label, short(name), "; ".join(d)))
    log(text)


def run_seed(args, seed, deadline=None):
    rnd, users, groups, lab = open_lab(args, seed)
    stats = {"cases": 0, "logins": 0, "explains": 0}
    found = []
    try:
        for _ in range(args.cases):
            if deadline and time.time() > deadline:
                break
            case = Case(*make_case(rnd, users, groups), make_fault(rnd, users, groups),
                        CLOCK[0] + rnd.choice([-60, -1, 0, 0, 1, 60]))
            names = typed_names(rnd, users, case.fault)
            ex_names = rnd.sample(names[:-1], min(args.explain_users, len(users)))
            ex_names += [b"nosuchuser"] if rnd.random() < 0.1 else []
            bad = check_case(lab, case, names, ex_names)
            stats["cases"] += 1
            stats["logins"] += len(names)
            stats["explains"] += len(ex_names)
            if bad:
                report(lab, case, bad, groups, "seed %d" % seed, found)
                if len(found) >= args.max_findings:
                    break
    finally:
        lab.close()
    return stats, found


def run_catalogue(args, seed=0):
    """Every malformed line and near miss of BAD_LINES once, five to a policy (each at a random
    place of the main file or of a drop-in, so that the FILE:LINE of each error is compared):
    two logins and one explain each."""
    rnd, users, groups, lab = open_lab(args, seed)
    stats = {"cases": 0, "logins": 0, "explains": 0}
    found = []
    try:
        for k in range(0, len(BAD_LINES), 5):
            files = [split_lines(random_file(rnd, users, groups, 0)) for _ in range(2)]
            for bad in BAD_LINES[k:k + 5]:
                f = rnd.choice(files)
                f.insert(rnd.randint(0, len(f)), bad + b"\n")
            case = Case(b"".join(files[0]), {b"50-bad.conf": b"".join(files[1])}, None, CLOCK[0])
            some = [u.name for u in rnd.sample(users, 2)]
            bad = check_case(lab, case, some, some[:1])
            stats["cases"] += 1
            stats["logins"] += 2
            stats["explains"] += 1
            if bad:
                report(lab, case, bad, groups, "catalogue", found)
    finally:
        lab.close()
    return stats, found


def run_one(args, seed, deadline):
    """One run (the catalogue when seed is None): its stats, findings and coverage counts."""
    COVER.clear()
    stats, found = run_catalogue(args) if seed is None else run_seed(args, seed, deadline)
    return stats, found, Counter(COVER)


def run_all(args, runs, deadline):
    """Each run's (seed, stats, found), in the order given. Fixed seeds run --jobs at a time
    (each in its own work directory, with its own PAM driver): a login mostly waits for a
    policy written just now to settle (50 ms), so runs side by side cost little more than one.
    Timed runs (--seconds) go one after another until the deadline."""
    total_cover = Counter()
    if args.seconds or args.jobs <= 1:
        for seed in runs:
            if deadline and time.time() > deadline:
                break
            stats, found, cover = run_one(args, seed, deadline)
            total_cover.update(cover)
            yield seed, stats, found
    else:
        with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = [(seed, pool.submit(run_one, args, seed, deadline)) for seed in runs]
            for seed, fut in futures:
                stats, found, cover = fut.result()
                total_cover.update(cover)
                yield seed, stats, found
    COVER.clear()
    COVER.update(total_cover)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--bin", default=os.path.join(os.environ.get(
        "LAB_BUILD", os.path.join(ROOT, "_build", "host")), "capdelegate"))
    # 3783377618 and 2560288540: ./lab fuzz 600 found the module granting nothing, with no
    # reason logged, to a member of a group only through the primary gid once getgrouplist had
    # left that gid out (the group unreachable by gid, found by name)
    ap.add_argument("--seeds", default="1,2,3,4,3783377618,2560288540")
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--explain-users", type=int, default=3)
    ap.add_argument("--max-findings", type=int, default=1)
    ap.add_argument("--tsv", action="store_true")
    ap.add_argument("--jobs", type=int, default=4,
                    help="fixed seeds run this many at a time (default 4)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        if args.tsv:
            print("SKIP\tmodel: differential test\tneeds root (root-owned policies, capset)")
            return 0
        log("needs root")
        return 2
    if not os.access(args.bin, os.X_OK):
        log("%s not built" % args.bin)
        return 2
    t0 = time.time()
    total = {"cases": 0, "logins": 0, "explains": 0}
    failed = 0
    if args.seconds:
        deadline = t0 + args.seconds
        seeds = iter(lambda: random.SystemRandom().randrange(1 << 32), None)
    else:
        deadline = None
        seeds = iter(int(s) for s in args.seeds.split(","))
    runs = seeds if args.seconds else [None] + list(seeds)
    for seed, stats, found in run_all(args, runs, deadline):
        for k in total:
            total[k] += stats[k]
        if args.tsv:
            if found:
                for label, name, channel, d, _ in found:
                    print("FAIL\tmodel %s: %s %s: %s" % (label, channel, short(name), d[0]))
            else:
                print("PASS\tmodel %s: %d cases, %d logins, %d explains agree with the model"
                      % ("seed %d" % seed if seed is not None else
                         "catalogue of %d malformed lines and near misses" % len(BAD_LINES),
                         stats["cases"], stats["logins"], stats["explains"]))
        failed += len(found)
    log("coverage: " + "; ".join("%s %d" % kv for kv in sorted(COVER.items())))
    log("%d cases, %d PAM logins, %d explains, %d disagreements, %.1f s" % (
        total["cases"], total["logins"], total["explains"], failed, time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
