# names-cases.sh: issue 18's CLI cases about names, groups and NSS (sourced by run.sh).
# shellcheck shell=bash

# A user whose own line decides needs no group: explain says what login does during an outage
# of the groups the policy names (the grant of the user's line), and still grants nothing to
# a user whose grant depends on the groups.
t_explain_group_outage_user_line() {
  need_root; local p; p=$(printf 'alice cap_net_raw\n@netops cap_net_admin\n* cap_syslog\n' | policy)
  CD_FAULT_GROUPS=netops:2000 cd_nss explain alice --config "$p" "$CASE_DIR"; want_rc 0
  want_line "$OUT" "pI\tcap_net_raw\tuser"
  want_text "$ERR" "alice: cannot look up group netops: Resource temporarily unavailable: not needed, login does not look the groups up: the user's own line decides"
  no_text "$ERR" "login grants nothing"
  CD_FAULT_GROUPS=netops:2000 cd_nss explain bob --config "$p" "$CASE_DIR"; want_rc 2
  want_text "$ERR" "bob: cannot look up group netops: Resource temporarily unavailable: login grants nothing"
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

NAMES_CASES=(explain_group_outage_user_line dollar_inside_name_shown_escaped)
