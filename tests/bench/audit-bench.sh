#!/usr/bin/env bash
# audit-bench.sh: `capdelegate audit` (default threads: one per CPU, and 1) against `getcap -r`
# and libcap-ng's `filecap` on a generated tree of 100,000 regular files, 50 of them carrying
# file capabilities (=ep, =ei, =i, revision 2 via setcap and revision 3 with a rootid via raw
# setfattr). Runs are interleaved and warm (one untimed round first); prints median wall time, ratio to getcap -r and files
# found by each. A benchmark, not a test: it never fails on figures. Needs root (setcap).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tests/bench/audit-bench.sh [--runs N] [--files N] [--caps N] [--keep]

  --runs N    timed rounds per tool (default 9; median reported)
  --files N   regular files in the tree (default 100000)
  --caps N    of which carry security.capability (default 50)
  --keep      keep the generated tree (path printed)
Environment: LAB_BUILD (default ./_build/host) holds the capdelegate binary.
Target: audit <= 0.5x getcap -r wall time, and every capability file found.
USAGE
}

RUNS=9 NFILES=100000 NCAPS=50 KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --files) NFILES=$2; shift 2 ;;
    --caps) NCAPS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CAPDELEGATE="${LAB_BUILD:-$ROOT/_build/host}/capdelegate"
[ -x "$CAPDELEGATE" ] || { echo "audit-bench: $CAPDELEGATE not built (./lab build)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "audit-bench: needs root to set file capabilities; nothing measured" >&2; exit 0; }
for t in getcap filecap setcap setfattr python3; do
  command -v "$t" >/dev/null || { echo "audit-bench: $t missing (./lab deps)" >&2; exit 2; }
done

TREE=$(mktemp -d /var/tmp/audit-bench.XXXXXX)
# Under /run: the policy must sit below root-owned directories nobody else can write (not /tmp).
OUT=$(mktemp -d /run/audit-bench-out.XXXXXX)
cleanup() { [ "$KEEP" = 1 ] && echo "tree kept: $TREE" >&2 || rm -rf "$TREE"; rm -rf "$OUT"; }
trap cleanup EXIT

# 100 directories of NFILES/100 files each, two levels deep, like /usr/share.
echo "audit-bench: generating $NFILES files in $TREE" >&2
python3 - "$TREE" "$NFILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
per = max(1, n // 100)
for i in range(n):
    d = os.path.join(root, "d%02d" % (i // per // 10), "s%d" % (i // per % 10))
    if i % per == 0:
        os.makedirs(d, exist_ok=True)
    os.close(os.open(os.path.join(d, "f%06d" % i), os.O_CREAT | os.O_WRONLY, 0o755))
PY

# Spread the capability files over the tree; five kinds in turn.
mapfile -t ALL < <(find "$TREE" -type f | sort)
STEP=$(( ${#ALL[@]} / NCAPS ))
REV3="0x01000003""00200000""00200000""00000000""00000000""e8030000"  # =ei net_raw, rootid 1000
for ((k = 0; k < NCAPS; k++)); do
  f=${ALL[$((k * STEP))]}
  case $((k % 5)) in
    0) setcap cap_net_raw=ep "$f" ;;
    1) setcap cap_net_raw=ei "$f" ;;
    2) setcap cap_net_raw=i "$f" ;;
    3) setcap cap_syslog,cap_net_admin=i "$f" ;;
    4) setfattr -n security.capability -v "$REV3" "$f" ;;
  esac
done
sync

POLICY="$OUT/policy.conf"
printf '* cap_net_raw\n' >"$POLICY"; chmod 0644 "$POLICY"

run_audit()   { "$CAPDELEGATE" audit --config "$POLICY" "$TREE" >"$OUT/audit.txt" 2>/dev/null || true; }
run_audit1()  { "$CAPDELEGATE" audit --threads 1 --config "$POLICY" "$TREE" >"$OUT/audit1.txt" 2>/dev/null || true; }
run_getcap()  { getcap -r "$TREE" >"$OUT/getcap.txt" 2>/dev/null || true; }
run_filecap() { filecap "$TREE" >"$OUT/filecap.txt" 2>/dev/null || true; }
TOOLS=(audit audit1 getcap filecap)

ms_now() { date +%s%N; }
declare -A TIMES
for t in "${TOOLS[@]}"; do "run_$t"; TIMES[$t]=""; done   # warm the caches, untimed
for ((r = 0; r < RUNS; r++)); do
  for t in "${TOOLS[@]}"; do
    t0=$(ms_now); "run_$t"; t1=$(ms_now)
    TIMES[$t]+="$(( (t1 - t0) / 1000 )) "
  done
done

median_ms() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.1f", m/1000}'; }
found_audit()   { grep -c '^file	' "$OUT/audit.txt" || true; }
found_audit1()  { grep -c '^file	' "$OUT/audit1.txt" || true; }
found_getcap()  { grep -c . "$OUT/getcap.txt" || true; }
found_filecap() { grep -c "^[a-z]* *$TREE/" "$OUT/filecap.txt" || true; }

G=$(median_ms <<<"${TIMES[getcap]}")
printf 'audit-bench: %d files, %d with capabilities, %d timed runs each, interleaved; load average %s\n' "$NFILES" "$NCAPS" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %10s %14s %8s\n' tool "median ms" "x getcap -r" found
for t in "${TOOLS[@]}"; do
  m=$(median_ms <<<"${TIMES[$t]}")
  case $t in
    audit) label="capdelegate audit" ;; audit1) label="  ... --threads 1" ;;
    getcap) label="getcap -r" ;; *) label=$t ;;
  esac
  printf '%-22s %10s %14s %8s\n' "$label" "$m" "$(awk -v a="$m" -v b="$G" 'BEGIN {printf "%.2f", a/b}')" \
    "$("found_$t")/$NCAPS"
done

# System calls per regular file, one untimed run each (strace is optional, not in ./lab deps).
if command -v strace >/dev/null; then
  for t in audit getcap filecap; do
    strace -f -c -o "$OUT/strace.$t" bash -c "$(declare -f "run_$t"); CAPDELEGATE='$CAPDELEGATE' POLICY='$POLICY' TREE='$TREE' OUT='$OUT' run_$t"
    calls=$(awk '$NF == "total" {print $(NF-2)}' "$OUT/strace.$t")
    printf '%-22s %8s syscalls, %.2f per file\n' "$t" "$calls" "$(awk -v c="$calls" -v n="$NFILES" 'BEGIN {print c/n}')"
  done
else
  echo "audit-bench: strace not installed: syscall counts skipped" >&2
fi
