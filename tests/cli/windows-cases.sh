# windows-cases.sh: CLI cases of the lines' windows (capdelegate.conf(5), WINDOWS;
# capdelegate(8), explain --at, check's and audit's ended lines): every command that resolves a
# grant judges the windows at one moment, as login does, and no TZ changes a byte of what it
# prints (sourced by run.sh).
# shellcheck shell=bash disable=SC2034,SC2016

WINDOWS_CASES=(windows_explain_at_edges windows_explain_now windows_explain_bad_at
  windows_explain_tz_hostile windows_audit_ended_line windows_audit_tz_hostile
  windows_check_ended_and_notes windows_check_warn_within windows_check_contradiction_in_time
  windows_check_tz_hostile windows_edit_refuses_malformed_window windows_report_ended_lines
  windows_report_reads_version_5 windows_manpage_example windows_fault_alloc
  windows_audit_json_same_later)

# A UTC time as a policy writes it, OFFSET from the real clock (date -d's words: '-1 minute').
win_time() { date -u -d "$1" +%Y-%m-%dT%H:%M:%SZ; }

# The policy of the edge cases: bob's own line ends at 12:00:30 on 2030-06-01 (and starts on
# 2026-01-01), alice's starts in 2035; bob is in netops (make_nss).
win_policy() {
  policy "${1:-win}" <<'P'
bob       cap_syslog      from 2026-01-01T00:00Z until 2030-06-01T12:00:30Z
@netops   cap_net_admin
*         cap_net_bind_service
alice     cap_net_raw     from 2035-01-01T00:00Z
P
}

# win_explain USER TIME: explain USER --at TIME under policy $p, no drop-ins, no files ($e).
win_explain() { cd_nss explain "$1" --config "$p" --confdir "" --at "$2" "$e"; want_rc 0; }

# capdelegate(8), explain --at: the grant at each second around a window's edges, each line's
# window with its state then, and a user whose own line ended falling to her groups.
t_windows_explain_at_edges() {
  need_root; local p e="$CASE_DIR/empty"; p=$(win_policy); mkdir -p "$e"
  win_explain bob 2030-06-01T12:00:29Z
  want_line "$OUT" "at\t2030-06-01T12:00:29Z"
  want_line "$OUT" "pI\tcap_syslog\tuser"
  want_line "$OUT" "match\t$p:1\tuser\tbob\tcap_syslog"
  want_line "$OUT" "window\t$p:1\tbob\tcap_syslog\tfrom=2026-01-01T00:00Z\tuntil=2030-06-01T12:00:30Z\tin force"
  no_match "$OUT" "^note"
  # until is exclusive: at its second the line has ended, and bob's group decides
  win_explain bob 2030-06-01T12:00:30Z
  want_line "$OUT" "pI\tcap_net_admin\tgroup"
  want_line "$OUT" "match\t$p:2\tgroup\t@netops\tcap_net_admin"
  no_text "$OUT" "match	$p:1"
  want_line "$OUT" "window\t$p:1\tbob\tcap_syslog\tfrom=2026-01-01T00:00Z\tuntil=2030-06-01T12:00:30Z\tended"
  want_line "$OUT" "note\t$p:1: the user's own line ended at 2030-06-01T12:00:30Z (now): the lines of the user's groups and \"*\" decide"
  win_explain bob 2030-06-01T12:00:31Z
  want_line "$OUT" "pI\tcap_net_admin\tgroup"
  want_text "$OUT" "ended at 2030-06-01T12:00:30Z (1s ago)"
  win_explain bob 2030-06-01T13:00:30Z
  want_text "$OUT" "ended at 2030-06-01T12:00:30Z (1h ago)"
  win_explain bob 2030-06-03T15:00Z
  want_text "$OUT" "ended at 2030-06-01T12:00:30Z (2d 2h ago)"
  # from is inclusive: the second before it the line is not yet in force
  win_explain bob 2025-12-31T23:59:59Z
  want_line "$OUT" "pI\tcap_net_admin\tgroup"
  want_text "$OUT" "window	$p:1	bob	cap_syslog	from=2026-01-01T00:00Z	until=2030-06-01T12:00:30Z	not yet"
  no_match "$OUT" "^note"
  win_explain bob 2026-01-01T00:00Z
  want_line "$OUT" "pI\tcap_syslog\tuser"
  # a user in no group falls to "*" until her own line starts
  win_explain alice 2034-12-31T23:59:59Z
  want_line "$OUT" "pI\tcap_net_bind_service\tdefault"
  want_line "$OUT" "window\t$p:4\talice\tcap_net_raw\tfrom=2035-01-01T00:00Z\tuntil=-\tnot yet"
  no_text "$OUT" "window	$p:1"
  win_explain alice 2035-01-01T00:00:00Z
  want_line "$OUT" "pI\tcap_net_raw\tuser"
  want_line "$OUT" "window\t$p:4\talice\tcap_net_raw\tfrom=2035-01-01T00:00Z\tuntil=-\tin force"
  # a group line that ended: its members get "*"
  p=$(printf '@netops cap_net_admin until 2030-01-01T00:00Z\n* cap_syslog\n' | policy grp)
  win_explain dave 2029-12-31T23:59:59Z
  want_line "$OUT" "pI\tcap_net_admin\tgroup"
  win_explain dave 2030-01-01T00:00Z
  want_line "$OUT" "pI\tcap_syslog\tdefault"
  want_line "$OUT" "window\t$p:1\t@netops\tcap_net_admin\tfrom=-\tuntil=2030-01-01T00:00Z\tended"
}

# capdelegate(8), explain: without --at (or with --at now) the windows are judged by the
# system clock, as a login now would: a line that ended a minute ago grants nothing.
t_windows_explain_now() {
  need_root; local p e="$CASE_DIR/empty" ago later; mkdir -p "$e"
  ago=$(win_time '-1 minute'); later=$(win_time '+1 hour')
  p=$(printf 'alice cap_net_raw until %s\nbob cap_syslog until %s\n* cap_net_bind_service from %s\n' \
      "$ago" "$later" "$later" | policy)
  local a
  for a in "" "--at now"; do
    # shellcheck disable=SC2086
    cd_nss explain alice --config "$p" --confdir "" $a "$e"; want_rc 0
    want_line "$OUT" "pI\tnone\tnone"
    want_text "$OUT" "	until=$(sed 's/:00Z$/Z/' <<<"$ago")	ended"
    want_text "$OUT" "ended at $(sed 's/:00Z$/Z/' <<<"$ago") (1m ago)"
    # shellcheck disable=SC2086
    cd_nss explain bob --config "$p" --confdir "" $a "$e"; want_rc 0
    want_line "$OUT" "pI\tcap_syslog\tuser"
  done
  # the moment shown is the clock's, within the seconds this case took
  local at now; at=$(grep '^at	' "$OUT" | cut -f2); now=$(date -u +%s)
  [ $(( now - $(date -u -d "$at" +%s) )) -le 5 ] || fail "at $at is not now"
}

# A time explain cannot read is refused, with the reason and the form it wants: nothing is
# explained, exit 2 (a grant at another moment than asked would be a wrong answer).
t_windows_explain_bad_at() {
  need_root; local p t; p=$(win_policy)
  for t in 2030-06-01T12:00 2030-06-01T12:00+01:00 2030-06-01 2030-02-29T00:00Z 1969-12-31T23:59Z \
           2030-06-01T24:00Z 2030-06-01t12:00z Now ""; do
    cd_nss explain bob --config "$p" --confdir "" --at "$t" "$CASE_DIR"; want_rc 2
    want_text "$ERR" "capdelegate: explain: --at '$t': "
    want_text "$ERR" "(or: now)"
    [ ! -s "$OUT" ] || fail "--at '$t' explained something"
  done
  cd_nss explain bob --config "$p" --confdir "" --at $'2030-06-01T12:00Z\e[2J' "$CASE_DIR"; want_rc 2
  want_text "$ERR" "--at '2030-06-01T12:00Z\\x1b[2J': "
}

# The hostile time zones: TZ names a zone 5:45 east, a file that is no zone, a POSIX rule 14
# hours off, 10,000 bytes. None changes a byte of explain's output (the times are UTC, read and
# printed by arithmetic).
WIN_TZS=("Asia/Kathmandu" ":/etc/passwd" "XXX-14" "$(head -c 10000 /dev/zero | tr '\0' A)")

# win_same_under_tz CMD...: the CLI's stdout and stderr, byte for byte the same with TZ unset
# and under each of WIN_TZS. A run that reads the clock may cross a second: retried once.
win_same_under_tz() {
  local z try ok
  for try in 1 2; do
    ok=1
    env -u TZ LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
      NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
      "$BIN" "$@" >"$CASE_DIR/ref.out" 2>"$CASE_DIR/ref.err" || true
    for z in "${WIN_TZS[@]}"; do
      env TZ="$z" LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
        NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
        "$BIN" "$@" >"$CASE_DIR/tz.out" 2>"$CASE_DIR/tz.err" || true
      if ! cmp -s "$CASE_DIR/ref.out" "$CASE_DIR/tz.out" || ! cmp -s "$CASE_DIR/ref.err" "$CASE_DIR/tz.err"; then
        ok=0; [ "$try" -eq 2 ] && { diff "$CASE_DIR/ref.out" "$CASE_DIR/tz.out" >&2 || true
          diff "$CASE_DIR/ref.err" "$CASE_DIR/tz.err" >&2 || true; fail "TZ='${z:0:40}' changes: $*"; }
        break
      fi
    done
    [ "$ok" -eq 1 ] && return 0
  done
}

t_windows_explain_tz_hostile() {
  need_root; local p e="$CASE_DIR/empty"; p=$(win_policy); mkdir -p "$e"
  local at
  for at in 2030-06-01T12:00:29Z 2030-06-01T12:00:30Z 2025-12-31T23:59:59Z now; do
    win_same_under_tz explain bob --config "$p" --confdir "" --at "$at" "$e"
  done
  win_same_under_tz explain alice --config "$p" --confdir "" "$e"
  # and what it printed is UTC: the edge is where the policy wrote it
  TZ=Asia/Kathmandu cd_nss explain bob --config "$p" --confdir "" --at 2030-06-01T12:00:30Z "$e"
  want_line "$OUT" "pI\tcap_net_admin\tgroup"
}

# The audit policy: alice's line ended a minute ago, bob's holds until 2099, carol's starts in
# 2099, the "*" line ended in 2001 ($WIN_AGO: alice's end, set by the caller). Prints its path.
win_audit_policy() {
  printf 'alice cap_net_raw until %s\nbob cap_syslog until 2099-01-01T00:00Z\ncarol cap_net_admin from 2099-01-01T00:00Z\n* cap_net_bind_service until 2001-01-01T00:00Z\n' \
    "$WIN_AGO" | policy audit
}

# capdelegate(8), FINDINGS: an ended line is an ended-line finding (exit 1), named by its file
# and line with when it ended; it grants nothing anywhere else in the audit (matrix, fI
# findings, unused grants, user records), nor does a line not yet started, which is no finding.
t_windows_audit_ended_line() {
  need_root; local p t="$CASE_DIR/tree" d="$CASE_DIR/db"
  WIN_AGO=$(win_time '-1 minute'); p=$(win_audit_policy)
  capfile "$t/ping_i" cap_net_raw=i; capfile "$t/admin_i" cap_net_admin=i; capfile "$t/log_i" cap_syslog=i
  mkdir -p "$d"; printf '{"userName":"alice","capabilityBoundingSet":["cap_chown"]}' >"$d/alice.user"
  cd_nss audit --config "$p" --confdir '' --userdb "$d" "$t"; want_rc 1
  want_line "$OUT" "# policy\t$p\tok\t4 rules\t2 ended\t1 not yet"
  want_line "$OUT" "finding\tended-line\t$p:1\tcap_net_raw\tpolicy line ended at $(sed 's/:00Z$/Z/' <<<"$WIN_AGO"): login no longer grants it; sessions opened before keep it (audit --processes); remove the line"
  want_text "$OUT" "finding	ended-line	$p:4	cap_net_bind_service	policy line ended at 2001-01-01T00:00Z: login no longer grants it"
  [ "$(count_lines "$OUT" '^finding	ended-line')" -eq 2 ] || fail "want 2 ended-line findings"
  # nobody gains what an ended line or a line not yet started gives
  want_line "$OUT" "gain\tbob\t$t/log_i\tcap_syslog\tnone"
  no_text "$OUT" "gain	alice"; no_text "$OUT" "gain	carol"; no_text "$OUT" "gain	*"
  want_text "$OUT" "finding	undelegated-inheritable	$t/ping_i	cap_net_raw	"
  want_text "$OUT" "finding	undelegated-inheritable	$t/admin_i	cap_net_admin	"
  no_text "$OUT" "unused-grant"
  no_text "$OUT" "bounding-drop"	# alice's record would take cap_net_raw, which she no longer gets
  # the JSON: every line with its window, the moment judged, the same findings
  cd_nss audit --json --config "$p" --confdir '' --userdb "$d" "$t"; want_rc 1
  "$HERE/check-json.py" --may-be-empty errors --may-be-empty vanished "$MAN" "$OUT" >&2 || fail "JSON does not match the schema in capdelegate(8)"
  python3 - "$OUT" "$p" "$(sed 's/:00Z$/Z/' <<<"$WIN_AGO")" <<'PY' >&2 || fail "audit --json windows"
import json, sys, time, calendar
d, p, ago = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert d["version"] >= 6, d["version"]
pol = d["policy"]
at = calendar.timegm(time.strptime(pol["at"], "%Y-%m-%dT%H:%M:%SZ" if pol["at"].count(":") == 2 else "%Y-%m-%dT%H:%MZ"))
assert abs(at - time.time()) < 10, pol["at"]
got = [(r["line"], r["subject"], r["from"], r["until"], r["in_force"]) for r in pol["rules"]]
want = [(1, "alice", None, ago, False), (2, "bob", None, "2099-01-01T00:00Z", True),
        (3, "carol", "2099-01-01T00:00Z", None, False), (4, "*", None, "2001-01-01T00:00Z", False)]
assert got == want, got
ended = [(f["path"], f["line"], f["caps"]) for f in d["findings"] if f["id"] == "ended-line"]
assert ended == [(p, 1, ["cap_net_raw"]), (p, 4, ["cap_net_bind_service"])], ended
assert [m["subject"] for m in d["matrix"]] == ["bob"], d["matrix"]
PY
  # a line that has not ended is no finding, however near its end
  p=$(printf 'alice cap_net_raw until %s\n' "$(win_time '+1 minute')" | policy soon)
  cd_nss audit --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/tree"; no_text "$OUT" "ended-line"
  want_line "$OUT" "# policy\t$p\tok\t1 rule"
}

t_windows_audit_tz_hostile() {
  need_root; local p t="$CASE_DIR/tree"; p=$(printf 'alice cap_net_raw until 2001-01-01T00:00:01Z\nbob cap_syslog from 2099-01-01T00:00Z\n' | policy)
  capfile "$t/ping_i" cap_net_raw=i
  win_same_under_tz audit --config "$p" --confdir '' --userdb "$CASE_DIR/none" "$t"
  win_same_under_tz audit --json --config "$p" --confdir '' --userdb "$CASE_DIR/none" "$t"
}

# check --config $p, no drop-ins.
win_check() { cd_nss check --config "$p" --confdir "" "$@"; }

# capdelegate(8), check: a line that ended is a warning (exit 1) naming FILE:LINE, the time in
# UTC and how long ago; a line ending within 7 days and a line not yet started are notes (exit
# 0 for notes alone); the rules listed are every line, each window in a "window" record.
t_windows_check_ended_and_notes() {
  need_root; local p ago soon month
  ago=$(win_time '-1 minute'); soon=$(win_time '+2 days -30 minutes'); month=$(win_time '+30 days')
  p=$(printf 'alice cap_net_raw until %s\nbob cap_syslog until %s\ncarol cap_net_admin until %s\ndave none from 2099-01-01T00:00Z\n@netops cap_net_raw\n' \
      "$ago" "$soon" "$month" | policy)
  ago=$(sed 's/:00Z$/Z/' <<<"$ago"); soon=$(sed 's/:00Z$/Z/' <<<"$soon"); month=$(sed 's/:00Z$/Z/' <<<"$month")
  win_check; want_rc 1
  want_line "$OUT" "$p: ok, 5 rules, 1 warning"
  want_line "$ERR" "capdelegate: warning: $p:1: alice cap_net_raw: ended at $ago (1m ago): login no longer grants it; remove the line"
  want_line "$ERR" "capdelegate: note: $p:2: bob cap_syslog: ends at $soon (in 1d 23h)"
  want_text "$ERR" "capdelegate: note: $p:4: dave none: not yet in force: starts at 2099-01-01T00:00Z (in 26"
  no_text "$ERR" "$p:3"; no_text "$ERR" "$p:5"
  [ "$(count_lines "$OUT" '^rule	')" -eq 5 ] || fail "want every line listed"
  want_line "$OUT" "window\t$p:1\talice\tcap_net_raw\tfrom=-\tuntil=$ago\tended"
  want_line "$OUT" "window\t$p:2\tbob\tcap_syslog\tfrom=-\tuntil=$soon\tin force"
  want_line "$OUT" "window\t$p:4\tdave\tnone\tfrom=2099-01-01T00:00Z\tuntil=-\tnot yet"
  no_text "$OUT" "window	$p:5"
  # notes alone: exit 0
  p=$(printf 'dave none from 2099-01-01T00:00Z\nbob cap_syslog until %s\n' "$soon" | policy notes)
  win_check; want_rc 0; want_line "$OUT" "$p: ok, 2 rules, 0 warnings"
  want_text "$ERR" "note: $p:1: dave none: not yet in force"; want_text "$ERR" "note: $p:2: bob cap_syslog: ends at"
  # --staged judges the staged text's windows the same way
  printf '* cap_syslog until 2001-01-01T00:00Z\n' >"$CASE_DIR/staged.conf"
  win_check --staged "$CASE_DIR/staged.conf"; want_rc 1
  want_text "$ERR" "warning: $CASE_DIR/staged.conf:1: * cap_syslog: ended at 2001-01-01T00:00Z ("
}

# --warn-within DURATION: d, h, m or s; 0 turns the note off; anything else is refused.
t_windows_check_warn_within() {
  need_root; local p d
  p=$(printf 'bob cap_syslog until %s\nalice cap_net_raw until %s\n' "$(win_time '+2 days')" "$(win_time '+1 hour')" | policy)
  win_check; want_text "$ERR" "note: $p:1: bob"; want_text "$ERR" "note: $p:2: alice"
  for d in 36h 47h 90m; do
    win_check --warn-within "$d"; want_rc 0; no_text "$ERR" "$p:1:"; want_text "$ERR" "note: $p:2: alice cap_net_raw: ends at"
  done
  for d in 3d 49h 2880m 172801s; do
    win_check --warn-within "$d"; want_rc 0; want_text "$ERR" "note: $p:1: bob"
  done
  win_check --warn-within 59m; no_text "$ERR" "ends at"
  win_check --warn-within 0; want_rc 0; no_text "$ERR" "ends at"
  # an ended line is a warning whatever --warn-within says
  p=$(printf 'bob cap_syslog until 2001-01-01T00:00Z\n' | policy old)
  win_check --warn-within 0; want_rc 1; want_text "$ERR" "warning: $p:1: bob cap_syslog: ended at 2001-01-01T00:00Z"
  for d in 7x 7 -1d 1.5d "" d 7dd " 7d" 99999999999999999999d 0d0; do
    win_check --warn-within "$d"; want_rc 2
    want_text "$ERR" "capdelegate: check: --warn-within '$d': a whole number and its unit"
    [ ! -s "$OUT" ] || fail "--warn-within '$d' judged something"
  done
  win_check --warn-within 0d; want_rc 1
}

# Lines add up only while both are in force: a "none" that starts when a grant ends
# contradicts nothing; one that overlaps it is the contradiction it always was.
t_windows_check_contradiction_in_time() {
  need_root; local p
  p=$(printf 'dave cap_kill until 2030-01-01T00:00Z\ndave none from 2030-01-01T00:00Z\n' | policy apart)
  win_check; want_rc 0; no_text "$ERR" "contradicts"
  p=$(printf 'dave cap_kill until 2030-01-01T00:00Z\ndave none from 2029-12-31T23:59:59Z\n' | policy overlap)
  win_check; want_rc 1
  want_line "$ERR" "capdelegate: warning: $p:2: \"none\" for dave contradicts $p:1: a subject's lines add up, so the lines of dave grant cap_kill"
}

t_windows_check_tz_hostile() {
  need_root; local p
  p=$(printf 'alice cap_net_raw until 2001-01-01T00:00:01Z\nbob cap_syslog from 2099-01-01T00:00Z\n* none from 2001-01-01T00:00Z until 2099-12-31T23:59:59Z\n' | policy)
  touch -d '-1 hour' "$p"	# no "modified N seconds ago" note, which counts seconds
  win_same_under_tz check --config "$p" --confdir ""
  win_same_under_tz check --config "$p" --confdir "" --tsv --warn-within 36h
  win_check; want_text "$ERR" "ended at 2001-01-01T00:00:01Z ("
}

# capdelegate(8), edit: a malformed window is an error like any other (the core judges the
# copy): the file is not installed. A window without its Z, then one ending before it starts.
t_windows_edit_refuses_malformed_window() {
  need_root; policy_dir; local before
  before=$(snap "$P")
  ED=$(editor nozone <<'SH'
printf 'bob cap_kill until 2030-01-01T00:00\n' >>"$f"
SH
)
  cd_edit; want_rc 1
  want_text "$ERR" "$CASE_DIR/etc/.capdelegate.conf.edit:2: a time without its zone: times are UTC and written with Z"
  want_text "$ERR" "$P left untouched"
  same_file "$P" "$before"; no_leftovers
  ED=$(editor backwards <<'SH'
printf 'bob cap_kill from 2030-01-02T00:00Z until 2030-01-01T00:00Z\n' >>"$f"
SH
)
  cd_edit; want_rc 1; want_text "$ERR" "the window ends before it starts"
  same_file "$P" "$before"; no_leftovers
  # a well-formed window is installed; an ended line is shown as the warning it is
  ED=$(editor good <<'SH'
printf 'bob cap_kill until 2001-01-01T00:00Z\n' >>"$f"
SH
)
  cd_edit; want_rc 0
  want_text "$ERR" "warning: $CASE_DIR/etc/.capdelegate.conf.edit:2: bob cap_kill: ended at 2001-01-01T00:00Z ("
  want_line "$OUT" "$P: installed, 2 rules, 1 warning in the policy"
  want_text "$P" "bob cap_kill until 2001-01-01T00:00Z"
}

# Two hosts: web1's alice line ended in 2001 and its bob line holds; web2's alice line holds
# and its bob line starts in 2099 (report-cases.sh's host_audit). Sets W1, W2, P1.
win_report_hosts() {
  local t="$CASE_DIR/tree" p2
  capfile "$t/ping" cap_net_raw=i
  P1=$(printf 'alice cap_net_raw until 2001-01-01T00:00Z\nbob cap_syslog\n' | policy web1)
  p2=$(printf 'alice cap_net_raw\nbob cap_syslog from 2099-01-01T00:00Z\n' | policy web2)
  W1=$(host_audit web1 "$P1" "$t"); W2=$(host_audit web2 "$p2" "$t")
}

# capdelegate(8), report: the grants are the lines each audit found in force; the ended lines
# are listed, each with its host, FILE:LINE and when it ended (exit 1).
t_windows_report_ended_lines() {
  need_unshare; win_report_hosts
  cd_run report "$W1" "$W2"; want_rc 1
  want_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb2"
  no_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb1"
  want_line "$OUT" "grant\tcap_syslog\tuser\tbob\tweb1"
  no_line "$OUT" "grant\tcap_syslog\tuser\tbob\tweb2"
  want_text "$OUT" "ended	web1	ended-line	$P1:1	policy line ended at 2001-01-01T00:00Z: login no longer grants it"
  [ "$(count_lines "$OUT" '^ended')" -eq 1 ] || fail "want one ended record"
  want_line "$OUT" "differs\tuser\talice\tweb1=-\tweb2=cap_net_raw"
  cd_tty report "$W1" "$W2"; want_rc 1
  want_text "$OUT" "== Policy lines that ended (login no longer reads them)"
  cd_run report --json "$W1" "$W2"; want_rc 1
  python3 - "$OUT" "$P1" <<'PY' || fail "report --json ended"
import json, sys
d, p = json.load(open(sys.argv[1])), sys.argv[2]
assert d["version"] == 3, d["version"]
assert [(e["host"], e["id"], e["path"]) for e in d["ended"]] == [("web1", "ended-line", p + ":1")], d["ended"]
g = {(x["capability"], x["subject"], tuple(h["host"] for h in x["hosts"])) for x in d["grants"]}
assert ("cap_net_raw", "alice", ("web2",)) in g and ("cap_syslog", "bob", ("web1",)) in g, g
PY
  # a line that ended is no error: one host alone, exit 1
  cd_run report "$W1"; want_rc 1
  # the ended line's FILE:LINE whose memory cannot be had: an error of its own (exit 2), never
  # the file named without its line (fault-cases.sh's sweep of that one asprintf)
  local n fmt='%s:%ld'; [ "$(getconf LONG_BIT)" = 64 ] || fmt='%s:%lld'
  n=$(CD_FAULT_ASPRINTF="$fmt" SWEEP=CD_FAULT_NTH sweep_alloc report "$W1" "$W2"); echo "report, FILE:LINE: $n" >&2
  [ "${n%% *}" -ge 1 ] || fail "no ended line's FILE:LINE formatted: $n"
}

# An audit of version 5 and earlier (no windows) is read as before: every line grants, as does
# a line that does not say whether it is in force; one that says so otherwise than true or
# false refuses the file.
t_windows_report_reads_version_5() {
  need_unshare; win_report_hosts
  python3 - "$W2" "$CASE_DIR/v5.json" "$CASE_DIR/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["version"] = 5
del d["policy"]["at"]
for r in d["policy"]["rules"]:
    del r["from"], r["until"], r["in_force"]
json.dump(d, open(sys.argv[2], "w"))
d["version"] = 6
for r in d["policy"]["rules"]:
    r["in_force"] = "yes"
json.dump(d, open(sys.argv[3], "w"))
PY
  cd_run report "$CASE_DIR/v5.json"; want_rc 0
  want_line "$OUT" "grant\tcap_syslog\tuser\tbob\tweb2"
  want_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb2"
  cd_run report "$CASE_DIR/bad.json"; want_rc 2
  want_text "$ERR" "policy.rules[].in_force: not true or false"
}

# capdelegate(8), EXAMPLES: the week's grant, its line as the page writes it, asked a second
# before its end and at it.
t_windows_manpage_example() {
  need_root; local p line e="$CASE_DIR/empty"; mkdir -p "$e"
  line=$(awk '/^A grant for a week/{f=1} f&&/^contractor /{print; exit}' "$MAN" | sed 's/\\-/-/g')
  [ -n "$line" ] || fail "no example line in capdelegate(8)"
  p=$(printf '%s\n' "$line" | policy)
  NSSDIR="$CASE_DIR/nss"; mkdir -p "$NSSDIR"
  printf 'contractor:x:1500:1500::/:/bin/sh\n' >"$NSSDIR/passwd"; printf 'contractor:x:1500:\n' >"$NSSDIR/group"
  cd_nss explain contractor --config "$p" --confdir "" --at 2026-12-19T17:59:59Z "$e"; want_rc 0
  want_line "$OUT" "pI\tcap_net_admin\tuser"
  cd_nss explain contractor --config "$p" --confdir "" --at 2026-12-19T18:00Z "$e"; want_rc 0
  want_line "$OUT" "pI\tnone\tnone"
  want_line "$OUT" "window\t$p:1\tcontractor\tcap_net_admin\tfrom=2026-12-14T08:00Z\tuntil=2026-12-19T18:00Z\tended"
  want_text "$OUT" "note	$p:1: the user's own line ended at 2026-12-19T18:00Z (now)"
}

# capdelegate(8), EXIT STATUS: memory that runs out while the windows are judged or shown is an
# error (exit 2, said), never another grant: each allocation of check, explain --at and audit
# fails in turn (fault-cases.sh's sweep_alloc), on a policy whose lines ended, hold, and start
# later, in two files.
t_windows_fault_alloc() {
  need_root; local p d="$CASE_DIR/capdelegate.d" t="$CASE_DIR/tree" n
  p=$(printf 'bob cap_syslog until 2001-01-01T00:00Z\n@netops cap_net_admin from 2001-01-01T00:00Z\n* cap_net_raw until 2099-01-01T00:00Z\n' | policy)
  mkdir -p "$d"; printf 'alice cap_kill from 2098-01-01T00:00Z\nbob none until 2002-01-01T00:00Z\n' >"$d/10-w.conf"
  chmod 0644 "$d/10-w.conf"; touch -d '-1 hour' "$p" "$d/10-w.conf"
  capfile "$t/ping" cap_net_raw=i
  n=$(sweep_alloc check --config "$p" --confdir "$d"); echo "check: $n" >&2
  n=$(sweep_alloc explain bob --at 2050-01-01T00:00Z --config "$p" --confdir "$d" "$t"); echo "explain: $n" >&2
  n=$(sweep_alloc explain alice --at 2098-01-01T00:00Z --config "$p" --confdir "$d" "$t"); echo "explain: $n" >&2
  n=$(sweep_alloc audit --threads 1 --config "$p" --confdir "$d" --userdb "$CASE_DIR/none" "$t"); echo "audit: $n" >&2
}

# capdelegate(8), audit --json: an audit of an unchanged host differs from a later one only in
# policy.at, the moment its windows were judged (no "N ago" in a finding), so a configuration
# tool that keeps audits can tell a change from the clock (contrib/ansible leaves policy.at out).
# A line that ended 30 s ago: a span in seconds would differ between the two.
t_windows_audit_json_same_later() {
  need_root; local p t="$CASE_DIR/tree" first
  WIN_AGO=$(win_time '-30 seconds'); p=$(win_audit_policy)
  capfile "$t/ping_i" cap_net_raw=i
  cd_nss audit --json --config "$p" --confdir '' "$t"; want_rc 1
  first=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d["policy"].pop("at"); print(json.dumps(d, sort_keys=True))' <"$OUT")
  sleep 1.1
  cd_nss audit --json --config "$p" --confdir '' "$t"; want_rc 1
  python3 -c 'import json,sys; d=json.load(sys.stdin); d["policy"].pop("at"); print(json.dumps(d, sort_keys=True))' <"$OUT" >"$CASE_DIR/second"
  [ "$first" = "$(cat "$CASE_DIR/second")" ] || fail "two audits a second apart differ beyond policy.at"
  grep -qF '"ended-line"' <<<"$first" || fail "no ended-line finding in the audit"
}
