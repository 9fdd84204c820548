# load-cases.sh: how check reads the policy, sourced by tests/cli/run.sh.
# shellcheck shell=bash disable=SC2034

LOAD_CASES=(check_recent_edit_note check_stdin_closed check_stdin_closed_dropin_link explain_many_groups)

# capdelegate.conf(5), CHANGING THE POLICY: check reminds to install policy files by rename when
# the newest one was modified in the last 10 minutes, naming it (resolved: a rename replaces a
# link, not its target); not for an older policy.
t_check_recent_edit_note() {
  need_root; local p d="$CASE_DIR/capdelegate.d"
  p=$(printf 'alice cap_net_raw\n' | policy)
  cd_nss check --config "$p" --confdir ""; want_rc 0
  want_text "$ERR" "capdelegate: note: $p: modified "
  want_text "$ERR" " seconds ago: install policy files by rename (a temporary file in the same directory, then mv), never rewrite one in place: a login may read it half-written (capdelegate edit installs by rename; nothing to do after it)"
  touch -d '-11 minutes' "$p"
  cd_nss check --config "$p" --confdir ""; want_rc 0; no_text "$ERR" "modified"
  mkdir -p "$d"; printf 'bob cap_kill\n' >"$d/10-bob.conf"; chmod 0644 "$d/10-bob.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 0
  want_text "$ERR" "note: $d/10-bob.conf: modified "; no_text "$ERR" "note: $p: modified"
  [ "$(count_lines "$ERR" 'modified')" -eq 1 ] || fail "want one note"
  # the newest by time, not the last read: the drop-in older, the main file just written
  touch -d '-11 minutes' "$d/10-bob.conf"; touch "$p"
  cd_nss check --config "$p" --confdir "$d"; want_rc 0
  want_text "$ERR" "note: $p: modified "; no_text "$ERR" "10-bob.conf: modified"
  # modified within the same second: the newer is told by the fraction, whichever is read first
  local s=$(( $(date +%s) - 5 ))
  touch -d "@$s.2" "$p"; touch -d "@$s.8" "$d/10-bob.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 0
  want_text "$ERR" "note: $d/10-bob.conf: modified "; no_text "$ERR" "note: $p: modified"
  touch -d "@$s.8" "$p"; touch -d "@$s.2" "$d/10-bob.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 0
  want_text "$ERR" "note: $p: modified "; no_text "$ERR" "10-bob.conf: modified"
  ln -s "$p" "$CASE_DIR/link.conf"; touch "$p"
  cd_nss check --config "$CASE_DIR/link.conf" --confdir ""; want_rc 0
  want_text "$ERR" "note: $p: modified "
}

# A process started with standard input closed (a daemon running its PAM stack) reads the policy
# as any other: the path walk's descriptors may then be 0, which is a descriptor like another.
t_check_stdin_closed() {
  need_root; local p d="$CASE_DIR/a/b/c"
  mkdir -p "$d"; chmod 0755 "$CASE_DIR/a" "$CASE_DIR/a/b" "$d"
  printf 'alice cap_net_raw\n' >"$d/p.conf"; chmod 0644 "$d/p.conf"; touch -d '-1 hour' "$d/p.conf"
  cd_nss check --config "$d/p.conf" --confdir "" <&-; want_rc 0
  want_line "$OUT" "$d/p.conf: ok, 1 rule, 0 warnings"
  [ ! -s "$ERR" ] || fail "a message: $(cat "$ERR")"
}

# The same with the drop-in directory on descriptor 0 (the main file read and closed before it
# is opened): a drop-in that is a link to a file in a safe directory is judged by its target,
# as capdelegate.conf(5) says, whatever number the directory's descriptor has.
t_check_stdin_closed_dropin_link() {
  need_root; local p d="$CASE_DIR/capdelegate.d" s="$CASE_DIR/shared"
  mkdir -p "$d" "$s"; chmod 0755 "$d" "$s"
  printf 'alice cap_net_raw\n' >"$CASE_DIR/p.conf"; chmod 0644 "$CASE_DIR/p.conf"
  printf 'bob cap_syslog\n' >"$s/bob.conf"; chmod 0644 "$s/bob.conf"
  ln -s "$s/bob.conf" "$d/20-bob.conf"
  touch -h -d '-1 hour' "$CASE_DIR/p.conf" "$s/bob.conf" "$d/20-bob.conf" "$d"
  cd_nss check --config "$CASE_DIR/p.conf" --confdir "$d" <&-; want_rc 0
  want_line "$OUT" "$CASE_DIR/p.conf: ok, 2 rules, 0 warnings"
  [ ! -s "$ERR" ] || fail "a message: $(cat "$ERR")"
}

# pam_capdelegate(8): a user's groups are all that NSS gives (getgrouplist), however many: a
# user in 40 groups (more than a first guess of 32 holds) is a member of the last one too.
t_explain_many_groups() {
  need_root; local p NSSDIR="$CASE_DIR/nss" g
  mkdir -p "$NSSDIR"
  printf 'root:x:0:0::/root:/bin/sh\nbob:x:1002:1002::/:/bin/sh\n' >"$NSSDIR/passwd"
  { printf 'root:x:0:\nbob:x:1002:\n'; for g in $(seq 1 40); do printf 'g%d:x:%d:bob\n' "$g" $((3000 + g)); done; } >"$NSSDIR/group"
  p=$(printf '@g40 cap_kill\n' | policy)
  cd_nss explain bob --config "$p" --confdir ""; want_rc 0
  want_line "$OUT" "match\t$p:1\tgroup\t@g40\tcap_kill"
  want_line "$OUT" "pI\tcap_kill\tgroup"
  [ "$(grep '^user' "$OUT" | tr '\t,' '\n\n' | grep -c '^g[0-9]*$')" -eq 40 ] || fail "want 40 groups: $(grep '^user' "$OUT")"
}
