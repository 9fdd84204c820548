# import-cases.sh: tests of `capdelegate import-pam-cap` (sourced by run.sh). pam_cap's rule, as
# its pam_cap.c reads capability.conf: the first line with a matching word decides. The users are
# make_nss's: alice, bob, carol, dave, root; netops = {bob, dave}.

# pam_cap's file from stdin into the case directory (it need not be root-owned); prints its path.
pam_cap_conf() { local p="$CASE_DIR/capability.conf"; cat >"$p"; echo "$p"; }

# The translation (stdout of the last run) must be a policy check accepts.
translation_checks() {
  [ "$(id -u)" -eq 0 ] || return 0
  local p; p=$(policy translation <"$OUT")
  "$BIN" check --config "$p" >/dev/null 2>"$CASE_DIR/check.err" || [ $? -eq 1 ] \
    || { cat "$CASE_DIR/check.err" >&2; fail "check rejects the translation"; }
}

t_import_debian_example() {
  # libpam-cap's own sample (Debian installs it as the default file): one "none *" line.
  local f=/etc/security/capability.conf
  [ -f /usr/share/pam-configs/capability ] && [ -f "$f" ] || skip "libpam-cap's sample $f not installed"
  cd_nss import-pam-cap; want_rc 0
  want_line "$OUT" "*               none"
  want_line "$OUT" "#cap_setfcap		morgan"	# comments kept as they are
  [ "$(grep -c '^#' "$OUT")" -eq $(( $(grep -c '^#' "$f") + 1 )) ] || fail "a comment was lost"
  want_text "$ERR" "summary: $f: 0 differences in the file, 0 known users get another set"
  translation_checks
}

# The constructs capability.conf(5)'s EXAMPLES show, with this suite's users: names, numbers,
# several users on a line, a user matched twice (only the first applies), none, a "*" line last.
t_import_manpage_shapes() {
  local p; p=$(pam_cap_conf <<'EOF'
# Simple
cap_sys_ptrace		carol
cap_net_raw			alice
# Several capabilities, by name and by number
cap_net_admin,cap_net_raw	bob
12,13			dave
# alice matched above: pam_cap never reads this line for her
5,12,13			alice
none				root
cap_setpcap			*
EOF
)
  cd_nss import-pam-cap "$p"; want_rc 0
  want_line "$OUT" "carol           cap_sys_ptrace"
  want_line "$OUT" "dave            cap_net_admin,cap_net_raw"
  want_line "$OUT" "root            none"
  want_line "$OUT" "*               cap_setpcap"
  want_line "$OUT" "# (matched earlier) alice cap_kill,cap_net_admin,cap_net_raw"
  no_line "$OUT" "alice           cap_kill,cap_net_admin,cap_net_raw"
  want_text "$ERR" "$p:8: 'alice' was matched on an earlier line: pam_cap never applies this line to it; left as a comment"
  want_text "$ERR" "0 differences in the file, 0 known users get another set"
  translation_checks
}

# First match against union by precedence: every user whose set changes is named, with both sides.
# A word after a "*" line never applies (commented out, not a difference). bob's own line and
# @dave come after @netops: both reduced to what line 1 gives (nothing in common), pairs listed.
t_import_first_match_vs_union() {
  local p; p=$(printf 'cap_net_raw @netops\ncap_net_admin bob\ncap_kill @dave\ncap_syslog *\ncap_sys_time alice\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "@netops         cap_net_raw"
  want_line "$OUT" "bob             none"; want_line "$OUT" "@dave           none"
  want_text "$ERR" "difference: $p:2: 'bob' and $p:1: '@netops' both match user bob in group netops"
  want_text "$ERR" "difference: $p:3: '@dave' and $p:1: '@netops' both match a member of groups netops and dave"
  want_line "$ERR" "capdelegate: difference: user bob: pam_cap gives cap_net_raw ($p:1); capdelegate gives none ($p:2: user lines)"
  no_text "$ERR" "user dave:"	# @netops cap_net_raw + @dave none: what pam_cap gives him
  want_line "$OUT" "# (matched earlier) alice cap_sys_time"
  want_text "$ERR" "$p:5: 'alice' comes after a '*' line: pam_cap never applies this line to it; left as a comment"
  # The translation's "@dave none" gives less than its "*": dave's group lists no members here
  # (nss_wrapper's file is no /etc/group), so nobody can be shown outside it, and login gives
  # alice, carol and root nothing (pam_capdelegate(8), GROUPS), where pam_cap gives cap_syslog.
  want_text "$ERR" "note: user alice: group dave (the\\x20translation:3) gives less than \"*\", and its entry lists no members"
  want_line "$ERR" "capdelegate: difference: user alice: pam_cap gives cap_syslog ($p:4); capdelegate gives none (no line names the user)"
  want_text "$ERR" "2 differences in the file, 4 known users get another set"
  translation_checks
}

# all, ^cap (ambient) and !cap (bounding) have no equivalent: listed, never guessed. all stops
# pam_cap's search with login's set: translated as none, so carol never reaches the "*" line.
t_import_all_ambient_bounding() {
  local p; p=$(printf 'all carol\n^cap_net_raw alice\n!cap_sys_admin,cap_syslog bob\nnone dave\ncap_kill *\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "# pam_cap: all carol"; want_line "$OUT" "carol           none"
  want_text "$ERR" "$p:1: 'all' leaves the inheritable set as login holds it: no equivalent; translated as none"
  want_line "$OUT" "alice           cap_net_raw"
  want_text "$ERR" "$p:2: ^ (ambient) cap_net_raw: no equivalent"
  want_line "$OUT" "bob             cap_syslog"
  want_text "$ERR" "$p:3: ! (bounding set drop) cap_sys_admin: no equivalent"
  want_line "$OUT" "dave            none"
  no_text "$ERR" "user carol:"	# login's set, empty here, from both
  want_line "$ERR" "capdelegate: difference: user alice: pam_cap gives cap_net_raw, ambient cap_net_raw ($p:2); capdelegate gives cap_net_raw ($p:2: user lines)"
  want_text "$ERR" "user bob: pam_cap gives cap_syslog, drops from the bounding set cap_sys_admin ($p:3)"
  no_text "$ERR" "user dave:"
  want_text "$ERR" "3 differences in the file, 2 known users get another set"
  translation_checks
}

# pam_cap's fgets reads 4095 bytes at a time: the rest of a long line is a line of its own whose
# first word is taken as capabilities (the over-grant). The translation reads it as pam_cap does,
# a later piece granting no more than the line's first: bob gets cap_net_raw from neither.
t_import_long_line() {
  local p
  p=$(python3 -c 'import sys; l="cap_net_raw alice"; sys.stdout.write(l + " " * (4095 - len(l)) + "cap_sys_admin bob\n")' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_text "$ERR" "$p:1: line of 4113 bytes: pam_cap reads it in pieces of 4095 bytes"
  want_line "$OUT" "bob             none"
  want_line "$ERR" "capdelegate: difference: user bob: pam_cap gives cap_sys_admin ($p:1); capdelegate gives none ($p:1: user lines)"
  no_text "$ERR" "user alice:"
  translation_checks
}

# A later piece of a long line that starts with blanks: its first word is not at the piece's
# start (the old code freed a pointer into the piece and aborted; import-diff.py seed 1 found it).
t_import_long_line_blank_piece() {
  local p
  p=$(python3 -c 'import sys; l="cap_syslog alice"; sys.stdout.write(l + " " * (4095 - len(l)) + "   cap_kill bob\n")' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "alice           cap_syslog"; want_line "$OUT" "bob             none"
  want_line "$ERR" "capdelegate: difference: user bob: pam_cap gives cap_kill ($p:1); capdelegate gives none ($p:1: user lines)"
  translation_checks
}

# pam_cap's words: no comment after the first column, any word's text after its first byte
# names a group in pam_cap before the fix of CVE-2025-1390 (xnetops matches netops: since that
# depends on pam_cap's version, nothing is translated when netops exists), '\r' is no blank, an IAB text libcap refuses still
# stops the search, a capability in the user column is a user. netops exists: every later line
# can reach one of its members, whom pam_cap stops at line 1, so each gives no more than line 1.
t_import_pam_cap_words() {
  local p; p=$(printf 'cap_syslog xnetops # for the ops\ncap_net_raw carol\r\ncap_bogus root\ncap_net_raw, cap_kill alice\ncap_net_admin *\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "$p:1: pam_cap reads no comment here: '#' 'for' 'the' 'ops'"
  want_text "$ERR" "$p:1: 'xnetops' also matches the members of group netops under some versions of pam_cap"
  want_text "$ERR" "$p:2: 'carol\\x0d' is no name capdelegate.conf(5) can write"
  [ ! -s "$OUT" ] || fail "a translation was printed (netops's members depend on pam_cap's version)"
  # the same words where no tail names a group: translated, pam_cap's reading kept
  p=$(printf 'cap_syslog xnetopsx # for the ops\ncap_net_raw carol\r\ncap_bogus root\ncap_net_raw, cap_kill alice\ncap_net_admin *\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_text "$ERR" "$p:1: pam_cap reads no comment here: '#' 'for' 'the' 'ops'"
  want_line "$OUT" "# for the ops"
  want_text "$ERR" "$p:2: 'carol\\x0d' is no name capdelegate.conf(5) can write"
  no_line "$OUT" "bob             cap_kill,cap_sys_admin"
  # pam_cap stops at carol\r (no policy can name her) and at root (cap_bogus: it changes
  # nothing for him): the '*' line may give neither more, so it grants nothing
  want_line "$OUT" "root            none"
  want_text "$ERR" "$p:3: libcap cannot parse the capability text: pam_cap changes nothing for the users it names"
  want_line "$OUT" "*               none"
  want_text "$ERR" "$p:5: '*' and $p:2: 'carol\\x0d' both match user 'carol\\x0d': pam_cap applies line 2 only (cap_net_raw), capdelegate the '*' line (cap_net_admin)"
  want_text "$ERR" "capdelegate: note: $p: 1 of 5 known users get nothing from either: pam_cap leaves"
  translation_checks
  # capability 0 is one too: cap_chown in the user column is noted, and translated as the
  # user pam_cap takes it for
  p=$(printf 'cap_net_raw, cap_chown alice\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0
  want_line "$ERR" "capdelegate: note: $p:1: 'cap_chown' is a capability in the user column (pam_cap splits at blanks): translated as the user pam_cap takes it for"
  want_line "$OUT" "cap_chown       cap_net_raw"
  # a line with no user column: pam_cap never matches it; kept as a comment, said
  p=$(printf 'cap_net_raw\ncap_kill alice\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0
  want_line "$ERR" "capdelegate: note: $p:1: no user column: pam_cap never matches this line; left as a comment"
  want_line "$OUT" "# pam_cap: cap_net_raw"
  want_line "$OUT" "alice           cap_kill"
}

# A NUL byte ends what pam_cap's strtok sees of a line; an NSS outage stops the comparison (exit 2),
# never read as "not in the group".
t_import_nul_and_outage() {
  local p; p=$(printf 'cap_net_raw alice\000bob\ncap_syslog @netops\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_text "$ERR" "$p:1: NUL byte: pam_cap reads the line only up to it"
  want_line "$OUT" "alice           cap_net_raw"; no_match "$OUT" "^bob"
  no_text "$ERR" "user bob:"	# bob: @netops on line 2 under both
  CD_FAULT_GROUPS=netops:2000 cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "cannot tell whether the user is in group netops: a group backend fails (the probe lookup of capdelegate:probe: Resource temporarily unavailable): no comparison"
  no_text "$ERR" "summary:"
  # a user NSS lists but cannot look up: no comparison either, never a grant judged without him
  CD_FAULT_USERS=alice cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "capdelegate: error: user alice: cannot look up the user: Resource temporarily unavailable: no comparison"
  no_text "$ERR" "summary:"
}

# capability.conf(5)'s promise is the first matching line; capdelegate adds a user's group lines
# up. No user is in netops and carol's group today, but anyone may join both tomorrow: the pair is
# a difference whatever NSS lists, and the translation never grants such a user more than pam_cap.
t_import_two_groups_any_membership() {
  local p; p=$(printf 'cap_net_raw @netops\ncap_sys_admin @carol\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$ERR" "capdelegate: difference: $p:2: '@carol' and $p:1: '@netops' both match a member of groups netops and carol: pam_cap applies line 1 only (cap_net_raw), capdelegate adds this line to it (cap_sys_admin)"
  want_line "$OUT" "@netops         cap_net_raw"
  want_line "$OUT" "@carol          none"	# cap_sys_admin is not in what line 1 gives
  no_text "$ERR" "0 differences"
  translation_checks
}

# A group line, then a user line: the user's own line decides in capdelegate, pam_cap's first match
# is the group line for a member. alice is in no group but her own today.
t_import_group_then_user() {
  local p; p=$(printf 'cap_net_raw,cap_kill @netops\ncap_net_raw alice\ncap_sys_admin,cap_kill bob\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$ERR" "capdelegate: difference: $p:2: 'alice' and $p:1: '@netops' both match user alice in group netops: pam_cap applies line 1 only (cap_kill,cap_net_raw), capdelegate the user's own line (cap_net_raw)"
  want_line "$OUT" "alice           cap_net_raw"	# less than pam_cap for a member: never more
  want_line "$ERR" "capdelegate: difference: $p:3: 'bob' and $p:1: '@netops' both match user bob in group netops: pam_cap applies line 1 only (cap_kill,cap_net_raw), capdelegate the user's own line (cap_kill,cap_sys_admin)"
  want_line "$OUT" "bob             cap_kill"
  want_text "$ERR" "$p:3: 'bob' translated as cap_kill instead of cap_kill,cap_sys_admin"
  no_line "$OUT" "bob             cap_kill,cap_sys_admin"
  translation_checks
}

# A later line pam_cap's first match agrees with (the same set for a user or '*' line, no more
# for a group line) is no pair: nothing reported, the file translates as it is.
t_import_exact_pairs() {
  local p; p=$(printf 'cap_net_raw,cap_kill @netops\ncap_net_raw,cap_kill bob\ncap_net_raw,cap_kill @dave\ncap_net_raw,cap_kill *\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0
  no_text "$ERR" "both match"; no_text "$ERR" "translated as"
  want_line "$OUT" "bob             cap_kill,cap_net_raw"
  want_line "$OUT" "@dave           cap_kill,cap_net_raw"
  want_text "$ERR" "0 differences in the file, 0 known users get another set"
  translation_checks
}

# A group line naming a user's primary group (the first name of the user's group list) matches
# that user in pam_cap as a supplementary group does: carol, in group carol, stops at line 1.
t_import_primary_group_line() {
  local p; p=$(printf 'cap_net_raw @carol\ncap_syslog carol\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_text "$ERR" "capdelegate: difference: user carol: pam_cap gives cap_net_raw ($p:1); capdelegate gives none ($p:2: user lines)"
  want_line "$OUT" "@carol          cap_net_raw"
  want_line "$OUT" "carol           none"	# never more than pam_cap's first match gives her
  translation_checks
}

# pam_cap before the fix of CVE-2025-1390 matches any word's text after its first byte against
# the user's groups ('dnetops' is netops to it, bob a member); fixed ones do not: nothing translated.
t_import_bare_word_group_pair() {
  local p; p=$(printf 'cap_net_raw dnetops\ncap_sys_admin bob\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "$p:1: 'dnetops' also matches the members of group netops under some versions of pam_cap"
  want_text "$ERR" "what pam_cap gives the members of these groups depends on its version: nothing translated"
  [ ! -s "$OUT" ] || fail "a translation was printed"
}

# 'all' stops pam_cap's search and leaves login's set (empty at a login): translated as none, so a
# later line never adds up for whom it names; a user line after 'all @netops' is a pair.
t_import_all_then_later_line() {
  local p; p=$(printf 'all @netops\ncap_net_admin alice\nall carol\ncap_kill @carol\ncap_syslog *\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "@netops         none"; want_line "$OUT" "carol           none"
  want_line "$ERR" "capdelegate: difference: $p:2: 'alice' and $p:1: '@netops' both match user alice in group netops: pam_cap applies line 1 only (all: login's set), capdelegate the user's own line (cap_net_admin)"
  want_line "$OUT" "alice           none"
  want_line "$ERR" "capdelegate: difference: $p:4: '@carol' and $p:1: '@netops' both match a member of groups netops and carol: pam_cap applies line 1 only (all: login's set), capdelegate adds this line to it (cap_kill)"
  want_line "$OUT" "@carol          none"
  want_line "$OUT" "*               cap_syslog"	# a member of netops has a group line: never reached
  no_text "$ERR" "user carol:"; no_text "$ERR" "user bob:"
  translation_checks
}

# capdelegate(8)'s pair example, as it is printed there (continuation lines joined): groups no
# user of this suite is in, so only the file-level analysis can find it.
t_import_manpage_pair() {
  local want
  want=$(sed -n "/^capdelegate: difference: capability.conf:2: '@admins'/,/^\.EE/p" "$MAN" \
    | sed '$d' | sed 's/^  */ /' | tr -d '\n' | sed 's/\\-/-/g')
  [ -n "$want" ] || fail "no pair example in $MAN"
  printf 'cap_net_raw @staff\ncap_sys_admin @admins\n' >"$CASE_DIR/capability.conf"
  cd_nss import-pam-cap capability.conf; want_rc 1
  want_line "$ERR" "$want"
  want_line "$OUT" "@admins         none"
}

# Whether 'xnetops' also means group netops decides the translation: when that lookup fails,
# nothing is translated (exit 2), never read as "no such group".
t_import_accident_lookup_outage() {
  local p; p=$(printf 'cap_syslog xnetops\ncap_kill *\n' | pam_cap_conf)
  CD_FAULT_GROUPS=netops:2000 cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "cannot look up group netops: Resource temporarily unavailable: nothing translated"
  [ ! -s "$OUT" ] || fail "a translation was printed"
  # the lookup answered: netops's members depend on pam_cap's version, still nothing translated
  cd_nss import-pam-cap "$p"; want_rc 2; [ ! -s "$OUT" ] || fail "a translation was printed"
}

# A word whose accidental group ('lice', the tail of 'alice') cannot be looked up, in a file
# that also has a warning (the NUL byte): the error wins, exit 2, nothing translated.
t_import_accident_outage_beside_warning() {
  local p; p=$(printf 'cap_net_raw alice\000bob\ncap_syslog @netops\n' | pam_cap_conf)
  CD_FAULT_GROUPS=lice:2999 cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "cannot look up group lice: Resource temporarily unavailable: nothing translated"
  [ ! -s "$OUT" ] || fail "a translation was printed"
}

# ./lab fuzz (import-diff.py seed 1022426277) against Debian 12's libpam-cap 1:2.66-4+deb12u3:
# that pam_cap does not match 'dob' to the members of group ob (the fix of CVE-2025-1390); older
# ones do. The translation assumed the old reading, left '@ob cap_chown,cap_kill' as a comment
# and cut '*' down to cap_sys_time: alice (in ob) got cap_sys_time, which no pam_cap gives her.
# Whether such a word matches depends on pam_cap's version: nothing translated (exit 2).
t_import_bare_word_group_depends_on_version() {
  local p; p=$(printf 'cap_sys_time dob
cap_chown,cap_kill @ob
cap_syslog,cap_sys_time,cap_kill *
' | pam_cap_conf)
  local nss=$NSSDIR; cp -r "$NSSDIR" "$CASE_DIR/nss"; NSSDIR=$CASE_DIR/nss   # a group of its own
  printf 'ob:x:2004:alice\n' >>"$NSSDIR/group"
  cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "$p:1: 'dob' also matches the members of group ob under some versions of pam_cap"
  want_text "$ERR" "what pam_cap gives the members of these groups depends on its version: nothing translated"
  [ ! -s "$OUT" ] || fail "a translation was printed"
  # a group no word's tail names: translated as before
  p=$(printf 'cap_sys_time dave\ncap_chown @ob\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0; want_line "$OUT" "@ob             cap_chown"
  NSSDIR=$nss
}

t_import_errors() {
  cd_nss import-pam-cap "$CASE_DIR/missing.conf"; want_rc 2
  want_text "$ERR" "$CASE_DIR/missing.conf: No such file or directory"
  cd_nss import-pam-cap a b; want_rc 2; want_text "$ERR" "usage: capdelegate import-pam-cap"
  cd_nss import-pam-cap --frob; want_rc 2; want_text "$ERR" "bad option '--frob'"
  cd_nss import-pam-cap --help; want_rc 0; want_text "$OUT" "usage: capdelegate import-pam-cap"
}

# The translation through the real pam_capdelegate.so against Debian's real pam_cap.so on random
# capability.conf files and memberships (import-diff.py; ./lab fuzz runs random seeds): never
# more than pam_cap for any user, exactly the same when import exits 0.
IMPORT_DIFF_SEEDS=(1 2 3)
import_diff() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (pam_cap raises pI; the policy must be root-owned)"
  [ -f /lib/x86_64-linux-gnu/security/pam_cap.so ] || skip "pam_cap.so missing (libpam-cap)"
  "$HERE/import-diff.py" --bin "$BIN" --work "$CASE_DIR" --seed "$1" --cases 6 >&2
}
for s in "${IMPORT_DIFF_SEEDS[@]}"; do eval "t_import_diff_$s() { import_diff $s; }"; done

# capdelegate(8): "A user named like @group is such an accidental meaning too": pam_cap's word
# @netops also matches a user of that very name, whom no line of the translation names.
t_import_user_named_like_group() {
  local p; p=$(printf 'cap_net_raw @netops\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0; want_line "$OUT" "@netops         cap_net_raw"
  # that user's lookup failing is no answer: never read as "no such user"
  CD_FAULT_USERS=@netops cd_nss import-pam-cap "$p"; want_rc 2
  want_text "$ERR" "capdelegate: error: cannot look up user @netops: Resource temporarily unavailable: nothing translated"
  local nss=$NSSDIR; cp -r "$NSSDIR" "$CASE_DIR/nss"; NSSDIR=$CASE_DIR/nss
  printf '@netops:x:1010:1010::/nonexistent:/bin/sh\n' >>"$NSSDIR/passwd"
  cd_nss import-pam-cap "$p"; want_rc 1
  want_text "$ERR" "difference: $p:1: '@netops' also matches the user @netops (NSS knows it): the translation gives no line for it"
  want_line "$ERR" "capdelegate: difference: user @netops: pam_cap gives cap_net_raw ($p:1); capdelegate gives none (no line names the user)"
  want_text "$ERR" "1 differences in the file, 1 known users get another set"
  NSSDIR=$nss
}

# A word whose meant atom was matched on an earlier line is left as a comment, and its accidental
# atom is still judged: line 1's xnetops reaches group netops (in pam_cap before the fix of
# CVE-2025-1390), so line 2's @netops means nobody new as a group, but pam_cap still stops at it
# for the user named @netops, whom no earlier line matched.
t_import_seen_word_accident() {
  local p nss=$NSSDIR; p=$(printf 'cap_syslog xnetops\ncap_net_raw @netops\n' | pam_cap_conf)
  cp -r "$NSSDIR" "$CASE_DIR/nss"; NSSDIR=$CASE_DIR/nss
  printf '@netops:x:1010:1010::/nonexistent:/bin/sh\n' >>"$NSSDIR/passwd"
  cd_nss import-pam-cap "$p"; NSSDIR=$nss
  want_text "$ERR" "$p:2: '@netops' was matched on an earlier line: pam_cap never applies this line to it; left as a comment"
  want_text "$ERR" "difference: $p:2: '@netops' also matches the user @netops (NSS knows it): the translation gives no line for it"
}

IMPORT_CASES=(
  import_comments_only
  import_debian_example import_manpage_shapes import_first_match_vs_union
  import_all_ambient_bounding import_long_line import_pam_cap_words import_nul_and_outage import_errors
  import_two_groups_any_membership import_group_then_user import_exact_pairs import_primary_group_line import_bare_word_group_pair
  import_bare_word_group_depends_on_version
  import_all_then_later_line import_manpage_pair import_long_line_blank_piece
  import_accident_lookup_outage import_accident_outage_beside_warning import_user_named_like_group import_comment_words_and_failures
  import_seen_word_accident
  "${IMPORT_DIFF_SEEDS[@]/#/import_diff_}"
)

# A file with no rule translates to its comments; the note on pam_cap's columns is about
# rules, so it is not given.
t_import_comments_only() {
  local p; p=$(printf '# only a comment\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0
  want_line "$OUT" "# only a comment"; no_text "$ERR" "pam_cap's columns"
}

# capdelegate(8), import-pam-cap: what pam_cap reads as users where capdelegate sees a comment
# (words after '#', a later piece of a long line after one) is never granted by the translation
# and is named a difference: '*' there matches everyone under pam_cap; the users pam_cap gives
# something that no translated line names are listed "no line names the user". A file that
# cannot be read, a comment that cannot be kept: exit 2, nothing printed on standard output; a
# user listing broken off: exit 2, no summary.
t_import_comment_words_and_failures() {
  local p
  p=$(printf 'cap_kill alice # see * below\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "alice           cap_kill"; want_line "$OUT" "# see * below"
  want_line "$ERR" "capdelegate: difference: $p:1: '*' matches everyone under pam_cap: the translation gives no line for it"
  want_line "$ERR" "capdelegate: difference: user bob: pam_cap gives cap_kill ($p:1); capdelegate gives none (no line names the user)"
  want_text "$ERR" "summary: $p: 1 differences in the file, 4 known users get another set"
  translation_checks
  # the second piece of a long line, after a '#' in the first: a comment here, bob's line there
  p=$(python3 -c 'import sys; l="cap_net_raw alice #c"; sys.stdout.write(l + " " * (4095 - len(l)) + "cap_sys_admin bob\n")' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "# bob"; no_match "$OUT" "^bob"
  want_line "$ERR" "capdelegate: difference: $p:1: 'bob' also matches the user bob (NSS knows it): the translation gives no line for it"
  want_line "$ERR" "capdelegate: difference: user bob: pam_cap gives cap_sys_admin ($p:1); capdelegate gives none (no line names the user)"
  translation_checks
  mkdir "$CASE_DIR/dir"
  cd_nss import-pam-cap "$CASE_DIR/dir"; want_rc 2
  one_line "$ERR" "capdelegate: error: $CASE_DIR/dir: Is a directory: nothing translated"
  [ ! -s "$OUT" ] || fail "printed a translation"
  p=$(printf '# a comment\ncap_kill alice\n' | pam_cap_conf)
  CD_FAULT_ASPRINTF=$'%s%s\n' cd_fault import-pam-cap "$p"
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; one_line "$ERR" "capdelegate: error: out of memory: nothing translated"
  [ ! -s "$OUT" ] || fail "printed a translation"
  CD_FAULT_PWENT=2 CD_FAULT_ERRNO=5 cd_nss import-pam-cap "$p"; want_rc 2
  want_line "$ERR" "capdelegate: error: cannot list the users: Input/output error: no comparison"
  no_text "$ERR" "summary:"   # the comparison is lost; the translation does not depend on it
  # a backend that ends its list without touching errno (POSIX allows it) is no error
  CD_FAULT_PWENT_KEEPS_ERRNO=1 cd_nss import-pam-cap "$p"; want_rc 0
  want_text "$ERR" "summary: $p: 0 differences in the file"; no_text "$ERR" "cannot list the users"
  # a comment line pam_cap skips, with bytes a policy cannot hold bare (a control byte, an
  # escape sequence): kept as a comment line, escaped, never as a line of its own
  p=$(printf '#a\001b\n#\033[31m red\ncap_kill alice\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0
  want_line "$OUT" '# #a\\x01b'; want_line "$OUT" '# #\\x1b[31m red'
  translation_checks
  # an empty line is kept as one empty line, line for line
  p=$(printf 'cap_kill alice\n\ncap_net_raw bob\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 0
  [ "$(sed 1d "$OUT")" = "$(printf 'alice           cap_kill\n\nbob             cap_net_raw')" ] \
    || fail "not line for line: $(sed 1d "$OUT" | cat -A)"
}
