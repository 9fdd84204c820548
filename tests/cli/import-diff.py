#!/usr/bin/env python3
"""import-diff.py: `capdelegate import-pam-cap` against Debian's real pam_cap.so.

Random capability.conf files and random users and group memberships (nss_wrapper files): for
every user, a real PAM transaction (pam_start_confdir, authenticate, setcred) through pam_cap.so
on the file and one through pam_capdelegate.so on its translation, each in a child of its own,
which reports the kernel's CapInh. The translation must never give a user a capability pam_cap
does not; when import exits 0 it must give exactly the same. A disagreement is shrunk (lines,
then words) and the smallest capability.conf that shows it is printed.

usage: import-diff.py --bin CAPDELEGATE [--module SO] [--pam-cap SO] [--fault SO] [--work DIR]
                      (--seed S | --seconds N) [--cases K]
  --seed S      K files from seed S (fixed seeds run in tests/cli/run.sh)
  --seconds N   random seeds until N seconds have passed (./lab fuzz); each seed is printed
  --cases K     files per seed (default 12)
Needs root (pam_cap raises pI; the policy must be root-owned). Exit 0: all agree, 1: a
disagreement (printed), 2: cannot run.
"""
import argparse
import ctypes
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NSS_WRAPPER = "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so"
PAM_CAP = "/lib/x86_64-linux-gnu/security/pam_cap.so"
CAPS = {"cap_chown": 0, "cap_kill": 5, "cap_net_admin": 12, "cap_net_raw": 13,
        "cap_sys_time": 25, "cap_syslog": 34}

# ---- the PAM side: one transaction per child, run under nss_wrapper (--drive) ----------------


class PamConv(ctypes.Structure):
    _fields_ = [("conv", ctypes.c_void_p), ("appdata_ptr", ctypes.c_void_p)]


CONV = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                        ctypes.c_void_p)
no_conv = CONV(lambda n, msg, resp, data: 19)  # PAM_CONV_ERR: no module here asks anything
PAM_ESTABLISH_CRED = 0x2


def cap_inh():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapInh:"):
                return int(line.split()[1], 16)
    return -1


LIBPAM = ctypes.CDLL("libpam.so.0")  # loaded once: every child inherits it
LIBCAP = ctypes.CDLL("libcap.so.2")
LIBCAP.cap_get_proc.restype = ctypes.c_void_p


def clear_inheritable():
    """Login's own pI is empty: what pam_cap's all (and no match) then leaves."""
    libcap = LIBCAP
    c = libcap.cap_get_proc()
    libcap.cap_clear_flag(ctypes.c_void_p(c), 2)  # CAP_INHERITABLE
    rc = libcap.cap_set_proc(ctypes.c_void_p(c))
    libcap.cap_free(ctypes.c_void_p(c))
    return rc


def transaction(confdir, service, user):
    """CapInh after authenticate + setcred(ESTABLISH), in a child; -1 if the child failed."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        val = -1
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            if clear_inheritable() == 0:
                pam = LIBPAM
                h = ctypes.c_void_p()
                conv = PamConv(ctypes.cast(no_conv, ctypes.c_void_p), None)
                rc = pam.pam_start_confdir(service.encode(), user.encode(), ctypes.byref(conv),
                                           confdir.encode(), ctypes.byref(h))
                if rc == 0:
                    rc = pam.pam_authenticate(h, 0)
                    # pam_cap's authenticate says PAM_IGNORE for a user no line matches:
                    # pam_permit carries the stack; setcred runs whatever authenticate said
                    pam.pam_setcred(h, PAM_ESTABLISH_CRED)
                    val = cap_inh()
                    pam.pam_end(h, 0)
        finally:
            os.write(w, ("%d\n" % val).encode())
            os._exit(0)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 64)
        if not chunk:
            break
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return int(out.decode().strip() or "-1")


# ---- the fixture: users, groups, a capability.conf ------------------------------------------


def gen_fixture(rng):
    users = ["alice", "bob", "carol", "dave", "erin"]
    groups = ["staff", "admins", "ops", "lice", "ob"]  # lice, ob: what alice, bob match by accident
    if rng.random() < 0.5:
        users.append("xstaff")  # a user whose name is a bare word matching staff
    uid = {u: 1001 + i for i, u in enumerate(users)}
    gid = {g: 2000 + i for i, g in enumerate(groups)}
    members = {g: [] for g in groups}
    primary = {}
    for u in users:
        primary[u] = uid[u]
        for g in groups:
            if rng.random() < 0.35:
                members[g].append(u)
        if rng.random() < 0.15:  # membership through the primary gid alone
            primary[u] = gid[rng.choice(groups)]
    passwd = ["root:x:0:0:root:/root:/bin/sh"]
    passwd += ["%s:x:%d:%d::/home/%s:/bin/sh" % (u, uid[u], primary[u], u) for u in users]
    group = ["root:x:0:"] + ["%s:x:%d:" % (u, uid[u]) for u in users]
    group += ["%s:x:%d:%s" % (g, gid[g], ",".join(members[g])) for g in groups]
    return users + ["root"], users, groups, "\n".join(passwd) + "\n", "\n".join(group) + "\n"


def gen_caps(rng):
    r = rng.random()
    if r < 0.12:
        return "none"
    if r < 0.2:
        return "all"
    if r < 0.24:
        return rng.choice(["cap_bogus", "12,13", "5"])
    names = rng.sample(sorted(CAPS), rng.randint(1, 3))
    if rng.random() < 0.06:
        names[0] = rng.choice(["^", "!"]) + names[0]
    return ",".join(names)


def gen_word(rng, users, groups):
    r = rng.random()
    if r < 0.38:
        return rng.choice(users + ["root", "zed"])
    if r < 0.75:
        return "@" + rng.choice(groups + users + ["nogroup"])
    if r < 0.85:
        return "*"
    return rng.choice(["x", "d"]) + rng.choice(groups)  # pam_cap: also the group after byte 1


def gen_conf(rng, users, groups):
    if rng.random() < 0.3:
        return gen_tame_conf(rng)
    lines = []
    for _ in range(rng.randint(1, 7)):
        r = rng.random()
        if r < 0.08:
            lines.append(rng.choice(["# a comment", ""]))
            continue
        words = [gen_word(rng, users, groups) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.05:
            words += ["#", rng.choice(users + groups)]
        line = gen_caps(rng) + rng.choice([" ", "\t", "  "]) + " ".join(words)
        if rng.random() < 0.03:  # pam_cap reads 4095 bytes at a time
            cut = rng.randint(1, len(words))
            line = line.split(" ")[0] + " " + " ".join(words[:cut]) + " " * 4095 + \
                gen_caps(rng) + " " + " ".join(words[cut:] or ["bob"])
        lines.append(line)
    return lines


def gen_tame_conf(rng):
    """A file an administrator would write, that import may translate exactly: users whose
    names match no group by accident, groups granting no more than the group lines above them,
    a '*' line last; sometimes one line that breaks it."""
    lines, caps = [], None
    for u in rng.sample(["carol", "dave", "erin", "root"], rng.randint(0, 3)):
        lines.append("%s %s" % (gen_caps(rng) if rng.random() < 0.1 else
                                ",".join(rng.sample(sorted(CAPS), rng.randint(1, 2))), u))
    for g in rng.sample(["staff", "admins", "ops"], rng.randint(0, 2)):
        caps = caps or rng.sample(sorted(CAPS), 3)
        caps = rng.sample(caps, rng.randint(1, len(caps)))
        lines.append("%s @%s" % (",".join(caps), g))
    if rng.random() < 0.6:
        lines.append("%s *" % rng.choice(["none", "cap_kill", ",".join(caps or ["cap_chown"])]))
    if rng.random() < 0.3 or not lines:
        lines.insert(rng.randint(0, len(lines)), "cap_syslog %s" % rng.choice(["erin", "@ops", "xstaff"]))
    return lines


# ---- one comparison ----------------------------------------------------------------------------


class Case:
    """One fixture: the NSS files (at the paths nss_wrapper was started with: every PAM child
    reads them afresh, this process never looks a name up), pam_cap's file, the translation."""

    def __init__(self, args, work, passwd, group, users):
        self.args, self.work, self.users = args, work, users
        for name, text in (("NSS_WRAPPER_PASSWD", passwd), ("NSS_WRAPPER_GROUP", group)):
            with open(os.environ[name], "w") as f:
                f.write(text)
        self.capconf = os.path.join(work, "capability.conf")
        self.policy = os.path.join(work, "capdelegate.conf")
        with open(os.path.join(work, "pamcap"), "w") as f:
            f.write("auth required pam_permit.so\nauth optional %s config=%s\n"
                    % (args.pam_cap, self.capconf))
        with open(os.path.join(work, "capdelegate"), "w") as f:
            f.write("auth required pam_permit.so\nauth optional %s config=%s confdir=\n"
                    % (args.module, self.policy))

    def run(self, lines, users=None):
        """(import's exit status, {user: (pam_cap pI, translation pI)}, import's stderr)."""
        with open(self.capconf, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        imp = subprocess.run([self.args.bin, "import-pam-cap", self.capconf], capture_output=True)
        with open(self.policy, "wb") as f:
            f.write(imp.stdout)
        os.chmod(self.policy, 0o644)
        got = {u: (transaction(self.work, "pamcap", u), transaction(self.work, "capdelegate", u))
               for u in users or self.users}
        return imp.returncode, got, imp.stderr.decode(errors="replace")


def judge(rc, got):
    """The first broken promise, or None."""
    if rc not in (0, 1, 2):
        return ("import exited %d" % rc, None)
    # exit 2 prints no translation (an empty policy): nothing may be granted
    for u, (pc, cd) in sorted(got.items()):
        if pc < 0 or cd < 0:
            return ("a PAM transaction failed for %s" % u, u)
        if cd & ~pc:
            return ("over-grant: %s gets %s from the translation, %s from pam_cap"
                    % (u, caps_text(cd), caps_text(pc)), u)
        if rc == 0 and cd != pc:
            return ("import exit 0 but %s gets %s from the translation, %s from pam_cap"
                    % (u, caps_text(cd), caps_text(pc)), u)
    return None


def caps_text(m):
    names = [n for n, b in sorted(CAPS.items(), key=lambda x: x[1]) if m >> b & 1]
    rest = m & ~sum(1 << b for b in CAPS.values())
    return ",".join(names + (["0x%x" % rest] if rest else [])) or "none"


def shrink(case, lines, user):
    """Drop lines, then words, while the same user (or import itself) still shows a broken
    promise."""
    def fails(ls):
        rc, got, _ = case.run(ls, [user] if user else [])
        return judge(rc, got) is not None
    changed = True
    while changed:
        changed = False
        for i in range(len(lines)):
            cand = lines[:i] + lines[i + 1:]
            if cand and fails(cand):
                lines, changed = cand, True
                break
        if changed:
            continue
        for i, l in enumerate(lines):
            words = l.split()
            for k in range(1, len(words)):
                if len(words) <= 2:
                    break
                cand = lines[:i] + [" ".join(words[:k] + words[k + 1:])] + lines[i + 1:]
                if fails(cand):
                    lines, changed = cand, True
                    break
            if changed:
                break
    return lines


def one_seed(args, seed, base):
    rng = random.Random(seed)
    for n in range(args.cases):
        work = tempfile.mkdtemp(dir=base)
        os.chmod(work, 0o755)
        everyone, users, groups, passwd, group = gen_fixture(rng)
        lines = gen_conf(rng, users, groups)
        case = Case(args, work, passwd, group, everyone)
        rc, got, err = case.run(lines)
        bad = judge(rc, got)
        args.stats["cases"] += 1
        args.stats["users"] += len(got)
        args.stats["exit0"] += rc == 0
        if bad is None:
            shutil.rmtree(work)
            continue
        why, user = bad
        small = shrink(case, lines, user)
        rc, got, err = case.run(small)
        print("import-diff: seed %d case %d: %s" % (seed, n, judge(rc, got) or why))
        print("--- passwd\n%s--- group\n%s--- smallest capability.conf (import exit %d)\n%s"
              % (passwd, group, rc, "".join(l[:200] + ("...\n" if len(l) > 200 else "\n")
                                          for l in small)))
        print("--- import's stderr\n%s" % err)
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin")
    ap.add_argument("--module")
    ap.add_argument("--pam-cap", default=PAM_CAP)
    ap.add_argument("--fault")
    ap.add_argument("--work")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--cases", type=int, default=12)
    ap.add_argument("--base", help=argparse.SUPPRESS)  # set when re-run under nss_wrapper
    args = ap.parse_args()
    if not args.bin or (args.seed is None) == (args.seconds is None):
        ap.print_usage(sys.stderr)
        return 2
    build = os.path.dirname(os.path.abspath(args.bin))
    args.module = args.module or os.path.join(build, ".libs", "pam_capdelegate.so")
    args.fault = args.fault or os.path.join(build, "tests", "stack", ".libs", "nss_fault.so")
    for f in (args.bin, args.module, args.fault, args.pam_cap, NSS_WRAPPER):
        if not os.path.exists(f):
            print("import-diff: %s missing (./lab build; libpam-cap, nss_wrapper)" % f,
                  file=sys.stderr)
            return 2
    if os.geteuid() != 0:
        print("import-diff: needs root (root-owned policy, pam_cap raising pI)", file=sys.stderr)
        return 2
    if args.base is None:
        # Policies below a directory others can write are refused (/tmp too): /run as root.
        base = tempfile.mkdtemp(dir=args.work or "/run", prefix="import-diff.")
        os.chmod(base, 0o755)
        env = dict(os.environ, NSS_WRAPPER_PASSWD=os.path.join(base, "passwd"),
                   NSS_WRAPPER_GROUP=os.path.join(base, "group"),
                   LD_PRELOAD="%s:%s" % (args.fault, NSS_WRAPPER))
        try:
            return subprocess.run([sys.executable, os.path.abspath(__file__), "--base", base]
                                  + sys.argv[1:], env=env).returncode
        finally:
            shutil.rmtree(base, ignore_errors=True)
    args.stats = {"cases": 0, "users": 0, "exit0": 0}
    t0, ok, seeds = time.time(), True, 0
    if args.seed is not None:
        ok = one_seed(args, args.seed, args.base)
        seeds = 1
    else:
        while ok and time.time() - t0 < args.seconds:
            seed = random.SystemRandom().randrange(1 << 32)
            print("import-diff: seed %d" % seed, file=sys.stderr)
            ok = one_seed(args, seed, args.base)
            seeds += 1
    s = args.stats
    print("import-diff: %d seeds, %d files, %d user logins compared (2 PAM transactions each), "
          "%d files imported with exit 0, %.1f s: %s"
          % (seeds, s["cases"], s["users"], s["exit0"], time.time() - t0,
             "all agree" if ok else "DISAGREEMENT"), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
