#!/usr/bin/env bash
# tests/cli/run.sh: tests of the capdelegate CLI (check, explain, audit, decode) and its man
# page. Prints one result line per case on stdout (PASS/FAIL<TAB>name, SKIP<TAB>name<TAB>why);
# logs go to stderr. Exit 0 when the suite ran, whatever the results; 2 when it could not run.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tests/cli/run.sh [--list] [CASE...]

Run the capdelegate CLI tests (all, or the named cases). Needs the built binary at
$LAB_BUILD/capdelegate (./lab build). Fixture trees need root (setcap, setfattr, root-owned
policies, mounts); as another user those cases print SKIP with the reason.
  --list   print the case names and exit
Environment: CLI_JOBS cases run at once (default: twice the CPUs, as most of a case is
waiting); CLI_JOBS=1 runs them one after another in the order listed.
USAGE
}

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${LAB_BUILD:-$ROOT/_build/host}/capdelegate"
MAN="$ROOT/pam_capdelegate/man/capdelegate.8"
NSS_WRAPPER_LIB=$(ls /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so 2>/dev/null | head -1 || true)
# shellcheck source=tests/cli/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/cli/audit-cases.sh
. "$HERE/audit-cases.sh"
# shellcheck source=tests/cli/import-cases.sh
. "$HERE/import-cases.sh"
# shellcheck source=tests/cli/output-cases.sh
. "$HERE/output-cases.sh"
# shellcheck source=tests/cli/marks-cases.sh
. "$HERE/marks-cases.sh"
# shellcheck source=tests/cli/fault-cases.sh
. "$HERE/fault-cases.sh"
# shellcheck source=tests/cli/names-cases.sh
. "$HERE/names-cases.sh"
# shellcheck source=tests/cli/load-cases.sh
. "$HERE/load-cases.sh"
# shellcheck source=tests/cli/usability-cases.sh
. "$HERE/usability-cases.sh"
# shellcheck source=tests/cli/edit-cases.sh
. "$HERE/edit-cases.sh"
# shellcheck source=tests/cli/report-cases.sh
. "$HERE/report-cases.sh"
# shellcheck source=tests/cli/userdb-cases.sh
. "$HERE/userdb-cases.sh"
# shellcheck source=tests/cli/plausible-cases.sh
. "$HERE/plausible-cases.sh"
# shellcheck source=tests/cli/windows-cases.sh
. "$HERE/windows-cases.sh"
# shellcheck source=tests/cli/procs-cases.sh
. "$HERE/procs-cases.sh"
# shellcheck source=tests/cli/usage-cases.sh
. "$HERE/usage-cases.sh"

# ---- fixtures -------------------------------------------------------------------------------

make_nss() {
  NSSDIR="$WORK/nss"
  mkdir -p "$NSSDIR"
  cat >"$NSSDIR/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
alice:x:1001:1001::/home/alice:/bin/sh
bob:x:1002:1002::/home/bob:/bin/sh
carol:x:1003:1003::/home/carol:/bin/sh
dave:x:1004:1004::/home/dave:/bin/sh
P
  cat >"$NSSDIR/group" <<'G'
root:x:0:
alice:x:1001:
bob:x:1002:
carol:x:1003:
dave:x:1004:
netops:x:2000:bob,dave
G
}

std_policy() {
  policy std <<'EOF2'
alice       cap_net_raw                  # line 1
@netops     cap_net_raw, cap_net_admin   # line 2
*           cap_syslog                   # line 3
dave        none                         # line 4
EOF2
}

# The standard tree: every kind of file the policy above meets. Prints its path.
std_tree() {
  local t="$CASE_DIR/tree"
  capfile "$t/bin/ping_i" cap_net_raw=i
  capfile "$t/bin/ping_ei" cap_net_raw=ei
  capfile "$t/bin/bind_ep" cap_net_bind_service=ep
  capfile "$t/bin/log_i" cap_syslog=i
  capfile "$t/bin/admin_i" cap_net_admin=i
  : >"$t/bin/plain"
  # =ei cap_net_raw, rootid 1000
  rev3file "$t/ns/rev3" 01000003 00000000 00200000 00000000 00000000 e8030000
  echo "$t"
}

# ---- help and decode (no root) --------------------------------------------------------------

t_help() {
  cd_run --help; want_rc 0; want_text "$OUT" "usage: capdelegate"
  for c in check explain audit decode edit; do
    cd_run "$c" --help; want_rc 0; want_text "$OUT" "usage: capdelegate $c"
  done
  cd_run frobnicate; want_rc 2
  # no command at all: the usage, exit 2 (capdelegate(8), EXIT STATUS)
  cd_run; want_rc 2; want_text "$ERR" "usage: capdelegate"; [ ! -s "$OUT" ] || fail "output without a command"
  local s   # whole output first: grep -q closing the pipe early would fail the writer
  for s in "$HERE/run.sh" "$ROOT/tests/bench/audit-bench.sh" "$HERE/check-json.py" "$HERE/audit-diff.py" \
           "$HERE/import-diff.py"; do
    "$s" --help >"$OUT"; want_text "$OUT" "usage:"
  done
}

t_decode_rev1() {
  # Revision 1: one 32-bit pair, 12 bytes. The kernel refuses to store it, so raw bytes only.
  cd_run decode 0x010000010020000000000000; want_rc 0
  want_line "$OUT" "revision 1"; want_line "$OUT" "permitted cap_net_raw"
  want_line "$OUT" "inheritable none"; want_line "$OUT" "effective yes"
  cd_run decode 000000010000000000300000; want_rc 0
  want_line "$OUT" "inheritable cap_net_admin,cap_net_raw"; want_line "$OUT" "effective no"
  no_text "$OUT" rootid
}

t_decode_rev2_high_caps() {
  # cap_syslog is bit 34 and cap_checkpoint_restore bit 40: the second word pair.
  cd_run decode 0x0000000200000000000000000000000004010000; want_rc 0
  want_line "$OUT" "revision 2"; want_line "$OUT" "permitted none"
  want_line "$OUT" "inheritable cap_syslog,cap_checkpoint_restore"
  # A bit libcap has no name for is still part of the value: shown by number, up to bit 63.
  cd_run decode 0x0000000200000000000000000002008000000000; want_rc 0
  want_line "$OUT" "permitted cap_41,cap_63"; want_line "$OUT" "inheritable none"
}

# HEX as getfattr -e hex prints it (lower case) or as other tools do (upper case, 0X): every
# digit 0-9, a-f and A-F is read; the first byte not a hex digit refuses the whole value.
t_decode_every_hex_digit() {
  cd_run decode 0x0100000209000000000000000000000000000000; want_rc 0
  want_line "$OUT" "permitted cap_chown,cap_fowner"; want_line "$OUT" "effective yes"
  cd_run decode 0x0100000276543210fedcba980000000000000000; want_rc 0; cp "$OUT" "$CASE_DIR/lower"
  want_line "$OUT" "revision 2"
  cd_run decode 0X0100000276543210FEDCBA980000000000000000; want_rc 0
  cmp -s "$OUT" "$CASE_DIR/lower" || fail "upper case decodes otherwise: $(cat "$OUT")"
  cd_run decode 0x0100000276543210fedcba98000000000000000g; want_rc 2
  want_text "$ERR" "not an even-length hex string"
}

t_decode_rev3_rootid() {
  cd_run decode 0x0100000300200000000000000000000000000000e8030000; want_rc 0
  want_line "$OUT" "revision 3"; want_line "$OUT" "permitted cap_net_raw"
  want_line "$OUT" "effective yes"; want_line "$OUT" "rootid 1000"
}

t_decode_malformed() {
  local v why
  # each value with what is wrong with it, and its length
  while IFS='|' read -r v why; do
    cd_run decode "$v"; want_rc 1; want_line "$OUT" "malformed: $why"
  done <<'V'
0x0100000100200000000000000000000000000000|revision 1 value is not 12 bytes (20 bytes)
0x020000000000000000000000|unknown revision (12 bytes)
0x0000000400000000000000000000000000000000|unknown revision (20 bytes)
0x000001|shorter than the magic word (3 bytes)
0x0000000300000000000000000000000000000000|revision 3 value is not 24 bytes (20 bytes)
0x000000|shorter than the magic word (3 bytes)
0x00000002|revision 2 value is not 20 bytes (4 bytes)
0x01000003|revision 3 value is not 24 bytes (4 bytes)
|shorter than the magic word (0 bytes)
V
  cd_run decode 0x000; want_rc 2
  cd_run decode zz; want_rc 2
  # the message names the value it refuses (escaped), not another argument
  want_line "$ERR" "capdelegate: decode: not an even-length hex string of at most 256 bytes: zz; nothing decoded"
  cd_run decode $'0x\e[2J'; want_rc 2
  want_line "$ERR" "capdelegate: decode: not an even-length hex string of at most 256 bytes: 0x\\\\x1b[2J; nothing decoded"
  # at most 256 bytes: 256 are decoded (too long for any revision), 257 refused
  cd_run decode "$(printf '03%.0s' $(seq 256))"; want_rc 1; want_line "$OUT" "malformed: revision 3 value is not 24 bytes (256 bytes)"
  cd_run decode "$(printf '03%.0s' $(seq 257))"; want_rc 2
  want_text "$ERR" "capdelegate: decode: not an even-length hex string of at most 256 bytes: 0303"
}

# Each .EX block after an "example: decode" comment: run its command, compare its output.
t_manpage_examples() {
  python3 - "$MAN" "$BIN" <<'PY'
import subprocess, sys
man, binary = sys.argv[1], sys.argv[2]
lines = open(man, encoding="utf-8").read().split("\n")
n = 0
for i, l in enumerate(lines):
    if l.strip() != '.\\" example: decode':
        continue
    assert lines[i + 1] == ".EX", "example at line %d has no .EX" % (i + 1)
    block = []
    for l2 in lines[i + 2:]:
        if l2 == ".EE":
            break
        block.append(l2.replace("\\-", "-"))
    cmd = block[0].split()
    assert cmd[:2] == ["$", "capdelegate"], block[0]
    got = subprocess.run([binary] + cmd[2:], capture_output=True, text=True).stdout.splitlines()
    if got != block[1:]:
        sys.exit("man page line %d: %s\n  want %r\n  got  %r" % (i + 1, block[0], block[1:], got))
    n += 1
if n < 3:
    sys.exit("only %d examples found" % n)
PY
}

# ---- check ----------------------------------------------------------------------------------

t_check_clean() {
  need_root; local p; p=$(std_policy)
  cd_nss check --config "$p"; want_rc 0
  want_line "$OUT" "$p: ok, 4 rules, 0 warnings"
}

t_check_syntax_error() {
  need_root; local p
  p=$(printf 'alice cap_net_raw\nbob cap_net_rawx\ncarol all\n' | policy)
  cd_nss check --config "$p"; want_rc 2
  want_text "$ERR" "$p:2: unknown capability: 'cap_net_rawx'"; no_text "$ERR" "$p:1: "
  want_text "$ERR" "$p:3: 'all' is not allowed: a policy names each capability it grants: 'all'"
  want_line "$OUT" "$p: syntax error: the module grants nothing"
}

t_check_unknown_user_group() {
  need_root; local p
  p=$(printf 'alice cap_net_raw\nzed cap_net_raw\n@nogroup cap_net_raw\n@netops cap_net_raw\n' | policy)
  cd_nss check --config "$p"; want_rc 1
  want_line "$ERR" "capdelegate: warning: $p:2: user 'zed' unknown to NSS (the line never matches)"
  want_line "$ERR" "capdelegate: warning: $p:3: group 'nogroup' unknown to NSS (the line never matches)"
  no_text "$ERR" "$p:1:"; no_text "$ERR" "$p:4:"
  # "unknown" is the name service's answer: not also a note that the lookup failed
  no_text "$ERR" "cannot be looked up"
  # a warning says it is one: the policy still loads, unlike an error's
  want_text "$ERR" "warning: $p:2: user 'zed'"
}

# capdelegate(8), check: a subject NSS cannot look up (a directory down) is a note, not "unknown":
# the policy is not at fault, and a deploy's validate: must not refuse it for that. Whatever the
# errno (ENOENT: a backend whose socket is gone), a failed lookup is never "unknown".
t_check_lookup_failed_not_unknown() {
  need_root; local p e
  p=$(printf 'alice cap_net_raw\n@netops cap_net_raw\nzed cap_syslog\n' | policy)
  for e in 11 2 111; do
    CD_FAULT_GROUPS=netops:2000 CD_FAULT_USERS=zed CD_FAULT_ERRNO=$e cd_nss check --config "$p" --confdir ""
    want_rc 0
    want_line "$ERR" "capdelegate: note: $p:2: group 'netops' cannot be looked up ($(python3 -c "import os; print(os.strerror($e))")): whether the line can match is not known here"
    want_text "$ERR" "$p:3: user 'zed' cannot be looked up"
    no_text "$ERR" "unknown to NSS"
    want_line "$OUT" "$p: ok, 3 rules, 0 warnings"
  done
}

t_check_risky() {
  need_root; local p
  p=$(printf 'alice cap_net_raw\nbob cap_sys_admin, cap_syslog\n@netops cap_bpf\n' | policy)
  cd_nss check --config "$p"; want_rc 1
  want_text "$ERR" "$p:2: grants capabilities that lead to full root: cap_sys_admin"
  want_text "$ERR" "$p:3: grants capabilities that lead to full root: cap_bpf"
  no_text "$ERR" "cap_syslog"; no_text "$ERR" "$p:1:"
}

t_check_unsafe_file() {
  need_root; local p; p=$(std_policy)
  chmod 0664 "$p"
  cd_nss check --config "$p"; want_rc 2; want_text "$ERR" "unsafe"
  chmod 0644 "$p"; chown 1001 "$p"
  cd_nss check --config "$p"; want_rc 2; want_text "$ERR" "not owned by root"
}

t_check_unsafe_dir() {
  need_root; local d="$CASE_DIR/open"
  mkdir -p "$d"; chmod 0777 "$d"
  printf 'alice cap_net_raw\n' >"$d/p.conf"; chmod 0644 "$d/p.conf"
  # The module refuses a policy below a directory others can write: check says so as an error.
  cd_nss check --config "$d/p.conf"; want_rc 2
  want_text "$ERR" "($d is writable by group or others; owner uid 0, mode 0777): policy rejected"
  chmod 1777 "$d"	# sticky: others still create names in it before root does
  cd_nss check --config "$d/p.conf"; want_rc 2
  want_text "$ERR" "($d is writable by group or others (sticky or not); owner uid 0, mode 1777)"
}

# Only backslash, controls, invisible characters and bad UTF-8 are escaped (capdelegate(8)): a
# space in a file name is printed as it is.
t_explain_space_in_name() {
  need_root; local p t="$CASE_DIR/tree"; p=$(std_policy)
  capfile "$t/bin/net tool" cap_net_raw=i
  cd_nss explain alice --config "$p" "$t/bin"; want_rc 0
  want_text "$OUT" "$(printf 'exec\t%s\t' "$t/bin/net tool")"
}

t_check_missing() {
  cd_run check --config "$WORK/does-not-exist.conf"; want_rc 2
  want_text "$ERR" "does-not-exist.conf"
}

# check takes no operand (capdelegate(8) SYNOPSIS): "check FILE" must not quietly judge
# another policy than FILE and say it is fine.
t_check_stray_operand() {
  need_root; local p; p=$(std_policy)
  cd_nss check --config "$p" "$p"; want_rc 2
  want_text "$ERR" "usage: capdelegate check"; no_text "$OUT" ": ok,"
}

# ---- explain --------------------------------------------------------------------------------

t_explain_user_line() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss explain alice --config "$p" "$t/bin"; want_rc 0
  want_line "$OUT" "user\talice\t1001\talice"
  want_line "$OUT" "match\t$p:1\tuser\talice\tcap_net_raw"
  want_line "$OUT" "pI\tcap_net_raw\tuser"
  want_line "$OUT" "exec\t$t/bin/ping_i\tfP=none\tfI=cap_net_raw\tfE=no\tpP'=cap_net_raw\tpE'=none\t-"
  want_line "$OUT" "exec\t$t/bin/ping_ei\tfP=none\tfI=cap_net_raw\tfE=yes\tpP'=cap_net_raw\tpE'=cap_net_raw\t-"
  want_line "$OUT" "exec\t$t/bin/log_i\tfP=none\tfI=cap_syslog\tfE=no\tpP'=none\tpE'=none\t-"
  want_line "$OUT" "exec\t$t/bin/bind_ep\tfP=cap_net_bind_service\tfI=none\tfE=yes\tpP'=cap_net_bind_service\tpE'=cap_net_bind_service\t-"
  [ "$(count_lines "$OUT" '^exec')" -eq 5 ] || fail "want 5 exec records"
  [ "$(count_lines "$OUT" '^match')" -eq 1 ] || fail "want 1 match record"
  # a PATH given twice, or inside another, is walked once: each file one record
  cd_nss explain alice --config "$p" "$t/bin" "$t/bin/" "$t"; want_rc 0
  [ "$(count_lines "$OUT" "^exec	$t/bin/ping_i	")" -eq 1 ] || fail "want ping_i once"
}

t_explain_group() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss explain bob --config "$p" "$t/bin"; want_rc 0
  want_line "$OUT" "match\t$p:2\tgroup\t@netops\tcap_net_admin,cap_net_raw"
  want_line "$OUT" "pI\tcap_net_admin,cap_net_raw\tgroup"
  want_line "$OUT" "exec\t$t/bin/admin_i\tfP=none\tfI=cap_net_admin\tfE=no\tpP'=cap_net_admin\tpE'=none\t-"
  no_text "$OUT" "$p:3"
}

t_explain_default() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss explain carol --config "$p" "$t/bin"; want_rc 0
  want_line "$OUT" "match\t$p:3\tdefault\t*\tcap_syslog"
  want_line "$OUT" "pI\tcap_syslog\tdefault"
  want_line "$OUT" "exec\t$t/bin/log_i\tfP=none\tfI=cap_syslog\tfE=no\tpP'=cap_syslog\tpE'=none\t-"
  want_line "$OUT" "exec\t$t/bin/ping_i\tfP=none\tfI=cap_net_raw\tfE=no\tpP'=none\tpE'=none\t-"
}

t_explain_user_none_beats_group() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss explain dave --config "$p" "$t/bin"; want_rc 0
  want_line "$OUT" "match\t$p:4\tuser\tdave\tnone"
  want_line "$OUT" "pI\tnone\tuser"
  want_line "$OUT" "exec\t$t/bin/ping_i\tfP=none\tfI=cap_net_raw\tfE=no\tpP'=none\tpE'=none\t-"
}

t_explain_default_paths() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  # $PATH directories, canonical and once each, then /usr: each file reported once.
  RC=0
  PATH="$t/bin:$t/bin/../bin:$t/nonexistent:relative:$PATH" LD_PRELOAD="$NSS_WRAPPER_LIB" \
    NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
    "$BIN" explain alice --config "$p" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0
  [ "$(count_lines "$OUT" "^exec	$t/bin/")" -eq 5 ] || fail "want each of the 5 fixture files once"
  [ "$(grep '^exec' "$OUT" | cut -f2 | sort | uniq -d | wc -l)" -eq 0 ] || fail "a file reported twice"
}

# capdelegate(8), explain: the default PATHs are $PATH's directories and /usr, even when $PATH
# names nothing below /usr. /usr's stat fails here (EIO, fault.so): an error naming /usr, exit 2,
# so that the case need not walk this machine's /usr.
t_explain_default_paths_usr() {
  need_root; local p t b; p=$(std_policy); t=$(std_tree); b=$(dirname "$BIN")
  RC=0; FIRED="$CASE_DIR/fired"
  PATH="$t/bin" CD_FAULT_STAT=/usr:5 CD_FAULT_FIRED="$FIRED" \
    LD_PRELOAD="$b/tests/cli/.libs/fault.so:$b/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
    NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
    "$BIN" explain alice --config "$p" >"$OUT" 2>"$ERR" || RC=$?
  [ -e "$FIRED" ] || fail "/usr not examined"; want_rc 2
  want_text "$ERR" "capdelegate: /usr: cannot examine: Input/output error"
  [ "$(count_lines "$OUT" "^exec	$t/bin/")" -eq 5 ] || fail "want the 5 fixture files of \$PATH"
}

# $PATH naming "/" itself: the root covers every other directory, /usr too, and each file is
# reported once. Run in a root of its own (the binary, its libraries and a small tree: unshare
# --root), so that "/" is a tree of three files, not this machine's.
t_explain_path_root() {
  need_root; command -v unshare >/dev/null || skip "unshare missing"
  local r="$CASE_DIR/root" lib
  mkdir -p "$r/bin" "$r/etc" "$r/usr/bin"; chmod 0755 "$r" "$r/bin" "$r/etc" "$r/usr" "$r/usr/bin"
  cp "$BIN" "$r/bin/capdelegate"
  for lib in $(ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/lib/ { print $1 }'); do
    mkdir -p "$r$(dirname "$lib")"; cp -L "$lib" "$r$lib"
  done
  printf 'root:x:0:0::/:/bin/sh\nalice:x:1001:1001::/:/bin/sh\n' >"$r/etc/passwd"
  printf 'root:x:0:\nalice:x:1001:\n' >"$r/etc/group"
  printf 'passwd: files\ngroup: files\n' >"$r/etc/nsswitch.conf"
  printf 'alice cap_net_raw\n' >"$r/etc/capdelegate.conf"; chmod 0644 "$r/etc/capdelegate.conf"
  capfile "$r/usr/bin/ping" cap_net_raw=i
  RC=0
  env PATH=/:/usr/bin:/bin "$(command -v unshare)" --root="$r" /bin/capdelegate explain alice \
    --config /etc/capdelegate.conf --confdir '' >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0
  want_line "$OUT" "exec\t/usr/bin/ping\tfP=none\tfI=cap_net_raw\tfE=no\tpP'=cap_net_raw\tpE'=none\t-"
  [ "$(count_lines "$OUT" "^exec	")" -eq 1 ] || fail "want the one capability file once"
  # audit's walker drops a root that another root's walk reaches, "/" reaching every other
  RC=0
  "$(command -v unshare)" --root="$r" /bin/capdelegate audit --config /etc/capdelegate.conf \
    --confdir '' / /usr/bin /usr >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0
  [ "$(count_lines "$OUT" "^file	/usr/bin/ping	")" -eq 1 ] || fail "audit: want the one capability file once"
  want_text "$OUT" "1 capability file"
}

t_explain_root_note() {
  need_root; local p; p=$(std_policy)
  cd_nss explain root --config "$p" "$CASE_DIR"; want_rc 0
  want_text "$OUT" "note	root gains the whole bounding set"
  cd_nss explain alice --config "$p" "$CASE_DIR"; no_match "$OUT" "^note"
}

t_explain_unknown_user() {
  need_root; local p; p=$(std_policy)
  cd_nss explain mallory --config "$p" "$CASE_DIR"; want_rc 2; want_text "$ERR" "mallory: user unknown"
}

# capdelegate(8), EXIT STATUS: explain exits 2 when a PATH cannot be read, and what it prints
# is still what login does (the other PATH's files listed).
t_explain_path_unreadable() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss explain alice --config "$p" "$t/none" "$t/bin"; want_rc 2
  want_text "$ERR" "$t/none: cannot examine: No such file or directory"
  want_line "$OUT" "pI\tcap_net_raw\tuser"
  want_text "$OUT" "exec	$t/bin/ping_i	"
}

t_explain_rejected_policy() {
  need_root; local p t; p=$(printf 'alice cap_net_raw\nalice bogus\n' | policy); t=$(std_tree)
  cd_nss explain alice --config "$p" "$t/bin"; want_rc 2
  want_text "$ERR" "$p:2: "; want_line "$OUT" "pI\tnone\tnone"
  want_line "$OUT" "exec\t$t/bin/ping_i\tfP=none\tfI=cap_net_raw\tfE=no\tpP'=none\tpE'=none\t-"
}

# ---- audit ----------------------------------------------------------------------------------

t_audit_revisions() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss audit --config "$p" "$t"
  want_line "$OUT" "file\t$t/bin/ping_i\t2\tnone\tcap_net_raw\tno\t-\t-"
  want_line "$OUT" "file\t$t/bin/ping_ei\t2\tnone\tcap_net_raw\tyes\t-\t-"
  want_line "$OUT" "file\t$t/bin/bind_ep\t2\tcap_net_bind_service\tnone\tyes\t-\t-"
  want_line "$OUT" "file\t$t/ns/rev3\t3\tnone\tcap_net_raw\tyes\t1000\trevision 3 rootid is not 0 (applies only inside that user namespace)"
  [ "$(count_lines "$OUT" '^file')" -eq 6 ] || fail "want 6 file records"
  # An independent witness: getcap -r must find the same files.
  [ "$(getcap -r "$t" | wc -l)" -eq 6 ] || fail "getcap -r disagrees on the fixture"
  want_line "$OUT" "# scanned\t3 directories\t7 regular files\t6 capability files\t0 mounts skipped\t0 vanished\t0 errors"
}

t_audit_matrix() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss audit --config "$p" "$t"
  want_line "$OUT" "gain\talice\t$t/bin/ping_i\tcap_net_raw\tnone"
  want_line "$OUT" "gain\talice\t$t/bin/ping_ei\tcap_net_raw\tcap_net_raw"
  want_line "$OUT" "gain\t@netops\t$t/bin/admin_i\tcap_net_admin\tnone"
  want_line "$OUT" "gain\t*\t$t/bin/log_i\tcap_syslog\tnone"
  want_line "$OUT" "gain\tdave\t$t/bin/bind_ep\tcap_net_bind_service\tcap_net_bind_service"
  no_text "$OUT" "gain	dave	$t/bin/ping_i"
  no_text "$OUT" "gain	alice	$t/bin/log_i"
  no_match "$OUT" "^gain.*/ns/rev3"	# ignored on the host: nobody gains from it
}

t_audit_finding_permitted() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	permitted	$t/bin/bind_ep	cap_net_bind_service	"
  [ "$(count_lines "$OUT" '^finding	permitted')" -eq 1 ] || fail "one permitted finding"
}

t_audit_finding_rootid() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_nss audit --config "$p" "$t"
  want_text "$OUT" "finding	rootid	$t/ns/rev3	cap_net_raw	revision 3 with rootid 1000"
}

t_audit_finding_undelegated() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  capfile "$t/time_i" cap_sys_time,cap_net_raw=i
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	undelegated-inheritable	$t/time_i	cap_sys_time	"
}

t_audit_finding_unused_grant() {
  need_root; local p t; t="$CASE_DIR/tree"
  p=$(printf 'alice cap_net_raw\nbob cap_wake_alarm, cap_net_raw\n' | policy)
  capfile "$t/ping_i" cap_net_raw=i
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	unused-grant	$p:2	cap_wake_alarm	"
  no_text "$OUT" "$p:1"
}

t_audit_finding_writable_file() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  capfile "$t/ping_i" cap_net_raw=i
  chmod 0775 "$t/ping_i"
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	writable-file	$t/ping_i	none	capability file is writable by its group (mode 0775)"
}

t_audit_finding_writable_dir() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  capfile "$t/open/ping_i" cap_net_raw=i
  chmod 0777 "$t/open"
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	writable-directory	$t/open	none	directory above a capability file is writable by others (mode 0777)"
  chmod 0755 "$t/open"; chown 1001 "$t"
  cd_nss audit --config "$p" "$t"
  want_text "$OUT" "finding	writable-directory	$t	none	directory above a capability file is owned by uid 1001"
  # two writable directories side by side, each above its own capability file: each is a
  # finding of its own (one reported does not hide the other)
  chown 0 "$t"; capfile "$t/open2/ping_i" cap_net_raw=i; chmod 0777 "$t/open" "$t/open2"
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	writable-directory	$t/open	none	"
  want_text "$OUT" "finding	writable-directory	$t/open2	none	"
  [ "$(count_lines "$OUT" '^finding	writable-directory')" -eq 2 ] || fail "want 2 writable-directory findings"
}

t_audit_finding_nosuid() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/mnt"
  mkdir -p "$t"
  mount -t tmpfs -o nosuid,size=1m capdelegate-test "$t" 2>/dev/null || skip "cannot mount a tmpfs here"
  capfile "$t/ping_i" cap_net_raw=i 2>/dev/null || { umount "$t"; skip "tmpfs here keeps no security.capability"; }
  capfile "$t/ping_p" cap_net_raw=p   # fP too is ignored at exec there: no fP finding
  cd_nss audit --config "$p" "$CASE_DIR" || true
  umount "$t"
  want_line "$OUT" "finding\tnosuid\t$t/ping_i\tcap_net_raw\tfile is on a nosuid mount: its capabilities are ignored at exec"
  want_line "$OUT" "finding\tnosuid\t$t/ping_p\tcap_net_raw\tfile is on a nosuid mount: its capabilities are ignored at exec"
  no_match "$OUT" "^finding	(permitted|fP-bypass)	$t/ping_p"
  want_line "$OUT" "file\t$t/ping_i\t2\tnone\tcap_net_raw\tno\t-\tnosuid mount"
  no_text "$OUT" "gain	alice	$t/ping_i"
}

t_audit_finding_nosuid_bind() {
  # A nosuid bind mount of the same filesystem: same device, told apart by STATX_ATTR_MOUNT_ROOT.
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  capfile "$t/a/ping_i" cap_net_raw=i
  mkdir -p "$t/b"
  mount --bind "$t/a" "$t/b" 2>/dev/null || skip "cannot bind-mount here"
  mount -o remount,bind,nosuid "$t/b" 2>/dev/null || { umount "$t/b"; skip "cannot remount nosuid here"; }
  cd_nss audit --config "$p" "$t" || true
  umount "$t/b"
  want_line "$OUT" "file\t$t/a/ping_i\t2\tnone\tcap_net_raw\tno\t-\t-"
  want_line "$OUT" "file\t$t/b/ping_i\t2\tnone\tcap_net_raw\tno\t-\tnosuid mount"
}

t_audit_clean_exit() {
  need_root; local p t; t="$CASE_DIR/tree"
  p=$(printf 'alice cap_net_raw\n' | policy)
  capfile "$t/ping_i" cap_net_raw=i
  cd_nss audit --config "$p" "$t"; want_rc 0
  no_text "$OUT" "finding"
}

t_audit_policy_rejected() {
  need_root; local p t; p=$(printf 'alice cap_net_raw\nbob 12\n' | policy); t=$(std_tree)
  cd_nss audit --json --config "$p" "$t"; want_rc 2
  want_text "$ERR" "$p:2: "
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["policy"]["status"]=="syntax_error", d["policy"]; assert d["matrix"]==[] and d["policy"]["rules"]==[]' "$OUT" \
    || fail "JSON does not show the rejected policy"
}

t_audit_json_schema() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  capfile "$t/time_i" cap_sys_time=i
  live_proc 736368656d61	# "schema": processes[] is not empty, its keys are checked
  cd_nss audit --json --processes --config "$p" "$t"; want_rc 1
  kill "$LIVE_PID"
  "$HERE/check-json.py" --may-be-empty userdb.records --may-be-empty errors --may-be-empty vanished "$MAN" "$OUT" >&2 || fail "JSON does not match the schema in capdelegate(8)"
  cp "$OUT" "$CASE_DIR/doc.json"
  cd_nss audit --config "$p" "$t"
  # The JSON and the text report the same files and findings.
  python3 - "$CASE_DIR/doc.json" "$OUT" <<'PY' || fail "JSON and text disagree"
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
files = [l.split("\t")[1] for l in text if l.startswith("file\t")]
assert files == [f["path"] for f in d["files"]], (files, d["files"])
finds = [l.split("\t")[1] for l in text if l.startswith("finding\t")]
# Findings about live processes are the JSON's alone (the text ran without --processes), and
# other cases' processes come and go while the cases run in parallel.
live = ("stale-grant", "grant-unknown")
assert finds == [f["id"] for f in d["findings"] if f["id"] not in live], (finds, d["findings"])
gains = [l for l in text if l.startswith("gain\t")]
assert len(gains) == len(d["matrix"]), (gains, d["matrix"])
assert d["scan"]["capability_files"] == 7 and len(d["files"]) == 7
PY
}

t_audit_hostile_names() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  mkdir -p "$t"
  local n1 n2 n3 n4 n5 n6 n7 n8 n9
  n1=$(printf 'new\nline') n2=$(printf 'bad\377byte\tand\\back') n3=$(printf 'esc\033[31m"q')
  n4=$(printf 'caf\303\251') n5=$(printf 'c1\302\233csi')
  # the smallest code points of 3 and 4 bytes (U+0800, U+10000), and one below each written
  # in as many bytes (overlong: not UTF-8)
  n6=$(printf 'u800\340\240\200') n7=$(printf 'o7ff\340\237\277')
  n8=$(printf 'u10000\360\220\200\200') n9=$(printf 'offff\360\217\277\277')
  # and two bytes for U+007F (DEL), overlong too: never read as the character
  local n10; n10=$(printf 'o7f\301\277')
  # a UTF-16 surrogate (U+D800) written as UTF-8 is not UTF-8 either
  local n11; n11=$(printf 'sur\355\240\200')
  for n in "$n1" "$n2" "$n3" "$n4" "$n5" "$n6" "$n7" "$n8" "$n9" "$n10" "$n11"; do capfile "$t/$n" cap_net_raw=i; done
  cd_nss audit --config "$p" "$t"
  [ "$(count_lines "$OUT" '^file')" -eq 11 ] || fail "want 11 file records, one line each"
  want_text "$OUT" "$t/sur\\xed\\xa0\\x80	"
  want_text "$OUT" "$t/o7f\\xc1\\xbf	"
  want_text "$OUT" "$t/$n4	"    # valid UTF-8 stays readable
  want_text "$OUT" "$t/$n6	"; want_text "$OUT" "$t/$n8	"
  want_text "$OUT" "$t/o7ff\\xe0\\x9f\\xbf	"; want_text "$OUT" "$t/offff\\xf0\\x8f\\xbf\\xbf	"
  want_text "$OUT" "$t/c1\xc2\x9bcsi	"  # a C1 control (CSI) does not reach the terminal
  want_text "$OUT" "$t/new\\x0aline	"
  want_text "$OUT" "$t/bad\\xffbyte\\x09and\\x5cback	"
  want_text "$OUT" "$t/esc\\x1b[31m\"q	"
  [ "$(awk -F'\t' '/^file/ && NF != 8' "$OUT" | wc -l)" -eq 0 ] || fail "a name broke the columns"
  cd_nss audit --json --config "$p" "$t"
  "$HERE/check-json.py" --may-be-empty userdb.records --may-be-empty errors --may-be-empty vanished "$MAN" "$OUT" >&2 || fail "JSON invalid with hostile names"
  python3 -c 'import json,sys; p=[f["path"] for f in json.load(open(sys.argv[1]))["files"]]; assert any(x.endswith("/o7f\ufffd\ufffd") for x in p), p' "$OUT" \
    || fail "an overlong DEL in JSON: want two U+FFFD"
  python3 - "$OUT" "$t" <<'PY' || fail "path_hex does not give back the exact names"
import json, os, sys
d = json.load(open(sys.argv[1]))
want = sorted(os.path.join(os.fsencode(sys.argv[2]), n) for n in os.listdir(os.fsencode(sys.argv[2])))
got = sorted(bytes.fromhex(f["path_hex"]) for f in d["files"])
assert got == want, (got, want)
PY
}

t_audit_processes() {
  need_root; local p pid nameless; p=$(std_policy)
  command -v setpriv >/dev/null || skip "setpriv missing"
  setpriv --inh-caps +net_raw,+syslog sleep 60 &
  pid=$!
  # a uid NSS has no name for (pI survives the uid change): shown by its number
  setpriv --inh-caps +net_raw setpriv --reuid 43210 --regid 43210 --clear-groups sleep 60 &
  nameless=$!
  sleep 0.3
  cd_nss audit --processes --config "$p" "$CASE_DIR"
  want_line "$OUT" "process\t$pid\t$pid\troot\tsleep\tcap_net_raw,cap_syslog"
  want_line "$OUT" "process\t$nameless\t$nameless\t43210\tsleep\tcap_net_raw"
  cd_nss audit --json --processes --config "$p" "$CASE_DIR"
  kill "$pid" "$nameless"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=[x for x in d["processes"] if x["pid"]==int(sys.argv[2])]; assert p and p[0]["inheritable"]==["cap_net_raw","cap_syslog"], p' "$OUT" "$pid" \
    || fail "JSON processes"
  cd_nss audit --config "$p" "$CASE_DIR"; no_match "$OUT" "^process"
}

# A process whose main thread's pI is MAIN and whose second thread, named "worker", sets its
# own to WORKER through capset(2); masks as numbers (0x2000: cap_net_raw). Sets TPID and TID
# once the worker's pI is set; the process ends within 30 s, or with the case.
two_thread_process() { # two_thread_process MAIN WORKER
  local ready="$CASE_DIR/ready"
  python3 - "$ready" "$1" "$2" >&2 <<'PY' &
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
ready = sys.argv[1]

class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]

def set_inheritable(mask):                                              # the calling thread's
    h, d = Header(0x20080522, 0), (Data * 2)()                          # _LINUX_CAPABILITY_VERSION_3
    if libc.capget(ctypes.byref(h), d) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    d[0].inheritable, d[1].inheritable = mask & 0xffffffff, mask >> 32
    if libc.capset(ctypes.byref(h), d) != 0:
        raise OSError(ctypes.get_errno(), "capset")

def worker():
    libc.prctl(15, b"worker", 0, 0, 0)                                   # PR_SET_NAME
    set_inheritable(int(sys.argv[3], 0))
    with open(ready + ".tmp", "w") as f:
        f.write("%d\n" % threading.get_native_id())
    os.rename(ready + ".tmp", ready)
    time.sleep(30)

libc.prctl(1, 9, 0, 0, 0)                                               # PR_SET_PDEATHSIG SIGKILL
set_inheritable(int(sys.argv[2], 0))
threading.Thread(target=worker, daemon=True).start()
time.sleep(30)
PY
  TPID=$!
  for _ in $(seq 1 100); do [ -s "$ready" ] && break; sleep 0.05; done
  [ -s "$ready" ] || { kill "$TPID"; fail "the threaded process did not start"; }
  TID=$(cat "$ready")
}

# pI belongs to a thread. A process whose main thread holds cap_syslog
# and whose second thread (named "worker") set its own pI to cap_net_raw through capset(2):
# both threads are listed, each with its own pI, text and JSON.
t_audit_processes_threads() {
  need_root; local p; p=$(std_policy)
  two_thread_process 0x400000000 0x2000   # cap_syslog, cap_net_raw
  local pid=$TPID tid=$TID
  cd_nss audit --processes --config "$p" "$CASE_DIR"
  cp "$OUT" "$CASE_DIR/text"
  cd_nss audit --json --processes --config "$p" "$CASE_DIR"
  kill "$pid"
  want_text "$CASE_DIR/text" "$(printf 'worker\tcap_net_raw')"	# the thread, whatever the columns
  want_line "$CASE_DIR/text" "process\t$pid\t$pid\troot\tpython3\tcap_syslog"
  want_line "$CASE_DIR/text" "process\t$pid\t$tid\troot\tworker\tcap_net_raw"
  python3 - "$OUT" "$pid" "$tid" <<'PY2' >&2 || fail "JSON processes[] per thread"
import json, sys
d = json.load(open(sys.argv[1]))
pid, tid = int(sys.argv[2]), int(sys.argv[3])
got = sorted((x["tid"], x["comm"], x["inheritable"]) for x in d["processes"] if x["pid"] == pid)
assert got == sorted([(pid, "python3", ["cap_syslog"]), (tid, "worker", ["cap_net_raw"])]), got
PY2
}

# Revision-1 and malformed values cannot be written through setxattr, and getxattr will not
# show them (EINVAL): an ext4 image written by debugfs holds them, mounted through a loop device.
unreadable_image() { # unreadable_image DIR: mounts it, prints the mount point (umount it)
  local d=$1
  command -v debugfs >/dev/null && command -v mke2fs >/dev/null || skip "e2fsprogs missing"
  mkdir -p "$d/src" "$d/mnt"
  : >"$d/src/rev1"; : >"$d/src/bad"; : >"$d/src/plain"
  truncate -s 8M "$d/fs.img"
  mke2fs -q -t ext4 -d "$d/src" -F "$d/fs.img" >&2
  printf '\001\000\000\001\000\040\000\000\000\000\000\000' >"$d/v1"   # =ep cap_net_raw
  printf '\000\000\000\005\000\000\000\000' >"$d/vbad"                    # revision 5
  debugfs -w -R "ea_set -f $d/v1 /rev1 security.capability" "$d/fs.img" 2>/dev/null
  debugfs -w -R "ea_set -f $d/vbad /bad security.capability" "$d/fs.img" 2>/dev/null
  mount -o loop,ro "$d/fs.img" "$d/mnt" 2>/dev/null || skip "cannot loop-mount an image here"
  echo "$d/mnt"
}

t_audit_unreadable_values() {
  need_root; local p d="$CASE_DIR/img"; p=$(std_policy)
  unreadable_image "$d" >/dev/null
  cd_nss audit --config "$p" "$d/mnt" || true
  umount "$d/mnt"
  [ "$(count_lines "$OUT" '^file')" -eq 2 ] || fail "want the 2 files with values"
  want_text "$OUT" "file	$d/mnt/rev1	0	unknown	unknown	unknown	-	value not shown by the kernel"
  want_text "$OUT" "finding	unreadable	$d/mnt/bad	none	"
  want_text "$OUT" "finding	unreadable	$d/mnt/rev1	none	"
  want_text "$OUT" "0 errors"
}

t_audit_skips_pseudo_mounts() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  capfile "$t/ping_i" cap_net_raw=i
  mkdir -p "$t/proc"
  mount -t proc proc "$t/proc" 2>/dev/null || skip "cannot mount proc here"
  cd_nss audit --config "$p" "$t" || true
  umount "$t/proc"
  want_text "$OUT" "1 mount skipped"; want_text "$OUT" "1 capability file"
}

t_audit_single_file_and_threads() {
  need_root; local p t i; p=$(std_policy); t="$CASE_DIR/tree"
  for i in $(seq 1 40); do capfile "$t/d$i/sub/f" cap_net_raw=i; : >"$t/d$i/plain"; done
  cd_nss audit --config "$p" --threads 1 "$t"; cp "$OUT" "$CASE_DIR/one"
  cd_nss audit --config "$p" --threads 2 "$t"
  cmp -s "$OUT" "$CASE_DIR/one" || fail "1 and 2 threads disagree"
  [ "$(count_lines "$OUT" '^file')" -eq 40 ] || fail "want 40 files"
  cd_nss audit --config "$p" "$t/d7/sub/f"
  want_line "$OUT" "file\t$t/d7/sub/f\t2\tnone\tcap_net_raw\tno\t-\t-"
  # a PATH that is a file without capabilities, then a directory: both are walked
  cd_nss audit --config "$p" "$t/d7/plain" "$t/d8"
  want_line "$OUT" "file\t$t/d8/sub/f\t2\tnone\tcap_net_raw\tno\t-\t-"
  want_text "$OUT" "$(printf '# scanned\t2 directories\t3 regular files\t1 capability file\t')"
  cd_nss audit --config "$p" --threads 3 "$t"
  cmp -s "$OUT" "$CASE_DIR/one" || fail "1 and 3 threads disagree"
  # Any N >= 1 (more threads than CPUs or directories too); no other count.
  cd_nss audit --config "$p" --threads 64 "$t"
  cmp -s "$OUT" "$CASE_DIR/one" || fail "1 and 64 threads disagree"
}

t_audit_beyond_path_max() {
  need_root; local p t i comp; p=$(std_policy); t="$CASE_DIR/tree"
  comp=$(printf 'x%.0s' $(seq 1 200))
  mkdir -p "$t"
  # 25 levels of 200 bytes: beyond PATH_MAX (4096), built one relative step at a time.
  ( cd "$t"; for i in $(seq 1 25); do mkdir "$comp$i"; cd "$comp$i"; done
    : >deep; setcap cap_net_raw=i deep )
  cd_nss audit --config "$p" "$t"
  [ "$(count_lines "$OUT" '^file')" -eq 1 ] || fail "the file below PATH_MAX was not found"
  want_text "$OUT" "/deep	2	none	cap_net_raw	no"
}

# ---- contradictions, hidden characters, comm, resolved policy path, processes[] -------------

t_check_contradiction() {
  need_root; local p
  p=$(printf '%s\n' 'alice cap_net_raw' '@netops cap_net_admin' 'alice none' '@netops none' \
        '* cap_syslog' '* none' 'dave none' 'bob none' 'bob cap_net_raw' 'carol none' 'carol none' | policy)
  cd_nss check --config "$p"; want_rc 1
  want_line "$ERR" "capdelegate: warning: $p:3: \"none\" for alice contradicts $p:1: a subject's lines add up, so the lines of alice grant cap_net_raw"
  want_text "$ERR" "$p:4: \"none\" for @netops contradicts $p:2: "
  want_text "$ERR" "$p:6: \"none\" for * contradicts $p:5: "
  want_text "$ERR" "$p:8: \"none\" for bob contradicts $p:9: "   # a "none" above the grant too
  [ "$(count_lines "$ERR" contradicts)" -eq 4 ] || fail "want 4 contradictions (not dave's, not carol's)"
  want_line "$OUT" "$p: ok, 11 rules, 4 warnings"
  # the lines of one subject need not be next to each other
  p=$(printf '%s\n' 'alice cap_net_raw' 'bob cap_kill' 'carol cap_kill' 'alice none' | policy)
  cd_nss check --config "$p"; want_rc 1
  want_text "$ERR" "$p:4: \"none\" for alice contradicts $p:1: "
}

# Every text and JSON output, against Python's unicodedata as the oracle: no control (but tab
# and newline), format (Cf), line (Zl) or paragraph (Zp) character reaches the output raw, and
# text shows each hidden or invalid byte as \xNN, exactly once.
t_escape_hidden_chars() {
  need_root; local t="$CASE_DIR/files"
  mkdir -p "$t"
  python3 - "$BIN" "$NSS_WRAPPER_LIB" "$NSSDIR" "$CASE_DIR" "$MAN" "$HERE/check-json.py" <<'PY' >&2
import json, os, subprocess, sys, unicodedata
binary, nsslib, nssdir, case, man, checker = sys.argv[1:]
HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs")
env = dict(os.environ, LD_PRELOAD=nsslib, NSS_WRAPPER_PASSWD=nssdir + "/passwd",
           NSS_WRAPPER_GROUP=nssdir + "/group")

def escape(b):
    """What the CLI's text escaper must print for the bytes b."""
    out, i = [], 0
    while i < len(b):
        n, ch = 1, None
        for k in (1, 2, 3, 4):
            try:
                ch, n = b[i:i + k].decode("utf-8"), k
                break
            except UnicodeDecodeError:
                pass
        if ch is None or ch == "\\" or unicodedata.category(ch) in HIDDEN:
            out.append("".join("\\x%02x" % x for x in b[i:i + n]))
        else:
            out.append(ch)
        i += n
    return "".join(out)

def run(*args):
    r = subprocess.run([binary] + list(args), env=env, capture_output=True)
    for name, data in (("stdout", r.stdout), ("stderr", r.stderr)):
        text = data.decode("utf-8")     # strict: invalid bytes never reach the output
        raw = [hex(ord(c)) for c in text if c not in "\t\n" and unicodedata.category(c) in HIDDEN]
        assert not raw, "%s %s: raw %s" % (args[0], name, raw)
    return r.stdout.decode().splitlines()

hidden = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")]
hidden += [chr(c) for c in range(1, 0x20) if c != ord("/")] + [chr(c) for c in range(0x7F, 0xA0)]
# Every hidden character in the policy path (components under NAME_MAX; it does not exist).
chunks = ["".join(hidden[i:i + 40]) for i in range(0, len(hidden), 40)]
policy = os.path.join(case, "nowhere", *chunks).encode() + b"/bad\xff\xc0\xaf\\.conf"
# A few of them in file names with capabilities (text and JSON of explain and audit).
tree = os.path.join(case, "files").encode()
names = ["rlo\u202egnp.exe", "ls\u2028x", "zw\u200bsp", "bom\ufeff", "iso\u2066x\u2069",
         "alm\u061c", "nel\u0085", "tag\U000e0041", "sep\u2029"]
for n in names:
    f = os.path.join(tree, n.encode())
    open(f, "wb").close()
    subprocess.run(["setcap", "cap_net_raw=i", f], check=True)
files = sorted(os.path.join(tree, n.encode()) for n in names)

out = run("check", "--config", policy)
assert out[0].startswith(escape(policy) + ": "), (out, escape(policy))
out = run("explain", "root", "--config", policy, tree)
assert "policy\t%s\tmissing" % escape(policy) in out, out
got = sorted(l.split("\t")[1] for l in out if l.startswith("exec\t"))
assert got == sorted(escape(f) for f in files), got
out = run("audit", "--config", policy, tree)
assert out[0].startswith("# policy\t%s\t" % escape(policy)), out[0]
got = sorted(l.split("\t")[1] for l in out if l.startswith("file\t"))
assert got == sorted(escape(f) for f in files), got
doc = os.path.join(case, "doc.json")
with open(doc, "w") as fp:
    fp.write("\n".join(run("audit", "--json", "--config", policy, tree)))
d = json.load(open(doc))
assert d["policy"]["path"] == policy.decode("utf-8", "replace"), d["policy"]
assert sorted(f["path"].encode() for f in d["files"]) == files, d["files"]
subprocess.run([checker, "--may-be-empty", "userdb.records", "--may-be-empty", "policy.rules", "--may-be-empty", "matrix",
                "--may-be-empty", "errors", "--may-be-empty", "vanished", man, doc],
               check=True, stdout=sys.stderr)     # a missing policy: no rules, nobody gains
PY
}

# A python3 process named by the bytes COMM_HEX, with cap_net_raw in pI (setpriv), or with
# "distinct": uid 1001 and four different non-empty sets, pI {net_bind_service, net_admin,
# net_raw, syslog}, pP {net_bind_service, net_admin, net_raw}, pE {net_admin}, pA {net_raw},
# set through capset(2) (no file capabilities: $WORK may sit on a nosuid mount). Sets LIVE_PID.
live_proc() { # live_proc COMM_HEX [distinct]
  local ready="$CASE_DIR/ready.$1" i
  command -v setpriv >/dev/null || skip "setpriv missing"
  setpriv --inh-caps +net_raw python3 - "$1" "${2:-}" "$ready" >&2 <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
name, mode, ready = bytes.fromhex(sys.argv[1]), sys.argv[2], open(sys.argv[3], "w")
parent = os.getppid()

def ok(rc):
    if rc != 0:
        raise OSError(ctypes.get_errno(), "prctl/capset")

class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]

def capset(eff, prm, inh):
    m = 0xFFFFFFFF
    lo, hi = Data(eff & m, prm & m, inh & m), Data(eff >> 32, prm >> 32, inh >> 32)
    ok(libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)(lo, hi)))  # _LINUX_CAPABILITY_VERSION_3

ok(libc.prctl(15, ctypes.c_char_p(name), 0, 0, 0))                    # PR_SET_NAME
if mode == "distinct":
    ok(libc.prctl(8, 1, 0, 0, 0))                                     # PR_SET_KEEPCAPS: keep pP
    os.setgroups([]); os.setresgid(1001, 1001, 1001); os.setresuid(1001, 1001, 1001)
    bits = lambda *caps: sum(1 << c for c in caps)
    capset(bits(12), bits(10, 12, 13), bits(10, 12, 13, 34))
    ok(libc.prctl(47, 2, 13, 0, 0))                                   # PR_CAP_AMBIENT_RAISE
ok(libc.prctl(1, 9, 0, 0, 0))       # PR_SET_PDEATHSIG SIGKILL (after setresuid, which clears it):
if os.getppid() != parent:         # die with the case that started it, failed or not
    sys.exit(1)
ready.write("ready\n")
ready.close()
time.sleep(30)
PY
  LIVE_PID=$!
  for i in $(seq 1 100); do [ -s "$ready" ] && return 0; sleep 0.05; done
  fail "the live process did not start"
}

# The kernel escapes "\n" and "\\" in /proc/PID/status Name:; the CLI must print the comm's own
# bytes escaped once, text and JSON.
t_processes_comm_escaped_once() {
  need_root; local p; p=$(std_policy)
  live_proc "615c620a631be280ae"	# a \ b newline c ESC U+202E
  cd_nss audit --processes --config "$p" "$CASE_DIR"
  want_text "$OUT" "$(printf 'process\t%s\t%s\troot\t%s\tcap_net_raw' "$LIVE_PID" "$LIVE_PID" 'a\x5cb\x0ac\x1b\xe2\x80\xae')"
  cd_nss audit --json --processes --config "$p" "$CASE_DIR"
  kill "$LIVE_PID"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=[x for x in d["processes"] if x["pid"]==int(sys.argv[2])]; assert p and p[0]["comm"]=="a\\b\nc\x1b\u202e", p' "$OUT" "$LIVE_PID" \
    || fail "JSON comm is not the comm's own text"
  no_text "$OUT" $'\xe2\x80\xae'	# JSON writes U+202E as \u202e
}

# Every field of processes[], by value, from a process whose four sets all differ; and the
# schema checker must fail on an empty processes[] or on a dropped field.
t_processes_json_fields() {
  need_root; local p; p=$(std_policy)
  live_proc 6669656c6473 distinct	# "fields"
  cd_nss audit --json --processes --config "$p" "$CASE_DIR"
  kill "$LIVE_PID"
  "$HERE/check-json.py" --may-be-empty userdb.records --may-be-empty files --may-be-empty matrix --may-be-empty errors --may-be-empty vanished "$MAN" "$OUT" >&2 \
    || fail "JSON does not match the schema in capdelegate(8)"
  python3 - "$OUT" "$LIVE_PID" "$HERE/check-json.py" "$MAN" <<'PY' >&2 || fail "processes[] fields"
import json, subprocess, sys
out, pid, checker, man = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
d = json.load(open(out))
p = [x for x in d["processes"] if x["pid"] == pid]
assert p == [{"pid": pid, "tid": pid, "uid": 1001, "user": "alice", "comm": "fields",
              "inheritable": ["cap_net_bind_service", "cap_net_admin", "cap_net_raw", "cap_syslog"],
              "permitted": ["cap_net_bind_service", "cap_net_admin", "cap_net_raw"],
              "effective": ["cap_net_admin"], "ambient": ["cap_net_raw"],
              # alice's grant is cap_net_raw; the session and unit are the test's own
              "state": "stale", "grant": ["cap_net_raw"],
              "beyond": ["cap_net_bind_service", "cap_net_admin", "cap_syslog"],
              "sessionid": p[0]["sessionid"], "unit": p[0]["unit"], "unit_hex": p[0]["unit_hex"]}], p
sid = int(open("/proc/self/sessionid").read())   # the case's own, which the process inherited
assert p[0]["sessionid"] == (None if sid == 4294967295 else sid), p
def rejects(doc):
    with open(out + ".mut", "w") as f:
        json.dump(doc, f)
    return subprocess.run([checker, "--may-be-empty", "userdb.records", "--may-be-empty", "files", "--may-be-empty", "matrix",
                           "--may-be-empty", "errors", "--may-be-empty", "vanished", man,
                           out + ".mut"], stdout=subprocess.DEVNULL).returncode == 1
assert rejects(dict(d, processes=[])), "an empty processes[] passes"
for key in p[0]:
    assert rejects(dict(d, processes=[{k: v for k, v in p[0].items() if k != key}])), key
PY
}

t_unknown_command_escaped() {
  cd_run "$(printf 'frob\033[2J\342\200\256\nx')"; want_rc 2
  want_text "$ERR" "unknown command 'frob\\x1b[2J\\xe2\\x80\\xae\\x0ax'"
}

# getopt would echo a bad option raw: the subcommands name it escaped (audit prints usage only).
t_bad_option_escaped() {
  cd_run check "$(printf -- '--x\033[2J\342\200\256')"; want_rc 2
  want_text "$ERR" "capdelegate: check: bad option '--x\\x1b[2J\\xe2\\x80\\xae'"
  cd_run explain alice --config; want_rc 2; want_text "$ERR" "explain: bad option '--config'"
  # a bad short option inside a cluster is named alone, not by the word around it
  cd_run check -xc foo; want_rc 2; want_text "$ERR" "check: bad option '-x' (unknown"
  cd_run audit "$(printf -- '--\033[2J\342\200\256')"; want_rc 2
  no_text "$ERR" "$(printf '\033')"; no_text "$ERR" "$(printf '\342\200\256')"
}

# check judges the directories of the policy's resolved target, not those above a symlink.
t_check_resolved_symlink() {
  need_root; local g="$CASE_DIR/grp" s="$CASE_DIR/safe" u="$CASE_DIR/open"
  mkdir -p "$g" "$s" "$u"; chmod 0775 "$g"; chmod 0755 "$s"; chmod 0777 "$u"
  printf 'alice cap_net_raw\n' >"$g/p.conf"; printf 'alice cap_net_raw\n' >"$s/p.conf"
  chmod 0644 "$g/p.conf" "$s/p.conf"
  ln -s "$g/p.conf" "$s/to-grp.conf"; ln -s ../safe/p.conf "$u/to-safe.conf"
  # The core judges the target's directories (the module's verdict): an error, not a warning.
  cd_nss check --config "$s/to-grp.conf"; want_rc 2
  want_text "$ERR" "($g is writable by group or others; owner uid 0, mode 0775): policy rejected"
  no_text "$ERR" "($s "
  cd_nss check --config "$u/to-safe.conf"; want_rc 0
  no_text "$ERR" "$u"
}

# ---- explain resolves as the module does: canonical names, NSS failures ----------------------

t_explain_canonical_name() {
  need_root; local p; p=$(printf 'bob none\n@netops cap_net_raw\n' | policy)
  # A case-insensitive backend (nss_fault.so's CD_FAULT_CASEFOLD, like SSSD): BOB is bob.
  CD_FAULT_CASEFOLD=1 cd_nss explain BOB --config "$p" "$CASE_DIR"; want_rc 0
  want_line "$OUT" "user\tbob\t1002\tbob,netops"
  want_line "$OUT" "pI\tnone\tuser"
}

t_explain_group_outage() {
  need_root; local p; p=$(printf '@netops none\n* cap_syslog\n' | policy)
  CD_FAULT_GROUPS=netops:2000 cd_nss explain bob --config "$p" "$CASE_DIR"; want_rc 2
  want_text "$ERR" "bob: cannot tell whether the user is in group netops: a group backend fails (the probe lookup of capdelegate:probe: Resource temporarily unavailable): login grants nothing"
  no_text "$OUT" "cap_syslog"
}

# ---- cases that kill the hand-made mutants (tests/mutations) --------------------------------

# Every capability capdelegate(8) lists as leading to full root is warned about, each on its own
# line; capabilities outside the list are not.
t_check_risky_every_listed() {
  need_root; local p c n=0
  for c in $(sed -n '/leads to full root/,/);/p' "$MAN" | grep -o 'cap_[a-z_]*'); do
    n=$((n + 1)); p=$(printf 'alice %s\n' "$c" | policy)
    cd_nss check --config "$p"; want_rc 1
    want_text "$ERR" "$p:1: grants capabilities that lead to full root: $c"
  done
  [ "$n" -eq 21 ] || fail "capdelegate(8) lists $n capabilities, this test knows 21"
  for c in cap_net_raw cap_net_admin cap_net_bind_service cap_syslog cap_kill cap_audit_write; do
    p=$(printf 'alice %s\n' "$c" | policy)
    cd_nss check --config "$p"; want_rc 0; no_text "$ERR" "full root"
  done
}

# The core's messages on the CLI's stderr carry their priority: the same text the module logs.
t_log_labels() {
  need_root; local p
  cd_nss check --config "$CASE_DIR/none.conf"; want_rc 2
  want_line "$ERR" "capdelegate: error: $CASE_DIR/none.conf: policy file missing: no capabilities granted"
  p=$(printf 'alice cap_nonesuch\n' | policy)
  cd_nss check --config "$p"; want_rc 2
  want_line "$ERR" "capdelegate: error: $p:1: unknown capability: 'cap_nonesuch'"
}

# A sticky directory, root's, writable by all (like /tmp) is no finding above a capability
# file: others cannot rename root's entries away. Without the sticky bit it is.
t_audit_sticky_dir_not_a_finding() {
  need_root; local p t; p=$(std_policy); t="$CASE_DIR/tree"
  capfile "$t/sticky/ping_i" cap_net_raw=i
  chmod 1777 "$t/sticky"
  cd_nss audit --config "$p" "$t"
  no_text "$OUT" "writable-directory"
  chmod 0777 "$t/sticky"
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	writable-directory	$t/sticky	none"
}

# Names as winbind and SSSD return them, printed in the policy's own form.
t_explain_directory_names() {
  need_root; local p NSSDIR="$CASE_DIR/nss"
  p=$(linux_admins)
  cd_nss explain 'CORP\winuser' --config "$p" "$CASE_DIR/nss"; want_rc 0
  want_line "$OUT" 'user\tCORP\\winuser\t1008\tlinux\\040admins'
  want_line "$OUT" "match\t$p:1\tgroup\t@linux\\\\040admins\tcap_net_raw"
  cd_nss check --config "$p"; want_rc 0
  # explain's reason for a failed group names the group in its policy form: a bare blank would
  # read as two words (and break a column in an aligned table)
  printf 'root:x:0:0::/root:/bin/sh\nCORP\\winuser:x:1008:1008::/:/bin/sh\nbob:x:1002:1002::/:/bin/sh\n' >"$NSSDIR/passwd"
  CD_FAULT_GROUPS='linux admins:2003' cd_nss explain bob --config "$p" "$CASE_DIR/nss"; want_rc 2
  want_text "$ERR" "bob: cannot tell whether the user is in group linux\\040admins: a group backend fails"
  no_text "$ERR" "linux admins"
}

# Drop-ins: check and explain read --confdir as the module reads confdir=; check
# lists what it does not read; explain names each matched line's file.
t_check_explain_dropins() {
  need_root; local p d="$CASE_DIR/capdelegate.d"
  p=$(printf 'alice cap_net_raw\n' | policy)
  mkdir -p "$d"
  printf 'alice cap_kill\n' >"$d/20-alice.conf"; printf 'bob cap_net_admin\n' >"$d/10-bob.conf"
  printf 'bob cap_sys_admin\n' >"$d/10-bob.conf~"; printf 'x\n' >"$d/.hidden.conf"
  chmod 0644 "$d"/*.conf "$d"/*~ "$d/.hidden.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 0
  want_text "$ERR" "note: $d/10-bob.conf~: not read"
  want_text "$ERR" "note: $d/.hidden.conf: not read"
  cd_nss explain alice --config "$p" --confdir "$d" "$d"; want_rc 0
  want_line "$OUT" "match\t$p:1\tuser\talice\tcap_net_raw"
  want_line "$OUT" "match\t$d/20-alice.conf:1\tuser\talice\tcap_kill"
  want_line "$OUT" "pI\tcap_kill,cap_net_raw\tuser"
  cd_nss explain alice --config "$p" --confdir "" "$d"; want_rc 0
  want_line "$OUT" "pI\tcap_net_raw\tuser"
  printf 'bob cap_chwn\n' >"$d/10-bob.conf"
  cd_nss check --config "$p" --confdir "$d"; want_rc 2
  want_text "$ERR" "$d/10-bob.conf:1: unknown capability: 'cap_chwn'"
}

# audit reads a service's drop-ins as the module's confdir= does. The main
# file grants nothing; the service's drop-in delegates cap_net_raw to alice: a file with
# cap_net_raw in fP bypasses that delegation (fP-bypass, exit 2). --confdir "" reads none (the
# fP is then only "permitted"), and the drop-in's line is named as its own FILE:LINE.
# capdelegate(8), FINDINGS: a finding about a policy line names the file that holds it, a
# drop-in's line its drop-in (text and JSON, and each JSON rule its file).
t_audit_dropin_line_named() {
  need_root; local p t d="$CASE_DIR/svc.d"
  p=$(printf 'bob none\n' | policy); t="$CASE_DIR/tree"
  mkdir -p "$d" "$t"; printf '# the time\nalice cap_sys_time\n' >"$d/40-time.conf"; chmod 0644 "$d/40-time.conf"
  cd_nss audit --config "$p" --confdir "$d" "$t"; want_rc 1
  want_text "$OUT" "finding	unused-grant	$d/40-time.conf:2	cap_sys_time	"
  no_text "$OUT" "$p:2"
  cd_nss audit --json --config "$p" --confdir "$d" "$t"; want_rc 1
  python3 - "$OUT" "$d/40-time.conf" "$p" <<'PY' >&2 || fail "JSON: the drop-in's line"
import json, sys
d = json.load(open(sys.argv[1]))
assert any(f["id"] == "unused-grant" and f["path"] == sys.argv[2] and f["line"] == 2
           for f in d["findings"]), d["findings"]
assert [(r["file"], r["line"]) for r in d["policy"]["rules"]] == [(sys.argv[3], 1), (sys.argv[2], 2)], d["policy"]
PY
}

t_audit_confdir() {
  need_root; local p t d="$CASE_DIR/svc.d"
  p=$(printf 'bob none\n' | policy); t="$CASE_DIR/tree"
  mkdir -p "$d"; printf 'alice cap_net_raw\n' >"$d/10-alice.conf"; chmod 0644 "$d/10-alice.conf"
  capfile "$t/raw_ep" cap_net_raw=ep
  cd_nss audit --config "$p" --confdir "$d" "$t"; want_rc 2
  want_text "$OUT" "finding	fP-bypass	$t/raw_ep	cap_net_raw	"
  want_line "$OUT" "gain\talice\t$t/raw_ep\tcap_net_raw\tcap_net_raw"
  cd_nss audit --json --config "$p" --confdir "$d" "$t"; want_rc 2
  python3 - "$OUT" "$d/10-alice.conf" <<'PY' >&2 || fail "JSON: the drop-in's rule"
import json, sys
d = json.load(open(sys.argv[1]))
assert any(f["id"] == "fP-bypass" and f["caps"] == ["cap_net_raw"] for f in d["findings"]), d["findings"]
PY
  cd_nss audit --config "$p" --confdir "" "$t"; want_rc 1
  no_text "$OUT" "fP-bypass"
  want_text "$OUT" "finding	permitted	$t/raw_ep	cap_net_raw	"
}

# capdelegate(8), writable-file: "The capability file is not owned by root": its owner can
# replace its contents (and setcap it again) whatever its mode.
t_audit_capfile_owned_by_user() {
  need_root; local p t="$CASE_DIR/tree"; p=$(std_policy)
  capfile "$t/f" cap_net_raw=i; chown 1001 "$t/f"; setcap cap_net_raw=i "$t/f"   # chown clears it
  chmod 0755 "$t/f"
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_line "$OUT" "finding\twritable-file\t$t/f\tnone\tcapability file is owned by uid 1001"
  cd_nss audit --json --config "$p" "$t"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [f["path"] for f in d["findings"] if f["id"]=="writable-file"]==[sys.argv[2]], d["findings"]' "$OUT" "$t/f" \
    || fail "JSON: no writable-file finding for the file"
}

# unused-grant: "no capability file found consumes" the grant through fI, and "findings about
# fP and fI are not made for files whose capabilities the kernel ignores": a grant that only a
# revision-3 value with rootid 1000 (ignored on this host), or only a file on a nosuid mount,
# would consume is unused. bob's line, consumed by a plain file, is not.
t_audit_unused_grant_ignored_file() {
  need_root; local p t="$CASE_DIR/tree" mnt="$CASE_DIR/mnt"
  p=$(printf 'alice cap_net_raw\nbob cap_net_admin\n' | policy)
  capfile "$t/admin_i" cap_net_admin=i
  rev3file "$t/ns_raw_i" 00000003 00000000 00200000 00000000 00000000 e8030000   # fI cap_net_raw
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_line "$OUT" "file\t$t/ns_raw_i\t3\tnone\tcap_net_raw\tno\t1000\trevision 3 rootid is not 0 (applies only inside that user namespace)"
  want_text "$OUT" "finding	unused-grant	$p:1	cap_net_raw	"
  no_text "$OUT" "$p:2"
  mkdir -p "$mnt"
  mount -t tmpfs -o nosuid,size=1m capdelegate-test "$mnt" 2>/dev/null || return 0   # the rootid half stands
  capfile "$mnt/raw_i" cap_net_raw=i 2>/dev/null || { umount "$mnt"; return 0; }
  rm -f "$t/ns_raw_i"
  cd_nss audit --config "$p" "$t" "$mnt" || true
  umount "$mnt"
  want_rc 1
  want_text "$OUT" "finding	nosuid	$mnt/raw_i	cap_net_raw	"
  want_text "$OUT" "finding	unused-grant	$p:1	cap_net_raw	"
}

# unused-grant, capdelegate(8): a line whose capabilities no scanned file consumes through fI.
# A tree of one capability file: the line it consumes is not unused, the others are, cap_chown
# (capability 0) as any other.
t_audit_unused_grant_one_file() {
  need_root; local p t="$CASE_DIR/tree"
  p=$(printf 'alice cap_net_raw\nbob cap_net_admin\ncarol cap_chown\n' | policy)
  capfile "$t/admin_i" cap_net_admin=i
  cd_nss audit --config "$p" "$t"; want_rc 1
  want_text "$OUT" "finding	unused-grant	$p:1	cap_net_raw	"
  want_text "$OUT" "finding	unused-grant	$p:3	cap_chown	"
  no_text "$OUT" "$p:2"
}

# An oversized security.capability value (more bytes than its revision's size) is malformed:
# the kernel accepts exactly 12, 20 and 24 bytes (get_vfs_caps_from_disk) and execve fails
# otherwise. decode says so for each revision; a file carrying one (written into an ext4 image
# by debugfs: setxattr refuses such values) is "unreadable" for audit and marks check.
t_oversized_capability_value() {
  local v
  for v in 0x0000000200200000000000000000000000000000000000000000 \
           0x00000003002000000000000000000000000000000000000000000000; do
    cd_run decode "$v"; want_rc 1; want_text "$OUT" "malformed:"; want_text "$OUT" "is not"
  done
  need_root; local p d="$CASE_DIR/img" m; p=$(std_policy)
  command -v debugfs >/dev/null && command -v mke2fs >/dev/null || skip "e2fsprogs missing"
  mkdir -p "$d/src" "$d/mnt"; : >"$d/src/big"; chmod 0755 "$d/src/big"
  truncate -s 8M "$d/fs.img"
  mke2fs -q -t ext4 -d "$d/src" -F "$d/fs.img" >&2
  # revision 2, =i cap_net_raw, and 4 bytes too many
  printf '\000\000\000\002\000\000\000\000\000\040\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >"$d/vbig"
  debugfs -w -R "ea_set -f $d/vbig /big security.capability" "$d/fs.img" 2>/dev/null
  mount -o loop,ro "$d/fs.img" "$d/mnt" 2>/dev/null || skip "cannot loop-mount an image here"
  cd_nss audit --config "$p" "$d/mnt"; local rc_audit=$RC; cp "$OUT" "$CASE_DIR/audit"
  m=$(printf '%s\n' "$d/mnt/big cap_net_raw=i" | policy marks)
  cd_run marks check --marks "$m"
  umount "$d/mnt"
  RC=$rc_audit; want_rc 1
  want_text "$CASE_DIR/audit" "$(printf 'file\t%s\t0\tunknown\tunknown\tunknown\t-\tvalue not shown by the kernel' "$d/mnt/big")"
  want_text "$CASE_DIR/audit" "finding	unreadable	$d/mnt/big	none	"
  no_text "$CASE_DIR/audit" "gain	"
  want_text "$OUT" "$(printf 'mark\t%s\tunreadable\tdrift' "$d/mnt/big")"
}

# ---- runner ---------------------------------------------------------------------------------

CASES=(
  help decode_rev1 decode_rev2_high_caps decode_rev3_rootid decode_malformed decode_every_hex_digit manpage_examples
  check_clean check_syntax_error check_unknown_user_group check_risky check_unsafe_file
  check_unsafe_dir check_missing check_stray_operand explain_space_in_name
  explain_user_line explain_group explain_default explain_user_none_beats_group
  explain_default_paths explain_default_paths_usr explain_root_note explain_unknown_user explain_rejected_policy explain_path_unreadable
  audit_revisions audit_matrix audit_finding_permitted audit_finding_rootid
  audit_finding_undelegated audit_finding_unused_grant audit_finding_writable_file
  audit_finding_writable_dir audit_finding_nosuid audit_finding_nosuid_bind audit_clean_exit audit_policy_rejected
  audit_json_schema audit_hostile_names audit_processes audit_processes_threads audit_unreadable_values audit_skips_pseudo_mounts
  audit_single_file_and_threads audit_beyond_path_max "${AUDIT_CASES[@]}"
  check_contradiction escape_hidden_chars processes_comm_escaped_once processes_json_fields
  unknown_command_escaped check_resolved_symlink bad_option_escaped check_risky_every_listed log_labels
  audit_sticky_dir_not_a_finding
  check_lookup_failed_not_unknown explain_canonical_name explain_group_outage explain_directory_names check_explain_dropins explain_path_root
  audit_confdir audit_dropin_line_named audit_capfile_owned_by_user audit_unused_grant_ignored_file audit_unused_grant_one_file
  oversized_capability_value
  "${IMPORT_CASES[@]}" "${OUTPUT_CASES[@]}" "${MARKS_CASES[@]}" "${NAMES_CASES[@]}" "${LOAD_CASES[@]}"
  "${USABILITY_CASES[@]}" "${EDIT_CASES[@]}" "${REPORT_CASES[@]}" "${USERDB_CASES[@]}" "${PLAUSIBLE_CASES[@]}"
  "${WINDOWS_CASES[@]}" "${PROCS_CASES[@]}" "${USAGE_CASES[@]}"
  "${FAULT_CASES[@]}"
)

# case_seconds START: seconds since START (an $EPOCHREALTIME), to a tenth.
case_seconds() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

run_case() {
  local name=$1 rc=0 t0=$EPOCHREALTIME
  CASE_DIR="$WORK/$name"
  mkdir -p "$CASE_DIR"
  OUT="$CASE_DIR/out" ERR="$CASE_DIR/err"
  echo "cli: $name" >&2
  # Not `( ... ) || rc=$?`: bash ignores set -e inside a command whose status is tested,
  # and a failed check in the middle of a case would go unnoticed.
  set +e
  ( set -e; cd "$CASE_DIR"; "t_$name" ) >&2
  rc=$?
  set -e
  # Each case's time in the log, so that a slow case is found without a profiler.
  echo "cli: $name: status $rc, $(case_seconds "$t0") s" >&2
  if [ "$rc" -eq 0 ]; then
    printf 'PASS\tcli: %s\n' "$name"
  elif [ "$rc" -eq 77 ]; then
    printf 'SKIP\tcli: %s\t%s\n' "$name" "$(cat "$CASE_DIR/skip" 2>/dev/null || echo skipped)"
  else
    printf 'FAIL\tcli: %s\n' "$name"
  fi
}

# A case stopped half-way may leave a mount behind: unmount it, and never let rm cross one.
cleanup() {
  if [ "$(id -u)" -eq 0 ]; then
    awk -v w="$WORK" '$2 ~ "^"w {print $2}' /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  fi
  rm -rf --one-file-system "$WORK"
}

main() {
  case "${1:-}" in
    -h|--help) usage; exit 0 ;;
    --list) printf '%s\n' "${CASES[@]}"; exit 0 ;;
  esac
  [ -x "$BIN" ] || { echo "tests/cli: $BIN not built (./lab build)" >&2; exit 2; }
  command -v python3 >/dev/null || { echo "tests/cli: python3 missing (./lab deps)" >&2; exit 2; }
  [ -n "$NSS_WRAPPER_LIB" ] || { echo "tests/cli: libnss_wrapper.so missing (./lab deps)" >&2; exit 2; }
  # Policies below a directory others can write are refused (/tmp too): work under /run as root.
  WORK=$(mktemp -d "$([ "$(id -u)" -eq 0 ] && echo /run || echo "${TMPDIR:-/tmp}")/capdelegate-cli.XXXXXX")
  chmod 755 "$WORK"
  trap cleanup EXIT
  make_nss
  local c jobs=${CLI_JOBS:-$(( 2 * $(nproc) ))}
  [ "$jobs" -ge 1 ] 2>/dev/null || { echo "tests/cli: CLI_JOBS=$jobs is not a number of jobs" >&2; exit 2; }
  if [ "$jobs" -eq 1 ] || [ "$#" -eq 1 ]; then
    for c in "${@:-${CASES[@]}}"; do run_case "$c"; done
  else
    run_parallel "$jobs" "${@:-${CASES[@]}}"
  fi
}

# run_parallel JOBS CASE...: the cases by JOBS workers, each taking the next case not yet
# taken (a counter under a lock). The cases are independent: each works in its own $CASE_DIR
# and names the processes it looks for. A case's log and result line are printed whole when it
# ends (in the order they end), so two cases never interleave.
run_parallel() {
  local jobs=$1 w pids=(); shift
  QUEUE=("$@")
  echo 0 >"$WORK/.next"
  for ((w = 0; w < jobs; w++)); do worker & pids+=($!); done
  for w in "${pids[@]}"; do wait "$w"; done
}

# The index of the next case to run, or status 1 when none is left.
next_case() {
  { flock 9; local n; n=$(cat "$WORK/.next")
    [ "$n" -lt "${#QUEUE[@]}" ] || return 1
    echo $((n + 1)) >"$WORK/.next"; echo "$n"; } 9>"$WORK/.next.lock"
}

worker() {
  local i name
  while i=$(next_case); do
    name=${QUEUE[$i]}
    run_case "$name" >"$WORK/.$name.result" 2>"$WORK/.$name.log"
    { flock 9; cat "$WORK/.$name.log" >&2; cat "$WORK/.$name.result"; } 9>"$WORK/.print.lock"
  done
}

main "$@"
