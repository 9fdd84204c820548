#!/usr/bin/env bash
# tests/nss/run.sh: the module and `capdelegate explain` against the real glibc NSS, a backend of
# the tests' own (nss_cdtest.c) and the real nscd, each case in a private mount and pid
# namespace: its own /etc/nsswitch.conf, /etc/group, nscd.conf and nscd socket; the host's stay
# as they are. The promise (pam_capdelegate(8), GROUPS): a member of a group whose line gives
# less than "*" never gets "*" because an NSS answer was incomplete, and a directory group that
# reuses a local group's name gets nothing of that group's line. TAP on stdout. Root only.
# nscd: $CD_NSCD, the nscd binary of Debian's nscd package (./lab unpacks it into its cache;
# never installed on the host, where its service would start); without it the nscd cases skip.
set -euo pipefail
case "${1:-}" in --help) sed -n '2,9p' "$0"; exit 0 ;; esac
builddir=${top_builddir:-$(pwd)}
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  echo "1..0 # SKIP needs root and unshare (private mount namespaces)"; exit 0
fi
module=$builddir/.libs/pam_capdelegate.so
cli=$builddir/capdelegate
login=$builddir/tests/nss/nss_login
for f in "$module" "$cli" "$login" "$builddir/tests/nss/.libs/nss_cdtest.so" "$builddir/tests/nss/.libs/nss_cdother.so"; do
  [ -e "$f" ] || { echo "Bail out! $f not built"; exit 1; }
done

# Policies must lie below root-owned directories no one else can write: /run, not /tmp.
work=$(mktemp -d /run/cd-nss-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir "$work/lib" "$work/pam" "$work/state" "$work/nscd-run"
ln -s "$builddir/tests/nss/.libs/nss_cdtest.so" "$work/lib/libnss_cdtest.so.2"
ln -s "$builddir/tests/nss/.libs/nss_cdother.so" "$work/lib/libnss_cdother.so.2"
cat >"$work/pam/cd" <<EOF
auth     required pam_permit.so
auth     required $module config=$work/policy confdir=
account  required pam_permit.so
account  required $module config=$work/policy confdir=
EOF
# The local side: the host's files, and a local netops (gid 2000) without members. The
# directory's users are cdtest's alone.
grep -v '^netops:\|^localgrp:\|^cdlisted:' /etc/group >"$work/group"
echo 'netops:x:2000:' >>"$work/group"
echo 'localgrp:x:2100:' >>"$work/group"
echo 'cdlisted:x:3300:alice' >>"$work/group"
cat >"$work/nscd.conf" <<EOF
	debug-level		0
	paranoia		no
	enable-cache		passwd		yes
	positive-time-to-live	passwd		600
	negative-time-to-live	passwd		20
	persistent		passwd		no
	shared			passwd		yes
	enable-cache		group		yes
	positive-time-to-live	group		3600
	negative-time-to-live	group		60
	persistent		group		no
	shared			group		yes
	enable-cache		hosts		no
	enable-cache		services	no
	enable-cache		netgroup	no
EOF

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; dbg; }
dbg() { [ -z "${CD_NSS_VERBOSE:-}" ] || sed "s|^|# |" "$work/err"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$work/out" "$work/err" 2>/dev/null || true; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# inside GROUPLINE STATE-MODE NSCD(0|1) PRIME SCRIPT...: run SCRIPT (bash) in a new mount and
# pid namespace where nsswitch.conf reads "passwd: files cdtest" and GROUPLINE, the directory
# (cdtest) holds bob, alice and their groups in MODE. With NSCD=1 a real nscd serves passwd and
# group; PRIME names the entries (DB:KEY, as getent takes them) looked up while the directory
# is up, before MODE is set: what nscd has cached when the outage begins.
inside() {
  local groupline=$1 mode=$2 with_nscd=$3 prime=$4; shift 4
  cat >"$work/state/state" <<EOF
mode up
user bob 3002 3002
user alice 3001 3001
group bob 3002
group alice 3001
group contractors 3100 bob
group netops 5000 alice
group hidden 3200
group cdlisted 3300
EOF
  printf 'passwd: files cdtest\ngroup: %s\nshadow: files\n' "$groupline" >"$work/nsswitch.conf"
  : >"$work/log"
  unshare -m -p -f --propagation private env \
    LD_LIBRARY_PATH="$work/lib" CD_NSS_STATE="$work/state/state" W="$work" \
    SYSLOG_CAPTURE="$work/log" CLI="$cli" LOGIN="$login" NSCD="${CD_NSCD:-}" WITH_NSCD="$with_nscd" PRIME="$prime" MODE="$mode" \
    bash -c '
      set -eu
      mount --bind "$W/nsswitch.conf" /etc/nsswitch.conf
      mount --bind "$W/group" /etc/group
      mkdir -p /run/nscd /var/cache/nscd
      mount -t tmpfs cd-nscd /run/nscd
      mount -t tmpfs cd-nscd-cache /var/cache/nscd
      [ ! -e /var/run/nscd ] || mount --bind /run/nscd /var/run/nscd
      if [ "$WITH_NSCD" = 1 ]; then
        "$NSCD" -F -f "$W/nscd.conf" 2>"$W/nscd.err" &
        for i in $(seq 100); do [ -S /run/nscd/socket ] && break; sleep 0.05; done
        [ -S /run/nscd/socket ] || { echo "nscd did not start" >&2; cat "$W/nscd.err" >&2; exit 3; }
      fi
      for k in $PRIME; do getent "${k%%:*}" "${k#*:}" >/dev/null || true; done
      sed -i "s/^mode .*/mode $MODE/" "$W/state/state"
      set +e
      eval "$1"
      exit 0
    ' inside "$1" >"$work/out" 2>"$work/err" || echo "setup failed: $?" >>"$work/err"
  cat "$work/log" >>"$work/err"   # what the module logged (nss_login's syslog capture)
  # every login leaves no descriptor open (a login program runs many transactions)
  grep '^fds_left=' "$work/out" | grep -v '^fds_left=0$' >>"$work/fds" || true
}

# login USER: the module's verdict for USER through the service above.
run_login='"$LOGIN" "$W/pam" cd'
policy() { printf '%s' "$1" >"$work/policy"; chmod 644 "$work/policy"; }

# expect_nothing NAME USER: no capability, the log says why (a lookup or a contradiction), and
# the login's NOTICE line still says what it got (pam_capdelegate(8), LOGGING: one per login).
expect_nothing() {
  if grep -q 'CapInh=0$' "$work/out" && grep -q "user=$2: .*no capabilities granted" "$work/err" &&
     grep -q "user=$2 granted=none via=none rules=none policy=ok .* nss=failed" "$work/err"; then
    ok "$1"
  else
    not_ok "$1"
  fi
}

narrow=$'@contractors none\n* cap_net_raw\n'

# 1. A directory outage answered by nscd: the probe and the member list see "not found".
cases_nscd() {
  if [ -n "${CD_NSCD:-}" ] && [ ! -x "$CD_NSCD" ]; then
    not_ok "nscd: CD_NSCD=$CD_NSCD is no program (./lab deps unpacks it)"; return
  fi
  if [ -z "${CD_NSCD:-}" ]; then
    skip "nscd: outage hides bob's contractors" "no nscd (CD_NSCD: ./lab unpacks Debian's nscd package)"
    skip "nscd: outage, contractors cached with bob" "no nscd"
    skip "nscd: no outage, bob not in contractors gets *" "no nscd"
    return
  fi
  policy "$narrow"
  inside "files cdtest" down 1 "passwd:bob" "$run_login bob; getent group capdelegate:probe; echo probe=\$?"
  # The module's premise holds: nscd hides the outage from the probe (2: not found, no error).
  if grep -q 'probe=2' "$work/out"; then expect_nothing "nscd: outage hides bob's contractors" bob
  else not_ok "nscd: outage hides bob's contractors (nscd did not hide the outage: the case proves nothing)"; fi
  inside "files cdtest" down 1 "passwd:bob group:contractors" "$run_login bob"
  expect_nothing "nscd: outage, contractors cached with bob" bob
  # and without an outage nscd answers as the directory does: the grant is the policy's
  policy $'@contractors none\n* cap_net_raw\n'
  inside "files cdtest" up 1 "" "$run_login alice; $run_login bob"
  if grep -q 'CapInh=2000$' <(grep '^account' "$work/out" | sed -n 1p) &&
     grep -q 'CapInh=0$' <(grep '^account' "$work/out" | sed -n 2p); then
    ok "nscd: no outage, alice gets *, bob (in contractors) nothing"
  else not_ok "nscd: no outage, alice gets *, bob (in contractors) nothing"; fi
}

# 2. The membership search fails, the lookups by name work.
case_initgroups() {
  policy "$narrow"
  inside "files cdtest" initgroups-down 0 "" "$run_login bob; getent group contractors"
  if grep -q '^contractors:x:3100:bob$' "$work/out"; then expect_nothing "initgroups down, names up: bob" bob
  else not_ok "initgroups down, names up: bob (contractors not answered by name: the case proves nothing)"; fi
}

# 3. A "not found" backend after the failing one hides its error.
case_backend_order() {
  policy "$narrow"
  inside "files cdtest cdother" groups-down 0 "" "$run_login bob; getent group capdelegate:probe; echo probe=\$?"
  if grep -q 'probe=2' "$work/out"; then expect_nothing "files cdtest cdother, cdtest down: bob" bob
  else not_ok "files cdtest cdother: the outage was not hidden (the case proves nothing)"; fi
  # the policy gives alice "*" only when she is shown outside contractors: down, she gets nothing
  # (without cdother, the probe says so; with it, contractors' own lookup must)
  inside "files cdtest cdother" groups-down 0 "" "$run_login alice"
  if grep -q 'CapInh=0$' "$work/out"; then ok "files cdtest cdother, cdtest down: alice nothing"
  else not_ok "files cdtest cdother, cdtest down: alice nothing"; fi
}

# 4. A directory group reusing a local group's name.
case_name_reuse() {
  policy $'@netops cap_net_raw\n'
  inside "files cdtest" up 0 "" "$run_login alice; getent group netops"
  if grep -q '^netops:x:2000:$' "$work/out"; then
    if grep -q 'CapInh=0$' "$work/out" && grep -q 'two groups of one name' "$work/err"; then
      ok "directory netops (5000) beside local netops (2000): alice nothing"
    else not_ok "directory netops (5000) beside local netops (2000): alice nothing"; fi
  else not_ok "directory netops: the local netops does not answer first (the case proves nothing)"; fi
  # explain says the same, with the reason
  inside "files cdtest" up 0 "" '"$CLI" explain --config "$W/policy" --confdir "" alice || echo rc=$?'
  if grep -q 'rc=' "$work/out" && grep -q 'two groups of one name.*login grants nothing' "$work/err"; then
    ok "explain: alice, netops of two groups: login grants nothing"
  else not_ok "explain: alice, netops of two groups: login grants nothing"; fi
}

# A narrowing group whose entry lists no members: a local one (/etc/group says it has none) shows
# alice outside it; a directory's (a directory that leaves member lists out, as SSSD's
# ignore_group_members does) cannot: she gets nothing, with the reason.
case_memberless() {
  policy $'@localgrp none\n* cap_net_raw\n'
  inside "files cdtest" up 0 "" "$run_login alice"
  if grep -q 'CapInh=2000$' "$work/out"; then ok "memberless local group: alice gets *"
  else not_ok "memberless local group: alice gets *"; fi
  policy $'@hidden none\n* cap_net_raw\n'
  inside "files cdtest" up 0 "" "$run_login alice"
  if grep -q 'CapInh=0$' "$work/out" && grep -q 'user=alice: group hidden (.*its entry lists no members' "$work/err"; then
    ok "memberless directory group: alice nothing"
  else not_ok "memberless directory group: alice nothing"; fi
}

# The same group in /etc/group with alice as a member and in the directory, answering first,
# without members; the membership search stops at the directory (an initgroups line: glibc then
# returns at the first source that answers), which does not put alice in it. The local file does
# not say the group has no members (it names alice), so the empty answer is no proof that she is
# outside it: she gets nothing, never "*".
case_memberless_listed_locally() {
  policy $'@cdlisted none\n* cap_net_raw\n'
  inside $'cdtest files\ninitgroups: cdtest files' up 0 "" "$run_login alice; id -G alice"
  if grep -q 'CapInh=0$' "$work/out" && grep -q 'user=alice: group cdlisted (.*its entry lists no members' "$work/err"; then
    ok "memberless directory answer, local group listing alice: alice nothing"
  else not_ok "memberless directory answer, local group listing alice: alice nothing"; fi
}

# The second question does not take away what the policy gives: alice, in no narrowing group,
# gets "*" with everything up; bob, in contractors, nothing.
case_all_up() {
  policy "$narrow"
  inside "files cdtest cdother" up 0 "" "$run_login alice; $run_login bob"
  if [ "$(grep '^account' "$work/out" | sed -n 1p)" = "account=0 setcred=0 CapInh=2000" ] &&
     [ "$(grep '^account' "$work/out" | sed -n 2p)" = "account=0 setcred=0 CapInh=0" ]; then
    ok "all up: alice gets *, bob nothing"
  else not_ok "all up: alice gets *, bob nothing"; fi
}

# check says which lines rest on NSS answering completely (a note), and warns about this host's
# settings under which an answer can be incomplete without an error (capdelegate(8), CHECK).
run_check='"$CLI" check --config "$W/policy" --confdir ""; echo rc=$?'
expect_check() {   # NAME RC [PRESENT...] [--absent ABSENT...]
  local name=$1 rc=$2 want=present bad=""; shift 2
  grep -q "^rc=$rc\$" "$work/out" || bad="exit status not $rc"
  for t in "$@"; do
    if [ "$t" = --absent ]; then want=absent; continue; fi
    if grep -qF -- "$t" "$work/err"; then [ "$want" = present ] || bad="$bad; says '$t'"
    else [ "$want" = absent ] || bad="$bad; lacks '$t'"; fi
  done
  if [ -z "$bad" ]; then ok "$name"; else echo "# $bad"; not_ok "$name"; fi
}
cases_check() {
  mkdir -p "$work/empty"
  policy "$narrow"
  inside "files cdtest" up 0 "" "$run_check"
  expect_check "check: a narrowing group is a note, not a warning" 0 \
    "note: $work/policy:1: group 'contractors' gives less than \"*\" (cap_net_raw)" --absent warning
  # a group named by two lines is one group: one note, at its first line
  policy $'@contractors none\n@contractors none\n* cap_net_raw\n'
  inside "files cdtest" up 0 "" "$run_check"
  if [ "$(grep -c "group 'contractors' gives less than" "$work/err")" = 1 ]; then
    expect_check "check: a group of two lines, one note" 0 "note: $work/policy:1: group 'contractors'" --absent "policy:2: group"
  else not_ok "check: a group of two lines, one note (got $(grep -c "group 'contractors' gives less" "$work/err"))"; fi
  policy "$narrow"
  inside "files cdtest cdother" up 0 "" "$run_check"
  expect_check "check: a source after the directory hides its outage" 1 \
    "warning: /etc/nsswitch.conf: group: a source after cdtest answers when cdtest is down"
  inside "files cdtest [UNAVAIL=return TRYAGAIN=return] cdother" up 0 "" "$run_check"
  expect_check "check: [UNAVAIL=return TRYAGAIN=return] makes the outage final" 0 --absent warning
  # hostile group lines: an action block never closed, a comment, a source name of 10,000 bytes
  # (nsswitch.conf is root's, but check must read any text without harm)
  inside "files cdtest [UNAVAIL=return cdother # [!SUCCESS=return] x" up 0 "" "$run_check"
  # (glibc refuses such a line: every group lookup fails with EINVAL, which check notes)
  expect_check "check: an unclosed action block: the lookups fail, said" 0 \
    "group 'contractors' cannot be looked up (Invalid argument)"
  inside "files $(head -c 10000 /dev/zero | tr '\0' x) cdother" up 0 "" "$run_check"
  if grep -q '^rc=1$' "$work/out" && grep -q "group: a source after xxxxxxxxxx" "$work/err"; then
    ok "check: a source name of 10,000 bytes"; else not_ok "check: a source name of 10,000 bytes"; fi
  inside "files cdtest [UNAVAIL=return] cdother" up 0 "" "$run_check"
  expect_check "check: [UNAVAIL=return] alone leaves TRYAGAIN hidden" 1 "group: a source after cdtest"
  policy $'@hidden none\n* cap_net_raw\n'
  inside "files cdtest" up 0 "" "$run_check"
  expect_check "check: a narrowing directory group listed without members" 1 \
    "warning: $work/policy:1: group 'hidden' gives less than \"*\", and NSS answers it with no members"
  policy $'@localgrp none\n* cap_net_raw\n'
  inside "files cdtest" up 0 "" "$run_check"
  expect_check "check: a local narrowing group without members is no warning" 0 --absent warning
  policy $'@netops cap_net_raw\n'
  inside "cdtest files" up 0 "" '"$CLI" audit --json --config "$W/policy" --confdir "" "$W/empty"'
  if python3 - "$work/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = [f for f in d["findings"] if f["id"] == "group-name-twice"]
assert len(f) == 1 and f[0]["caps"] == [] and f[0]["line"] == 1, f
PY
  then ok "audit: group-name-twice, at its line, no capabilities"; else not_ok "audit: group-name-twice, at its line, no capabilities"; fi
  inside "cdtest files" up 0 "" "$run_check"
  expect_check "check: netops is gid 2000 in /etc/group, NSS answers 5000" 1 \
    "group 'netops' is gid 2000 in /etc/group, but NSS answers gid 5000: two groups of one name; the line is NSS's gid 5000, and a member of gid 2000 gets nothing at all (rename one)"
  inside "files cdtest" up 0 "" "$run_check"
  expect_check "check: netops, /etc/group first: NSS answers the local gid" 0 --absent warning
  policy $'alice cap_net_raw\n'
  inside "files cdtest cdother" up 0 "" "$run_check"
  expect_check "check: no group line, nothing rests on the group database" 0 --absent warning "group '"
  # audit lists the same as findings, each naming its line or the host's file
  policy "$narrow"
  inside "files cdtest cdother" up 0 "" '"$CLI" audit --json --config "$W/policy" --confdir "" "$W/empty"'
  if python3 - "$work/out" "$work/policy" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = {(f["id"], f["path"], f["line"]) for f in d["findings"]}
want = {("narrowing-group", sys.argv[2], 1), ("nss-order", "/etc/nsswitch.conf", None)}
assert want <= got, got
PY
  then ok "audit: narrowing-group and nss-order findings"; else not_ok "audit: narrowing-group and nss-order findings"; fi
  inside "files cdtest cdother" up 0 "" '"$CLI" check --staged "$W/policy" --config "$W/policy" --confdir ""; echo rc=$?'
  expect_check "check --staged: the host's nsswitch.conf is a note, not a warning" 0 \
    "note: /etc/nsswitch.conf: group: a source after cdtest" --absent warning
  if [ -n "${CD_NSCD:-}" ]; then
    policy "$narrow"
    inside "files cdtest" up 1 "" "$run_check"
    expect_check "check: nscd caches the group database" 1 "warning: nscd caches the group database"
  else
    skip "check: nscd caches the group database" "no nscd"
  fi
}

case_all_up
case_memberless
case_memberless_listed_locally
cases_check
case_initgroups
case_backend_order
case_name_reuse
cases_nscd
if [ ! -s "$work/fds" ]; then ok "no login left a descriptor open"
else echo "# $(sort "$work/fds" | uniq -c | paste -sd' ')"; not_ok "no login left a descriptor open"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
