# usage-cases.sh: `capdelegate usage`, the runs of marked files from the audit trail, per user
# and capability (sourced by run.sh). The logs are in tests/cli/fixtures/usage/: the guest's
# (recorded by tests/system/run.sh in the systemd guest) and hand-made hostile ones (see its
# README). Each case copies the marks file into its own root-owned directory, as the marks
# file's safety rules want.

USAGE_CASES=(
  usage_guest_bookworm usage_guest_trixie usage_sessions usage_interleaved usage_names
  usage_nodes usage_disagree usage_hostile_logs usage_window usage_json usage_rotations usage_enriched
  usage_propose usage_propose_keeps_unattributed usage_bad_invocations usage_report_fleet
  usage_report_rejects fault_alloc_usage usage_session_closed valgrind_usage usage_default_logs
  usage_session_number_reused usage_gained usage_propose_dropin usage_sorted usage_json_machine_id
  usage_many_sessions fault_strdup_usage_field
)

UFIX="$HERE/fixtures/usage"

# umarks [FILE]: the marks file (default: the hand-made logs') in $CASE_DIR; prints its path.
umarks() {
  local m="$CASE_DIR/marks.conf"
  cp "${1:-$UFIX/marks.conf}" "$m"
  chmod 0644 "$m"
  echo "$m"
}

# u LOG... : usage --tsv over the hand-made logs' marks, a window that holds them all.
u() { local m; m=$(umarks); cd_run usage --tsv --marks "$m" --since 36500d --input "$@"; }

usage_guest() {
  local g="$UFIX/guest-$1" m p
  [ -f "$g/audit.log" ] || skip "no log recorded in the $1 guest yet ($g)"
  need_root
  m=$(umarks "$g/capdelegate-files.conf")
  cd_run usage --tsv --marks "$m" --since 36500d --input "$g/audit.log"
  want_rc 0
  # alice (cap_net_raw) pinged three times, bob (no grant) once, carol (cap_syslog) logged in
  # and ran nothing marked
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=3\tfirst=\S+\tlast=\S+$' "$OUT" || fail "alice's runs"
  grep -qP '^denied\tbob\tcap_net_raw\t/usr/bin/ping\truns=1\t' "$OUT" || fail "bob's run is no denied want"
  grep -qP '^unused\tcarol\tcap_syslog\tsessions=1\t.*\trules=/etc/security/capdelegate.conf:14$' "$OUT" ||
    fail "carol's grant unused"
  [ "$(wc -l <"$OUT")" -eq 3 ] || fail "want 3 records"
  # --propose against the guest's policy, as root's files here: the records' rules= name it
  p=$(policy <"$g/capdelegate.conf")
  sed "s|rules=/etc/security/capdelegate.conf:|rules=$p:|g" "$g/audit.log" >"$CASE_DIR/audit.log"
  cd_run usage --propose --config "$p" --confdir '' --marks "$m" --since 36500d --input "$CASE_DIR/audit.log"
  want_rc 0
  want_line "$OUT" "# $p:14: carol cap_syslog"
  want_line "$OUT" "# remove the line"
  no_text "$OUT" "bob"
  [ "$(grep -c '^# remove the line' "$OUT")" -eq 1 ] || fail "want carol's line alone removed"
}
t_usage_guest_bookworm() { usage_guest bookworm; }
t_usage_guest_trixie() { usage_guest trixie; }

# login (the grant before the session, joined by the LOGIN record of its pid), ssh (the grant
# in its session), runs granted, denied, of an unmarked file, failed, of another key, in a
# session without a module record, outside any session
t_usage_sessions() {
  need_root
  u "$UFIX/sessions.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:51Z'
  want_line "$OUT" 'used\tcarol\tcap_syslog\t/usr/local/bin/dmesg-delegated\truns=1\tfirst=2025-12-06T05:46:54Z\tlast=2025-12-06T05:46:54Z'
  want_line "$OUT" 'unused\tcarol\tcap_net_raw\tsessions=1\tlast_grant=2025-12-06T05:46:40Z\tunattributed=2\trules=/etc/security/capdelegate.conf:3'
  want_line "$OUT" 'denied\talice\tcap_syslog\t/usr/local/bin/dmesg-delegated\truns=1\tfirst=2025-12-06T05:46:52Z\tlast=2025-12-06T05:46:52Z'
  want_line "$OUT" 'denied\tbob\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:46:53Z\tlast=2025-12-06T05:46:53Z'
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=1\twhy=no-module-record\tfirst=2025-12-06T05:46:58Z\tlast=2025-12-06T05:46:58Z'
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=1\twhy=no-session\tfirst=2025-12-06T05:46:59Z\tlast=2025-12-06T05:46:59Z'
  [ "$(wc -l <"$OUT")" -eq 7 ] || fail "want 7 records"
  want_text "$ERR" 'runs of marked files 7, attributed to nobody 2; runs of other files 1'
}

# two sessions' records interleaved line by line, their LOGIN records in the other order
t_usage_interleaved() {
  need_root
  u "$UFIX/interleaved.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:50Z'
  want_line "$OUT" 'denied\tbob\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:50Z'
  [ "$(wc -l <"$OUT")" -eq 2 ] || fail "want 2 records"
}

# a user name and file names hex-encoded in the log (blanks, a newline, an escape sequence):
# printed in the policy's and the marks file's forms, never a raw control byte
t_usage_names() {
  need_root
  u "$UFIX/names.log"
  want_rc 0
  want_line "$OUT" 'used\tevil\\040user\\012\\033\\1332J\tcap_net_raw\t/opt/odd\\040dir/ping\truns=1\tfirst=2025-12-06T05:46:51Z\tlast=2025-12-06T05:46:51Z'
  [ "$(wc -l <"$OUT")" -eq 1 ] || fail "want 1 record"
  ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$OUT" "$ERR" || fail "a control byte printed"
  want_text "$ERR" 'runs of other files 1'
}

# a remote log: session 3 of web1 is alice's; session 3 of web2 and of the local node are not
t_usage_nodes() {
  need_root
  u "$UFIX/nodes.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:50Z'
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=2\twhy=no-module-record\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:51Z'
}

# su's grant in alice's session (two grants: records disagree), a LOGIN too late to be the
# grant's own, a grant whose capset failed (res=failed: nothing held), a run whose login uid
# is not its session's
t_usage_disagree() {
  need_root
  u "$UFIX/disagree.log"
  want_rc 0
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=2\twhy=records-disagree\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:47:32Z'
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=1\twhy=no-module-record\tfirst=2025-12-06T05:47:21Z\tlast=2025-12-06T05:47:21Z'
  want_line "$OUT" 'denied\tdave\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:47:31Z\tlast=2025-12-06T05:47:31Z'
  no_match "$OUT" '^used'
  # su to a user of the same grant: the run is still no one's in particular
  sed 's/acct="bob" grant=none policy=ok rules=none/acct="bob" grant=cap_net_raw policy=ok rules=\/p:2/' \
    "$UFIX/disagree.log" >"$CASE_DIR/same.log"
  u "$CASE_DIR/same.log"
  want_rc 0
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=2\twhy=records-disagree\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:47:32Z'
  no_match "$OUT" '^used'
}

# every log usage cannot read whole stops it: exit 2, no record, the file and record named
t_usage_hostile_logs() {
  need_root
  local f want
  while IFS='|' read -r f want; do
    u "$UFIX/$f"
    want_rc 2
    [ ! -s "$OUT" ] || fail "$f: records printed from a log not read whole"
    want_text "$ERR" "$UFIX/$f: $want"
    want_text "$ERR" 'no report'
  done <<'EOF'
truncated.log|record 3: cut short: the last record has no end of line
not-audit.log|record 2: not an audit record: no type= where a record begins
no-ses.log|record 3: an exec record without a readable ses field
bad-grant.log|record 1: a grant record without a readable grant field
nul.log|record 3: not an audit record: a NUL byte in the record
EOF
  # a binary file, a directory, a file that does not exist
  head -c 4096 "$BIN" >"$CASE_DIR/binary.log"
  u "$CASE_DIR/binary.log"
  want_rc 2; [ ! -s "$OUT" ] || fail "records from a binary file"
  want_text "$ERR" "binary.log: record 1: "
  u "$CASE_DIR/nothing-here.log"
  want_rc 2; want_text "$ERR" "nothing-here.log: No such file or directory"
  # a LOGIN record whose pid is not a number: its session cannot be told from another's
  sed '2s/ pid=500 / pid=5x0 /' "$UFIX/gained.log" >"$CASE_DIR/login-pid.log"
  u "$CASE_DIR/login-pid.log"
  want_rc 2; [ ! -s "$OUT" ] || fail "records printed from a log not read whole"
  want_text "$ERR" "login-pid.log: record 2: a LOGIN record without a readable pid field"
}

# the window: --since counts runs from then on; a session opened before it still gives its
# grant to the runs inside it
t_usage_window() {
  need_root
  local now m l
  now=$(date +%s); m=$(umarks); l="$CASE_DIR/window.log"
  {
    printf "type=USER msg=audit(%d.100:10): pid=500 uid=0 auid=4294967295 ses=4294967295 msg='op=capdelegate-grant acct=\"alice\" grant=cap_net_raw policy=ok rules=/p:1 exe=\"/usr/bin/login\" hostname=? addr=? terminal=tty1 res=success'\n" $((now - 200 * 86400))
    printf 'type=LOGIN msg=audit(%d.101:11): pid=500 uid=0 old-auid=4294967295 auid=1001 tty=tty1 old-ses=4294967295 ses=3 res=1\n' $((now - 200 * 86400))
    for d in 150 30 2; do
      printf 'type=SYSCALL msg=audit(%d.000:%d): arch=c000003e syscall=59 success=yes exit=0 items=1 ppid=1 pid=600 auid=1001 uid=1001 gid=1001 euid=1001 suid=1001 fsuid=1001 egid=1001 sgid=1001 fsgid=1001 tty=pts0 ses=3 comm="ping" exe="/usr/bin/ping" key="capdelegate"\n' $((now - d * 86400)) $((20 + d))
    done
  } >"$l"
  cd_run usage --tsv --marks "$m" --input "$l"
  want_rc 0
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\t' "$OUT" || fail "default 90d: want 2 runs"
  want_text "$ERR" 'in the last 90d:'
  cd_run usage --tsv --marks "$m" --since 7d --input "$l"
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=1\t' "$OUT" || fail "7d: want 1 run"
  cd_run usage --tsv --marks "$m" --since 1d --input "$l"
  want_rc 0
  want_line "$OUT" 'unused\talice\tcap_net_raw\tsessions=0\tlast_grant='"$(date -u -d @$((now - 200 * 86400)) +%Y-%m-%dT%H:%M:%SZ)"'\tunattributed=0\trules=/p:1'
  no_text "$ERR" "note:"
  # 0s is a duration too: a window that starts now, which no run reached
  cd_run usage --tsv --marks "$m" --since 0s --input "$l"
  want_rc 0
  want_line "$OUT" 'unused\talice\tcap_net_raw\tsessions=0\tlast_grant='"$(date -u -d @$((now - 200 * 86400)) +%Y-%m-%dT%H:%M:%SZ)"'\tunattributed=0\trules=/p:1'
  no_match "$OUT" '^used'
  cd_run usage --tsv --marks "$m" --since 4000w --input "$l"
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=3\t' "$OUT" || fail "4000w: want 3 runs"
  # a window that begins before the oldest record: said (rotation may have taken runs away)
  want_text "$ERR" "note: the oldest record read is of $(date -u -d @$((now - 200 * 86400)) +%Y-%m-%dT%H:%M:%SZ), within the window (--since 4000w)"
  : >"$CASE_DIR/empty.log"
  cd_run usage --tsv --marks "$m" --input "$CASE_DIR/empty.log"
  want_rc 0; [ ! -s "$OUT" ] || fail "records from an empty log"
  want_text "$ERR" "note: no record read, within the window (--since 90d)"
}

t_usage_json() {
  need_root
  local m; m=$(umarks)
  cd_run usage --json --marks "$m" --since 36500d --input "$UFIX/sessions.log"
  want_rc 0
  python3 - "$OUT" <<'PY' || fail "usage --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["kind"] == "usage", d
assert "machine_id" in d and "host" in d and "host_hex" in d
assert d["key"] == "capdelegate" and d["runs"] == 8 and d["runs_unmarked"] == 1, d
assert d["oldest_record"] == 1765000000, d
used = {(u["user"], u["capability"], u["file"]): u["runs"] for u in d["used"]}
assert used == {("alice", "cap_net_raw", "/usr/bin/ping"): 2,
                ("carol", "cap_syslog", "/usr/local/bin/dmesg-delegated"): 1}, used
g = {x["user"]: x for x in d["grants"]}
assert g["carol"]["grant"] == ["cap_net_raw", "cap_syslog"] and g["carol"]["unused"] == ["cap_net_raw"], g
assert g["bob"]["grant"] == [] and g["alice"]["rules"] == "/etc/security/capdelegate.conf:1", g
assert sorted(x["why"] for x in d["unattributed"]) == ["no-module-record", "no-session"], d
assert d["unattributed_by_capability"] == {"cap_net_raw": 2}, d
assert bytes.fromhex(d["inputs"][0]["path_hex"]).decode().endswith("sessions.log")
PY
  cd_run usage --json --marks "$m" --since 36500d --input "$UFIX/names.log"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); u=d["used"][0]; assert bytes.fromhex(u["user_hex"]) == b"evil user\n\x1b[2J" and bytes.fromhex(u["file_hex"]) == b"/opt/odd dir/ping", u' "$OUT" \
    || fail "names in JSON"
}

# the rotations read in order as one trail: the grant in the older file, the run in the newer
t_usage_rotations() {
  need_root
  head -2 "$UFIX/sessions.log" >"$CASE_DIR/audit.log.1"
  sed -n '3,$p' "$UFIX/sessions.log" >"$CASE_DIR/audit.log"
  u "$CASE_DIR/audit.log.1" "$CASE_DIR/audit.log"
  want_rc 0
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\t' "$OUT" || fail "the grant of the older file"
  # the other order: the run comes before any grant is known, and is attributed to nobody
  u "$CASE_DIR/audit.log" "$CASE_DIR/audit.log.1"
  want_rc 0
  no_match "$OUT" '^used	alice'
}

usage_policy() {
  policy <<'P'
alice   cap_net_raw, cap_sys_time
bob     cap_net_raw
carol   cap_net_raw, cap_syslog
@netops cap_net_admin
P
}

# --propose: the lines the recorded grants name, reduced or removed, each with its evidence;
# nothing for a denied want; the policy is left as it was
t_usage_propose() {
  need_root
  local p m sum now l
  p=$(usage_policy); m=$(umarks); sum=$(sha256sum "$p")
  l="$CASE_DIR/p.log"
  sed -e 's/grant=cap_net_raw policy=ok rules=[^ ]*/grant=cap_net_raw,cap_sys_time policy=ok rules=__P__:1/' \
      -e 's/acct="bob" grant=none policy=ok rules=none/acct="bob" grant=cap_net_raw policy=ok rules=__P__:2/' \
      -e 's/rules=\/etc\/security\/capdelegate.conf:3/rules=__P__:3/' "$UFIX/sessions.log" |
    grep -v 'exe="/usr/bin/ping" subj=unconfined key="capdelegate"$' | sed "s|__P__|$p|" >"$l"
  # alice's ping runs and the unattributed ones are gone: only dmesg-delegated runs are left
  cd_run usage --propose --config "$p" --confdir '' --marks "$m" --since 36500d --input "$l"
  want_rc 0
  [ "$(sha256sum "$p")" = "$sum" ] || fail "the policy changed"
  want_text "$OUT" "# $p:1: alice cap_net_raw,cap_sys_time"
  want_line "$OUT" "#   cap_net_raw: alice held it at 1 sessions in the window (last grant 2025-12-06T05:46:40Z), no run of a marked file used it"
  want_line "$OUT" "# remove the line"
  want_text "$OUT" "# $p:2: bob cap_net_raw"
  want_text "$OUT" "# $p:3: carol cap_net_raw,cap_syslog"
  want_line "$OUT" "#   cap_syslog: carol used it: 1 runs, the last 2025-12-06T05:46:54Z"
  want_line "$OUT" "# The logs read begin 2025-12-06T05:46:40Z, within the window: a capability unused here may have been"
  want_line "$OUT" "carol cap_syslog"
  # alice's denied want of cap_syslog is never a grant
  no_match "$OUT" '^alice'
  no_match "$OUT" '^[^#].*cap_syslog.*alice'
  no_text "$OUT" '@netops'
  [ "$(grep -c '^# remove the line' "$OUT")" -eq 2 ] || fail "want alice's and bob's lines removed"
  [ "$(grep -vc '^#\|^$' "$OUT")" -eq 1 ] || fail "want one policy line (carol's)"
}

# --propose reads the policy --config and --confdir name: a drop-in's line the records name is
# proposed at its own file and line (the unattributed ping runs left out, as above)
t_usage_propose_dropin() {
  need_root
  local p m d="$CASE_DIR/capdelegate.d" l="$CASE_DIR/d.log"
  p=$(usage_policy); m=$(umarks)
  mkdir -p "$d"; printf '# bob, apart\nbob cap_net_raw\n' >"$d/10-bob.conf"; chmod 0644 "$d/10-bob.conf"
  sed -e 's|acct="bob" grant=none policy=ok rules=none|acct="bob" grant=cap_net_raw policy=ok rules=__D__:2|' \
      -e 's|rules=/etc/security/capdelegate.conf:|rules=__P__:|' "$UFIX/sessions.log" |
    grep -v 'exe="/usr/bin/ping" subj=unconfined key="capdelegate"$' |
    sed -e "s|__P__|$p|" -e "s|__D__|$d/10-bob.conf|" >"$l"
  cd_run usage --propose --config "$p" --confdir "$d" --marks "$m" --since 36500d --input "$l"
  want_rc 0
  want_text "$OUT" "# $d/10-bob.conf:2: bob cap_net_raw"
  want_line "$OUT" "#   cap_net_raw: bob held it at 1 sessions in the window (last grant 2025-12-06T05:46:40Z), no run of a marked file used it"
  # without the drop-ins, the line the records name is not today's policy's
  cd_run usage --propose --config "$p" --confdir '' --marks "$m" --since 36500d --input "$l"
  no_text "$OUT" "10-bob.conf"
}

# a capability some unattributed run may have used is never proposed for removal
t_usage_propose_keeps_unattributed() {
  need_root
  local p m l
  p=$(usage_policy); m=$(umarks); l="$CASE_DIR/k.log"
  sed "s|rules=/etc/security/capdelegate.conf:3|rules=$p:3|" "$UFIX/sessions.log" >"$l"
  cd_run usage --propose --config "$p" --confdir '' --marks "$m" --since 36500d --input "$l"
  want_rc 0
  no_text "$OUT" "# remove the line"
  want_text "$OUT" "nothing to propose"
  cd_run usage --propose --config "$CASE_DIR/none.conf" --confdir '' --marks "$m" --since 36500d --input "$l"
  want_rc 2
  want_text "$ERR" "nothing to propose against"
}

t_usage_bad_invocations() {
  need_root
  local m; m=$(umarks)
  for s in 90 d 12x 30dd 12h5 -1d 1.5d 99999999999999999999d 36526d ''; do
    cd_run usage --marks "$m" --since "$s" --input "$UFIX/sessions.log"
    want_rc 2; want_text "$ERR" "--since takes a duration"; [ ! -s "$OUT" ] || fail "output for --since '$s'"
  done
  cd_run usage --marks "$m" "$UFIX/sessions.log"
  want_rc 2; want_text "$ERR" "files to read follow --input"
  cd_run usage --marks "$m" --json --propose --input "$UFIX/sessions.log"
  want_rc 2; want_text "$ERR" "one of them"
  cd_run usage --marks "$CASE_DIR/missing.conf" --input "$UFIX/sessions.log"
  want_rc 2; want_text "$ERR" "no marks file"; [ ! -s "$OUT" ] || fail "output without marks"
  cd_run usage --help
  want_rc 0; want_text "$OUT" "usage: capdelegate usage"
  cd_run help
  want_text "$OUT" "  usage   [--since DURATION]"
  # "-": standard input
  RC=0; "$BIN" usage --tsv --marks "$m" --since 36500d --input - <"$UFIX/interleaved.log" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=1\t' "$OUT" || fail "--input -"
  # another key: the runs the rules recorded under it
  sed 's/key="capdelegate"/key="mine"/' "$UFIX/sessions.log" >"$CASE_DIR/k.log"
  cd_run usage --tsv --marks "$m" --since 36500d --key mine --input "$CASE_DIR/k.log"
  want_rc 0
  grep -qP '^used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\t' "$OUT" || fail "--key mine"
}

# auditd's ENRICHED form: the interpreted fields after a 0x1d byte are not the record's own
t_usage_enriched() {
  need_root
  u "$UFIX/enriched.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:50Z'
  [ "$(wc -l <"$OUT")" -eq 1 ] || fail "want 1 record"
}

# usage_json_as HOST [USED]: sessions.log's usage --json as host HOST (its name and a
# machine-id of its own); without USED, no run used anything there. Prints the file.
usage_json_as() {
  local f="$CASE_DIR/$1.json" m; m=$(umarks)
  "$BIN" usage --json --marks "$m" --since 36500d --input "$UFIX/sessions.log" 2>/dev/null |
    python3 -c '
import hashlib, json, sys
d = json.load(sys.stdin); h = sys.argv[1]
d["host"], d["host_hex"] = h, h.encode().hex()
d["machine_id"] = hashlib.md5(h.encode()).hexdigest()
if len(sys.argv) < 3:
    for g in d["grants"]: g["used"] = []
json.dump(d, sys.stdout)' "$@" >"$f"
  echo "$f"
}

# report over usage --json files: per capability, the hosts that grant it and those that used it
t_usage_report_fleet() {
  need_root
  local a b c
  a=$(usage_json_as web1 used); b=$(usage_json_as web2); c=$(usage_json_as web3)
  cd_run report --tsv "$a" "$b" "$c"
  want_rc 0
  want_line "$OUT" 'usage\tcap_net_raw\tgranted_hosts=3\tused_hosts=1\tunused_hosts=2'
  want_line "$OUT" 'usage\tcap_syslog\tgranted_hosts=3\tused_hosts=1\tunused_hosts=2'
  [ "$(grep -c '^host	' "$OUT")" -eq 3 ] || fail "want 3 hosts"
  cd_run report --json "$a" "$b" "$c"
  want_rc 0
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert {u["capability"]: (u["granted_hosts"], u["used_hosts"]) for u in d["usage"]} == \
    {"cap_net_raw": (3, 1), "cap_syslog": (3, 1)}, d["usage"]
assert len(d["hosts"]) == 3 and d["rejected"] == [] and "grants" not in d
' "$OUT" || fail "report --json over usage documents"
  # one machine in two files is reported once, as for audits
  cp "$a" "$CASE_DIR/again.json"
  cd_run report --tsv "$a" "$CASE_DIR/again.json"
  want_rc 2
  want_line "$OUT" 'usage\tcap_net_raw\tgranted_hosts=1\tused_hosts=1\tunused_hosts=0'
}

# an audit and a usage document are not one view; a usage document naming no capability is
# rejected whole, as is one of another shape
t_usage_report_rejects() {
  need_root
  local a p
  a=$(usage_json_as web1 used); p=$(policy <<<'alice cap_net_raw')
  "$BIN" audit --json --config "$p" --confdir '' "$CASE_DIR/nothing" >"$CASE_DIR/audit.json" 2>/dev/null || true
  cd_run report --tsv "$a" "$CASE_DIR/audit.json"
  want_rc 2
  want_text "$ERR" "audit.json: rejected, not reported: an audit --json document among usage documents"
  want_line "$OUT" 'usage\tcap_net_raw\tgranted_hosts=1\tused_hosts=1\tunused_hosts=0'
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d["grants"][0]["grant"] = ["cap_net_raw", "cap_bogus\u202e"]
json.dump(d, open(sys.argv[2], "w"))
d["grants"][0]["grant"] = "cap_net_raw"; json.dump(d, open(sys.argv[3], "w"))
d["kind"] = "usage2"; d["grants"] = []; json.dump(d, open(sys.argv[4], "w"))
' "$a" "$CASE_DIR/bogus.json" "$CASE_DIR/shape.json" "$CASE_DIR/kind.json"
  cd_run report --tsv "$CASE_DIR/bogus.json" "$CASE_DIR/shape.json" "$CASE_DIR/kind.json"
  want_rc 2
  want_text "$ERR" 'bogus.json: rejected, not reported: grants[]: not a capability: cap_bogus\xe2\x80\xae'
  want_text "$ERR" 'shape.json: rejected, not reported: grants[]: an entry without user, grant and used'
  want_text "$ERR" 'kind.json: rejected, not reported: kind: not "usage"'
  no_match "$OUT" '^usage'
}

# each allocation failing in turn (libauparse's too): the unfaulted answer, or exit 2 with a
# message of its own, never a record printed from a log half read (tests/cli/fault-cases.sh).
# Not --json: its window (since, until) moves with the clock between two runs.
t_fault_alloc_usage() {
  need_root
  local m p n
  m=$(umarks); p=$(usage_policy)
  sed "s|rules=/etc/security/capdelegate.conf:3|rules=$p:3|" "$UFIX/sessions.log" >"$CASE_DIR/s.log"
  n=$(sweep_alloc usage --tsv --marks "$m" --since 36500d --input "$CASE_DIR/s.log"); echo "usage: $n" >&2
  n=$(sweep_alloc usage --propose --config "$p" --confdir '' --marks "$m" --since 36500d \
    --input "$CASE_DIR/s.log"); echo "usage --propose: $n" >&2
}

# a field's decoded value whose copy runs out of memory: exit 2 saying so, never the record
# called unreadable (a log is not at fault when the memory is)
t_fault_strdup_usage_field() {
  need_root
  local m; m=$(umarks)
  CD_FAULT_STRDUP=alice cd_fault usage --tsv --marks "$m" --since 36500d --input "$UFIX/sessions.log"
  [ -e "$FIRED" ] || fail "no copy of alice"
  want_rc 2; want_text "$ERR" "out of memory"; no_text "$ERR" "readable"
  [ ! -s "$OUT" ] || fail "records printed from a log half read"
}

# a session closed by the process that began it is over: a job left running after it (the
# session's number, no session any more) is attributed to nobody; su closing its own PAM
# session inside it (with the session's number, another pid) ends nothing
t_usage_session_closed() {
  need_root
  u "$UFIX/ended.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:52Z'
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=1\twhy=no-module-record\tfirst=2025-12-06T05:47:00Z\tlast=2025-12-06T05:47:00Z'
}

# many_sessions FILE: a log of 100 users u00..u99, each logged in (session 100+N, granted
# cap_net_raw) and running ping once: more sessions, users and records than a table first holds.
many_sessions() {
  local i t
  for i in $(seq -w 0 99); do
    t=$((1765000000 + 10#$i * 10))
    printf '%s\n' \
      "type=USER msg=audit($t.100:$((1000 + 10#$i * 10))): pid=$((500 + 10#$i)) uid=0 auid=4294967295 ses=4294967295 subj=unconfined msg='op=capdelegate-grant acct=\"u$i\" grant=cap_net_raw policy=ok rules=/etc/security/capdelegate.conf:1 exe=\"/usr/bin/login\" hostname=? addr=? terminal=tty1 res=success'" \
      "type=LOGIN msg=audit($t.101:$((1001 + 10#$i * 10))): pid=$((500 + 10#$i)) uid=0 subj=unconfined old-auid=4294967295 auid=$((2000 + 10#$i)) tty=tty1 old-ses=4294967295 ses=$((100 + 10#$i)) res=1" \
      "type=SYSCALL msg=audit($t.200:$((1002 + 10#$i * 10))): arch=c000003e syscall=59 success=yes exit=0 a0=55d0 a1=55e0 a2=55f0 a3=8 items=2 ppid=1 pid=$((900 + 10#$i)) auid=$((2000 + 10#$i)) uid=$((2000 + 10#$i)) gid=1001 euid=1001 suid=1001 fsuid=1001 egid=1001 sgid=1001 fsgid=1001 tty=pts0 ses=$((100 + 10#$i)) comm=\"ping\" exe=\"/usr/bin/ping\" subj=unconfined key=\"capdelegate\"" \
      "type=BPRM_FCAPS msg=audit($t.200:$((1002 + 10#$i * 10))): fver=2 fp=0 fi=0000000000002000 fe=0 old_pp=0 old_pi=0000000000002000 old_pe=0 old_pa=0 pp=0000000000002000 pi=0000000000002000 pe=0 pa=0 frootid=0" \
      "type=PATH msg=audit($t.200:$((1002 + 10#$i * 10))): item=0 name=\"/usr/bin/ping\" inode=12 dev=fe:01 mode=0100755 ouid=0 ogid=0 rdev=00:00 nametype=NORMAL cap_fp=0 cap_fi=2000 cap_fe=0 cap_fver=2 cap_frootid=0" \
      "type=PROCTITLE msg=audit($t.200:$((1002 + 10#$i * 10))): proctitle=70696E67" \
      "type=EOE msg=audit($t.200:$((1002 + 10#$i * 10))): "
  done >"$1"
}

# each of a hundred sessions keeps its own user: every run is attributed to the user whose
# session ran it, however many sessions, users and records the window holds
t_usage_many_sessions() {
  need_root
  many_sessions "$CASE_DIR/many.log"
  u "$CASE_DIR/many.log"
  want_rc 0
  local i t
  for i in $(seq -w 0 99); do
    t=$(date -u -d "@$((1765000000 + 10#$i * 10))" +%Y-%m-%dT%H:%M:%SZ)
    want_line "$OUT" "used\tu$i\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=$t\tlast=$t"
  done
  [ "$(wc -l <"$OUT")" -eq 100 ] || fail "want 100 records"
}

# usage under valgrind (memcheck; any error or definite leak fails): records, JSON, --propose, a log
# refused half way, and report over usage documents
t_valgrind_usage() {
  need_root; command -v valgrind >/dev/null || skip "valgrind missing"
  local m p a b VG_LEAKS=1
  m=$(umarks); p=$(usage_policy)
  sed "s|rules=/etc/security/capdelegate.conf:3|rules=$p:3|" "$UFIX/sessions.log" >"$CASE_DIR/s.log"
  vg_run usage --tsv --marks "$m" --since 36500d --input "$CASE_DIR/s.log" "$UFIX/ended.log" "$UFIX/names.log"
  want_rc 0; want_text "$OUT" "used	alice	cap_net_raw"
  vg_run usage --json --marks "$m" --since 36500d --input "$CASE_DIR/s.log"
  want_rc 0
  many_sessions "$CASE_DIR/many.log"
  vg_run usage --tsv --marks "$m" --since 36500d --input "$CASE_DIR/many.log"
  want_rc 0; [ "$(grep -c '^used	u' "$OUT")" -eq 100 ] || fail "want 100 used records"
  vg_run usage --propose --config "$p" --confdir '' --marks "$m" --since 36500d --input "$CASE_DIR/s.log"
  want_rc 0
  vg_run usage --tsv --marks "$m" --since 36500d --input "$UFIX/sessions.log" "$UFIX/truncated.log"
  want_rc 2; [ ! -s "$OUT" ] || fail "records printed from a log refused"
  a=$(usage_json_as web1 used); b=$(usage_json_as web2)
  vg_run report --tsv "$a" "$b"
  want_rc 0; want_text "$OUT" "usage	cap_net_raw	granted_hosts=2	used_hosts=1"
}

# without --input: /var/log/audit/audit.log and its rotations, the oldest (highest number)
# first, read as one trail; a name auditd does not write (a compressed copy) is said, not read.
# The directory is a tmpfs over /var/log in a mount namespace of the case's own.
t_usage_default_logs() {
  need_root; unshare --mount true 2>/dev/null || skip "no mount namespace (unshare --mount)"
  local d="$CASE_DIR/logs" m; m=$(umarks)
  mkdir -p "$d"
  sed -n '1,3p' "$UFIX/sessions.log" >"$d/audit.log.10"   # alice's grant and session: the oldest
  sed -n '4,7p' "$UFIX/sessions.log" >"$d/audit.log.2"
  sed -n '8,$p' "$UFIX/sessions.log" >"$d/audit.log"
  : >"$d/audit.log.1"
  printf 'not a log\n' >"$d/audit.log.1.gz"
  RC=0
  unshare --mount -- sh -c 'mount --make-rprivate / && mount -t tmpfs none /var/log && mkdir /var/log/audit &&
    cp "$1"/* /var/log/audit/ && shift && exec "$@"' sh "$d" "$BIN" usage --tsv --marks "$m" --since 36500d \
    >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:51Z'
  [ "$(wc -l <"$OUT")" -eq 7 ] || fail "want sessions.log's 7 records"
  want_text "$ERR" "not read (not a log auditd writes): /var/log/audit/audit.log.1.gz"
  # each allocation failing in turn, the list of the logs' names too: exit 2 saying the memory
  # ran out (or the answer unchanged), never a log said to be missing that is there. A
  # capdelegate of the case's own runs the real one in that mount namespace, with the fault
  # shim in the real one alone.
  mkdir -p "$CASE_DIR/bin"; ln -s "$(dirname "$BIN")/tests" "$CASE_DIR/bin/tests"
  cat >"$CASE_DIR/bin/capdelegate" <<W
#!/bin/sh
pre=\${LD_PRELOAD:-}; unset LD_PRELOAD
exec unshare --mount -- sh -c 'mount --make-rprivate / && mount -t tmpfs none /var/log && mkdir /var/log/audit &&
  cp "\$1"/* /var/log/audit/ && export LD_PRELOAD="\$2" && shift 2 && exec "\$@"' sh "$d" "\$pre" "$BIN" "\$@"
W
  chmod 0755 "$CASE_DIR/bin/capdelegate"
  local n
  for ((n = 1; n < 5000; n++)); do
    BIN="$CASE_DIR/bin/capdelegate" CD_FAULT_ALLOC=$n cd_fault usage --tsv --marks "$m" --since 36500d
    [ -e "$FIRED" ] || break
    [ "$RC" -eq 0 ] || { [ "$RC" -eq 2 ] && grep -q "out of memory" "$ERR"; } ||
      { fail "allocation $n failed: exit $RC, $(head -c 300 "$ERR")"; return 1; }
  done
  echo "usage of the default logs: $((n - 1)) allocations" >&2
  [ "$n" -gt 5 ] || fail "only $((n - 1)) allocations"
  # no log at all: said, exit 2
  RC=0
  unshare --mount -- sh -c 'mount --make-rprivate / && mount -t tmpfs none /var/log && shift && exec "$@"' sh "$d" \
    "$BIN" usage --tsv --marks "$m" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; want_text "$ERR" "no audit log at /var/log/audit/audit.log"
}

# session numbers start again at each boot: a LOGIN record opens a new session of its number,
# so bob's session 3 after a reboot never gets the grant alice's session 3 had before it
t_usage_session_number_reused() {
  need_root
  u "$UFIX/reboot.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:46:50Z\tlast=2025-12-06T05:46:50Z'
  want_line "$OUT" 'unattributed\t/usr/bin/ping\truns=1\twhy=no-module-record\tfirst=2025-12-06T05:48:40Z\tlast=2025-12-06T05:48:40Z'
  [ "$(wc -l <"$OUT")" -eq 2 ] || fail "want 2 records"
}

# the kernel's BPRM_FCAPS against the recorded grant: bob's run gained cap_net_raw his grant
# lacks (outside: his pI held it from elsewhere), alice's granted run gained nothing (ungained),
# a BPRM_FCAPS after other events' records is still its run's
t_usage_gained() {
  need_root
  u "$UFIX/gained.log"
  want_rc 0
  want_line "$OUT" 'used\talice\tcap_net_raw\t/usr/bin/ping\truns=2\tfirst=2025-12-06T05:47:20Z\tlast=2025-12-06T05:47:30Z'
  want_line "$OUT" 'denied\tbob\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:47:10Z\tlast=2025-12-06T05:47:10Z'
  want_line "$OUT" 'outside\tbob\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:47:10Z\tlast=2025-12-06T05:47:10Z'
  want_line "$OUT" 'ungained\talice\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:47:20Z\tlast=2025-12-06T05:47:20Z'
  [ "$(wc -l <"$OUT")" -eq 4 ] || fail "want 4 records"
  local m; m=$(umarks)
  cd_run usage --json --marks "$m" --since 36500d --input "$UFIX/gained.log"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [(x["user"], x["capability"], x["runs"]) for x in d["outside"]] == [("bob", "cap_net_raw", 1)], d["outside"]
assert [(x["user"], x["capability"], x["runs"]) for x in d["ungained"]] == [("alice", "cap_net_raw", 1)], d["ungained"]
' "$OUT" || fail "outside and ungained in JSON"
  # a BPRM_FCAPS that comes more than 256 lines after its SYSCALL is not its run's any more
  { sed -n '1,5p' "$UFIX/gained.log"
    for i in $(seq 300); do printf 'type=PROCTITLE msg=audit(1765000030.000:%d): proctitle=78\n' $((1000 + i)); done
    sed -n '7,$p' "$UFIX/gained.log"; } >"$CASE_DIR/late.log"
  u "$CASE_DIR/late.log"
  want_rc 0
  no_match "$OUT" '^outside'
  # nor one that comes after its event's PROCTITLE, the event's last record: the run has ended
  # ungained (the log's first run alone, nothing else held)
  { sed -n '1,4p;12,16p' "$UFIX/gained.log"; sed -n '20p' "$UFIX/gained.log" | sed 's/:50): /:40): /'; } >"$CASE_DIR/after.log"
  u "$CASE_DIR/after.log"
  want_rc 0
  want_line "$OUT" 'ungained\talice\tcap_net_raw\t/usr/bin/ping\truns=1\tfirst=2025-12-06T05:47:20Z\tlast=2025-12-06T05:47:20Z'
}

# capdelegate(8), usage: each kind's records in the order of user, capability and file, whatever
# order the runs came in: eight files of one user, run last name first
t_usage_sorted() {
  need_root
  local m="$CASE_DIR/marks.conf" l="$CASE_DIR/sorted.log" i s=30 want
  printf '/usr/local/bin/tool%d cap_net_raw=i\n' 1 2 3 4 5 6 7 8 >"$m"; chmod 0644 "$m"
  { sed -n '1,2p' "$UFIX/gained.log"
    for i in 8 7 6 5 4 3 2 1; do
      s=$((s + 1))
      printf 'type=SYSCALL msg=audit(1765000040.000:%d): arch=c000003e syscall=59 success=yes exit=0 a0=1 a1=2 a2=3 a3=4 items=2 ppid=1 pid=60%d auid=1001 uid=1001 gid=1001 euid=1001 suid=1001 fsuid=1001 egid=1001 sgid=1001 fsgid=1001 tty=pts0 ses=3 comm="tool%d" exe="/usr/local/bin/tool%d" subj=unconfined key="capdelegate"\n' "$s" "$i" "$i" "$i"
      printf 'type=PROCTITLE msg=audit(1765000040.000:%d): proctitle=746F6F6C\n' "$s"
    done; } >"$l"
  cd_run usage --tsv --marks "$m" --since 36500d --input "$l"
  want_rc 0
  want=$(printf '/usr/local/bin/tool%d\n' 1 2 3 4 5 6 7 8)
  [ "$(grep '^used' "$OUT" | cut -f4)" = "$want" ] || fail "used: not in the files' order"
  [ "$(grep '^ungained' "$OUT" | cut -f4)" = "$want" ] || fail "ungained: not in the files' order"
}

# usage --json's machine_id is audit --json's: null where /etc/machine-id is empty, unset
# (systemd's "uninitialized"), all zero or not 32 hex digits
t_usage_json_machine_id() {
  need_unshare
  local m mid="$CASE_DIR/machine-id" v
  m=$(umarks)
  for v in '' 'uninitialized\n' '00000000000000000000000000000000\n' '0123456789abcdef\n' '0123456789abcdef0123456789abcdeg\n' \
           '0123456789abcdef0123456789abcdef\n'; do
    printf '%b' "$v" >"$mid"
    RC=0
    # shellcheck disable=SC2016
    unshare --mount -- sh -c 'mount --bind "$1" /etc/machine-id && shift && exec "$@"' sh "$mid" \
      "$BIN" usage --json --marks "$m" --since 36500d --input "$UFIX/sessions.log" >"$OUT" 2>"$ERR" || RC=$?
    want_rc 0
    python3 - "$OUT" "$v" <<'PY' || fail "machine-id '$v'"
import json, sys
d, v = json.load(open(sys.argv[1])), sys.argv[2]
want = "0123456789abcdef0123456789abcdef" if v == "0123456789abcdef0123456789abcdef\\n" else None
assert d["machine_id"] == want, (d["machine_id"], want)
PY
  done
}
