# edit-cases.sh: changing the policy safely: check --staged and edit,
# sourced by tests/cli/run.sh. Written from capdelegate(8), "check --staged" and "edit".
# shellcheck shell=bash disable=SC2034,SC2016,SC2015

EDIT_CASES=(check_staged_main check_staged_dropin check_staged_shadows_dropin
  check_staged_anywhere check_staged_hostile check_staged_no_worse fault_alloc_staged
  edit_hostile_names edit_hostile_leftovers edit_editor_swaps_copy edit_installs edit_creates_dropin
  edit_broken_left_untouched edit_into_rejected_policy edit_changed_meanwhile edit_changed_during_install edit_editor_choice edit_lock_held edit_stale_lock edit_orphaned_editor edit_lock_editor_pid_reused edit_interrupted
  edit_prompt fault_alloc_edit edit_name_limits fault_edit_write_fails edit_too_large
  check_staged_main_no_directory fault_asprintf_edit edit_prompt_after_change
  fault_edit_stat_and_lock fault_edit_lock_fails fault_edit_install_fails edit_disk_full
  edit_usage_and_system_errors edit_sigchld_ignored edit_editor_words_fill_the_room
  edit_policy_in_root_directory check_staged_policy_in_root_directory edit_delegation_script
  ansible_role_validates_its_paths ansible_role_other_paths ansible_role_repairs_broken_policy)

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
  # the drop-in directory named another way (a trailing '/', '..'): the same place
  cd_nss check --config "$P" --confdir "$D/" --staged "$f" --as "$D/../capdelegate.d/30-c.conf"; want_rc 2
  want_text "$ERR" "$f:2: unknown capability: 'cap_bogus'"
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

# --no-worse: a staged file whose own lines are clean passes into a policy that is rejected
# already (by other files: one play can then fix each file in turn); the verdict line still says
# the policy is rejected. Never a file with errors of its own (exit 2) or warnings of its own
# (exit 1, as check judges a policy of that text alone), nor one that makes an accepted policy
# rejected (the whole policy over the size limit), nor one at fault itself.
t_check_staged_no_worse() {
  need_root; local f big
  policy_dir 'alice cap_bogus
'
  printf 'bob cap_kill\nbob cap_nope\n' >"$D/10-bob.conf"; chmod 0644 "$D/10-bob.conf"
  f=$(printf 'alice cap_net_raw\n' | staged main)
  cd_nss check --config "$P" --confdir "$D" --staged "$f"; want_rc 2
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --no-worse; want_rc 0
  want_line "$OUT" "$D/10-bob.conf: syntax error: the module grants nothing"
  want_text "$ERR" "$D/10-bob.conf:2: unknown capability: 'cap_nope'"
  want_text "$ERR" "note: --no-worse: $f has no errors or warnings of its own and the installed policy is rejected already ($P: syntax error): installing it makes nothing worse; the policy stays rejected ($D/10-bob.conf: syntax error)"
  # the main file installed so, the drop-in's fix is judged as usual
  cp "$f" "$P"; chmod 0644 "$P"
  f=$(printf 'bob cap_kill\n' | staged drop)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/10-bob.conf" --no-worse; want_rc 0
  want_line "$OUT" "$P: ok, 2 rules, 0 warnings"; no_text "$ERR" "no-worse"
  # errors of its own: refused, said
  printf 'alice cap_bogus\n' >"$P"
  f=$(printf 'carol cap_kill\ncarol cap_nada\n' | staged own-error)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/20-c.conf" --no-worse; want_rc 2
  want_text "$ERR" "$f:2: unknown capability: 'cap_nada'"
  want_text "$ERR" "note: --no-worse: not passed: $f has errors of its own"
  # warnings of its own: exit 1, the warning said (the policy's rules are not read: rejected)
  f=$(printf 'zed cap_kill\n' | staged own-warning)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/20-z.conf" --no-worse; want_rc 1
  want_text "$ERR" "warning: $f:1: user 'zed' unknown to NSS"
  # a staged file read whole in the policy (no errors), with a warning of its own: the
  # warning said once, not again when the file is judged alone
  printf 'alice cap_bogus\n' >"$P"
  printf 'bob cap_kill\nbob cap_nope\n' >"$D/10-bob.conf"; chmod 0644 "$D/10-bob.conf"
  f=$(printf 'CORP\\100alice cap_kill\n' | staged main-warning)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --no-worse; want_rc 1
  [ "$(count_lines "$ERR" "$f:1: user 'CORP@alice' is read with")" -eq 1 ] || fail "the staged file's warning not said once"
  # an accepted policy made rejected by a clean file (the whole policy over the size limit)
  printf 'alice cap_net_raw\n' >"$P"; rm "$D/10-bob.conf"
  { printf 'alice cap_net_raw\n'; head -c 600000 /dev/zero | tr '\0' '#' | fold -w 99; echo; } >"$P"
  big=$(head -c 600000 /dev/zero | tr '\0' '#' | fold -w 99 | staged big)
  cd_nss check --config "$P" --confdir "$D" --staged "$big" --as "$D/30-big.conf" --no-worse; want_rc 2
  want_text "$ERR" "note: --no-worse: not passed: the installed policy is accepted"
  # the same into a policy rejected already: the staged file is the one at fault, refused
  printf 'x cap_bogus\n' >"$D/05-bad.conf"; chmod 0644 "$D/05-bad.conf"
  cd_nss check --config "$P" --confdir "$D" --staged "$big" --as "$D/30-big.conf" --no-worse; want_rc 2
  want_text "$ERR" "note: --no-worse: not passed: the policy with $big is rejected at $big itself"
  # a policy that cannot be read (a drop-in's open fails): nothing passes
  CD_FAULT_OPENAT=05-bad.conf:5 cd_fault check --config "$P" --confdir "$D" --staged "$(printf 'bob cap_kill\n' | staged ok)" \
    --as "$D/40-ok.conf" --no-worse
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; want_text "$ERR" "note: --no-worse: not passed: the policy could not be read"
  # --no-worse without --staged: a usage error
  cd_nss check --config "$P" --confdir "$D" --no-worse; want_rc 2; want_text "$ERR" "usage: capdelegate check"
}

# Every allocation of check --staged failed in turn (tests/cli/fault.c, sweep_alloc of
# fault-cases.sh): an error, exit 2, or the unfaulted answer, never another one.
t_fault_alloc_staged() {
  need_root; local f n
  policy_dir; printf 'carol cap_kill\n' >"$D/10-x.conf"; printf 'dave cap_kill\n' >"$D/20-y.conf"
  chmod 0644 "$D"/*.conf; touch -d '-1 hour' "$P" "$D"/*.conf   # no "modified N seconds ago"
  f=$(printf 'bob cap_syslog\n' | staged s)
  cd_nss check --config "$P" --confdir "$D" --staged "$f" --as "$D/15-new.conf"; want_rc 0
  want_line "$OUT" "$P: ok, 4 rules, 0 warnings"
  n=$(sweep_alloc check --config "$P" --confdir "$D" --staged "$f" --as "$D/10-x.conf"); echo "check --staged drop-in: $n" >&2
  n=$(sweep_alloc check --config "$P" --confdir "$D" --staged "$f" --as "$D/15-new.conf"); echo "check --staged new drop-in: $n" >&2
  n=$(sweep_alloc check --config "$P" --confdir "$D" --staged "$f"); echo "check --staged main: $n" >&2
}

# ---- edit ---------------------------------------------------------------------------------------

# A scripted editor: a bash script given the file last (after "--", as sudoedit passes it).
# The body sees the file as $f. Prints its path.
editor() { # editor NAME < BODY
  local e="$CASE_DIR/$1.sh"
  { printf '#!/bin/bash\nf="${!#}"\necho "$*" >>"%s"\n' "$CASE_DIR/$1.args"; cat; } >"$e"
  chmod 0755 "$e"; echo "$e"
}

# The environment of cd_nss (lib.sh): the users and groups of $NSSDIR.
nss_env() {
  NSSENV=(LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB"
          NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group")
}

# edit with the scripted editor $ED, the policy of policy_dir, stdin not a terminal.
cd_edit() {
  RC=0; nss_env
  env "${NSSENV[@]}" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" "$BIN" edit --config "$P" --confdir "$D" "$@" \
    </dev/null >"$OUT" 2>"$ERR" || RC=$?
}

# Nothing of edit's own is left in the policy's directories.
no_leftovers() {
  local left
  left=$(find "$CASE_DIR/etc" -name '.*' | sort)
  [ -z "$left" ] || fail "left behind: $left"
}

# The installed file is byte for byte and inode for inode what it was.
same_file() { # same_file PATH SNAPSHOT (from snap)
  [ "$(snap "$1")" = "$2" ] || fail "$1 changed: $(snap "$1") (was $2)"
}
snap() { stat -c '%i %s %Y %a %U' "$1"; md5sum <"$1"; }

# NAME must be a drop-in's own name: '../', a '/', a leading dot, control characters, nothing
# are refused before anything is created, inside the directory or out of it.
t_edit_hostile_names() {
  need_root; policy_dir; local n
  ED=$(editor ok <<'SH'
printf 'bob cap_kill\n' >"$f"
SH
)
  for n in ../evil ../../evil.conf a/b .hidden .x.conf '' "$(printf 'a\nb')" "$(printf 'tab\there')"; do
    cd_edit "$n"; want_rc 2; want_text "$ERR" "is not a drop-in name"
  done
  [ ! -e "$CASE_DIR/args" ] && [ ! -e "$CASE_DIR/ok.args" ] || fail "the editor ran"
  [ -z "$(find "$CASE_DIR" -name '*evil*')" ] || fail "a file was made for ../"
  [ -z "$(ls -A "$D")" ] || fail "something made in $D"
  no_leftovers
  # --confdir "" has no drop-ins to edit
  RC=0; EDITOR="$ED" "$BIN" edit --config "$P" --confdir "" x </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; want_text "$ERR" "no drop-in directory"
}

# What someone else put at the names edit makes (a symbolic link at the copy's name, the lock's
# or the new file's; a FIFO) is never written through or followed: the edit stops, the file and
# the link's target are untouched.
t_edit_hostile_leftovers() {
  need_root; policy_dir; local before victim="$CASE_DIR/victim"
  printf 'precious\n' >"$victim"; chmod 0644 "$victim"
  before=$(snap "$P")
  ED=$(editor ok <<'SH'
printf 'bob cap_kill\n' >"$f"
SH
)
  local name
  for name in .capdelegate.conf.edit .capdelegate.conf.lock .capdelegate.conf.new; do
    ln -s "$victim" "$CASE_DIR/etc/$name"
    cd_edit; want_rc 2; want_text "$ERR" "$CASE_DIR/etc/$name: "
    want_text "$ERR" "symbolic link"
    [ "$(cat "$victim")" = precious ] || fail "$name: the link's target was written"
    same_file "$P" "$before"
    [ -L "$CASE_DIR/etc/$name" ] || fail "$name: another's link removed"
    rm "$CASE_DIR/etc/$name"
    no_leftovers
  done
  mkfifo "$CASE_DIR/etc/.capdelegate.conf.edit"
  RC=0; EDITOR="$ED" timeout 10 "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; want_text "$ERR" "not a regular file is in the way"
  same_file "$P" "$before"; rm "$CASE_DIR/etc/.capdelegate.conf.edit"
  [ ! -e "$CASE_DIR/ok.args" ] || fail "the editor ran"
}

# An editor that replaces the copy by a symbolic link (to a good policy), a FIFO or a hard
# link: not the file edit made, so nothing is installed, and the thing left at the copy's name
# is removed (a link's target stays).
t_edit_editor_swaps_copy() {
  need_root; policy_dir; local before good="$CASE_DIR/good.conf"
  printf 'bob cap_kill\n' >"$good"; chmod 0644 "$good"
  before=$(snap "$P")
  ED=$(editor link <<SH
rm -f "\$f"; ln -s "$good" "\$f"
SH
)
  cd_edit; want_rc 2; want_text "$ERR" ".capdelegate.conf.edit: is a symbolic link (not a file edit installs): $P left untouched"
  same_file "$P" "$before"; no_leftovers; [ "$(cat "$good")" = "bob cap_kill" ] || fail "target changed"
  ED=$(editor fifo <<'SH'
rm -f "$f"; mkfifo "$f"
SH
)
  RC=0; EDITOR="$ED" timeout 10 "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; want_text "$ERR" "not a regular file (not a file edit installs)"
  same_file "$P" "$before"; no_leftovers
  ED=$(editor hard <<SH
printf 'bob cap_kill\n' >"\$f"; ln "\$f" "$CASE_DIR/twin"
SH
)
  cd_edit; want_rc 2; want_text "$ERR" "has another name (a hard link)"
  same_file "$P" "$before"; no_leftovers
}

# A good edit is installed by rename (a new inode), root's and 0644 whatever the umask; the
# copy and the lock are gone; the editor got the copy beside the file. An edit that changes
# nothing is not installed again.
t_edit_installs() {
  need_root; policy_dir; local ino
  ino=$(stat -c %i "$P")
  ED=$(editor add <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  nss_env; RC=0; (umask 077; env "${NSSENV[@]}" EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR") || RC=$?
  want_rc 0; want_line "$OUT" "$P: installed, 2 rules, 0 warnings in the policy"
  [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "content: $(cat "$P")"
  [ "$(stat -c '%a %U %G' "$P")" = "644 root root" ] || fail "mode/owner $(stat -c '%a %U %G' "$P")"
  [ "$(stat -c %i "$P")" != "$ino" ] || fail "rewritten in place, not renamed"
  want_line "$CASE_DIR/add.args" "-- $CASE_DIR/etc/.capdelegate.conf.edit"
  no_leftovers
  # unchanged: not reinstalled (same inode and time), said
  local before; before=$(snap "$P")
  ED=$(editor same <<'SH'
:
SH
)
  cd_edit; want_rc 0; want_text "$ERR" "$P left untouched: unchanged"
  same_file "$P" "$before"; no_leftovers
  # warnings only: installed, the warnings shown
  ED=$(editor warn <<'SH'
printf 'zed cap_kill\n' >>"$f"
SH
)
  cd_edit; want_rc 0; want_text "$ERR" "warning: $CASE_DIR/etc/.capdelegate.conf.edit:3: user 'zed' unknown to NSS"
  want_line "$OUT" "$P: installed, 3 rules, 1 warning in the policy"
  no_leftovers
}

# edit NAME creates the drop-in NAME.conf (NAME.conf names the same file), judged with the rest
# of the policy; an edit that leaves a new drop-in empty creates nothing.
t_edit_creates_dropin() {
  need_root; policy_dir
  ED=$(editor new <<'SH'
printf 'bob cap_kill\n' >"$f"
SH
)
  cd_edit 10-bob; want_rc 0; want_line "$OUT" "$D/10-bob.conf: installed, 2 rules, 0 warnings in the policy"
  [ "$(cat "$D/10-bob.conf")" = "bob cap_kill" ] || fail "drop-in content"
  [ "$(stat -c '%a %U' "$D/10-bob.conf")" = "644 root" ] || fail "drop-in mode"
  want_line "$CASE_DIR/new.args" "-- $D/.10-bob.conf.edit"
  ED=$(editor more <<'SH'
printf 'carol cap_syslog\n' >>"$f"
SH
)
  cd_edit 10-bob.conf; want_rc 0
  [ "$(cat "$D/10-bob.conf")" = "$(printf 'bob cap_kill\ncarol cap_syslog')" ] || fail "NAME.conf not the same file"
  [ "$(ls -A "$D")" = "10-bob.conf" ] || fail "other files in $D: $(ls -A "$D")"
  ED=$(editor empty <<'SH'
:
SH
)
  cd_edit 20-none; want_rc 0; want_text "$ERR" "$D/20-none.conf left untouched: empty, not created"
  [ ! -e "$D/20-none.conf" ] || fail "empty drop-in created"
  # a drop-in that is a symbolic link is not replaced by one
  ln -s "$D/10-bob.conf" "$D/30-link.conf"
  cd_edit 30-link; want_rc 2; want_text "$ERR" "$D/30-link.conf: is a symbolic link"
  [ -L "$D/30-link.conf" ] || fail "link replaced"
  rm "$D/30-link.conf"; no_leftovers
}

# An edit whose policy has errors, without a terminal to ask: the installed file untouched
# (same bytes, same inode), the errors shown as FILE:LINE of the copy, exit 1, nothing left.
# A text with no errors of its own that makes an accepted policy rejected (the whole over the
# size limit) is refused too (a policy rejected already: edit_into_rejected_policy).
t_edit_broken_left_untouched() {
  need_root; policy_dir; local before
  before=$(snap "$P")
  ED=$(editor bad <<'SH'
printf 'bob cap_bogus\n' >>"$f"
SH
)
  cd_edit; want_rc 1
  want_text "$ERR" "$CASE_DIR/etc/.capdelegate.conf.edit:2: unknown capability: 'cap_bogus'"
  want_text "$ERR" "(your text for $P): the policy has errors"
  want_text "$ERR" "$P left untouched: no terminal to ask what to do"
  same_file "$P" "$before"; no_leftovers
  { printf 'x cap_net_raw\n'; head -c 600000 /dev/zero | tr '\0' '#' | fold -w 99; echo; } >"$D/50-big.conf"
  chmod 0644 "$D/50-big.conf"
  ED=$(editor big <<'SH'
{ printf 'bob cap_kill\n'; head -c 600000 /dev/zero | tr '\0' '#' | fold -w 99; echo; } >>"$f"
SH
)
  cd_edit; want_rc 1; want_text "$ERR" "larger than the size limit"
  want_text "$ERR" "$P left untouched: no terminal to ask what to do"
  same_file "$P" "$before"; no_leftovers; rm "$D/50-big.conf"
  # the editor failing (vim's :cq) leaves the file as it was
  ED=$(editor fails <<'SH'
printf 'bob cap_kill\n' >>"$f"; exit 3
SH
)
  cd_edit; want_rc 1; want_text "$ERR" "$P left untouched: the editor exited with status 3"
  same_file "$P" "$before"; no_leftovers
}

# A text with no errors of its own, into a policy that other files keep rejected: installed
# (nothing gets worse), said with the file still at fault, exit 1; a text with errors of its own
# is still refused, and the last fix makes the policy accepted (exit 0).
t_edit_into_rejected_policy() {
  need_root; policy_dir
  printf 'bob cap_bogus\n' >"$D/10-bob.conf"; printf 'carol cap_nada\n' >"$D/20-carol.conf"
  chmod 0644 "$D"/*.conf
  ED=$(editor fix-bob <<'SH'
printf 'bob cap_kill\n' >"$f"
SH
)
  cd_edit 10-bob; want_rc 1
  want_line "$OUT" "$D/10-bob.conf: installed; the policy stays rejected: $D/20-carol.conf: syntax error: the module grants nothing"
  want_text "$ERR" "$D/20-carol.conf:1: unknown capability: 'cap_nada'"
  want_text "$ERR" "capdelegate: edit: $D/10-bob.conf: your text has no errors of its own, and the policy was rejected already: installed, as that makes nothing worse"
  [ "$(cat "$D/10-bob.conf")" = "bob cap_kill" ] || fail "not installed: $(cat "$D/10-bob.conf")"
  [ "$(stat -c '%a %U' "$D/10-bob.conf")" = "644 root" ] || fail "mode"
  no_leftovers
  # errors of its own: refused as ever
  local before; before=$(snap "$D/20-carol.conf")
  ED=$(editor still-bad <<'SH'
printf 'carol cap_nope\n' >"$f"
SH
)
  cd_edit 20-carol; want_rc 1; want_text "$ERR" "left untouched: no terminal to ask what to do"
  no_text "$OUT" "installed"; same_file "$D/20-carol.conf" "$before"; no_leftovers
  # the last fix: the policy accepted
  ED=$(editor fix-carol <<'SH'
printf 'carol cap_syslog\n' >"$f"
SH
)
  cd_edit 20-carol; want_rc 0; want_line "$OUT" "$D/20-carol.conf: installed, 3 rules, 0 warnings in the policy"
  no_leftovers
}

# Someone else installs the file while the editor runs (a config-management run, an mv by
# hand: not through edit's lock): edit does not install over their version, says so, and
# leaves it (no terminal: exit 1). A drop-in created meanwhile is theirs too.
t_edit_changed_meanwhile() {
  need_root; policy_dir; local theirs="$CASE_DIR/theirs"
  printf 'carol cap_syslog\n' >"$theirs"; chmod 0644 "$theirs"
  ED=$(editor race <<SH
printf 'bob cap_kill\n' >>"\$f"; echo "\$PPID" >"$CASE_DIR/edit.pid"
cp "$theirs" "$CASE_DIR/etc/.tmp" && mv "$CASE_DIR/etc/.tmp" "$P"
SH
)
  cd_edit; want_rc 1
  want_text "$ERR" "$P was changed by someone else while you edited: not installed over their version"
  want_text "$ERR" "$P left untouched: no terminal to ask what to do"
  [ "$(cat "$P")" = "carol cap_syslog" ] || fail "their version lost: $(cat "$P")"
  # named as capdelegate(8) says: .BASE.kept-PID, PID edit's own
  kept_text "$CASE_DIR/etc" "$P" "$(printf 'alice cap_net_raw\nbob cap_kill')" \
    ".capdelegate.conf.kept-$(cat "$CASE_DIR/edit.pid")"
  ED=$(editor race2 <<SH
printf 'bob cap_kill\n' >"\$f"
printf 'dave cap_kill\n' >"$D/.tmp"; chmod 0644 "$D/.tmp"; mv "$D/.tmp" "$D/10-x.conf"
SH
)
  cd_edit 10-x; want_rc 1
  want_text "$ERR" "$D/10-x.conf was created by someone else while you edited"
  [ "$(cat "$D/10-x.conf")" = "dave cap_kill" ] || fail "their drop-in lost"
  kept_text "$D" "$D/10-x.conf" "bob cap_kill"
}

# kept_text DIR FILE TEXT [NAME]: the one thing edit left in DIR is the admin's text for FILE,
# named in $ERR, root's and 0600, beside FILE as a dotfile (never read as a policy file), named
# NAME when given; removed.
kept_text() {
  local kept
  kept=$(sed -n "s|^capdelegate: edit: your text for $2 is kept in \\(.*\\) (a dotfile: never read as policy)\$|\\1|p" "$ERR")
  [ -n "$kept" ] || fail "no line naming where the text for $2 is kept"
  [ "$(dirname "$kept")" = "$1" ] && [[ "$(basename "$kept")" == .* ]] || fail "kept outside $1 or not a dotfile: $kept"
  [ -z "${4:-}" ] || [ "$(basename "$kept")" = "$4" ] || fail "kept as $(basename "$kept"), want $4"
  [ "$(cat "$kept")" = "$3" ] || fail "kept text: $(cat "$kept")"
  [ "$(stat -c '%a %U' "$kept")" = "600 root" ] || fail "kept mode/owner: $(stat -c '%a %U' "$kept")"
  rm "$kept"; no_leftovers
}

# edit looks at the installed file last, after its new file is written and on disk, just before
# the rename: a version someone else renames into place while edit waits on the disk (fsync
# slowed by tests/cli/slow_fsync.c) stays, and the admin's text is kept beside it, named.
t_edit_changed_during_install() {
  need_root; policy_dir; local cd
  cc -shared -fPIC -o "$CASE_DIR/slow_fsync.so" "$HERE/slow_fsync.c" -ldl
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  nss_env; NSSENV[0]="LD_PRELOAD=$CASE_DIR/slow_fsync.so:${NSSENV[0]#LD_PRELOAD=}"
  env "${NSSENV[@]}" SLOW_FSYNC_SUFFIX=/.capdelegate.conf.new SLOW_FSYNC_MARK="$CASE_DIR/syncing" \
    SLOW_FSYNC_GO="$CASE_DIR/go" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" \
    "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" & cd=$!
  await "$CASE_DIR/syncing"
  printf 'carol cap_syslog\n' >"$CASE_DIR/etc/.theirs"; chmod 0644 "$CASE_DIR/etc/.theirs"
  mv "$CASE_DIR/etc/.theirs" "$P"; touch "$CASE_DIR/go"
  RC=0; wait "$cd" || RC=$?
  want_rc 1; no_text "$OUT" "installed"
  want_text "$ERR" "$P was changed by someone else while you edited: not installed over their version"
  [ "$(cat "$P")" = "carol cap_syslog" ] || fail "their version lost: $(cat "$P")"
  kept_text "$CASE_DIR/etc" "$P" "$(printf 'alice cap_net_raw\nbob cap_kill')"
}

# $SUDO_EDITOR, then $VISUAL, then $EDITOR, split at blanks as sudoedit splits them (a
# backslash keeps a blank in the word); one naming no program, or holding "--", is skipped
# with a message; the file comes after "--".
t_edit_editor_choice() {
  need_root; policy_dir; local e
  e=$(editor one <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  nss_env
  RC=0; env "${NSSENV[@]}" SUDO_EDITOR="$e -x a\\ b" VISUAL=/nonexistent EDITOR=/nonexistent "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_line "$CASE_DIR/one.args" "-x a b -- $CASE_DIR/etc/.capdelegate.conf.edit"
  e=$(editor two <<'SH'
printf 'carol cap_kill\n' >>"$f"
SH
)
  RC=0; env "${NSSENV[@]}" SUDO_EDITOR="/nonexistent/ed" VISUAL="$e -- x" EDITOR="$e -y" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_text "$ERR" "\$SUDO_EDITOR '/nonexistent/ed' ignored: not found"
  want_text "$ERR" "\$VISUAL '$e -- x' ignored: an editor's arguments may not hold \"--\""
  want_line "$CASE_DIR/two.args" "-y -- $CASE_DIR/etc/.capdelegate.conf.edit"
  # a variable of blanks only names nothing: skipped with a message, the next one used
  RC=0; env "${NSSENV[@]}" SUDO_EDITOR="   " VISUAL=$'\t' EDITOR="$e -z" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_text "$ERR" "\$SUDO_EDITOR '   ' ignored: empty"
  want_line "$CASE_DIR/two.args" "-z -- $CASE_DIR/etc/.capdelegate.conf.edit"
  # no editor at all (sensible-editor not in PATH either): nothing made
  RC=0; PATH=/nonexistent SUDO_EDITOR="" VISUAL="" EDITOR="" /usr/bin/env PATH=/nonexistent "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; want_text "$ERR" "no editor: set \$EDITOR"; no_leftovers
  # PATH unset or empty: a bare name is looked for in /usr/local/bin:/usr/bin:/bin (true(1)
  # there changes nothing), never a crash or "no editor"
  RC=0; env -u PATH "${NSSENV[@]}" SUDO_EDITOR="" VISUAL="" EDITOR=true "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_text "$ERR" "$P left untouched: unchanged"; no_leftovers
  RC=0; env PATH= "${NSSENV[@]}" SUDO_EDITOR="" VISUAL="" EDITOR=true "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_text "$ERR" "$P left untouched: unchanged"; no_leftovers
}

# An editor variable as dense as words can be (one-byte words, one blank between them): the
# words, "--", the file and the end of the list all fit in what split_editor allows, under
# valgrind (an array one entry short is written past its end).
t_edit_editor_words_fill_the_room() {
  need_root; command -v valgrind >/dev/null || skip "valgrind missing"
  policy_dir; local e
  e=$(editor e <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  mkdir -p "$CASE_DIR/bin"; ln -s "$e" "$CASE_DIR/bin/e"
  nss_env
  RC=0; env "${NSSENV[@]}" PATH="$CASE_DIR/bin:$PATH" SUDO_EDITOR="" VISUAL="" EDITOR="e 1 2 3 4 5 6 7 8 9" \
    valgrind -q --error-exitcode=99 "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  [ "$RC" -ne 99 ] || fail "valgrind: $(head -c 800 "$ERR")"
  want_rc 0; want_line "$CASE_DIR/e.args" "1 2 3 4 5 6 7 8 9 -- $CASE_DIR/etc/.capdelegate.conf.edit"
  want_text "$OUT" "$P: installed, 2 rules"; no_leftovers
}

# check --staged for a policy installed in "/" (--config /NAME): "/" is judged as the directory
# it would be installed in (root's, 0755 here: safe), never taken for a missing directory.
t_check_staged_policy_in_root_directory() {
  need_root; local f n=/capdelegate-cli-test-$$.conf
  [ ! -e "$n" ] || skip "$n exists"
  f=$(printf 'alice cap_net_raw\n' | staged good)
  cd_nss check --config "$n" --confdir "" --staged "$f"; want_rc 0
  want_line "$OUT" "$n: ok, 1 rule, 0 warnings"; no_text "$ERR" "directory is missing"
  [ ! -e "$n" ] || fail "check --staged made $n"
}

# A policy whose directory is "/" (--config /NAME; a chroot or a container's image): its lock,
# copy and new file go beside it in "/", and the messages name "/" (a directory cut from the
# path at its one slash). Run in a chroot of its own (a mount namespace: nothing stays
# mounted): /usr bound read-only, /proc, the binary copied, an editor script.
t_edit_policy_in_root_directory() {
  need_root; command -v unshare >/dev/null && command -v chroot >/dev/null || skip "unshare or chroot missing"
  policy_dir; local r="$CASE_DIR/root"
  ED=$(editor plain <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  cd_edit; want_rc 0   # the same edit outside: the path's directory has more than one slash
  mkdir -p "$r/usr" "$r/tmp" "$r/proc"; chmod 0755 "$r"; ln -s usr/bin "$r/bin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  cp "$BIN" "$r/capdelegate"
  printf '#!/bin/sh\nprintf "carol cap_kill\\n" >>"$3"\n' >"$r/ed"; chmod 0755 "$r/ed"
  printf 'alice cap_net_raw\n' >"$r/capdelegate.conf"; chmod 0644 "$r/capdelegate.conf"
  RC=0; unshare -m sh -c 'mount --bind -o ro /usr "$1/usr" && mount -t proc proc "$1/proc" && exec chroot "$1" /usr/bin/env -i EDITOR="/ed -x" /capdelegate edit --config /capdelegate.conf --confdir ""' \
    sh "$r" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_text "$OUT" "/capdelegate.conf: installed, 2 rules"
  [ "$(cat "$r/capdelegate.conf")" = "$(printf 'alice cap_net_raw\ncarol cap_kill')" ] || fail "not installed: $(cat "$r/capdelegate.conf")"
  [ -z "$(find "$r" -maxdepth 1 -name '.capdelegate.conf.*')" ] || fail "left in /: $(ls -a "$r")"
}

# capdelegate(8), edit: the way to let others change one policy file without root's editor.
# The script after ".\" test: delegate", run verbatim as root (in a mount namespace that puts
# this case's policy directory at /etc/security), reads the text on its standard input, installs
# it by rename only when the whole policy is clean with it (root's, 0644), and leaves nothing
# behind either way; the check it runs first needs no root (run as nobody).
t_edit_delegation_script() {
  need_root; command -v unshare >/dev/null || skip "unshare missing"
  policy_dir; local script="$CASE_DIR/put.sh" dest="$D/10-net.conf" f before
  awk '/^\.\\" test: delegate$/ { on = 1; next } on && /^\.EX$/ { ex = 1; next }
       ex && /^\.EE$/ { exit } ex { gsub(/\\-/, "-"); gsub(/\\e/, "\\"); print }' "$MAN" >"$script"
  grep -q '^mv -f "$tmp" "$dest"$' "$script" || fail "no delegation script in the man page: $(head -c 300 "$script")"
  nss_env
  put() { # put TEXT: the script as sudo runs it, the text on its standard input
    RC=0
    printf '%s\n' "$1" | unshare -m sh -c 'mount --bind "$1" /etc/security && shift && exec "$@"' sh \
      "$CASE_DIR/etc" env "${NSSENV[@]}" PATH="$(dirname "$BIN"):$PATH" sh "$script" >"$OUT" 2>"$ERR" || RC=$?
  }
  put "bob cap_net_raw"; want_rc 0
  [ "$(cat "$dest")" = "bob cap_net_raw" ] || fail "not installed: $(cat "$dest" 2>&1)"
  [ "$(stat -c '%a %U' "$dest")" = "644 root" ] || fail "mode/owner $(stat -c '%a %U' "$dest")"
  no_leftovers
  before=$(snap "$dest")
  put "bob cap_net_rawx"; want_rc 2; want_text "$ERR" "unknown capability: 'cap_net_rawx'"
  same_file "$dest" "$before"; no_leftovers
  put "zed cap_net_raw"; want_rc 1; want_text "$ERR" "user 'zed' unknown to NSS"
  same_file "$dest" "$before"; no_leftovers
  # the delegate's own check of a copy, as themselves
  f=$(printf 'bob cap_kill\n' | staged copy)
  RC=0; setpriv --reuid=nobody --regid=nogroup --clear-groups env "${NSSENV[@]}" \
    "$BIN" check --config "$P" --confdir "$D" --staged "$f" --as "$dest" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_line "$OUT" "$P: ok, 2 rules, 0 warnings"
}

# Waits for a file to appear (a step of another process), at most 10 s.
await() { local i; for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; fail "no $1"; }
# await_pid FILE: the pid an editor wrote to FILE (echo $$ >FILE), printed once it is there: the
# file exists before the shell's write fills it, and an empty pid read then kills nothing.
await_pid() { local i; for i in $(seq 200); do [ -s "$1" ] && { cat "$1"; return 0; }; sleep 0.05; done; fail "no pid in $1"; }

# Two editors of one file: the second is refused while the first holds the lock, naming its
# pid; the first one's edit is installed. The slow editors wait for "go" 10 s at most: a case
# that fails before it says go (a mutant) must not leave them looping after its directory is gone.
t_edit_lock_held() {
  need_root; policy_dir; local first
  ED=$(editor slow <<SH
touch "$CASE_DIR/editing"; for _ in \$(seq 200); do [ ! -e "$CASE_DIR/go" ] || break; sleep 0.05; done
printf 'bob cap_kill\n' >>"\$f"
SH
)
  EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$CASE_DIR/out1" 2>"$CASE_DIR/err1" & first=$!
  await "$CASE_DIR/editing"
  ED=$(editor second <<'SH'
printf 'carol cap_kill\n' >>"$f"
SH
)
  cd_edit; want_rc 2
  want_text "$ERR" "$P is being edited (pid $first holds $CASE_DIR/etc/.capdelegate.conf.lock): try again when that edit ends"
  [ ! -e "$CASE_DIR/second.args" ] || fail "the second editor ran"
  touch "$CASE_DIR/go"; RC=0; wait "$first" || RC=$?
  want_rc 0; [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "first edit lost"
  no_leftovers
  # another file of the policy has its own lock
  rm -f "$CASE_DIR/editing" "$CASE_DIR/go"
  ED=$(editor slow2 <<SH
touch "$CASE_DIR/editing"; for _ in \$(seq 200); do [ ! -e "$CASE_DIR/go" ] || break; sleep 0.05; done
SH
)
  EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >/dev/null 2>&1 & first=$!
  await "$CASE_DIR/editing"
  ED=$(editor drop <<'SH'
printf 'dave cap_kill\n' >"$f"
SH
)
  cd_edit 10-dave; want_rc 0
  touch "$CASE_DIR/go"; wait "$first" || true
}

# An edit killed outright (SIGKILL: no cleanup) leaves its lock and copy; the next edit takes
# the lock over with a message naming the dead pid, removes the copy, and installs.
t_edit_stale_lock() {
  need_root; policy_dir; local dead epid
  ED=$(editor hang <<SH
echo \$\$ >"$CASE_DIR/editor.pid"; exec sleep 30
SH
)
  EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >/dev/null 2>&1 & dead=$!
  epid=$(await_pid "$CASE_DIR/editor.pid")
  kill -KILL "$dead"; wait "$dead" || true; kill "$epid" 2>/dev/null || true
  gone "$epid" || fail "the editor still runs"   # a lock is stale only once its editor ended
  [ -e "$CASE_DIR/etc/.capdelegate.conf.lock" ] && [ -e "$CASE_DIR/etc/.capdelegate.conf.edit" ] || fail "no leftovers to take over"
  ED=$(editor after <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  cd_edit; want_rc 0
  want_text "$ERR" "taking over the stale lock of pid $dead (that edit ended without removing it)"
  want_text "$ERR" "$CASE_DIR/etc/.capdelegate.conf.edit: removed: left by an edit that was killed"
  [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "not installed"
  no_leftovers
}

# An edit killed outright (kill -9) while its editor runs on: the editor lives on and saves
# later, by the copy's name. A second edit must not take the lock over while that editor runs,
# whether it keeps the lock's descriptor it was given, closes every descriptor it inherited, or
# exits leaving a child of its own to save (editor.pid is written last, whole, by rename): the save would land in the second edit's copy and
# be installed with it, unseen. Once the editor and its child are gone, the lock is taken over
# as stale and the next edit installs only its own text.
t_edit_orphaned_editor() {
  need_root; policy_dir; local dead epid saver second variant before
  before=$(snap "$P")
  for variant in keeps closes child; do
    rm -f "$CASE_DIR"/{editor.pid,saver.pid,write-now,wrote,b-editing,editor-exit}
    ED=$(editor "orphan-$variant" <<SH
if [ $variant = closes ]; then
  for d in /proc/\$\$/fd/*; do n=\${d##*/}; [ "\$n" -le 2 ] || eval "exec \$n>&-"; done
fi
save() {
  for _ in \$(seq 400); do [ ! -e "$CASE_DIR/write-now" ] || break; sleep 0.05; done
  printf 'carol cap_syslog\n' >>"\$f"; touch "$CASE_DIR/wrote"
}
if [ $variant = child ]; then
  save & echo \$! >"$CASE_DIR/saver.pid"; echo \$\$ >"$CASE_DIR/.pid"; mv "$CASE_DIR/.pid" "$CASE_DIR/editor.pid"
  for _ in \$(seq 200); do [ ! -e "$CASE_DIR/editor-exit" ] || break; sleep 0.05; done
  exit 0
fi
echo \$\$ >"$CASE_DIR/saver.pid"; echo \$\$ >"$CASE_DIR/.pid"; mv "$CASE_DIR/.pid" "$CASE_DIR/editor.pid"; save
SH
)
    EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >/dev/null 2>&1 & dead=$!
    await "$CASE_DIR/editor.pid"; epid=$(cat "$CASE_DIR/editor.pid"); saver=$(cat "$CASE_DIR/saver.pid")
    kill -KILL "$dead"; wait "$dead" 2>/dev/null || true
    if [ $variant = child ]; then touch "$CASE_DIR/editor-exit"; gone "$epid" || fail "the editor did not exit"; fi
    kill -0 "$saver" || fail "$variant: the editor's save died with edit"
    ED=$(editor second <<SH
touch "$CASE_DIR/b-editing"
for _ in \$(seq 200); do [ ! -e "$CASE_DIR/wrote" ] || break; sleep 0.05; done
printf 'bob cap_kill\n' >>"\$f"
SH
)
    nss_env
    env "${NSSENV[@]}" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" "$BIN" edit --config "$P" --confdir "$D" \
      </dev/null >"$OUT" 2>"$ERR" & second=$!
    # the orphan saves while the second edit's editor runs, or once that edit has ended
    while kill -0 "$second" 2>/dev/null && [ ! -e "$CASE_DIR/b-editing" ]; do sleep 0.05; done
    touch "$CASE_DIR/write-now"; await "$CASE_DIR/wrote"
    RC=0; wait "$second" || RC=$?
    gone "$saver" || { kill -KILL "$saver"; fail "$variant: the orphaned save still runs"; }
    ! grep -q carol "$P" || fail "$variant: text the second edit never showed installed: $(cat "$P")"
    want_rc 2; no_text "$OUT" "installed"; same_file "$P" "$before"
    [ ! -e "$CASE_DIR/b-editing" ] || fail "$variant: the second editor ran"
    if [ $variant = child ]; then
      want_text "$ERR" "the edit of pid $dead ended, but a process it started (its editor) still holds $CASE_DIR/etc/.capdelegate.conf.lock"
    else
      want_text "$ERR" "the editor (pid $epid) of the edit of pid $dead still runs: that edit ended without removing $CASE_DIR/etc/.capdelegate.conf.lock"
    fi
    # and why the lock is not taken over, what to do
    want_text "$ERR" ".capdelegate.conf.lock, and a save of that editor would be installed with this edit: end the editor, or let it end, then try again (remove the lock only if that pid is not the editor)"
  done
  # the orphans gone: the lock is stale, taken over, and only this edit's text installed
  ED=$(editor third <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  cd_edit; want_rc 0
  want_text "$ERR" "taking over the stale lock of pid $dead"
  [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "not this edit's text: $(cat "$P")"
  no_leftovers
}

# A killed edit's lock names its editor by pid and start time (/proc/PID/stat's field 22): a
# process that got the editor's pid later, started at another time, is not that editor, and the
# lock is taken over as stale; one of the recorded start time is the editor, and the edit stops.
t_edit_lock_editor_pid_reused() {
  need_root; policy_dir; local L="$CASE_DIR/etc/.capdelegate.conf.lock" dead other start
  ED=$(editor reused <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  sh -c 'exit 0' & dead=$!; wait "$dead" || true
  sleep 30 & other=$!
  start=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$other/stat")
  printf '%s %s %s\n' "$dead" "$other" "$((start + 1))" >"$L"
  cd_edit; want_rc 0
  want_text "$ERR" "taking over the stale lock of pid $dead"
  grep -qx 'bob cap_kill' "$P" || fail "the edit not installed: $(cat "$P")"
  printf '%s %s %s\n' "$dead" "$other" "$start" >"$L"
  cd_edit; want_rc 2
  want_text "$ERR" "the editor (pid $other) of the edit of pid $dead still runs"
  kill "$other"; wait "$other" 2>/dev/null || true
}

# Waits at most 5 s for process $1 to end.
gone() { local i; [ -n "$1" ] || return 1; for i in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; return 1; }

# Interrupted edits leave the policy as it was and nothing behind: the editor killed (exit 1,
# said), SIGTERM or SIGHUP to capdelegate while the editor runs (passed on to the editor, then
# capdelegate ends by that signal).
t_edit_interrupted() {
  need_root; policy_dir; local before cd epid sig
  before=$(snap "$P")
  ED=$(editor hang <<SH
printf 'bob cap_kill\n' >>"\$f"; echo \$\$ >"$CASE_DIR/editor.pid"; exec sleep 30
SH
)
  EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" & cd=$!
  epid=$(await_pid "$CASE_DIR/editor.pid"); kill -TERM "$epid"
  RC=0; wait "$cd" || RC=$?
  want_rc 1; want_text "$ERR" "$P left untouched: the editor was killed by signal 15"
  same_file "$P" "$before"; no_leftovers
  for sig in TERM HUP; do
    rm -f "$CASE_DIR/editor.pid"
    EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" & cd=$!
    epid=$(await_pid "$CASE_DIR/editor.pid")
    sleep 0.1; kill -"$sig" "$cd"
    gone "$cd" || { kill -KILL "$cd" "$epid"; fail "SIG$sig: still editing 5 s later"; }
    RC=0; wait "$cd" || RC=$?
    [ "$RC" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: exit $RC"
    ! kill -0 "$epid" 2>/dev/null || fail "SIG$sig not passed on to the editor"
    same_file "$P" "$before"; no_leftovers
  done
  # an editor that, told to stop, saves the admin's text and exits 0: the edit still ends
  # there (the signal was edit's), nothing judged or installed
  ED=$(editor saves <<SH
trap 'printf "carol cap_kill\\n" >>"\$f"; exit 0' TERM
echo \$\$ >"$CASE_DIR/editor.pid"; while :; do sleep 0.05; done
SH
)
  rm -f "$CASE_DIR/editor.pid"
  EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" & cd=$!
  epid=$(await_pid "$CASE_DIR/editor.pid")
  sleep 0.1; kill -TERM "$cd"
  gone "$cd" || { kill -KILL "$cd" "$epid"; fail "SIGTERM to edit, the editor saving: still editing 5 s later"; }
  RC=0; wait "$cd" || RC=$?
  [ "$RC" -eq 143 ] || fail "SIGTERM, the editor saving: exit $RC"
  no_text "$OUT" "installed"; same_file "$P" "$before"; no_leftovers
  # an editor slow to stop, and a second signal (SIGHUP) to edit while it waits for it: the
  # edit still ends only when its editor has, and removes the copy after the editor's last
  # write to it (an edit gone first would leave that write behind, the editor running on)
  ED=$(editor slow-stop <<SH
trap 'sleep 1; printf "carol cap_kill\\n" >>"\$f"; touch "$CASE_DIR/editor.done"; exit 0' TERM HUP
echo \$\$ >"$CASE_DIR/editor.pid"; while :; do sleep 0.05; done
SH
)
  rm -f "$CASE_DIR/editor.pid" "$CASE_DIR/editor.done"
  EDITOR="$ED" "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" & cd=$!
  epid=$(await_pid "$CASE_DIR/editor.pid")
  sleep 0.1; kill -TERM "$cd"; sleep 0.4; kill -HUP "$cd"
  gone "$cd" || { kill -KILL "$cd" "$epid"; fail "SIGTERM, SIGHUP, the editor stopping: still editing 5 s later"; }
  RC=0; wait "$cd" || RC=$?
  [ -e "$CASE_DIR/editor.done" ] || fail "edit ended before its editor"
  gone "$epid" || { kill -KILL "$epid"; fail "the editor still runs 5 s after edit ended"; }
  [ "$RC" -eq 129 ] || [ "$RC" -eq 143 ] || fail "SIGTERM, SIGHUP: exit $RC"
  no_text "$OUT" "installed"; same_file "$P" "$before"; no_leftovers
}

# The question on a terminal (expect): errors named FILE:LINE, then (e) runs the editor again
# on the admin's text, and a fixed text is installed; (x) leaves the file; ^C or SIGTERM at the
# question ends the edit with nothing left behind (capdelegate killed by it: expect's 200).
t_edit_prompt() {
  need_root; command -v expect >/dev/null || skip "expect not installed"
  policy_dir; local before
  before=$(snap "$P")
  ED=$(editor twice <<SH
# the pidfds edit holds while its editor runs: one for this run, none left from the last (edit
# opens this run's after the fork: under load the editor can look first, so it waits for it)
for _ in \$(seq 100); do
  n=\$(for l in /proc/\$PPID/fd/*; do readlink "\$l"; done | grep -c pidfd)
  [ "\$n" -eq 0 ] || break; sleep 0.05
done
echo "\$n" >>"$CASE_DIR/pidfds"
if [ ! -e "$CASE_DIR/once" ]; then touch "$CASE_DIR/once"; printf 'bob cap_bogus\n' >>"\$f"
else grep -q cap_bogus "\$f" || exit 9; sed -i 's/cap_bogus/cap_kill/' "\$f"; fi
SH
)
  cat >"$CASE_DIR/prompt.exp" <<'EXP'
set timeout 10
lassign $argv answer
spawn -noecho {*}[lrange $argv 1 end]
expect {
  -re {etc/\.capdelegate\.conf\.edit:[0-9]+: unknown capability: 'cap_bogus'} {}
  timeout { exit 101 }
}
expect {
  "What now? (e)dit again, (x) leave the installed file untouched: " {}
  timeout { exit 102 }
}
if {$answer eq "intr"} { send "\003" } elseif {$answer eq "term"} { exec kill -TERM [exp_pid] } elseif {$answer eq "eof"} { send "\004" } elseif {$answer eq "junk-eof"} { send "what\r"; expect "What now?"; send "\004" } else { send "$answer\r" }
expect {
  eof {}
  timeout { exec kill -KILL [exp_pid]; wait; exit 103 }
}
set w [wait]
if {[lindex $w 4] eq "CHILDKILLED"} { exit 200 }
exit [lindex $w 3]
EXP
  nss_env
  run_exp() { RC=0; env "${NSSENV[@]}" EDITOR="$ED" timeout 60 expect "$CASE_DIR/prompt.exp" "$1" "$BIN" edit --config "$P" --confdir "$D" >"$OUT" 2>"$ERR" || RC=$?; }
  run_exp e; want_rc 0; want_text "$OUT" "$P: installed, 2 rules, 0 warnings in the policy"
  [ "$(wc -l <"$CASE_DIR/pidfds")" = 2 ] && [ "$(sort -u "$CASE_DIR/pidfds" | wc -l)" = 1 ] \
    || fail "edit held other pidfds at the second run of its editor: $(paste -sd' ' "$CASE_DIR/pidfds")"
  [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "not the fixed text: $(cat "$P")"
  no_leftovers
  before=$(snap "$P"); rm -f "$CASE_DIR/once"
  run_exp x; want_rc 1; want_text "$OUT" "$P left untouched: as you chose"
  same_file "$P" "$before"; no_leftovers
  # the end of input at the question (^D), first or after an answer that is neither: x
  local a
  for a in eof junk-eof; do
    rm -f "$CASE_DIR/once"
    run_exp "$a"; want_rc 1; want_text "$OUT" "$P left untouched: as you chose"
    same_file "$P" "$before"; no_leftovers
  done
  rm -f "$CASE_DIR/once"
  run_exp intr; want_rc 200; no_text "$OUT" ": installed,"
  same_file "$P" "$before"; no_leftovers
  rm -f "$CASE_DIR/once"
  run_exp term; want_rc 200; no_text "$OUT" ": installed,"
  same_file "$P" "$before"; no_leftovers
}

# Every allocation of edit failed in turn (tests/cli/fault.c; the editor, edit_put.c, allocates
# nothing): each run is an error (exit 2, said) or the unfaulted outcome, the drop-in is either
# installed whole or not there, and nothing of edit's is left behind (the one other result
# allowed: the same outcome with the core saying it lost some held messages). A drop-in 30-new.conf is
# created by each run (removed before the next); a broken text is left untouched each time.
t_fault_alloc_edit() {
  need_root; command -v cc >/dev/null || skip "no C compiler for tests/cli/edit_put.c"
  policy_dir; touch -d '-1 hour' "$P"
  cc -O -o "$CASE_DIR/edit_put" "$HERE/edit_put.c"
  exec </dev/null   # no question asked: this is no terminal
  export SUDO_EDITOR="" VISUAL=""
  local n text
  for text in 'bob\ cap_kill' 'bob\ cap_bogus'; do
    export EDITOR="$CASE_DIR/edit_put $text"
    rm -f "$D/30-new.conf"; cd_fault edit --config "$P" --confdir "$D" 30-new
    local ref_rc=$RC; cp "$OUT" "$CASE_DIR/ref"; cp "$ERR" "$CASE_DIR/ref.err"
    case "$text" in *kill) [ "$ref_rc" -eq 0 ] ;; *) [ "$ref_rc" -eq 1 ] ;; esac || fail "unfaulted: exit $ref_rc"
    for ((n = 1; n < 2000; n++)); do
      rm -f "$D/30-new.conf"; CD_FAULT_ALLOC=$n cd_fault edit --config "$P" --confdir "$D" 30-new
      no_leftovers
      if [ -e "$D/30-new.conf" ]; then
        [ "$(cat "$D/30-new.conf")" = "bob cap_kill" ] || fail "allocation $n: a part installed"
      fi
      [ -e "$FIRED" ] || break
      if [ "$RC" -eq 2 ]; then
        grep -q '^capdelegate: ' "$ERR" || fail "allocation $n: exit 2 with no message"
        [ ! -e "$D/30-new.conf" ] || [ "$ref_rc" -eq 0 ] || fail "allocation $n: installed a broken text"
      elif [ "$RC" -eq "$ref_rc" ] && cmp -s "$OUT" "$CASE_DIR/ref" && grep -q 'out of memory: some messages about the policy were lost' "$ERR"; then
        :   # the core's held messages (cd_log_hold) lost, and said: the same outcome
      elif [ "$RC" -ne "$ref_rc" ] || ! cmp -s "$OUT" "$CASE_DIR/ref" || ! cmp -s "$ERR" "$CASE_DIR/ref.err"; then
        fail "allocation $n failed: exit $RC (unfaulted $ref_rc), another output"
      fi
    done
    [ ! -e "$FIRED" ] || fail "more than 2000 allocations"
    [ "$RC" -eq "$ref_rc" ] && cmp -s "$OUT" "$CASE_DIR/ref" || fail "not fired, yet another result"
    echo "edit ($text): $((n - 1)) allocations" >&2
  done
}

# The longest drop-in NAME edit takes is the one whose lock, .NAME.conf.lock, still fits in a
# directory entry (255 bytes: NAME of 244); one byte more is refused before anything is made.
# A policy whose directory cannot be opened is one clear error, and nothing else is tried.
t_edit_name_limits() {
  need_root; policy_dir; local n
  n=$(printf '%0244d' 0 | tr 0 a)
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >"$f"
SH
)
  cd_edit "$n"; want_rc 0; want_line "$OUT" "$D/$n.conf: installed, 2 rules, 0 warnings in the policy"
  [ "$(cat "$D/$n.conf")" = "bob cap_kill" ] || fail "not installed: $(ls -A "$D")"
  no_leftovers; rm "$D/$n.conf"
  # the shortest: one byte, given bare or with .conf (a dot is only refused first)
  cd_edit a; want_rc 0; want_line "$OUT" "$D/a.conf: installed, 2 rules, 0 warnings in the policy"
  no_leftovers; rm "$D/a.conf"
  cd_edit b.conf; want_rc 0; want_line "$OUT" "$D/b.conf: installed, 2 rules, 0 warnings in the policy"
  no_leftovers; rm "$D/b.conf"
  cd_edit "${n}b"; want_rc 2; want_text "$ERR" "${n}b.conf': no file name, or too long to have a lock beside it"
  [ -z "$(ls -A "$D")" ] || fail "something made in $D: $(ls -A "$D")"
  [ "$(wc -l <"$CASE_DIR/put.args")" -eq 3 ] || fail "the editor ran for the long name"
  no_leftovers
  P="$CASE_DIR/none/capdelegate.conf"; cd_edit; want_rc 2
  [ "$(cat "$ERR")" = "capdelegate: edit: $CASE_DIR/none: cannot open the directory: No such file or directory" ] ||
    fail "want the one error: $(cat "$ERR")"
  [ ! -e "$CASE_DIR/none" ] || fail "$CASE_DIR/none made"
}

# The disk fails under edit (tests/cli/fault.c): the copy's close reports EIO (its last write
# did not reach the disk), or the rename over the installed file fails. Each is an error named
# with its cause (exit 2), the installed file stays as it was, and edit's files are removed.
t_fault_edit_write_fails() {
  need_root; policy_dir; local before
  before=$(snap "$P")
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  CD_FAULT_CLOSE=/.capdelegate.conf.edit:5 EDITOR="$ED" VISUAL="" SUDO_EDITOR="" cd_fault edit --config "$P" --confdir "$D" </dev/null
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; want_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.edit: cannot write the copy: Input/output error"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran on a copy not written"
  same_file "$P" "$before"; no_leftovers
  # the editor cannot be started (fork fails), with standard input an open pipe nobody writes
  # to: said at once, the file left as it was (never a wait on descriptor 0, nor a signal
  # sent to a process that was not started)
  FIRED="$CASE_DIR/fired"; rm -f "$FIRED"; RC=0
  timeout 15 env CD_FAULT_FIRED="$FIRED" CD_FAULT_FORK=11 EDITOR="$ED" VISUAL="" SUDO_EDITOR="" \
    LD_PRELOAD="$(dirname "$BIN")/tests/cli/.libs/fault.so:$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
    NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
    "$BIN" edit --config "$P" --confdir "$D" >"$OUT" 2>"$ERR" < <(sleep 20) || RC=$?
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 1; want_line "$ERR" "capdelegate: edit: $P left untouched: the editor could not be run"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran"
  same_file "$P" "$before"; no_leftovers
  CD_FAULT_RENAME=capdelegate.conf:5 EDITOR="$ED" VISUAL="" SUDO_EDITOR="" cd_fault edit --config "$P" --confdir "$D" </dev/null
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; want_text "$ERR" "capdelegate: edit: $CASE_DIR/etc/capdelegate.conf: cannot rename the new file over it: Input/output error"
  no_text "$OUT" "installed"
  same_file "$P" "$before"; no_leftovers
}

# A file larger than a policy may be (1 MiB, capdelegate.conf(5)) is not edited: the editor
# never runs, nothing is made, the file stays as it is.
t_edit_too_large() {
  need_root; policy_dir; local before
  { printf 'alice cap_net_raw\n'; head -c 1100000 /dev/zero | tr '\0' '#'; echo; } >"$P"
  before=$(snap "$P")
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >"$f"
SH
)
  cd_edit; want_rc 2
  want_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/capdelegate.conf: larger than a policy may be: not edited"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran"
  same_file "$P" "$before"; no_leftovers
}

# check --staged for the main file whose directory does not exist: the policy could not be
# installed there, and check says so (exit 2), by the policy's name.
t_check_staged_main_no_directory() {
  need_root; local f
  f=$(printf 'alice cap_net_raw\n' | staged good)
  cd_nss check --config "$CASE_DIR/none/capdelegate.conf" --confdir "" --staged "$f"; want_rc 2
  want_line "$ERR" "capdelegate: error: $CASE_DIR/none/capdelegate.conf: its directory is missing: no capabilities granted"
  # the verdict: a system error (not "missing": a staged text is there), blaming the directory
  want_line "$OUT" "$CASE_DIR/none: system error: the module grants nothing"
  # a directory anyone may write: unsafe, as the installed file's would be
  mkdir -p "$CASE_DIR/open"; chmod 0777 "$CASE_DIR/open"
  cd_nss check --config "$CASE_DIR/open/capdelegate.conf" --confdir "" --staged "$f"; want_rc 2
  want_line "$OUT" "$CASE_DIR/open: unsafe: the module grants nothing"
  want_text "$ERR" "capdelegate: error: $CASE_DIR/open/capdelegate.conf: unsafe policy directory (writable by group or others"
}

# Each name edit makes for its files (the policy's path, .NAME.lock, .NAME.edit, .NAME.new, the
# copy's path) failing to be made (asprintf, libc's memory: tests/cli/fault.c): out of memory,
# said, exit 2, before anything is locked, copied or edited; the policy as it was.
t_fault_asprintf_edit() {
  need_root; policy_dir; local before fmt
  before=$(snap "$P")
  ED=$(editor never <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  exec </dev/null
  export EDITOR="$ED" VISUAL="" SUDO_EDITOR=""
  for fmt in '%s' '.%s.lock' '.%s.edit' '.%s.new' '%s/%s'; do
    CD_FAULT_ASPRINTF=$fmt cd_fault edit --config "$P" --confdir "$D"
    [ -e "$FIRED" ] || fail "$fmt: no asprintf of that format"
    want_rc 2; want_text "$ERR" "capdelegate: edit: out of memory"
    [ ! -e "$CASE_DIR/never.args" ] || fail "$fmt failed, yet the editor ran"
    same_file "$P" "$before"; no_leftovers
  done
}

# Changed by someone else while the admin edited, on a terminal: the question, then (e) runs the
# editor again on the admin's text, and that round, with no change meanwhile, installs it over
# their version (which the admin has now been told of): edit asks once, not in a loop.
t_edit_prompt_after_change() {
  need_root; command -v expect >/dev/null || skip "expect not installed"
  policy_dir; local theirs="$CASE_DIR/theirs"
  printf 'carol cap_syslog\n' >"$theirs"; chmod 0644 "$theirs"
  ED=$(editor race <<SH
if [ ! -e "$CASE_DIR/once" ]; then touch "$CASE_DIR/once"; printf 'bob cap_kill\n' >>"\$f"
  cp "$theirs" "$CASE_DIR/etc/.tmp" && mv "$CASE_DIR/etc/.tmp" "$P"; fi
SH
)
  cat >"$CASE_DIR/again.exp" <<'EXP'
set timeout 10
spawn -noecho {*}$argv
expect {
  "was changed by someone else while you edited" {}
  timeout { exit 101 }
}
expect {
  "What now? (e)dit again, (x) leave the installed file untouched: " { send "e\r" }
  timeout { exit 102 }
}
expect {
  "What now?" { exit 104 }
  eof {}
  timeout { exit 103 }
}
exit [lindex [wait] 3]
EXP
  nss_env
  RC=0; env "${NSSENV[@]}" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" timeout 60 expect "$CASE_DIR/again.exp" \
    "$BIN" edit --config "$P" --confdir "$D" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; want_text "$OUT" "$P: installed, 2 rules"
  [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "not the admin's text: $(cat "$P")"
  [ "$(wc -l <"$CASE_DIR/race.args")" -eq 2 ] || fail "the editor ran $(wc -l <"$CASE_DIR/race.args") times, not 2"
  no_leftovers
}

# capdelegate(8), edit: a file that cannot be examined or a lock that cannot be written ends the
# edit before the editor runs (exit 2, said once, by name), the policy left as it was. A stat(2)
# failure other than "no such file" is never taken for a file not there yet (that would edit
# and install an empty text over it); the lock's pid is written whole or nothing goes on.
t_fault_edit_stat_and_lock() {
  need_root; policy_dir; local before
  before=$(snap "$P")
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  CD_FAULT_STATAT=capdelegate.conf:5 EDITOR="$ED" VISUAL="" SUDO_EDITOR="" cd_fault edit --config "$P" --confdir "$D" </dev/null
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; want_line "$ERR" "capdelegate: edit: $P: cannot stat: Input/output error"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran on a file that could not be examined"
  same_file "$P" "$before"; no_leftovers
  # the lock's pid cannot be written (a file size limit of 0: the write fails with EFBIG)
  # (its messages go through a pipe: the limit would stop them too in a file; a coverage
  # build's gcov runtime cannot write its data under the limit either and says so in lines
  # of its own, "profiling:..." or "libgcov profiling error:...", which are not the edit's)
  RC=0; nss_env
  ( trap '' XFSZ; ulimit -f 0
    exec env "${NSSENV[@]}" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" "$BIN" edit --config "$P" --confdir "$D" ) \
    </dev/null 2>&1 >/dev/null | sed -e '/^profiling:/d' -e '/^libgcov profiling error:/d' >"$ERR" || RC=$?	# pipefail: the edit's status
  want_rc 2
  want_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.lock: cannot write: File too large"
  [ "$(wc -l <"$ERR")" -eq 1 ] || fail "more than the lock's error said: $(cat "$ERR")"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran without the lock written"
  same_file "$P" "$before"; no_leftovers
}

# fault_edit: edit the main file with the scripted editor $ED under tests/cli/fault.c
# (cd_fault), the policy of policy_dir, stdin not a terminal; the fault chosen by CD_FAULT_* in
# the environment.
fault_edit() {
  EDITOR="$ED" VISUAL="" SUDO_EDITOR="" cd_fault edit --config "$P" --confdir "$D" </dev/null
}

# capdelegate(8), edit: the lock that cannot be had (another's lock file at the name, a lock
# held by a process that wrote no pid, flock itself failing, a lock file that keeps being
# replaced) and a killed edit's leftover that cannot be removed each stop the edit before the
# editor runs: exit 2, said once by name, the policy as it was, another's file left in place.
t_fault_edit_lock_fails() {
  need_root; policy_dir; local before L="$CASE_DIR/etc/.capdelegate.conf.lock"
  before=$(snap "$P")
  ED=$(editor never <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  # a FIFO at the lock's name: not a lock this command can use (opened without hanging), and
  # let go again: as many descriptors open at exit as when a symbolic link there is refused
  # unopened
  ln -s "$CASE_DIR/nowhere" "$L"
  CD_FAULT_OPENFDS="$CASE_DIR/fds.ref" fault_edit; want_rc 2; rm "$L"
  mkfifo "$L"
  CD_FAULT_OPENFDS="$CASE_DIR/fds" fault_edit
  want_rc 2; one_line "$ERR" "capdelegate: edit: $L: cannot use as the lock: nothing edited"
  [ -p "$L" ] || fail "another's FIFO removed"; rm "$L"
  [ "$(cat "$CASE_DIR/fds")" = "$(cat "$CASE_DIR/fds.ref")" ] \
    || fail "descriptors open at exit: $(cat "$CASE_DIR/fds"), $(cat "$CASE_DIR/fds.ref") with a symbolic link there"
  # the lock held (flock) by a process that wrote no pid in it: refused, naming the lock
  : >"$L"
  exec 9<"$L"; flock -n 9 || fail "cannot take the lock for the test"
  cd_edit; exec 9<&-
  want_rc 2; one_line "$ERR" "capdelegate: edit: $P is being edited (another edit holds $L): try again when that edit ends"
  [ -e "$L" ] || fail "the held lock file removed"; rm "$L"
  # flock fails (ENOLCK: no locks available on this filesystem)
  CD_FAULT_FLOCK=37 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: edit: $L: cannot lock: $(python3 -c 'import os; print(os.strerror(37))')"
  rm -f "$L"
  # the lock taken, but the pid cannot be written in it: nothing goes on, the lock removed
  CD_FAULT_FTRUNCATE=5 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: edit: $L: cannot write: Input/output error"
  [ ! -e "$L" ] || fail "the lock left behind"
  # the lock file at the name is never the one locked (replaced after each open: here its
  # fstatat fails): given up after some tries, said
  CD_FAULT_STATAT=.capdelegate.conf.lock:2 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: edit: $L: kept changing while it was locked: nothing edited"
  rm -f "$L"
  # a killed edit's copy left behind that cannot be removed (a mount point: EBUSY)
  : >"$CASE_DIR/etc/.capdelegate.conf.edit"; : >"$CASE_DIR/mounted"
  mount --bind "$CASE_DIR/mounted" "$CASE_DIR/etc/.capdelegate.conf.edit"
  cd_edit; umount "$CASE_DIR/etc/.capdelegate.conf.edit"
  want_rc 2; one_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.edit: cannot remove a killed edit's leftover: Device or resource busy"
  rm "$CASE_DIR/etc/.capdelegate.conf.edit"
  [ ! -e "$CASE_DIR/never.args" ] || fail "the editor ran"
  same_file "$P" "$before"; no_leftovers
}

# capdelegate(8), edit: "Nothing is lost: until the rename the installed file is untouched".
# Each step of making the copy and the new file failing under it (tests/cli/fault.c): said by
# name with its cause, exit 2, the installed file as it was, none of edit's files left.
t_fault_edit_install_fails() {
  need_root; policy_dir; local before spec eio
  eio=$(python3 -c 'import os; print(os.strerror(5))')
  before=$(snap "$P")
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  CD_FAULT_OPENAT=.capdelegate.conf.edit:13 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.edit: cannot create the copy: Permission denied"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran without a copy"
  same_file "$P" "$before"; no_leftovers
  for spec in "CD_FAULT_OPENAT=.capdelegate.conf.new:28|cannot create: No space left on device" \
              "CD_FAULT_FCHOWN=1|cannot give it to root: Operation not permitted" \
              "CD_FAULT_FCHMOD=30|cannot set mode 0644: Read-only file system" \
              "CD_FAULT_FSYNC=/.capdelegate.conf.new:5|cannot write to disk: $eio" \
              "CD_FAULT_CLOSE=/.capdelegate.conf.new:5|cannot write: $eio"; do
    export "${spec%%|*}"; fault_edit; unset "${spec%%=*}"
    [ -e "$FIRED" ] || fail "no fault: ${spec%%|*}"
    want_rc 2; one_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.new: ${spec#*|}"
    no_text "$OUT" "installed"
    same_file "$P" "$before"; no_leftovers
  done
  # the directory cannot be synced after the rename: installed (the rename happened), said
  CD_FAULT_FSYNC=/etc:5 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 0; want_line "$OUT" "$P: installed, 2 rules, 0 warnings in the policy"
  want_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.: installed, but the directory could not be written to disk: $eio"
  [ "$(cat "$P")" = "$(printf 'alice cap_net_raw\nbob cap_kill')" ] || fail "content: $(cat "$P")"
  no_leftovers
  # the editor leaves a directory at the copy's name: not installed, and removed
  before=$(snap "$P")
  ED=$(editor dir <<'SH'
rm -f "$f"; mkdir "$f"
SH
)
  cd_edit; want_rc 2; want_text "$ERR" ".capdelegate.conf.edit: not a regular file (not a file edit installs): $P left untouched"
  same_file "$P" "$before"; no_leftovers
}

# capdelegate(8), edit: "Nothing is lost". The policy's filesystem full (a 1 MiB tmpfs): the
# copy of a 600 KiB policy cannot be written, or, for a 400 KiB one, the new file cannot (the
# old one and the copy hold the space). Said with the cause, the installed file as it was, none
# of edit's files left. An installed "policy" that is no regular file is not copied at all; a
# policy that cannot be examined after the editor ran is not installed over.
t_edit_disk_full() {
  need_root; local before
  mkdir -p "$CASE_DIR/etc"; mount -t tmpfs -o size=1m,mode=0755 none "$CASE_DIR/etc"
  policy_dir
  { printf 'alice cap_net_raw\n'; head -c 600000 /dev/zero | tr '\0' '#' | fold -w 99; echo; } >"$P"
  before=$(snap "$P")
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  cd_edit; want_rc 2
  one_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.edit: cannot write the copy: No space left on device"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran on a copy not written"
  same_file "$P" "$before"; no_leftovers
  { printf 'alice cap_net_raw\n'; head -c 400000 /dev/zero | tr '\0' '#' | fold -w 99; echo; } >"$P"
  before=$(snap "$P")
  cd_edit; want_rc 2
  one_line "$ERR" "capdelegate: edit: $CASE_DIR/etc/.capdelegate.conf.new: cannot write: No space left on device"
  [ -e "$CASE_DIR/put.args" ] || fail "the editor did not run"
  no_text "$OUT" "installed"; same_file "$P" "$before"; no_leftovers
  # the installed file examined again after the editor ran, and that fails (not "no such
  # file": never taken for a removal, nor installed over)
  printf 'alice cap_net_raw\n' >"$P"; before=$(snap "$P")
  CD_FAULT_STATAT=capdelegate.conf:5 CD_FAULT_STATAT_NTH=2 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: edit: $P: cannot stat: Input/output error"
  [ "$(wc -l <"$CASE_DIR/put.args")" -eq 2 ] || fail "the editor did not run"
  no_text "$OUT" "installed"; same_file "$P" "$before"; no_leftovers
  # a FIFO where the policy file is: not copied (never a hang), nothing made
  rm "$P"; mkfifo -m 0644 "$P"
  RC=0; EDITOR="$ED" timeout 10 "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2; one_line "$ERR" "capdelegate: edit: $P: not a regular file"
  [ -p "$P" ] || fail "the FIFO replaced"
  [ "$(wc -l <"$CASE_DIR/put.args")" -eq 2 ] || fail "the editor ran on a FIFO's copy"
  no_leftovers
}

# capdelegate(8), edit: exit 2, nothing edited, for a bad option or a second NAME (the usage
# said), for memory that runs out while the editor is looked for in $PATH, and 2 too, the file
# left untouched, when the policy cannot be read to judge the edit (a drop-in's read fails: a
# system error, not the text's fault).
t_edit_usage_and_system_errors() {
  need_root; policy_dir; local before
  before=$(snap "$P")
  ED=$(editor put <<'SH'
printf 'bob cap_kill\n' >>"$f"
SH
)
  cd_edit --bogus; want_rc 2; want_text "$ERR" "usage: capdelegate edit"
  cd_edit a b; want_rc 2; want_text "$ERR" "usage: capdelegate edit"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran"
  # a bare editor name is looked for in $PATH: the path built for it cannot be
  mkdir -p "$CASE_DIR/bin"; cp "$ED" "$CASE_DIR/bin/put-editor"
  PATH="$CASE_DIR/bin:$PATH" CD_FAULT_ASPRINTF='%s/%s' EDITOR=put-editor VISUAL="" SUDO_EDITOR="" \
    cd_fault edit --config "$P" --confdir "$D" </dev/null
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: edit: out of memory: nothing edited"
  [ ! -e "$CASE_DIR/put.args" ] || fail "the editor ran"
  same_file "$P" "$before"; no_leftovers
  # the policy cannot be read for the judgement: a drop-in cannot be opened
  printf 'carol cap_kill\n' >"$D/10-x.conf"; chmod 0644 "$D/10-x.conf"
  CD_FAULT_OPENAT=10-x.conf:5 fault_edit
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; want_text "$ERR" "$D/10-x.conf"
  want_line "$ERR" "capdelegate: edit: $P left untouched: the policy could not be read (said above)"
  [ "$(wc -l <"$CASE_DIR/put.args")" -eq 1 ] || fail "the editor did not run"
  no_text "$OUT" "installed"; same_file "$P" "$before"; no_leftovers
}

# capdelegate(8), edit: the edit is the same whoever starts it. One started with SIGCHLD
# ignored (inherited through exec, as some daemons and job runners leave it) still gets its
# editor's status, judges the edit and installs it; the editor runs with SIGCHLD as usual. An
# edit that lost the status would be left untouched with "the editor could not be run".
t_edit_sigchld_ignored() {
  need_root; policy_dir
  ED=$(editor put <<SH
awk '/^SigIgn:/ { print \$2 }' /proc/self/status >"$CASE_DIR/ed.sigign"
printf 'bob cap_kill\\n' >>"\$f"
SH
)
  nss_env; RC=0
  env "${NSSENV[@]}" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])' \
    "$BIN" edit --config "$P" --confdir "$D" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0; no_text "$ERR" "left untouched"; want_text "$OUT" "installed"
  [ "$(wc -l <"$CASE_DIR/put.args")" -eq 1 ] || fail "the editor did not run once"
  grep -qx 'bob cap_kill' "$P" || fail "the edit was not installed"
  # SigIgn's bit for SIGCHLD (17) is 1 << 16: the editor must not inherit the ignored SIGCHLD
  [ -s "$CASE_DIR/ed.sigign" ] || fail "the editor's SigIgn not read"
  (( (16#$(cat "$CASE_DIR/ed.sigign") & (1 << 16)) == 0 )) || fail "the editor ran with SIGCHLD ignored: SigIgn $(cat "$CASE_DIR/ed.sigign")"
  no_leftovers
}

# ---- the Ansible role (contrib/ansible): check --staged as its validate: ----------------------

# run_role VARS.yml: the role of contrib/ansible run by this host's ansible-playbook on this host
# (connection local) with those variables over the tests' own: no packages, no PAM profile, no
# marks, no audit; only the policy files the variables name change. The capdelegate it runs is
# this build's. Policies name root, daemon and bin: the role runs under the host's NSS. Output
# in $OUT and $ERR, status in $RC.
run_role() {
  command -v ansible-playbook >/dev/null || skip "ansible-playbook not installed (./lab deps installs ansible-core)"
  local a="$CASE_DIR/ansible"
  mkdir -p "$a"
  printf -- '- hosts: localhost\n  connection: local\n  gather_facts: false\n  roles: [capdelegate]\n' >"$a/site.yml"
  printf 'capdelegate_pam_enable: false\n' >"$a/base.yml"
  RC=0
  PATH="$(dirname "$BIN"):$PATH" ANSIBLE_ROLES_PATH="$ROOT/contrib/ansible/roles" ANSIBLE_HOME="$a/home" \
    ANSIBLE_LOCAL_TEMP="$a/tmp" ANSIBLE_REMOTE_TEMP="$a/rtmp" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
    ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_LOCALHOST_WARNING=0 \
    timeout 300 ansible-playbook -i localhost, "$a/site.yml" -e "@$a/base.yml" -e "@$1" >"$OUT" 2>"$ERR" || RC=$?
}

# role_vars CONFIG CONFDIR MAIN-TEXT BIN-TEXT: $CASE_DIR/vars.yml, the role's paths and the
# texts of the main file and of its one drop-in, 10-bin.
role_vars() {
  python3 - "$CASE_DIR/vars.yml" "$@" <<'PY'
import json, sys
out, config, confdir, main, dropin = sys.argv[1:]
json.dump({"capdelegate_config": config, "capdelegate_confdir": confdir,
           "capdelegate_policy": main + "\n", "capdelegate_dropins": {"10-bin": dropin + "\n"}},
          open(out, "w"))
PY
}

# Each validate: of the role that runs capdelegate check names the role's own paths (--config,
# --confdir, and --as the file's destination): a check of the default paths judges another
# policy, and refuses a destination that is not one of its files. Each passes --no-worse, so
# that one play fixes a policy broken in several of the role's files.
t_ansible_role_validates_its_paths() {
  python3 - "$ROOT/contrib/ansible/roles/capdelegate/tasks/main.yml" <<'PY' >&2 || fail "a validate: without the role's paths"
import sys, yaml
n = 0
for t in yaml.safe_load(open(sys.argv[1])):
    v = (t.get("ansible.builtin.copy") or {}).get("validate", "")
    if "capdelegate check" not in v:
        continue
    n += 1
    for want in ("--config {{ capdelegate_config", "--confdir {{ capdelegate_confdir", "--as {{", "--no-worse"):
        assert want in v, "%s: %r lacks %r" % (t["name"], v, want)
assert n == 2, "%d validate: lines run capdelegate check, want 2" % n
PY
}

# The role with its policy at other paths than Debian's (capdelegate_config, capdelegate_confdir,
# a blank in a name): the play installs the main file and a drop-in, each validated as the
# policy those paths make.
t_ansible_role_other_paths() {
  need_root; local P="$CASE_DIR/etc/site policy.conf" D="$CASE_DIR/etc/site.d"
  mkdir -p "$D"; chmod 0755 "$CASE_DIR/etc" "$D"
  printf 'root cap_net_raw\n' >"$P"; chmod 0644 "$P"
  role_vars "$P" "$D" "$(printf 'root cap_net_raw\ndaemon cap_net_raw')" "bin cap_kill"
  run_role "$CASE_DIR/vars.yml"
  want_rc 0
  [ "$(cat "$P")" = "$(printf 'root cap_net_raw\ndaemon cap_net_raw')" ] || fail "main file: $(cat "$P")"
  [ "$(cat "$D/10-bin.conf")" = "bin cap_kill" ] || fail "drop-in: $(cat "$D/10-bin.conf" 2>&1)"
  [ "$(stat -c '%a %U' "$P" "$D/10-bin.conf" | sort -u)" = "644 root" ] || fail "modes: $(stat -c '%n %a %U' "$P" "$D/10-bin.conf")"
}

# A host whose policy is rejected in two of the files the role manages (the main file and a
# drop-in): one play installs both fixes (check --staged --no-worse) and ends with the policy
# accepted. A drop-in the role does not manage, broken: the play installs the role's files
# (nothing worse) and then fails, naming the file that keeps the policy rejected. A managed file
# with errors of its own is never installed.
t_ansible_role_repairs_broken_policy() {
  need_root; policy_dir 'root cap_bogus
'
  printf 'bin cap_nada\n' >"$D/10-bin.conf"; chmod 0644 "$D/10-bin.conf"
  role_vars "$P" "$D" "root cap_net_raw" "bin cap_kill"
  run_role "$CASE_DIR/vars.yml"
  want_rc 0
  [ "$(cat "$P")" = "root cap_net_raw" ] || fail "main file: $(cat "$P")"
  [ "$(cat "$D/10-bin.conf")" = "bin cap_kill" ] || fail "drop-in: $(cat "$D/10-bin.conf")"
  cd_run check --config "$P" --confdir "$D"; want_rc 0
  # a broken drop-in the role does not manage: its files installed, then the play fails
  printf 'daemon cap_nope\n' >"$D/50-host.conf"; chmod 0644 "$D/50-host.conf"
  role_vars "$P" "$D" "root cap_net_raw" "bin cap_syslog"
  run_role "$CASE_DIR/vars.yml"
  want_rc 2
  [ "$(cat "$D/10-bin.conf")" = "bin cap_syslog" ] || fail "the role's drop-in not installed: $(cat "$D/10-bin.conf")"
  want_text "$OUT" "$D/50-host.conf: syntax error: the module grants nothing"
  # a managed file with errors of its own: not installed, even into a rejected policy
  role_vars "$P" "$D" "root cap_net_raw" "bin cap_nothing"
  run_role "$CASE_DIR/vars.yml"
  want_rc 2; want_text "$OUT" "failed to validate"
  [ "$(cat "$D/10-bin.conf")" = "bin cap_syslog" ] || fail "a file with errors installed: $(cat "$D/10-bin.conf")"
}
