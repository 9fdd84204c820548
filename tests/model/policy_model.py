#!/usr/bin/env python3
"""policy_model.py: an independent model of the capdelegate policy, written from
capdelegate.conf(5) and pam_capdelegate(8) alone (never from the C sources of
pam_capdelegate/core/), for the differential test in diff.py.

Given the main file's bytes (None: missing), the drop-in directory's entries (None: no
directory) and an NSS fixture, it computes the policy's status (ok, missing, syntax error,
unsafe), the rules, the lines in error, and each user's grant: a set of capability numbers, how it
was reached (user, group, default, none) and the lines that decided it.

Each rule of the page that the model follows is cited next to the code that follows it ("5:"
capdelegate.conf(5), "8:" pam_capdelegate(8)).

    ./policy_model.py POLICY [DROPIN...] -- USER:GID GROUP:GID:MEMBER,... ...
prints each user's grant (a small command-line front end for trying a policy by hand).
"""
import re
import subprocess
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

BLANKS = b" \t"
MAX_NAME = 256                      # 5: "at most 256 bytes long once decoded"
MAX_SIZE = 1024 * 1024              # 5: "larger than 1 MiB" is rejected; all files together


def libcap_names():
    """Capability name -> number, as libcap spells them (capsh --decode of every bit)."""
    out = subprocess.run(["capsh", "--decode=0xffffffffffffffff"], capture_output=True,
                         text=True, check=True).stdout
    names = out.strip().split("=", 1)[1].split(",")
    return {n: i for i, n in enumerate(names) if n.startswith("cap_")}


CAPS = libcap_names()
CAP_NAMES = {v: k for k, v in CAPS.items()}


def cap_text(caps):
    """libcap's names, in number order, comma-separated; "none" for the empty set."""
    return ",".join(CAP_NAMES[c] for c in sorted(caps)) or "none"


@dataclass(frozen=True)
class Rule:
    file: str
    line: int
    kind: str            # "user", "group" or "default"
    name: bytes          # decoded name (b"" for *)
    caps: frozenset      # empty for none
    start: int = None    # 5 WINDOWS: from TIME (seconds since the epoch), None: none
    end: int = None      # until TIME


@dataclass
class Policy:
    status: str = "ok"   # ok, missing, syntax error, unsafe
    rules: list = field(default_factory=list)
    errors: list = field(default_factory=list)   # (file, line, why)


@dataclass
class Grant:
    caps: frozenset
    via: str             # user, group, default, none
    rules: list          # the Rules that decided
    lookup_failed: bool = False   # nothing, because a group's lookup failed


class LineError(Exception):
    pass


# ---- one line -------------------------------------------------------------------------------

def is_control(b):
    # 5: "a NUL byte or other control character" (tab is a separator)
    return b < 0x20 or b == 0x7F


NAME_BYTES = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
OCTAL = set(b"01234567")


def decode_name(raw):
    """A user or group name as written -> its bytes. 5: letters, digits, _, . and -; @ after the
    first character; a backslash; any other byte except NUL and control characters as a
    backslash and three octal digits (\\000 to \\377: \\400 to \\777 name no byte, and there
    the backslash is a plain one); not starting with - or @; may end in $, but $ alone is no
    name; at most 256 bytes once decoded."""
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if (c == 0x5C and len(raw) - i >= 4 and all(x in OCTAL for x in raw[i + 1:i + 4])
                and raw[i + 1] in b"0123"):
            v = int(raw[i + 1:i + 4], 8)
            if is_control(v):
                raise LineError("escape of a NUL or control character")
            out.append(v)
            i += 4
            continue
        if c in NAME_BYTES or c == 0x5C:
            pass
        elif c == 0x40 and i > 0:
            pass
        elif c == 0x24 and i == len(raw) - 1:
            pass
        else:
            raise LineError("character not allowed in a name: %r" % bytes([c]))
        out.append(c)
        i += 1
    if not out:
        raise LineError("empty name")
    if len(out) > MAX_NAME:
        raise LineError("name longer than 256 bytes")
    if out[0] in b"-@":
        raise LineError("name starts with - or @")
    if out == b"$":
        raise LineError("$ alone is no name")
    return bytes(out)


def parse_subject(raw):
    if raw == b"*":
        return "default", b""
    if raw.startswith(b"@"):
        return "group", decode_name(raw[1:])
    return "user", decode_name(raw)


def parse_caps(field_):
    """5: none, or a comma-separated list of capability names in any letter case, blanks allowed
    around the commas; all, numbers, empty elements, blanks between names, none with anything
    else and any token that is not exactly a name are errors."""
    tokens = [t.strip(BLANKS) for t in field_.split(b",")]
    caps = set()
    for t in tokens:
        if not t:
            raise LineError("empty list element")
        if any(b in BLANKS for b in t):
            raise LineError("capabilities separated by blanks")
        low = t.lower().decode("latin-1")
        if low == "none":
            if len(tokens) != 1:
                raise LineError("none combined with another element")
            return frozenset()
        if low not in CAPS:
            raise LineError("unknown capability %r" % t)
        caps.add(CAPS[low])
    return frozenset(caps)


TIME_FORM = re.compile(rb"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?Z\Z")


def parse_time(word):
    """5 WINDOWS: UTC, YYYY-MM-DDTHH:MMZ or YYYY-MM-DDTHH:MM:SSZ, the Z required; an impossible
    date or time (24:00, :60) and a time before 1970 are errors."""
    m = TIME_FORM.match(word)
    if not m:
        raise LineError("not a UTC time with Z: %r" % word)
    y, mo, d, h, mi = (int(x) for x in m.groups()[:5])
    sec = int(m.group(6) or 0)
    if y < 1970:
        raise LineError("a time before 1970")
    try:
        t = datetime(y, mo, d, h, mi, sec, tzinfo=timezone.utc)
    except ValueError as e:
        raise LineError("no such date or time: %s" % e)
    return int(t.timestamp())


def split_window(rest):
    """5 WINDOWS: after the capabilities, "from TIME", "until TIME", either or both, in either
    order. The window starts at the first word from or until that follows a blank."""
    words = re.split(rb"[ \t]+", rest)
    for k in range(1, len(words)):
        if words[k] in (b"from", b"until"):
            cut = [m.start() for m in re.finditer(rb"[ \t]+", rest)][k - 1]
            return rest[:cut], words[k:]
    return rest, []


def parse_window(words):
    bounds = {}
    if len(words) % 2:
        raise LineError("a bound without its time")
    for k in range(0, len(words), 2):
        if words[k] not in (b"from", b"until"):
            raise LineError("text after the capabilities")
        if words[k] in bounds:
            raise LineError("a second %s" % words[k].decode())
        bounds[words[k]] = parse_time(words[k + 1])
    start, end = bounds.get(b"from"), bounds.get(b"until")
    if start is not None and end is not None and end <= start:
        raise LineError("a window whose end is not after its start")
    return start, end


def in_force(rule, now):
    """5 WINDOWS: from is the first second a line is in force, until the first it no longer is."""
    return (rule.start is None or now >= rule.start) and (rule.end is None or now < rule.end)


def judged(policy, now):
    """5 WINDOWS: a line outside its window is as if it were not in the file."""
    return replace(policy, rules=[r for r in policy.rules if in_force(r, now)])


def parse_line(text):
    """One line without its newline -> (kind, name, caps) or None for a blank/comment line."""
    if text.endswith(b"\r"):
        text = text[:-1]            # 5: a trailing carriage return is tolerated
    if any(is_control(b) and b != 0x09 for b in text):
        raise LineError("NUL or control character")
    text = text.split(b"#", 1)[0]   # 5: a # starts a comment that runs to the end of the line
    text = text.strip(BLANKS)
    if not text:
        return None                 # 5: blank lines are ignored
    m = re.match(rb"([^ \t]+)[ \t]+(.*)\Z", text, re.S)
    if not m:
        raise LineError("missing capabilities field")
    kind, name = parse_subject(m.group(1))
    caps, window = split_window(m.group(2))
    start, end = parse_window(window)
    return kind, name, parse_caps(caps.strip(BLANKS)), start, end


# ---- files ----------------------------------------------------------------------------------

def parse_file(policy, path, data):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, text in enumerate(lines, 1):
        try:
            r = parse_line(text)
        except LineError as e:
            policy.errors.append((path, n, str(e)))
            continue
        if r is not None:
            policy.rules.append(Rule(path, n, *r))


def dropin_is_read(name):
    """5: every entry named NAME.conf that does not start with a dot."""
    return name.endswith(b".conf") and not name.startswith(b".")


def load(main_path, main, confdir, dropins):
    """main: bytes or None (missing). dropins: None (no directory) or {name: bytes, or "dir"
    for a directory entry}. Paths are str (as the messages print them)."""
    p = Policy()
    if main is None:
        p.status = "missing"        # 5: a missing main file grants nothing, whatever the drop-ins
        return p
    files = [(main_path, main)]
    for name in sorted(dropins or {}):   # 5: in byte order of the names
        if dropin_is_read(name):
            files.append((confdir + "/" + name.decode("latin-1"), dropins[name]))
    if any(data == "dir" for _, data in files):
        p.status = "unsafe"         # 5: each drop-in must pass the safety rules: a regular file
        return p
    if sum(len(data) for _, data in files) > MAX_SIZE:
        p.status = "unsafe"         # 5: the size limit counts all files together
        return p
    for path, data in files:
        parse_file(p, path, data)
    if p.errors:
        p.status = "syntax error"   # 5: any malformed line rejects the whole file
        p.rules = []
    return p


# ---- resolution -----------------------------------------------------------------------------

@dataclass
class User:
    name: bytes
    uid: int
    gid: int


@dataclass
class Group:
    name: bytes
    gid: int
    members: list


def groups_of(user, groups):
    """5: primary or supplementary, as NSS reports them."""
    return {g.name for g in groups if g.gid == user.gid or user.name in g.members}


def narrows(policy, name):
    """pam_capdelegate(8) GROUPS: what the * lines give that the lines of group @name do not."""
    every = frozenset().union(*(r.caps for r in policy.rules if r.kind == "default"))
    its = frozenset().union(*(r.caps for r in policy.rules if r.kind == "group" and r.name == name))
    return every - its


def narrowing_provable(policy, mine, groups, unreachable):
    """8 GROUPS. False when a user in none of the policy's groups (@mine: the user's groups)
    falls to * but a group whose lines give less cannot be shown not to hold the user: NSS does
    not know it (or cannot reach it), or its entry lists no members. Each such group is asked
    about by name; nothing is granted."""
    if any(r.kind == "group" and r.name in mine for r in policy.rules):
        return True
    # a group whose entry lists no members cannot show it either: the fixtures' groups are not
    # in the local group file, so an empty list may be a directory's that leaves members out
    shown = {g.name for g in groups if g.members} - set(unreachable)
    return all(r.name in shown for r in policy.rules if r.kind == "group" and narrows(policy, r.name))


def resolve(policy, user, groups, unreachable=frozenset()):
    """5 RESOLUTION: the user's own lines, else the lines of the user's groups, else the *
    lines, else nothing; a policy that is not ok grants nothing. @unreachable: names of groups
    whose lookup fails (a directory outage, which getgrouplist hides by leaving them out): 5
    ERRORS AND SAFETY, the user's list cannot say "not a member" while the directory is down,
    so a policy group the list does not name grants nothing (never read as "not a member");
    groups are not needed when the user's own lines decide. A user who would fall to * is shown
    outside each group that narrows it by that group's own entry (narrowing_provable)."""
    if policy.status != "ok" or user is None:
        return Grant(frozenset(), "none", [])
    own = [r for r in policy.rules if r.kind == "user" and r.name == user.name]
    mine = groups_of(user, groups) - set(unreachable)
    if not own and unreachable and any(r.kind == "group" and r.name not in mine for r in policy.rules):
        return Grant(frozenset(), "none", [], True)
    if not own and not narrowing_provable(policy, mine, groups, unreachable):
        return Grant(frozenset(), "none", [], True)
    tiers = (("user", lambda r: r.kind == "user" and r.name == user.name),
             ("group", lambda r: r.kind == "group" and r.name in mine),
             ("default", lambda r: r.kind == "default"))
    for via, match in tiers:
        rules = [r for r in policy.rules if match(r)]
        if rules:
            return Grant(frozenset().union(*(r.caps for r in rules)), via, rules)
    return Grant(frozenset(), "none", [])


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or "--" not in argv:
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    cut = argv.index("--")
    files, fixture = argv[:cut], argv[cut + 1:]
    dropins = {f.rsplit("/", 1)[-1].encode(): open(f, "rb").read() for f in files[1:]}
    policy = load(files[0], open(files[0], "rb").read(), "confdir", dropins)
    users, groups = [], []
    for spec in fixture:
        parts = spec.split(":")
        if len(parts) == 2:
            users.append(User(parts[0].encode(), 0, int(parts[1])))
        else:
            groups.append(Group(parts[0].encode(), int(parts[1]),
                                [m.encode() for m in parts[2].split(",") if m]))
    print("policy\t%s" % policy.status)
    for f, n, why in policy.errors:
        print("error\t%s:%d\t%s" % (f, n, why))
    for u in users:
        g = resolve(policy, u, groups)
        print("grant\t%s\t%s\t%s" % (u.name.decode(), cap_text(g.caps), g.via))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
