# names-cases.sh: the CLI cases about names, groups and NSS (sourced by run.sh).
# shellcheck shell=bash

# A user whose own line decides needs no group: explain says what login does during an outage
# of the groups the policy names (the grant of the user's line), and still grants nothing to
# a user whose grant depends on the groups.
t_explain_group_outage_user_line() {
  need_root; local p; p=$(printf 'alice cap_net_raw\n@netops cap_net_admin\n* cap_syslog\n' | policy)
  CD_FAULT_GROUPS=netops:2000 cd_nss explain alice --config "$p" "$CASE_DIR"; want_rc 0
  want_line "$OUT" "pI\tcap_net_raw\tuser"
  want_text "$ERR" "alice: cannot tell whether the user is in group netops: a group backend fails (the probe lookup of capdelegate:probe: Resource temporarily unavailable): not needed, login does not look the groups up: the user's own line decides"
  no_text "$ERR" "login grants nothing"
  CD_FAULT_GROUPS=netops:2000 cd_nss explain bob --config "$p" "$CASE_DIR"; want_rc 2
  want_text "$ERR" "bob: cannot tell whether the user is in group netops: a group backend fails (the probe lookup of capdelegate:probe: Resource temporarily unavailable): login grants nothing"
  no_text "$OUT" "cap_syslog"
}

# A '$' inside a name is shown \044 in every output (it stands bare only last): check's and
# explain's rule records.
t_dollar_inside_name_shown_escaped() {
  need_root; local p; p=$(printf 'a\\044b cap_kill\nhost$ cap_kill\n@x\\044y cap_kill\n' | policy)
  cd_nss check --config "$p"
  want_line "$OUT" "rule\t$p:1\ta\\\\044b\tcap_kill"
  want_line "$OUT" "rule\t$p:2\thost\$\tcap_kill"
  want_line "$OUT" "rule\t$p:3\t@x\\\\044y\tcap_kill"
  want_text "$ERR" "user 'a\\044b' unknown to NSS"
  no_text "$OUT" 'a$b'; no_text "$ERR" 'a$b'
}

# \400 to \777 name no byte: the backslash is a plain one, shown \134 in every output (never
# wrapped to \000-\077), and the name reads back the same.
t_escape_above_377_plain_backslash() {
  need_root; local p
  p=$(printf 'CORP\\477 cap_kill\n@g\\400x cap_kill\n' | policy)
  cd_nss check --config "$p"; want_rc 1   # unknown to this NSS: warnings only
  want_line "$OUT" "rule\t$p:1\tCORP\\\\134477\tcap_kill"
  want_line "$OUT" "rule\t$p:2\t@g\\\\134400x\tcap_kill"
  no_text "$ERR" "octal escape"
  p=$(printf 'CORP\\134477 cap_kill\n@g\\134400x cap_kill\n' | policy again)
  cd_nss check --config "$p"; want_rc 1
  want_line "$OUT" "rule\t$p:1\tCORP\\\\134477\tcap_kill"
  want_line "$OUT" "rule\t$p:2\t@g\\\\134400x\tcap_kill"
}

# check warns (FILE:LINE, exit 1) about a name whose octal escape a winbind name
# could have meant literally, and says how to write that name; the literal form is clean.
t_check_winbind_escape_warned() {
  need_root; local p
  p=$(printf 'CORP\\100234 cap_net_raw\n' | policy)
  cd_nss check --config "$p"; want_rc 1
  want_line "$ERR" "capdelegate: warning: $p:1: user 'CORP@234' is read with \\\\100 as an octal escape; if the winbind name DOMAIN\\\\user was meant, write its backslash as \\\\134: 'CORP\\\\134100234'"
  want_line "$OUT" "rule\t$p:1\tCORP@234\tcap_net_raw"
  p=$(printf 'CORP\\134100234 cap_net_raw\n' | policy literal)
  cd_nss check --config "$p"; want_rc 1   # the user is unknown to this NSS: that warning alone
  no_text "$ERR" "octal escape"
  want_line "$OUT" "rule\t$p:1\tCORP\\\\134100234\tcap_net_raw"
  # a 9 after the escape is a digit too (CORP\0409: a user number), and an escape far into a
  # long name (byte 66) is shown where it is
  local a; a=$(printf 'a%.0s' {1..65})
  p=$(printf 'CORP\\0409 cap_net_raw\n%s\\101 cap_kill\n' "$a" | policy long)
  cd_nss check --config "$p"; want_rc 1
  want_text "$ERR" "$p:1: user 'CORP\\0409' is read with \\040 as an octal escape; if the winbind name DOMAIN\\user was meant, write its backslash as \\134: 'CORP\\1340409'"
  want_text "$ERR" "$p:2: user '${a}A' is read with \\101 as an octal escape; if the winbind name DOMAIN\\user was meant, write its backslash as \\134: '$a\\134101'"
}

NAMES_CASES=(explain_group_outage_user_line dollar_inside_name_shown_escaped escape_above_377_plain_backslash
             check_winbind_escape_warned)
