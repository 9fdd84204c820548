#!/usr/bin/env bash
# report-bench.sh: `capdelegate report` at fleet size, on generated audits: a fleet of HOSTS
# hosts' audits of LINES policy lines each (every subject's lines differing somewhere, so the
# side-by-side table is full), and one audit of SUBJECTS distinct subjects; each also at a
# half and a quarter of its size, so the ratios show how time and memory grow (2.0 for each
# doubling when linear). Prints wall and CPU time, peak RSS and the input's size. A benchmark,
# not a test: it never fails on figures.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tests/bench/report-bench.sh [--hosts N] [--lines N] [--subjects N] [--runs N] [--keep]

  --hosts N     hosts in the fleet (default 10000)
  --lines N     policy lines in each host's audit (default 100)
  --subjects N  distinct subjects in the one large audit (default 1000000; its rules carry only
                the keys report reads, so that a million fit under report's 64 MiB a file)
  --runs N      timed runs of each size (default 3; the median times, the largest peak RSS)
  --keep        keep the generated audits (path printed)
Environment: LAB_BUILD (default ./_build/host) holds the capdelegate binary.
Each run is `capdelegate report --tsv FILE... >/dev/null`, the page cache warm (the generator
has just written the files).
USAGE
}

HOSTS=10000 LINES=100 SUBJECTS=1000000 RUNS=3 KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) HOSTS=$2; shift 2 ;;
    --lines) LINES=$2; shift 2 ;;
    --subjects) SUBJECTS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CAPDELEGATE="${LAB_BUILD:-$ROOT/_build/host}/capdelegate"
[ -x "$CAPDELEGATE" ] || { echo "report-bench: $CAPDELEGATE not built (./lab build)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "report-bench: python3 missing (./lab deps)" >&2; exit 2; }

DIR=$(mktemp -d /var/tmp/report-bench.XXXXXX)
cleanup() { [ "$KEEP" = 1 ] && echo "audits kept: $DIR" >&2 || rm -rf "$DIR"; }
trap cleanup EXIT

# gen fleet DIR HOSTS LINES | gen big FILE SUBJECTS
gen() {
  python3 - "$@" <<'PY'
import hashlib, json, os, sys

def audit(host, rules, findings):
    return {"version": 5, "host": host, "host_hex": host.encode().hex(),
            "machine_id": hashlib.md5(host.encode()).hexdigest(),
            "bounding": ["cap_net_raw", "cap_sys_time"],
            "policy": {"path": "/etc/security/capdelegate.conf",
                       "path_hex": b"/etc/security/capdelegate.conf".hex(),
                       "status": "ok", "rules": rules},
            "scan": {"roots": ["/usr"], "directories": 1, "regular_files": 0, "capability_files": 0,
                     "skipped_mounts": 0, "vanished": 0, "errors": 0},
            "files": [], "matrix": [], "findings": findings, "errors": [], "vanished": [],
            "userdb": {"directories": ["/etc/userdb"], "records": []}}

if sys.argv[1] == "fleet":
    d, hosts, lines = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    path = "/etc/security/capdelegate.conf"
    for h in range(hosts):
        rules = []
        for i in range(lines):
            kind, subject = ("group", "@team%d" % i) if i % 10 == 9 else ("user", "user%d" % i)
            caps = ["cap_net_raw"] + (["cap_sys_time"] if i == h % lines else [])
            rules.append({"file": path, "file_hex": path.encode().hex(), "line": i + 1,
                          "kind": kind, "subject": subject, "caps": caps})
        findings = [{"id": "mark-differs", "path": "/usr/bin/ping", "path_hex": b"/usr/bin/ping".hex(),
                     "line": None, "caps": [], "message": "mark drifted"}] if h % 100 == 0 else []
        with open(os.path.join(d, "h%05d.json" % h), "w") as f:
            json.dump(audit("host%05d" % h, rules, findings), f, separators=(",", ":"))
else:
    out, n = sys.argv[2], int(sys.argv[3])
    rules = [{"kind": "user", "subject": "u%07d" % i, "caps": ["cap_net_raw"]} for i in range(n)]
    with open(out, "w") as f:
        json.dump(audit("big", rules, []), f, separators=(",", ":"))
PY
}

# measure ARGS...: "WALL CPU PEAK-RSS-MiB EXIT" of capdelegate report --tsv ARGS: the medians
# of $RUNS runs' wall and CPU (user + system) seconds, the largest peak RSS, the worst exit
# status. CPU time is the steadier figure on a loaded machine.
measure() {
  python3 - "$RUNS" "$CAPDELEGATE" "$@" <<'PY'
import resource, statistics, subprocess, sys, time
def cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime
walls, cpus, rc = [], [], 0
for _ in range(int(sys.argv[1])):
    t, c = time.monotonic(), cpu()
    r = subprocess.run([sys.argv[2], "report", "--tsv"] + sys.argv[3:], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL).returncode
    walls.append(time.monotonic() - t)
    cpus.append(cpu() - c)
    rc = max(rc, r)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print("%.2f %.2f %.0f %d" % (statistics.median(walls), statistics.median(cpus), rss, rc))
PY
}

# ratio NOW PREV: NOW/PREV to two places, "-" without a PREV
ratio() { [ -z "$2" ] && echo - || awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

row() { # row LABEL N WALL CPU MIB INPUT-MiB PREV-CPU PREV-MIB
  printf '%-8s %10s %7s s %7s s %6s MiB %7s MiB %7s %7s\n' "$1" "$2" "$3" "$4" "$5" "$6" \
    "$(ratio "$4" "$7")" "$(ratio "$5" "$8")"
}

printf '%-8s %10s %9s %9s %10s %11s %7s %7s\n' run size wall cpu "peak RSS" input "c/prev" "m/prev"
prev_c="" prev_m=""
for n in $((HOSTS / 4)) $((HOSTS / 2)) "$HOSTS"; do
  mkdir -p "$DIR/fleet$n"
  gen fleet "$DIR/fleet$n" "$n" "$LINES"
  read -r w c m rc < <(measure "$DIR/fleet$n"/*.json)
  in=$(du -sb "$DIR/fleet$n" | awk '{ printf "%.1f", $1 / 1048576 }')
  row "fleet" "${n}x$LINES" "$w" "$c" "$m" "$in" "$prev_c" "$prev_m"
  [ "$rc" -le 2 ] || echo "report-bench: fleet of $n: exit $rc" >&2
  prev_c=$c prev_m=$m
  rm -rf "$DIR/fleet$n"
done
prev_c="" prev_m=""
for n in $((SUBJECTS / 4)) $((SUBJECTS / 2)) "$SUBJECTS"; do
  gen big "$DIR/big$n.json" "$n"
  read -r w c m rc < <(measure "$DIR/big$n.json")
  in=$(stat -c %s "$DIR/big$n.json" | awk '{ printf "%.1f", $1 / 1048576 }')
  row "subjects" "$n" "$w" "$c" "$m" "$in" "$prev_c" "$prev_m"
  [ "$rc" -le 2 ] || echo "report-bench: $n subjects: exit $rc" >&2
  prev_c=$c prev_m=$m
  rm -f "$DIR/big$n.json"
done
