#!/usr/bin/env bash
# directory-bench.sh: the directory site's login cost (docs/benchmarks.md). Boots the directory guest
# (vm-image/system/build.sh --directory: slapd, SSSD) and, with a policy naming 20 directory
# groups (19 small ones added for the run, and bigteam), measures per login the NSS requests of
# pam_setcred and its time, for capdelegate's module(s) and Debian's pam_cap, for alice (in
# bigteam) and bob (in none of them), with bigteam at 20 and at 20,000 members, cold and warm
# (tests/bench/directory-guest.sh does the guest's half), beside pam_permit alone as the
# baseline. Prints medians, means and ratios. A benchmark, not a test: it asserts nothing.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tests/bench/directory-bench.sh [--runs N] [--cold-runs N] [--module LABEL=SO]... [--image IMG]

  --runs N         warm logins per user, service and bigteam size (default 15; median reported)
  --cold-runs N    cold logins (sss_cache -E before each) per user, service and size (default 3)
  --module L=SO    measure this build of pam_capdelegate.so as "L" (repeatable; default:
                   current=$LAB_BUILD/.libs/pam_capdelegate.so); e.g. two designs side by side
  --image IMG      boot this directory image instead of vm-image/system/build.sh --directory's
Needs root (the image build; QEMU with TCG). Environment: LAB_BUILD (default ./_build/host),
LAB_RESULTS (default ./_results: the guest's raw lines in bench/directory.txt), LAB_CACHE.
Goal: capdelegate's setcred time <= pam_cap's; bigteam at 20,000 <= 1.2x at 20.
USAGE
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD=${LAB_BUILD:-$ROOT/_build/host}
RUNS=15 COLD=3 IMAGE="" MODULES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --cold-runs) COLD=$2; shift 2 ;;
    --module) MODULES+=("$2"); shift 2 ;;
    --image) IMAGE=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "directory-bench: needs root (guest image, QEMU); nothing measured" >&2; exit 0; }
for t in qemu-system-x86_64 ssh ssh-keygen python3; do
  command -v "$t" >/dev/null || { echo "directory-bench: $t missing (./lab deps)" >&2; exit 2; }
done
make -C "$BUILD" -s tests/bench/pam_bench tests/bench/nss_count.la pam_capdelegate.la >&2
[ ${#MODULES[@]} -gt 0 ] || MODULES=("current=$BUILD/.libs/pam_capdelegate.so")
[ -n "$IMAGE" ] || IMAGE=$("$ROOT/vm-image/system/build.sh" --directory)

work=$(mktemp -d /var/tmp/directory-bench.XXXXXX)
qemu=""
cleanup() {
  if [ -n "$qemu" ]; then pkill -TERM -P "$qemu" 2>/dev/null || true; kill "$qemu" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# What the guest gets at boot: root's key for this run, the driver, the counter, the modules.
ov=$work/overlay B=usr/local/lib/capdelegate-bench
mkdir -p "$ov/root/.ssh" "$ov/$B"
chmod 700 "$ov/root/.ssh"
ssh-keygen -q -t ed25519 -N '' -f "$work/key"
install -m 600 "$work/key.pub" "$ov/root/.ssh/authorized_keys"
install -m 755 "$BUILD/tests/bench/pam_bench" "$BUILD/tests/bench/.libs/nss_count.so" \
  "$ROOT/tests/bench/directory-guest.sh" "$ov/$B/"
labels=()
for m in "${MODULES[@]}"; do
  [ -f "${m#*=}" ] || { echo "directory-bench: no module ${m#*=}" >&2; exit 2; }
  install -m 644 "${m#*=}" "$ov/$B/pam_capdelegate-${m%%=*}.so"; labels+=("${m%%=*}")
done
tar -C "$ov" --owner=0 --group=0 --numeric-owner -cf "$work/overlay.tar" root/.ssh "$B"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "directory-bench: booting $IMAGE (TCG), ssh on 127.0.0.1:$port" >&2
"$ROOT/vm-image/system/run.sh" --quiet --timeout 5400 --image "$IMAGE" --ssh-port "$port" \
  --console-socket "$work/console.sock" --overlay "$work/overlay.tar" >"$work/qemu.log" 2>&1 &
qemu=$!
gssh() { ssh -i "$work/key" -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
  -o LogLevel=ERROR -o ConnectTimeout=10 root@127.0.0.1 "$@"; }
for _ in $(seq 60); do gssh true 2>/dev/null && break; sleep 5; done
gssh true || { echo "directory-bench: no ssh into the guest (see $work/qemu.log)" >&2; cat "$work/qemu.log" >&2; exit 1; }

out=${LAB_RESULTS:-$ROOT/_results}/bench
mkdir -p "$out"
t0=$(date +%s)
gssh "/$B/directory-guest.sh $RUNS $COLD ${labels[*]}" | tr -d '\r' >"$out/directory.txt"
gssh guest-poweroff >/dev/null 2>&1 || true
echo "directory-bench: guest run $(( $(date +%s) - t0 )) s, host load $(cut -d' ' -f1-3 /proc/loadavg); raw lines in $out/directory.txt" >&2

python3 - "$out/directory.txt" <<'PY'
import math, statistics, sys
rows = {}  # (size, state, user, service) -> the pam_bench lines' key=value pairs
for line in open(sys.argv[1]):
    f = line.split()
    if f[:2] == ["@@", "note"]:
        print("#", " ".join(f[2:]))
    if f[:2] != ["@@", "bench"] or len(f) < 7 or not all("=" in x for x in f[6:]):
        continue  # (a line cut short)
    size, state, user, svc = f[2], f[3], f[4].split("@")[0], f[5]
    rows.setdefault((size, state, user, svc), []).append(dict(x.split("=", 1) for x in f[6:]))
services = sorted({k[3] for k in rows}, key=lambda s: (s != "bench-none", s != "bench-pamcap", s))
def ms(k, field):  # median over the runs of pam_bench's figure, in ms
    v = [float(r[field]) for r in rows.get(k, []) if field in r]
    return statistics.median(v) / 1000 if v else float("nan")
def t(k, phase):  # cold: the median of the runs (one login each); warm: the mean of the samples
    v = ms(k, phase + ("_median_us" if k[1] == "cold" else "_mean_us"))
    return ms(k, phase + "_median_us") if v != v else v  # (a driver without means: NaN)
def module(k):  # the module's time per login: pam_cap reads its policy and groups in authenticate
    # and again in setcred. cold: auth + setcred; warm: the whole transaction minus the baseline's
    # (bench-none: pam_permit alone), from samples that are means of 8 logins each
    if k[1] == "warm" and (k[0], k[1], k[2], "bench-none") in rows:
        return ms(k, "median_us") - ms((k[0], k[1], k[2], "bench-none"), "median_us")
    return t(k, "auth") + t(k, "setcred")
def cpu(k):  # the module's CPU time in the login's process: the transaction's minus bench-none's
    # (not what journald, auditd or SSSD do for it on the guest's one CPU; warm rows only)
    base = (k[0], k[1], k[2], "bench-none")
    if k[1] != "warm" or base not in rows:
        return float("nan")
    return ms(k, "cpu_mean_us") - ms(base, "cpu_mean_us")
def first(k, field):
    return rows[k][0].get(field, "?") if k in rows else "?"
print("# per login (ms): pam_setcred, pam_authenticate (pam_permit + the module: pam_cap's lookups, capdelegate's")
print("# nothing), and the module's time (cold: auth + setcred, median of the runs, sss_cache -E before each;")
print("# warm: a transaction minus bench-none's, pam_permit alone; each warm sample the mean of 8 logins).")
print("# setcred's NSS requests: calls (of which ERANGE retries), group members carried by the answers, by")
print("# function; the pI left. cpu (warm): the module's CPU time in the login's process, the same difference")
fmt = "%-6s %-5s %-6s %-18s %9s %9s %9s %7s %6s %6s %8s %-16s %s"
print(fmt % ("size", "state", "user", "service", "setcred", "auth", "module", "cpu", "calls", "erange", "members", "capinh", "by function"))
for size in ("20", "20000"):
    for state in ("cold", "warm"):
        for user in ("alice", "bob"):
            for s in services:
                k = (size, state, user, s)
                if k in rows:
                    c = cpu(k) if s != "bench-none" else math.nan
                    print(fmt % (size, state, user, s, "%.2f" % t(k, "setcred"), "%.2f" % t(k, "auth"),
                                 "%.2f" % module(k) if s != "bench-none" else "-",
                                 "-" if math.isnan(c) else "%.2f" % c, first(k, "setcred_calls"),
                                 first(k, "setcred_erange"), first(k, "setcred_members"), first(k, "capinh"), first(k, "setcred_nss")))
print("# ratios of the module's time: capdelegate/pam_cap (goal <= 1) at bigteam 20 and 20,000; 20,000/20 (goal <= 1.2)")
r = lambda a, b: "%.2f" % (a / b) if b > 0 else "n/a"
for state in ("cold", "warm"):
    for user in ("alice", "bob"):
        for s in services:
            if s == "bench-none":
                continue
            k = lambda size, svc=s: (size, state, user, svc)
            parts = []
            if s != "bench-pamcap":
                for size in ("20", "20000"):
                    parts.append("/pam_cap at %s: %s" % (size, r(module(k(size)), module(k(size, "bench-pamcap")))))
            parts.append("20000/20: %s" % r(module(k("20000")), module(k("20"))))
            if state == "warm" and s != "bench-pamcap":
                parts.append("cpu/pam_cap at 20, 20,000: %s, %s" % tuple(
                    r(cpu(k(size)), cpu(k(size, "bench-pamcap"))) for size in ("20", "20000")))
            print("%-5s %-6s %-18s %s" % (state, user, s, "  ".join(parts)))
PY
