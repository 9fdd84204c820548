#!/usr/bin/env bash
# usage-bench.sh: `capdelegate usage` over a generated audit log of EVENTS events against
# `ausearch -k capdelegate -i` over the same file, and usage alone at a quarter and a half of
# the size, so that its peak memory shows whether it grows with the log (it streams: it should
# not). Prints wall and CPU time, peak RSS, the ratio usage/ausearch. A benchmark, not a test:
# it never fails on figures.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tests/bench/usage-bench.sh [--events N] [--keep]

  --events N  events in the log (default 1000000): 2% logins (the module's grant record and the
              LOGIN record; the oldest of 50 sessions open closed then, USER_END), 73% runs of
              marked files under the key capdelegate in the open sessions (SYSCALL, BPRM_FCAPS
              when the run gained its capability, EXECVE, CWD, two PATH, PROCTITLE records),
              25% other events (cron's USER_START)
  --keep      keep the generated logs (path printed)
Environment: LAB_BUILD (default ./_build/host) holds the capdelegate binary; AUSEARCH the
ausearch to compare with (default: the one on PATH, else auditd's .deb unpacked, never
installed, into _build/bench-auditd: installing auditd would start a daemon on this host).
The users of the log are this host's first accounts, so that ausearch -i names them from
/etc/passwd as it would on a real host.
USAGE
}

EVENTS=1000000 KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CAPDELEGATE="${LAB_BUILD:-$ROOT/_build/host}/capdelegate"
[ -x "$CAPDELEGATE" ] || { echo "usage-bench: $CAPDELEGATE not built (./lab build)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "usage-bench: python3 missing (./lab deps)" >&2; exit 2; }

AUSEARCH=${AUSEARCH:-$(command -v ausearch || true)}
if [ -z "$AUSEARCH" ]; then
  d="$ROOT/_build/bench-auditd"
  if [ ! -x "$d/sbin/ausearch" ]; then
    mkdir -p "$d"
    (cd "$d" && apt-get download auditd >/dev/null 2>&1 && dpkg-deb -x auditd_*.deb .) ||
      { echo "usage-bench: no ausearch (apt-get download auditd failed)" >&2; exit 2; }
  fi
  AUSEARCH="$d/sbin/ausearch"
fi

# not below /tmp or /var/tmp: the marks file must sit in directories only root can write
mkdir -p "$ROOT/_build"
DIR=$(mktemp -d "$ROOT/_build/usage-bench.XXXXXX")
cleanup() { [ "$KEEP" = 1 ] && echo "logs kept: $DIR" >&2 || rm -rf "$DIR"; }
trap cleanup EXIT
chmod 0755 "$DIR"

printf '/usr/bin/ping cap_net_raw=i\n/usr/local/bin/dmesg-delegated cap_syslog=ei\n' >"$DIR/marks.conf"
chmod 0644 "$DIR/marks.conf"

# gen EVENTS FILE: the log, as the kernel and the module write it, one session in 50 events
gen() {
  python3 - "$1" "$2" <<'PY'
import pwd, random, sys
n, out = int(sys.argv[1]), open(sys.argv[2], "w", buffering=1 << 20)
r = random.Random(1)
users = [(p.pw_uid, p.pw_name) for p in pwd.getpwall()][:20]
t, serial, nextses, sessions = 1765000000.0, 1000, 1, []
w = out.write
for i in range(n):
    t += 0.005; serial += 1
    ts = "%.3f:%d" % (t, serial)
    k = r.random()
    if k < 0.02 or not sessions:
        uid, name = r.choice(users); pid = r.randint(300, 4000000)
        caps = "cap_net_raw" if uid % 3 else "none"
        w("type=USER msg=audit(%s): pid=%d uid=0 auid=4294967295 ses=4294967295 subj=unconfined msg='op=capdelegate-grant acct=\"%s\" grant=%s policy=ok rules=/etc/security/capdelegate.conf:%d exe=\"/usr/bin/login\" hostname=? addr=? terminal=tty1 res=success'\n" % (ts, pid, name, caps, uid % 50 + 1))
        t += 0.001; serial += 1; ts = "%.3f:%d" % (t, serial)
        w("type=LOGIN msg=audit(%s): pid=%d uid=0 subj=unconfined old-auid=4294967295 auid=%d tty=tty1 old-ses=4294967295 ses=%d res=1\n" % (ts, pid, uid, nextses))
        sessions.append((nextses, uid, pid, caps)); nextses += 1
        if len(sessions) > 50:
            ses, uid, pid, _ = sessions.pop(0)
            t += 0.001; serial += 1; ts = "%.3f:%d" % (t, serial)
            w("type=USER_END msg=audit(%s): pid=%d uid=0 auid=%d ses=%d subj=unconfined msg='op=PAM:session_close grantors=pam_unix,pam_capdelegate acct=\"%s\" exe=\"/usr/bin/login\" hostname=? addr=? terminal=tty1 res=success'\n" % (ts, pid, uid, ses, dict(users)[uid]))
    elif k < 0.75:
        ses, uid, _, caps = r.choice(sessions); pid = r.randint(300, 4000000)
        exe = "/usr/bin/ping" if r.random() < 0.7 else "/usr/local/bin/dmesg-delegated"
        w("type=SYSCALL msg=audit(%s): arch=c000003e syscall=59 success=yes exit=0 a0=55d0a1b2c3d0 a1=55d0a1b2c4e0 a2=55d0a1b2c5f0 a3=8 items=2 ppid=%d pid=%d auid=%d uid=%d gid=%d euid=%d suid=%d fsuid=%d egid=%d sgid=%d fsgid=%d tty=pts0 ses=%d comm=\"ping\" exe=\"%s\" subj=unconfined key=\"capdelegate\"\n" % (ts, pid - 1, pid, uid, uid, uid, uid, uid, uid, uid, uid, uid, ses, exe))
        if exe == "/usr/bin/ping" and caps == "cap_net_raw":   # the run gained it: the kernel says so
            w("type=BPRM_FCAPS msg=audit(%s): fver=2 fp=0 fi=0000000000002000 fe=0 old_pp=0 old_pi=0000000000002000 old_pe=0 old_pa=0 pp=0000000000002000 pi=0000000000002000 pe=0 pa=0 frootid=0\n" % ts)
        w("type=EXECVE msg=audit(%s): argc=3 a0=\"ping\" a1=\"-c1\" a2=\"127.0.0.1\"\n" % ts)
        w("type=CWD msg=audit(%s): cwd=\"/home/user\"\n" % ts)
        w("type=PATH msg=audit(%s): item=0 name=\"%s\" inode=1234 dev=fe:01 mode=0100755 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL cap_fp=0 cap_fi=2000 cap_fe=0 cap_fver=2 cap_frootid=0\n" % (ts, exe))
        w("type=PATH msg=audit(%s): item=1 name=\"/lib64/ld-linux-x86-64.so.2\" inode=99 dev=fe:01 mode=0100755 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL cap_fp=0 cap_fi=0 cap_fe=0 cap_fver=0 cap_frootid=0\n" % ts)
        w("type=PROCTITLE msg=audit(%s): proctitle=70696E67002D63310031323700\n" % ts)
    else:
        w("type=USER_START msg=audit(%s): pid=%d uid=0 auid=0 ses=%d subj=unconfined msg='op=PAM:session_open grantors=pam_unix acct=\"root\" exe=\"/usr/sbin/cron\" hostname=? addr=? terminal=cron res=success'\n" % (ts, r.randint(300, 4000000), r.randint(1, 100000)))
PY
}

# measure LABEL CMD...: "LABEL wall_s cpu_s peak_kb", the command's stdout discarded
measure() {
  local label=$1; shift
  /usr/bin/time -f "$label %e %U %S %M" -o "$DIR/time" "$@" >/dev/null 2>"$DIR/stderr" ||
    { echo "usage-bench: $label failed:" >&2; cat "$DIR/stderr" >&2; exit 1; }
  awk '{ printf "%-22s wall %8.2f s  cpu %8.2f s  peak RSS %8d KB\n", $1, $2, $3 + $4, $5 }' "$DIR/time"
  awk '{ print $2 }' "$DIR/time" >"$DIR/$label.wall"
}

echo "usage-bench: $EVENTS events; $("$CAPDELEGATE" --version); $("$AUSEARCH" -v 2>&1 | head -1)"
for part in 4 2 1; do
  ev=$((EVENTS / part))
  gen "$ev" "$DIR/audit-$part.log"
  echo "log of $ev events: $(wc -l <"$DIR/audit-$part.log") records, $(du -m "$DIR/audit-$part.log" | cut -f1) MB"
  measure "usage-$ev" "$CAPDELEGATE" usage --tsv --marks "$DIR/marks.conf" --since 36500d \
    --input "$DIR/audit-$part.log"
  [ "$part" = 1 ] || rm -f "$DIR/audit-$part.log"
done
measure "ausearch-$EVENTS" "$AUSEARCH" --input "$DIR/audit-1.log" -k capdelegate -i
awk -v u="$(cat "$DIR/usage-$EVENTS.wall")" -v a="$(cat "$DIR/ausearch-$EVENTS.wall")" \
  'BEGIN { printf "ratio usage/ausearch (wall): %.3fx\n", (a > 0 ? u / a : 0) }'
