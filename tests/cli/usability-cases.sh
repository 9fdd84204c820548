# usability-cases.sh: what a newcomer and an administrator read, sourced by run.sh:
# every line names the file that is wrong, a message's word agrees with the exit status, counts
# read as English, each entry of the drop-in directory that is not read says why.

USABILITY_CASES=(
  check_blames_dropin check_missing_is_error check_counts_singular audit_counts_singular
  check_says_why_not_read check_hints_setcap_syntax version_and_usage operands_after_dashes
  usage_errors
)

# Files written an hour ago: check's note on a policy file modified just now names it too.
aged() { touch -d '1 hour ago' "$@"; }

# A syntax error only in a drop-in: the verdict and every message name the drop-in, none the
# main file. Errors in two files: each file its own count. An unsafe drop-in or directory: the
# verdict names it.
t_check_blames_dropin() {
  need_root; local p d="$CASE_DIR/capdelegate.d"
  p=$(printf 'alice cap_net_raw\n' | policy)
  mkdir -p "$d"; printf 'bob cap_chwn\n' >"$d/10-bob.conf"; chmod 0644 "$d/10-bob.conf"
  aged "$p" "$d/10-bob.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 2
  want_line "$OUT" "$d/10-bob.conf: syntax error: the module grants nothing"
  want_line "$ERR" "capdelegate: error: $d/10-bob.conf:1: unknown capability: 'cap_chwn'"
  want_line "$ERR" "capdelegate: error: $d/10-bob.conf: policy rejected (1 error): no capabilities granted"
  no_text "$OUT" "$p"; no_text "$ERR" "$p"
  printf 'alice cap_bogus\nbob cap_bogus\n' >"$p"; aged "$p"
  cd_nss check --config "$p" --confdir "$d"; want_rc 2
  want_line "$OUT" "$p: syntax error (and in 1 other file): the module grants nothing"
  want_line "$ERR" "capdelegate: error: $p: policy rejected (2 errors): no capabilities granted"
  want_line "$ERR" "capdelegate: error: $d/10-bob.conf: policy rejected (1 error): no capabilities granted"
  printf 'alice cap_net_raw\n' >"$p"; printf 'bob cap_chown\n' >"$d/10-bob.conf"
  chmod 0664 "$d/10-bob.conf"; aged "$p" "$d/10-bob.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 2
  want_line "$OUT" "$d/10-bob.conf: unsafe: the module grants nothing"
  no_text "$OUT" "$p"; no_text "$ERR" "$p"
  chmod 0644 "$d/10-bob.conf"; chmod 0777 "$d"
  cd_nss check --config "$p" --confdir "$d"; want_rc 2
  want_line "$OUT" "$d: unsafe: the module grants nothing"
  no_text "$OUT" "$p"; no_text "$ERR" "$p"
}

# capdelegate(8): exit 2 is an error (the module grants nothing), so a missing policy is one.
t_check_missing_is_error() {
  cd_run check --config "$CASE_DIR/none.conf"; want_rc 2
  want_line "$ERR" "capdelegate: error: $CASE_DIR/none.conf: policy file missing: no capabilities granted"
  no_text "$ERR" "warning"
  want_line "$OUT" "$CASE_DIR/none.conf: missing: the module grants nothing"
}

# One rule, one warning: no plural "s" on a count of 1.
t_check_counts_singular() {
  need_root; local p
  p=$(printf 'zed cap_net_raw\n' | policy)
  cd_nss check --config "$p"; want_rc 1
  want_line "$OUT" "$p: ok, 1 rule, 1 warning"
  printf 'zed cap_net_raw\nyves cap_net_raw\n' >"$p"
  cd_nss check --config "$p"; want_rc 1
  want_line "$OUT" "$p: ok, 2 rules, 2 warnings"
}

t_audit_counts_singular() {
  need_root; local p t="$CASE_DIR/tree"
  p=$(printf 'alice cap_net_raw\n' | policy)
  capfile "$t/ping_i" cap_net_raw=i
  cd_nss audit --config "$p" "$t"
  want_line "$OUT" "# policy\t$p\tok\t1 rule"
  want_line "$OUT" "# scanned\t1 directory\t1 regular file\t1 capability file\t0 mounts skipped\t0 vanished\t0 errors"
}

# Each entry of the drop-in directory that is not read, with its own reason.
t_check_says_why_not_read() {
  need_root; local p d="$CASE_DIR/capdelegate.d" e
  p=$(printf 'alice cap_net_raw\n' | policy)
  mkdir -p "$d/old.d"
  for e in 20-more 10-bob.conf~ .hidden.conf 10-bob.conf.dpkg-old; do printf 'x\n' >"$d/$e"; done
  mkfifo "$d/pipe"
  cd_nss check --config "$p" --confdir "$d"; want_rc 0
  want_line "$ERR" "capdelegate: note: $d/20-more: not read: no .conf suffix (drop-ins are NAME.conf)"
  want_line "$ERR" "capdelegate: note: $d/10-bob.conf~: not read: a backup file"
  want_line "$ERR" "capdelegate: note: $d/10-bob.conf.dpkg-old: not read: a backup file"
  want_line "$ERR" "capdelegate: note: $d/.hidden.conf: not read: a dotfile"
  want_line "$ERR" "capdelegate: note: $d/old.d: not read: a directory"
  want_line "$ERR" "capdelegate: note: $d/pipe: not read: not a regular file"
  [ "$(count_lines "$ERR" 'not read')" -eq 6 ] || fail "want 6 entries not read"
}

# setcap's text (cap_net_raw=i, +ep, CAP_NET_RAW=eip) in a capability list: the error at
# FILE:LINE says what is meant, not only "unknown capability".
t_check_hints_setcap_syntax() {
  need_root; local p
  p=$(printf 'alice cap_net_raw=i\nbob cap_net_raw+ep\ncarol CAP_NET_RAW=eip\ndave cap_kill, cap_net_raw-i\n' | policy)
  cd_nss check --config "$p" --confdir ""; want_rc 2
  local hint="capabilities are listed bare, not as setcap writes them (=, +, - and flags): the inheritable set is implied"
  want_line "$ERR" "capdelegate: error: $p:1: $hint: 'cap_net_raw=i'"
  want_line "$ERR" "capdelegate: error: $p:2: $hint: 'cap_net_raw+ep'"
  want_line "$ERR" "capdelegate: error: $p:3: $hint: 'CAP_NET_RAW=eip'"
  want_line "$ERR" "capdelegate: error: $p:4: $hint: 'cap_net_raw-i'"
}

# --version and -V print the package version; the short usage names every common option.
t_version_and_usage() {
  local v o
  v=$(sed -n 's/^PACKAGE_VERSION=.\([^'"'"']*\).*/\1/p' "$(dirname "$BIN")/config.log" | head -1)
  [ -n "$v" ] || fail "no PACKAGE_VERSION in config.log"
  for o in --version -V; do
    cd_run "$o"; want_rc 0; want_line "$OUT" "capdelegate $v"
  done
  cd_run --help; want_rc 0
  for o in --config --confdir --tsv --json --version; do want_text "$OUT" "$o"; done
}

# After "--" every word is an operand, even one that reads as an option (getopt's rule): the
# user named "--tsv" is looked up, not taken for --tsv.
t_operands_after_dashes() {
  need_root; local p; p=$(std_policy)
  cd_nss explain --config "$p" --confdir "" -- --tsv; want_rc 2
  want_line "$ERR" "capdelegate: explain: --tsv: user unknown to NSS: login grants nothing"
}

# capdelegate(8), EXIT STATUS: bad usage is exit 2, the command's usage on standard error and
# nothing on standard output: decode without its HEX or with two, explain without a USER, an
# option check does not know.
t_usage_errors() {
  local a
  for a in "decode" "decode 00 11" "explain" "check --bogus" "check --config"; do
    # shellcheck disable=SC2086
    cd_run $a; want_rc 2; want_text "$ERR" "usage: capdelegate ${a%% *}"
    [ ! -s "$OUT" ] || fail "$a: output on standard output"
  done
}
