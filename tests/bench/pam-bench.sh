#!/usr/bin/env bash
# pam-bench.sh: one PAM transaction per cycle (start, authenticate, setcred, end) with
# pam_capdelegate and with Debian's pam_cap on equivalent policies of 10, 1k, 10k and 100k
# lines, the user's rule last; interleaved in one run. Prints median wall time of each and the
# ratio, then instructions per transaction counted by callgrind (stable on a busy machine).
# Not a test: it asserts nothing. Needs root (policies must be root-owned; pam_cap too).
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,6p' "$0"; exit 0; }
# PAM_BENCH_SIZES="10 1000": only those policy sizes.
[ "$(id -u)" -eq 0 ] || { echo "pam-bench: needs root (root-owned policies); skipped"; exit 0; }
build=${LAB_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/_build/host}
bench=$build/tests/bench/pam_bench
mod=$build/.libs/pam_capdelegate.so
pamcap=/usr/lib/x86_64-linux-gnu/security/pam_cap.so
[ -x "$bench" ] && [ -f "$mod" ] || { echo "pam-bench: build first (./lab build)"; exit 1; }
[ -f "$pamcap" ] || { echo "pam-bench: $pamcap missing (package libpam-cap)"; exit 1; }
# not /tmp: policies below a directory others can write are refused
work=$(mktemp -d /run/cd-bench-XXXXXX); trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# Equivalent policies: N-1 other users, then the user's own rule (root, who exists everywhere).
gen() { # N
  awk -v n="$1" 'BEGIN { for (i = 1; i < n; i++) printf "user%06d cap_net_raw\n", i; print "root cap_net_raw" }' >"$work/cd-$1.conf"
  awk -v n="$1" 'BEGIN { for (i = 1; i < n; i++) printf "cap_net_raw user%06d\n", i; print "cap_net_raw root" }' >"$work/cap-$1.conf"
  chmod 644 "$work/cd-$1.conf" "$work/cap-$1.conf"
  # 100k lines are 2.2 MB: raise the module's 1 MiB limit for every size alike.
  # pam_permit first in both: pam_capdelegate's authenticate ignores (it authenticates nobody),
  # and a stack where every module ignores fails before setcred.
  printf 'auth required pam_permit.so\nauth required %s config=%s maxsize=4194304\n' \
    "$mod" "$work/cd-$1.conf" >"$work/capdelegate-$1"
  printf 'auth required pam_permit.so\nauth required %s config=%s\n' "$pamcap" "$work/cap-$1.conf" >"$work/pamcap-$1"
}

iterations() { case $1 in 10) echo 2001 ;; 1000) echo 1001 ;; 10000) echo 301 ;; *) echo 41 ;; esac; }

instructions() { # SERVICE: callgrind's count for 3 transactions minus 1, halved
  local a b
  a=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" "$work" root 1 "$1" 2>&1 | sed -n 's/.*Collected : //p')
  b=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" "$work" root 3 "$1" 2>&1 | sed -n 's/.*Collected : //p')
  echo $(( (b - a) / 2 ))
}

printf '%-8s %14s %14s %7s %16s %16s %7s\n' lines capdelegate_us pam_cap_us ratio capdelegate_instr pam_cap_instr ratio
for n in ${PAM_BENCH_SIZES:-10 1000 10000 100000}; do
  gen "$n"
  out=$("$bench" "$work" root "$(iterations "$n")" "capdelegate-$n" "pamcap-$n")
  cd=$(sed -n "s/^capdelegate-$n median_us=\([0-9.]*\).*/\1/p" <<<"$out")
  pc=$(sed -n "s/^pamcap-$n median_us=\([0-9.]*\).*/\1/p" <<<"$out")
  ci=$(instructions "capdelegate-$n"); pi=$(instructions "pamcap-$n")
  printf '%-8s %14s %14s %7.3f %16s %16s %7.3f\n' "$n" "$cd" "$pc" "$(echo "$cd / $pc" | bc -l)" \
    "$ci" "$pi" "$(echo "$ci / $pi" | bc -l)"
done
echo "targets: time ratio <= 1.0 at 10 lines, <= 0.25 at 10k and 100k lines"
