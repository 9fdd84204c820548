# edit-cases.sh: changing the policy safely (issue 20, part 1): check --staged and edit,
# sourced by tests/cli/run.sh. Written from capdelegate(8), "check --staged" and "edit".
# shellcheck shell=bash disable=SC2034

EDIT_CASES=(check_staged_main check_staged_dropin check_staged_shadows_dropin
  check_staged_anywhere check_staged_hostile)

# A policy directory as the module wants it: root's, 0755, main file and drop-in directory.
# Sets P (main file) and D (drop-in directory).
policy_dir() {
  P="$CASE_DIR/etc/capdelegate.conf" D="$CASE_DIR/etc/capdelegate.d"
  mkdir -p "$D"; chmod 0755 "$CASE_DIR/etc" "$D"
  printf '%s' "${1:-alice cap_net_raw
}" >"$P"; chmod 0644 "$P"
}

# A staging directory as config management has one: anyone may write it. Prints FILE.
staged() { # staged NAME < TEXT
  local s="$CASE_DIR/stage"
  mkdir -p "$s"; chmod 1777 "$s"
  cat >"$s/$1"; chmod 0666 "$s/$1"; echo "$s/$1"
}

# The staged main file replaces the installed one; its messages name it, FILE:LINE, and say
# what it stands for; a good installed file does not hide a bad staged one, nor the reverse.
t_check_staged_main() {
  need_root; local f
  policy_dir 'alice cap_net_raw
zed cap_bogus
'
  f=$(printf 'alice cap_net_raw\nbob cap_syslog\n' | staged good)
  cd_nss check --config "$P" --confdir "$D" --staged "$f"; want_rc 0
  want_line "$OUT" "$P: ok, 2 rules, 0 warnings"
  want_line "$OUT" "rule\t$f:2\tbob\tcap_syslog"
  want_text "$ERR" "note: $f stands for $P: the policy is judged as if it were installed there"
  no_text "$ERR" "cap_bogus"
  f=$(printf 'alice cap_net_raw\n\nbob cap_sys_admin\ncarol cap_net_rawx\n' | staged bad)
  printf 'alice cap_net_raw\n' >"$P"
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$P"; want_rc 2
  want_text "$ERR" "$f:4: unknown capability: 'cap_net_rawx'"
  want_line "$OUT" "$f: syntax error: the module grants nothing"
  # warnings only: exit 1, the line named in the staged file
  f=$(printf 'zed cap_net_raw\n' | staged warn)
  cd_nss check --config "$P" --confdir "$D" --staged "$f"; want_rc 1
  want_text "$ERR" "warning: $f:1: user 'zed' unknown to NSS"
  # --as without --staged is a usage error
  cd_nss check --config "$P" --as "$P"; want_rc 2; want_text "$ERR" "usage: capdelegate check"
}

# --as a drop-in: read in byte order among the installed ones, new or not; a path that is not
# a drop-in of the directory (another directory, '..', a dotfile, no .conf) is refused.
t_check_staged_dropin() {
  need_root; local f
  policy_dir
  printf 'bob cap_kill\n' >"$D/10-bob.conf"; chmod 0644 "$D/10-bob.conf"
  f=$(printf 'carol cap_syslog\n' | staged x)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/05-carol.conf"; want_rc 0
  want_line "$OUT" "$P: ok, 3 rules, 0 warnings"
  [ "$(sed -n 3p "$OUT")" = "$(printf 'rule\t%s:1\tcarol\tcap_syslog' "$f")" ] || fail "staged drop-in not read before 10-bob.conf"
  want_text "$ERR" "note: $f stands for $D/05-carol.conf"
  f=$(printf 'carol cap_syslog\ncarol cap_bogus\n' | staged y)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/20-carol.conf"; want_rc 2
  want_text "$ERR" "$f:2: unknown capability: 'cap_bogus'"
  want_line "$OUT" "$f: syntax error: the module grants nothing"
  local as
  for as in "$D/../x.conf" "$D/.hidden.conf" "$D/x.conf~" "$D/x" "$CASE_DIR/other/x.conf" "$D/sub/x.conf"; do
    cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$as"; want_rc 2
    want_text "$ERR" "--as '$as' is neither the policy file '$P' nor a drop-in NAME.conf of '$D'"
    no_text "$OUT" "ok,"
  done
  # no drop-in directory at all: only the main file can be stood for
  cd_nss check --config "$P" --confdir "" --staged "$f" --as "$D/20-carol.conf"; want_rc 2
  want_text "$ERR" "is neither the policy file"
}

# The staged text replaces the installed drop-in of that name: its lines are not read too (no
# contradiction with them, no error of theirs), and the policy is judged with the staged text.
t_check_staged_shadows_dropin() {
  need_root; local f
  policy_dir 'bob cap_kill
'
  printf 'alice cap_net_raw\n' >"$D/10-alice.conf"; chmod 0644 "$D/10-alice.conf"
  f=$(printf 'alice none\n' | staged s)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/10-alice.conf"; want_rc 0
  want_line "$OUT" "$P: ok, 2 rules, 0 warnings"; no_text "$OUT" "10-alice.conf"
  no_text "$ERR" "contradicts"
  # the same text as a new drop-in beside it: both read, and the none contradicts the grant
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/20-alice.conf"; want_rc 1
  want_text "$ERR" "warning: $f:1: \"none\" for alice contradicts $D/10-alice.conf:1"
  # a broken installed drop-in is fixed by the staged one that replaces it
  printf 'alice cap_bogus\n' >"$D/10-alice.conf"
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/10-alice.conf"; want_rc 0
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/20-alice.conf"; want_rc 2
  want_text "$ERR" "$D/10-alice.conf:1: unknown capability"
}

# Wherever the staged file is (world-writable sticky directory, mode 0666, another owner), it is
# judged on its text; the places of the installed policy are judged as check judges them.
t_check_staged_anywhere() {
  need_root; local f
  policy_dir
  f=$(printf 'bob cap_syslog\n' | staged w)
  chown nobody "$f"
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/10-bob.conf"; want_rc 0
  want_line "$OUT" "$P: ok, 2 rules, 0 warnings"; no_text "$ERR" "unsafe"
  # no note about an in-place edit of the staged file: it is not where logins read
  no_text "$ERR" "note: $f: modified"
  # an unsafe drop-in directory is still an error, with the staged text good
  chmod 0777 "$D"
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/10-bob.conf"; want_rc 2
  want_text "$ERR" "unsafe policy"
  chmod 0755 "$D"
  # standing for the main file, its directory is judged: a file installed there could be swapped
  chmod 0777 "$CASE_DIR/etc"
  cd_nss check --config "$P" --confdir "" --staged "$f"; want_rc 2
  want_text "$ERR" "$P: unsafe policy"
  want_text "$ERR" "writable by group or others"
  chmod 0755 "$CASE_DIR/etc"
  # a missing main file is no error when the staged text stands for it
  rm "$P"
  cd_nss check --config "$P" --confdir "$D" --staged "$f"; want_rc 0
}

# What cannot be a policy text is refused without hanging: a FIFO, a directory, a missing file,
# a text over the size limit (the core's own rule).
t_check_staged_hostile() {
  need_root; local s="$CASE_DIR/stage"
  policy_dir
  mkdir -p "$s"; mkfifo "$s/fifo"
  RC=0; timeout 10 "$BIN" check --config "$P" --confdir "$D" --staged "$s/fifo" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; want_text "$ERR" "$s/fifo: not a regular file: nothing checked"
  cd_nss check --config "$P" --confdir "$D" --staged "$s"; want_rc 2
  want_text "$ERR" "$s: not a regular file"
  cd_nss check --config "$P" --confdir "$D" --staged "$s/missing"; want_rc 2
  want_text "$ERR" "$s/missing: cannot open: No such file or directory"
  head -c 1100000 /dev/zero | tr '\0' '#' >"$s/big"
  cd_nss check --config "$P" --confdir "$D" --staged "$s/big"; want_rc 2
  want_text "$ERR" "$s/big: larger than the size limit"
  want_line "$OUT" "$s/big: unsafe: the module grants nothing"
}
