#!/usr/bin/env bash
# directory-guest.sh: the guest's half of tests/bench/directory-bench.sh, run as root
# in the directory site's guest. Adds 19 small groups (bench01...bench19, 20 generated members
# each, neither alice nor bob) to the directory, writes a policy naming them and bigteam for
# capdelegate and the same for pam_cap, then times the auth stacks with pam_bench (NSS counter
# preloaded) for alice (in bigteam) and bob (in none of the 20), bigteam at 20 and at 20,000
# members: cold (sss_cache -E before each login: SSSD's cache and its memory cache expired,
# every lookup goes to slapd) and warm (the same login repeated, answered from SSSD's caches),
# with bench-none (pam_permit alone) as the baseline of a transaction's time.
# Prints "@@ bench SIZE STATE USER <pam_bench's line>" lines. Asserts nothing.
set -euo pipefail
if [ "${1:-}" = --help ] || [ $# -lt 3 ]; then
  echo "usage: $0 WARM_RUNS COLD_RUNS LABEL...   (as root in the directory guest; LABEL: a module"
  echo "  /usr/local/lib/capdelegate-bench/pam_capdelegate-LABEL.so, measured beside pam_cap)"
  [ "${1:-}" = --help ]; exit
fi
warm=$1 cold=$2; shift 2
B=/usr/local/lib/capdelegate-bench D=corp.example.com BASE=dc=corp,dc=example,dc=com
ldapmod() { ldapmodify -Q -Y EXTERNAL -H ldapi:/// >/dev/null; }

# Under TCG the kernel may keep time in jiffies (4 ms steps): tsc, when offered, counts finer.
cs=/sys/devices/system/clocksource/clocksource0
echo "@@ note clocksource: $(cat $cs/current_clocksource) of: $(cat $cs/available_clocksource)"
! grep -qw tsc $cs/available_clocksource || echo tsc >$cs/current_clocksource
echo "@@ note clocksource used: $(cat $cs/current_clocksource)"

for _ in $(seq 90); do
  timeout 30 sssctl domain-status "$D" 2>/dev/null | grep -q 'Online status: Online' && break; sleep 2
done

# bench01..bench19: gid 21001..21019, members u00001..u00020 (accounts of the site's bigteam).
for i in $(seq -w 1 19); do
  printf 'dn: cn=bench%s,ou=groups,%s\nchangetype: add\nobjectClass: posixGroup\ncn: bench%s\ngidNumber: %d\n' \
    "$i" "$BASE" "$i" $((21000 + 10#$i))
  for m in $(seq -f 'u%05g' 1 20); do echo "memberUid: $m"; done
  echo
done | ldapmod

# bigteam with SIZE members: alice and SIZE-1 generated accounts.
bigteam() {
  { printf 'dn: cn=bigteam,ou=groups,%s\nchangetype: modify\nreplace: memberUid\nmemberUid: alice\n' "$BASE"
    seq -f 'memberUid: u%05g' 1 $(($1 - 1)); } | ldapmod
}

# The same policy in both languages; neither names a user: the groups decide, then "*".
cdconf=/etc/security/bench-capdelegate.conf capconf=/etc/security/bench-capability.conf
{ for i in $(seq -w 1 19); do echo "@bench$i@$D cap_net_raw"; done
  echo "@bigteam@$D cap_net_raw"; echo "* cap_net_bind_service"; } >"$cdconf"
{ for i in $(seq -w 1 19); do echo "cap_net_raw @bench$i@$D"; done
  echo "cap_net_raw @bigteam@$D"; echo "cap_net_bind_service *"; } >"$capconf"
chmod 644 "$cdconf" "$capconf"
# bench-none (pam_permit alone) is the baseline: a transaction's time minus its is the module's.
services=(bench-none bench-pamcap)
printf 'auth required pam_permit.so\n' >/etc/pam.d/bench-none
printf 'auth required pam_permit.so\nauth optional pam_cap.so config=%s\n' "$capconf" >/etc/pam.d/bench-pamcap
for l in "$@"; do
  printf 'auth required pam_permit.so\nauth optional %s/pam_capdelegate-%s.so config=%s\n' "$B" "$l" "$cdconf" \
    >"/etc/pam.d/bench-cd-$l"
  services+=("bench-cd-$l")
done
sleep 1	# the policies are older than the module's settle time (50 ms) when first read

run() { LD_PRELOAD=$B/nss_count.so "$B/pam_bench" /etc/pam.d "$@"; }
for size in 20 20000; do
  t=$(date +%s); bigteam "$size"; sss_cache -E
  echo "@@ note bigteam=$size: $(ldapsearch -Q -Y EXTERNAL -H ldapi:/// -b "cn=bigteam,ou=groups,$BASE" -LLL memberUid \
    | grep -c '^memberUid:') memberUid values in slapd after $(( $(date +%s) - t )) s"
  for u in "alice@$D" "bob@$D"; do
    for ((r = 0; r < cold; r++)); do
      for s in "${services[@]:1}"; do
        sss_cache -E
        run "$u" 1 "$s" | sed "s/^/@@ bench $size cold $u /"
      done
    done
    run "$u" 1 "${services[@]}" >/dev/null	# warm-up: every lookup cached again
    # each warm sample the mean of 8 logins: the guest's clock may step by 4 ms
    PAM_BENCH_BLOCK=8 run "$u" "$warm" "${services[@]}" | sed "s/^/@@ bench $size warm $u /"
  done
done
