# output-cases.sh: the three output forms of check, explain and audit (sourced by run.sh): aligned
# tables on a terminal, TSV elsewhere and with --tsv, JSON (audit). The terminal is a pty (python3).

# cd_tty ARGS...: the CLI under nss_wrapper with stdout (and stderr) on a pty; output in $OUT,
# '\r' removed, exit status in $RC. TTY_PRELOAD: one more library to preload (a shim).
cd_tty() {
  RC=0
  python3 - "$BIN" "$@" >"$OUT" <<PY || RC=$?
import os, pty, sys
env = dict(os.environ, LD_PRELOAD="${TTY_PRELOAD:+$TTY_PRELOAD:}$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB",
           NSS_WRAPPER_PASSWD="$NSSDIR/passwd", NSS_WRAPPER_GROUP="$NSSDIR/group")
pid, fd = pty.fork()
if pid == 0:
    os.execve(sys.argv[1], sys.argv[1:], env)
data = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(data.replace(b"\r\n", b"\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

# Every table of FILE (blocks after a header line, up to a blank line) is aligned: each cell
# starts at its header's column, counted in terminal columns (wide characters take two,
# combining marks none). Prints
# the header lines found.
tables_aligned() {
  python3 - "$1" <<'PY'
import sys, unicodedata
def cols(s):      # display column of each character
    out, c = [], 0
    for ch in s:
        out.append(c)
        c += 0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return out, c
def starts(line):  # display columns where a cell starts: after two blanks or at 0
    pos, _ = cols(line)
    return [pos[i] for i, ch in enumerate(line) if ch != " " and (i == 0 or line[i - 2:i] == "  ")]
blocks = open(sys.argv[1], encoding="utf-8").read().split("\n\n")
headers = 0
for b in blocks:
    lines = [l for l in b.split("\n") if l]
    if lines and lines[0].startswith("== "):   # a heading above the table (explain)
        print(lines.pop(0))
    if len(lines) < 2 or not (lines[0].split()[0].isupper() or lines[0].startswith("pI ")):
        continue
    headers += 1
    want = starts(lines[0])
    for l in lines[1:]:
        got = starts(l)
        assert got[:len(want) - 1] == want[:len(want) - 1], (lines[0], l, want, got)
        assert "\t" not in l and "\x1b" not in l, l
    print(lines[0])
assert headers > 0, "no table"
PY
}

t_output_table_check() {
  need_root; local p; p=$(std_policy)
  cd_tty check --config "$p"; want_rc 0
  want_line "$OUT" "$p: ok, 4 rules, 0 warnings"	# the verdict stays the first line
  tables_aligned "$OUT" >"$CASE_DIR/headers" || fail "check's table is not aligned"
  want_line "$CASE_DIR/headers" "LINE$(printf ' %.0s' $(seq 1 ${#p}))SUBJECT  CAPABILITIES"
  want_text "$OUT" "$p:2  @netops  cap_net_admin,cap_net_raw"
  cd_tty check --tsv --config "$p"; want_rc 0
  want_line "$OUT" "rule\t$p:2\t@netops\tcap_net_admin,cap_net_raw"
  cd_nss check --config "$p"; want_line "$OUT" "rule\t$p:4\tdave\tnone"
}

t_output_table_explain() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  cd_tty explain alice --config "$p" "$t/bin"; want_rc 0
  tables_aligned "$OUT" >"$CASE_DIR/headers" || fail "explain's tables are not aligned"
  for h in "USER" "POLICY" "LINE" "pI" "FILE"; do grep -q "^$h " "$CASE_DIR/headers" || fail "no $h table"; done
  # capdelegate(8): each of explain's tables under its heading, in this order
  grep '^== ' "$CASE_DIR/headers" >"$CASE_DIR/titles"
  printf '%s\n' "== The user, as NSS returns it" "== The policy" "== The policy's lines that decide the grant" \
    "== The inheritable set login gives the user (pI)" "== At exec: what each file gives the user (pP' and pE')" \
    | cmp -s - "$CASE_DIR/titles" || fail "explain's headings: $(paste -sd'|' "$CASE_DIR/titles")"
  want_text "$CASE_DIR/headers" "fP                    fI             fE   pP'                   pE'"
  want_text "$OUT" "$t/bin/ping_ei  none                  cap_net_raw    yes  cap_net_raw           cap_net_raw"
  no_text "$OUT" "fP="	# the header names the column once
  # --tsv on a terminal is exactly the form a pipe gets
  cd_tty explain alice --tsv --config "$p" "$t/bin"; cp "$OUT" "$CASE_DIR/tsv"
  cd_nss explain alice --config "$p" "$t/bin"
  cmp -s "$OUT" "$CASE_DIR/tsv" || fail "--tsv on a terminal differs from the piped output"
  no_text "$OUT" "== "	# headings are the table form's only
}

t_output_table_audit_escaped() {
  need_root; local p t="$CASE_DIR/tree"; p=$(std_policy)
  capfile "$t/$(printf 'esc\033[31mred')" cap_net_raw=i
  capfile "$t/$(printf 'wide\346\227\245\346\234\254')" cap_net_raw=i
  capfile "$t/$(printf 'cafe\314\201')" cap_net_raw=i	# e and a combining acute: one column
  capfile "$t/plain" cap_net_raw=i
  cd_tty audit --config "$p" "$t"; want_rc 1
  tables_aligned "$OUT" >"$CASE_DIR/headers" || fail "audit's tables are not aligned"
  for h in FILE SUBJECT FINDING; do grep -q "^$h " "$CASE_DIR/headers" || fail "no $h table"; done
  want_text "$OUT" "$t/esc\\x1b[31mred  2    none"	# escaped, and measured escaped
  no_text "$OUT" "$(printf '\033')"
  want_text "$OUT" "# policy  $p  ok  4 rules"
  cd_tty audit --tsv --config "$p" "$t"; cp "$OUT" "$CASE_DIR/tsv"
  cd_nss audit --config "$p" "$t"
  cmp -s "$OUT" "$CASE_DIR/tsv" || fail "--tsv on a terminal differs from the piped output"
  cd_tty audit --json --config "$p" "$t"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" || fail "--json on a terminal is not JSON"
}


# capdelegate(8)'s OUTPUT FORMS examples (table and TSV of explain alice /usr/bin) are what
# explain prints for that policy line and file: here under the case's paths, so the table is
# compared with its columns' blank runs reduced to one tab (tables_aligned checks the widths).
t_output_manpage_forms() {
  need_root; local p t="$CASE_DIR/tree/bin"
  p=$(printf '# demo\nalice cap_net_raw\n' | policy)
  capfile "$t/ping" cap_net_raw=i
  cd_tty explain alice --config "$p" "$t"; want_rc 0
  awk '/^\$ capdelegate explain alice \/usr\/bin$/{f=1;next} f&&/^\.EE/{exit} f' "$MAN" |
    sed 's/^\.sp$//; s/\\-/-/g' | sed "s|/etc/security/capdelegate.conf|$p|; s|/usr/bin/ping|$t/ping|" |
    sed -E 's/  +/\t/g' >"$CASE_DIR/want"
  sed -E 's/  +/\t/g' "$OUT" >"$CASE_DIR/got"
  [ -s "$CASE_DIR/want" ] || fail "no table example in capdelegate(8)"
  diff "$CASE_DIR/want" "$CASE_DIR/got" >&2 || fail "capdelegate(8)'s table example differs"
  cd_nss explain alice --config "$p" "$t"
  want_line "$OUT" "$(grep -o '^exec^I.*\$$' "$MAN" | sed 's/\^I/\\t/g; s/\$$//; s/\\-/-/g' | sed "s|/usr/bin/ping|$t/ping|")"
}

OUTPUT_CASES=(output_table_check output_table_explain output_table_audit_escaped output_manpage_forms
  output_table_explain_group_with_blank output_processes_user_with_blank)

# A group name with a blank ("linux admins", as winbind returns it) in explain's tables and in
# its outage message on a terminal: always linux\040admins, the policy's form, never a bare
# blank that would read as two words and split a column.
t_output_table_explain_group_with_blank() {
  need_root; local p NSSDIR="$CASE_DIR/nss"
  p=$(linux_admins)
  cd_tty explain 'CORP\winuser' --config "$p" "$CASE_DIR/nss"; want_rc 0
  tables_aligned "$OUT" >"$CASE_DIR/headers" || fail "explain's tables are not aligned"
  for h in USER LINE; do grep -q "^$h " "$CASE_DIR/headers" || fail "no $h table"; done
  grep -q '^CORP\\winuser  .*  linux\\040admins$' "$OUT" || fail "the user's row does not name linux\\040admins"
  grep -q "^$p:1  .*@linux\\\\040admins  " "$OUT" || fail "the matched line's row does not name @linux\\040admins"
  no_text "$OUT" "linux admins"
  # the group's directory is down: the outage message (on the same terminal) names the group
  # in the same form
  CD_FAULT_GROUPS='linux admins:2003' cd_tty explain 'CORP\winuser' --config "$p" "$CASE_DIR/nss"; want_rc 2
  want_text "$OUT" 'capdelegate: explain: CORP\winuser: cannot tell whether the user is in group linux\040admins: a group backend fails'
  want_text "$OUT" ': login grants nothing'
  no_text "$OUT" "linux admins"
}

# audit --processes names each process's user in the policy's form too: a user "CORP\john
# smith" (winbind) is CORP\john\040smith in the TSV and in the USER column of the table.
t_output_processes_user_with_blank() {
  need_root; local p pid
  command -v setpriv >/dev/null || skip "setpriv missing"
  cp -r "$NSSDIR" "$CASE_DIR/nss"; local NSSDIR="$CASE_DIR/nss"
  printf 'CORP\\john smith:x:43211:43211::/:/bin/sh\n' >>"$NSSDIR/passwd"
  p=$(std_policy)
  setpriv --inh-caps +net_raw setpriv --reuid 43211 --regid 43211 --clear-groups sleep 60 &
  pid=$!
  sleep 0.3
  cd_nss audit --processes --config "$p" "$CASE_DIR"
  want_line "$OUT" "process\t$pid\t$pid\tCORP\\\\john\\\\040smith\tsleep\tcap_net_raw"
  cd_tty audit --processes --config "$p" "$CASE_DIR"
  kill "$pid"
  grep -qE "^$pid +$pid +CORP\\\\john\\\\040smith +sleep " "$OUT" || fail "no table row for $pid naming CORP\\john\\040smith"
  no_text "$OUT" "john smith"
}
