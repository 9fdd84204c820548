# marks-cases.sh: capdelegate-files.conf(5) and `capdelegate marks check|apply`, audit's mark
# findings (sourced by run.sh). Every drift kind is made with setcap/setfattr on a fixture tree
# below the case's directory (root's, 0755, under /run); syslog lines are captured by the
# LD_PRELOAD shim syslog_capture.c.

MARKS_CASES=(
  marks_check_every_state marks_apply_fixes_and_logs marks_apply_twice_changes_nothing
  marks_apply_dry_run marks_apply_refuses marks_apply_quiet marks_unreadable_value
  marks_file_hostile_lines marks_file_unsafe marks_file_missing marks_check_json
  audit_marks_findings audit_fp_bypass marks_manpage_example
  marks_two_lines_one_path marks_apply_group_writable_dir marks_fp_undeclared_cap
  marks_apply_xattr_dropped marks_xattr_unreadable marks_apply_through_descriptor marks_parent_not_a_directory
  marks_refused_dirs_hold_no_descriptor marks_check_stdin_closed
  marks_alias_directory_link marks_alias_hard_link marks_apply_write_fails marks_file_unjudged
  marks_stray_operand marks_apply_stops_out_of_memory marks_check_out_of_memory marks_empty_value marks_alias_two_filesystems
  marks_readme_agrees_with_example
  marks_audit_rules_per_file marks_audit_rules_nothing_declared marks_audit_rules_sync
)

# marks FILE-NAME < text: a root-owned 0644 marks file; prints its path.
marks_file() { policy "${1:-marks}"; }

# The fixture: one file per state. Prints the directory.
marks_tree() {
  local t="$CASE_DIR/m"
  capfile "$t/ok" cap_net_raw=i
  capfile "$t/ep" cap_net_raw=ep                  # Debian's iputils-ping postinst
  mkdir -p "$t"; : >"$t/bare"; chmod 0755 "$t/bare"  # no xattr (cp, tar without xattrs)
  capfile "$t/other" cap_net_admin=i
  capfile "$t/suid" cap_net_raw=i; chmod 4755 "$t/suid"
  capfile "$t/sgid_kept" cap_net_raw=i; chmod 2755 "$t/sgid_kept"
  capfile "$t/target" cap_net_admin=i; ln -s target "$t/link"
  capfile "$t/owned" cap_net_raw=i; chown 1001 "$t/owned"; setcap cap_net_raw=i "$t/owned"  # chown clears it
  capfile "$t/gw" cap_net_raw=i; chmod 0775 "$t/gw"
  capfile "$t/rootid" cap_net_raw=i
  rev3file "$t/rootid" 00000003 00000000 00200000 00000000 00000000 e8030000
  echo "$t"
}

marks_std() { # marks_std TREE: the marks file for marks_tree
  local t=$1
  printf '%s\n' "# declared marks" "$t/ok cap_net_raw=i" "$t/ep cap_net_raw=i nosuid" \
    "$t/bare cap_net_raw=i" "$t/other cap_net_raw=i" "$t/suid cap_net_raw=i nosuid" \
    "$t/sgid_kept cap_net_raw=i" "$t/link cap_net_raw=i" "$t/owned cap_net_raw=i" \
    "$t/gw cap_net_raw=i" "$t/absent cap_net_raw=i" "$t/rootid cap_net_raw=i" | marks_file
}

# cd_log_run ARGS...: the CLI with syslog captured into $CASE_DIR/syslog.
cd_log_run() {
  [ -f "$CASE_DIR/syslog_capture.so" ] || cc -shared -fPIC -o "$CASE_DIR/syslog_capture.so" "$HERE/syslog_capture.c"
  RC=0
  SYSLOG_CAPTURE="$CASE_DIR/syslog" LD_PRELOAD="$CASE_DIR/syslog_capture.so" "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?
}

t_marks_check_every_state() {
  need_root; local t m; t=$(marks_tree); m=$(marks_std "$t")
  cd_run marks check --marks "$m"; want_rc 2
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  want_line "$OUT" "mark\t$t/ep\tfP-bypass\tdrift\tcap_net_raw=i nosuid\tcap_net_raw=ep\tfP bypass: every user gains cap_net_raw"
  want_line "$OUT" "mark\t$t/ep\tdiffers\tdrift\tcap_net_raw=i nosuid\tcap_net_raw=ep\tfI, fE or rootid differ from the mark"
  want_line "$OUT" "mark\t$t/bare\tno-xattr\tdrift\tcap_net_raw=i\tnone\tno security.capability: nobody gains these through the file"
  want_line "$OUT" "mark\t$t/other\tdiffers\tdrift\tcap_net_raw=i\tcap_net_admin=i\tfI, fE or rootid differ from the mark"
  want_line "$OUT" "mark\t$t/suid\tsetuid\tdrift\tcap_net_raw=i nosuid\tcap_net_raw=i\tsetuid bit (mode 4755) on a nosuid mark: apply removes it"
  want_text "$OUT" "mark	$t/sgid_kept	setuid	warning	cap_net_raw=i	cap_net_raw=i	setgid bit (mode 2755): the file runs"
  want_line "$OUT" "mark\t$t/link\trefused\terror\tcap_net_raw=i\t-\tis a symbolic link: a mark goes on the file itself: not changed"
  want_line "$OUT" "mark\t$t/owned\trefused\terror\tcap_net_raw=i\t-\tis owned by uid 1001, not root: not changed"
  want_line "$OUT" "mark\t$t/gw\trefused\terror\tcap_net_raw=i\t-\tis writable by group or others (mode 0775): not changed"
  want_line "$OUT" "mark\t$t/absent\tmissing\twarning\tcap_net_raw=i\t-\tno such file (package not installed?): skipped"
  want_line "$OUT" "mark\t$t/rootid\tdiffers\tdrift\tcap_net_raw=i\tcap_net_raw=i rootid=1000\tfI, fE or rootid differ from the mark"
  [ "$(count_lines "$OUT" '^mark')" -eq 12 ] || fail "want 12 records"
  # Without the refused files: drift and warnings only, exit 1; a clean file alone: exit 0.
  m=$(grep -v -e /link -e /owned -e /gw "$m" | marks_file m2)
  cd_run marks check --marks "$m"; want_rc 1
  m=$(printf '%s\n' "$t/ok cap_net_raw=i" | marks_file m3)
  cd_run marks check --marks "$m"; want_rc 0
}

t_marks_apply_fixes_and_logs() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ok cap_net_raw=i" "$t/ep cap_net_raw=i nosuid" "$t/bare cap_net_raw,cap_net_admin=ei" \
      "$t/suid cap_net_raw=i nosuid" "$t/absent cap_net_raw=i" "$t/rootid cap_net_raw=i" | marks_file)
  chmod 6755 "$t/ep"
  cd_log_run marks apply --marks "$m"; want_rc 0
  want_line "$OUT" "$t/ep: removed setuid and setgid (mode 6755 -> 0755)"
  want_line "$OUT" "$t/ep: cap_net_raw=ep -> cap_net_raw=i"
  want_line "$OUT" "$t/bare: none -> cap_net_admin,cap_net_raw=ei"
  want_line "$OUT" "$t/suid: removed setuid (mode 4755 -> 0755)"
  want_line "$OUT" "$t/absent: no such file (package not installed?): skipped"
  want_line "$OUT" "$t/rootid: cap_net_raw=i rootid=1000 -> cap_net_raw=i"
  no_text "$OUT" "$t/ok"
  [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=i" ] || fail "ep not fixed: $(getcap "$t/ep")"
  [ "$(getcap "$t/bare")" = "$t/bare cap_net_admin,cap_net_raw=ei" ] || fail "bare not marked"
  [ "$(stat -c %a "$t/ep") $(stat -c %a "$t/suid")" = "755 755" ] || fail "setuid bits left"
  # One syslog line per change, authpriv.notice, ident capdelegate, the printed text.
  want_line "$CASE_DIR/syslog" "capdelegate authpriv.5 $t/ep: cap_net_raw=ep -> cap_net_raw=i"
  want_line "$CASE_DIR/syslog" "capdelegate authpriv.5 $t/suid: removed setuid (mode 4755 -> 0755)"
  [ "$(wc -l <"$CASE_DIR/syslog")" -eq 5 ] || fail "want 5 syslog lines"
  cd_run marks check --marks "$m"; want_rc 1   # the absent file stays a warning
  [ "$(count_lines "$OUT" '	ok	ok	')" -eq 5 ] || fail "want 5 files ok after apply"
}

t_marks_apply_twice_changes_nothing() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i nosuid" "$t/other cap_net_raw=i" | marks_file)
  cd_log_run marks apply --marks "$m"; want_rc 0
  [ "$(wc -l <"$OUT")" -eq 2 ] || fail "want 2 changes the first time"
  rm -f "$CASE_DIR/syslog"
  cd_log_run marks apply --marks "$m"; want_rc 0
  [ ! -s "$OUT" ] || fail "the second apply printed something"
  [ ! -e "$CASE_DIR/syslog" ] || fail "the second apply logged something"
}

t_marks_apply_dry_run() {
  need_root; local t m before; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i nosuid" "$t/suid cap_net_raw=i nosuid" "$t/ok cap_net_raw=i" | marks_file)
  before=$(getcap -r "$t" | sort; stat -c '%n %a' "$t"/*)
  cd_log_run marks apply --dry-run --marks "$m"; want_rc 1
  want_line "$OUT" "$t/ep: cap_net_raw=ep -> cap_net_raw=i (dry run)"
  want_line "$OUT" "$t/suid: removed setuid (mode 4755 -> 0755) (dry run)"
  [ "$(getcap -r "$t" | sort; stat -c '%n %a' "$t"/*)" = "$before" ] || fail "--dry-run changed files"
  [ ! -e "$CASE_DIR/syslog" ] || fail "--dry-run logged"
  m=$(printf '%s\n' "$t/ok cap_net_raw=i" | marks_file m2)
  cd_run marks apply --dry-run --marks "$m"; want_rc 0
}

t_marks_apply_refuses() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/link cap_net_raw=i" "$t/owned cap_net_admin=i" "$t/gw cap_net_admin=i" \
      "$t/ep cap_net_raw=i" | marks_file)
  cd_log_run marks apply --marks "$m"; want_rc 2
  want_line "$ERR" "capdelegate: error: $t/link: is a symbolic link: a mark goes on the file itself: not changed"
  want_line "$ERR" "capdelegate: error: $t/owned: is owned by uid 1001, not root: not changed"
  want_text "$ERR" "capdelegate: error: $t/gw: is writable by group or others"
  # The link's target keeps its own value; the refused files are untouched; the rest is fixed.
  [ "$(getcap "$t/target")" = "$t/target cap_net_admin=i" ] || fail "the write followed the link"
  [ "$(getcap "$t/owned")" = "$t/owned cap_net_raw=i" ] || fail "a file not root's was changed"
  [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=i" ] || fail "a good file was not fixed"
  want_line "$CASE_DIR/syslog" "capdelegate authpriv.3 $t/owned: is owned by uid 1001, not root: not changed"
  # A directory others can write: its files can be swapped before the next apply.
  mkdir -p "$CASE_DIR/open"; chmod 0777 "$CASE_DIR/open"; capfile "$CASE_DIR/open/f" cap_net_raw=ep
  m=$(printf '%s\n' "$CASE_DIR/open/f cap_net_raw=i" | marks_file m2)
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "$CASE_DIR/open is writable by someone other than root"
  [ "$(getcap "$CASE_DIR/open/f")" = "$CASE_DIR/open/f cap_net_raw=ep" ] || fail "changed below an open directory"
}

t_marks_apply_quiet() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" "$t/absent cap_net_raw=i" | marks_file)
  cd_log_run marks apply --quiet --marks "$m"; want_rc 0
  [ ! -s "$OUT" ] && [ ! -s "$ERR" ] || fail "--quiet printed"
  want_line "$CASE_DIR/syslog" "capdelegate authpriv.5 $t/ep: cap_net_raw=ep -> cap_net_raw=i"
  m=$(printf '%s\n' "$t/link cap_net_raw=i" | marks_file m2)
  cd_run marks apply --quiet --marks "$m"; want_rc 2; want_text "$ERR" "is a symbolic link"
}

t_marks_unreadable_value() {
  need_root; local d="$CASE_DIR/img" m
  unreadable_image "$d" >/dev/null
  umount "$d/mnt"; mount -o loop "$d/fs.img" "$d/mnt" 2>/dev/null || skip "cannot loop-mount the image rw"
  m=$(printf '%s\n' "$d/mnt/bad cap_net_raw=i" "$d/mnt/rev1 cap_net_raw=i" | marks_file)
  cd_run marks check --marks "$m"; local rc1=$RC; cp "$OUT" "$CASE_DIR/check1"
  cd_run marks apply --marks "$m"; local rc2=$RC; cp "$OUT" "$CASE_DIR/apply"
  cd_run marks check --marks "$m"; local rc3=$RC
  umount "$d/mnt"
  RC=$rc1; want_rc 1
  want_text "$CASE_DIR/check1" "mark	$d/mnt/bad	unreadable	drift	cap_net_raw=i	unreadable	the kernel will not show"
  want_text "$CASE_DIR/check1" "mark	$d/mnt/rev1	unreadable	drift"
  RC=$rc2; want_rc 0; want_line "$CASE_DIR/apply" "$d/mnt/bad: unreadable -> cap_net_raw=i"
  RC=$rc3; want_rc 0
}

# Each hostile line alone in a file with a good line: the whole file is rejected (exit 2,
# FILE:LINE naming the token) and nothing is applied, not even the good line.
t_marks_file_hostile_lines() {
  need_root; local t m line want i=0; t=$(marks_tree)
  while IFS='|' read -r line want; do
    i=$((i + 1))
    m=$(printf '%s\n%b\n' "$t/ep cap_net_raw=i" "$line" | marks_file "h$i")
    cd_run marks apply --marks "$m"; want_rc 2
    want_text "$ERR" "$m:2: $want"
    want_text "$ERR" "$m: marks file rejected (1 error): no file changed"
    [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=ep" ] || fail "applied from a rejected file ($line)"
    cd_run marks check --marks "$m"; want_rc 2
  done <<'CASES'
/m/x cap_net_raw=ep|fP in a mark: everyone who executes the file would gain it, bypassing delegation: 'cap_net_raw=ep'
/m/x cap_net_raw+p|fP in a mark
/m/x cap_net_raw=eip|fP in a mark
/m/x =i|no capability named (libcap reads '=' alone as every capability): '=i'
/m/x all=i|'all' is not allowed
/m/x 13=i|capability numbers are not allowed
/m/x 9=i|capability numbers are not allowed
/m/x cap_net_raw=i2|flags are e and i after '=', '+' or '-': 'cap_net_raw=i2'
/m/x cap_net_raw2=i|unknown capability: 'cap_net_raw2'
/m/x cap_net_raw,cap_bogus=i|unknown capability: 'cap_bogus'
/m/x x=i|unknown capability: 'x'
/m/x\x7f cap_net_raw=i|control character in line
/m/x~ cap_net_raw=i~|flags are e and i
/m/x cap_net_raw=e|no fI bit left: a mark gives fI
/m/x cap_net_raw=ei-i|no fI bit left
/m/x cap_net_raw,cap_net_admin=i-i|no fI bit left
/m/x cap_net_raw=i,cap_net_admin+e|flags are e and i
/m/x cap_net_raw|no '=', '+' or '-' in capability text
/m/x|missing capabilities after the path: '/m/x'
m/x cap_net_raw=i|path is not absolute: 'm/x'
/m/../x cap_net_raw=i|'.' or '..' in path
/m/./x cap_net_raw=i|'.' or '..' in path
/m/x/.. cap_net_raw=i|'.' or '..' in path
/m/. cap_net_raw=i|'.' or '..' in path
/m//x cap_net_raw=i|empty path component
/m/ cap_net_raw=i|path names a directory
/m/x cap_net_raw=i setuid|unknown option: 'setuid'
/m/x cap_net_raw=i nosuid nosuid|option given twice: 'nosuid'
/m/x cap_net_raw=i NOSUID|unknown option: 'NOSUID'
/m/x cap_net_raw=i nosuix|unknown option: 'nosuix'
/m/x\\001 cap_net_raw=i|NUL or control character in path
/m/x\\000 cap_net_raw=i|NUL or control character in path
/m/\001x cap_net_raw=i|control character in line
/m/x\037y cap_net_raw=i|control character in line
/m/x\303 cap_net_raw=i|byte not allowed bare in a path
/m/x#y cap_net_raw=i|'#' in path
/m/x cap_net_raw#=i|'#' in capability text
/m/x cap_net_raw=i\000|NUL byte in line
/m/x none=i|no capability named: 'none=i'
/m/x cap_net_raw=i=|libcap cannot read this capability text: 'cap_net_raw=i='
/m/x cap_net_raw+=i|libcap cannot read this capability text: 'cap_net_raw+=i'
CASES
  # A path of PATH_MAX bytes or more names no file.
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" "/$(head -c 4095 /dev/zero | tr '\0' a) cap_net_raw=i" | marks_file pathmax)
  cd_run marks check --marks "$m"; want_rc 2; want_text "$ERR" "$m:2: path longer than PATH_MAX: '/aaa"
  # Blanks before the path and a DOS line end (CR LF) are read past: the line is the mark.
  m=$(printf ' \t%s\r\n' "$t/ok cap_net_raw=i" "$t/ep cap_net_raw=i" | marks_file dos)
  cd_run marks check --marks "$m"; want_rc 1
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  want_line "$OUT" "mark\t$t/ep\tdiffers\tdrift\tcap_net_raw=i\tcap_net_raw=ep\tfI, fE or rootid differ from the mark"
  # A duplicate path (written with an escape): the later line names the first.
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" '/m/a\040b cap_net_raw=i' '/m/c cap_net_raw=i' \
      '/m/a\040b cap_net_admin=i' | marks_file dup)
  cd_run marks check --marks "$m"; want_rc 2
  want_text "$ERR" "$m:4: path declared again (first on line 2): '/m/a\\x20b'"
  # An overlong line is one line, whatever its length: no piece of it becomes a mark.
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" | marks_file long)
  { printf '/m/x cap_net_raw=i '; head -c 20000 /dev/zero | tr '\0' 'a'; printf ' /m/y cap_net_raw=i\n'; } >>"$m"
  cd_run marks check --marks "$m"; want_rc 2; want_text "$ERR" "$m:2: unknown option: 'aaaa"
  [ "$(count_lines "$ERR" ":3:")" -eq 0 ] || fail "the long line was split"
  # Over the size limit: rejected whole.
  m=$(marks_file big </dev/null); head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$m"
  cd_run marks check --marks "$m"; want_rc 2; want_text "$ERR" "larger than the size limit"
}

t_marks_file_unsafe() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" | marks_file)
  chmod 0664 "$m"
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "unsafe marks file (writable by group or others; owner uid 0, mode 0664): marks file rejected, no file changed"
  chmod 0644 "$m"; chown 1001 "$m"
  cd_run marks apply --marks "$m"; want_rc 2; want_text "$ERR" "not owned by root"
  [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=ep" ] || fail "applied from an unsafe file"
  mkdir -p "$CASE_DIR/open"; chmod 0777 "$CASE_DIR/open"; printf '%s\n' "$t/ep cap_net_raw=i" >"$CASE_DIR/open/m.conf"
  cd_run marks check --marks "$CASE_DIR/open/m.conf"; want_rc 2
  want_text "$ERR" "$CASE_DIR/open is writable by group or others"
}

t_marks_file_missing() {
  cd_run marks check --marks "$WORK/none.conf"; want_rc 2
  want_line "$ERR" "capdelegate: error: $WORK/none.conf: no marks declared"
  cd_run marks apply --marks "$WORK/none.conf"; want_rc 2
  # --quiet prints errors only: this one still
  cd_run marks apply --quiet --marks "$WORK/none.conf"; want_rc 2
  want_line "$ERR" "capdelegate: error: $WORK/none.conf: no marks declared"
  cd_run marks frob; want_rc 2
  cd_run marks; want_rc 2; want_text "$ERR" "usage: capdelegate marks check"
  cd_run marks check --dry-run; want_rc 2
  cd_run marks --help; want_rc 0; want_text "$OUT" "usage: capdelegate marks check"
}

t_marks_check_json() {
  need_root; local t m; t=$(marks_tree); m=$(marks_std "$t")
  cd_run marks check --json --marks "$m"; want_rc 2
  python3 - "$OUT" "$t" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1])); t = sys.argv[2]
assert d["version"] == 1 and d["marks"]["status"] == "ok", d["marks"]
f = {x["path"]: x for x in d["files"]}
assert len(d["files"]) == 11, len(d["files"])
ep = f[t + "/ep"]
assert ep["inheritable"] == ["cap_net_raw"] and ep["effective"] is False and ep["nosuid"] is True
assert ep["on_disk"] == "cap_net_raw=ep" and ep["line"] == 3
assert [(s["state"], s["level"]) for s in ep["states"]] == [("fP-bypass", "drift"), ("differs", "drift")]
assert f[t + "/link"]["on_disk"] is None and f[t + "/link"]["states"][0]["level"] == "error"
assert f[t + "/ok"]["states"] == [{"state": "ok", "level": "ok", "message": "matches the mark"}]
PY
}

t_audit_marks_findings() {
  need_root; local p t m; p=$(std_policy); t=$(marks_tree)
  m=$(printf '%s\n' "$t/bare cap_net_raw=i" "$t/other cap_net_raw=i" "$t/absent cap_net_raw=i" "$t/ok cap_net_raw=i" | marks_file)
  cd_nss audit --config "$p" --marks "$m" "$t/ok"; want_rc 1
  want_line "$OUT" "finding\tmark-no-xattr\t$t/bare\tcap_net_raw\tmark line 1: no security.capability: nobody gains these through the file"
  want_text "$OUT" "finding	mark-differs	$t/other	cap_net_admin,cap_net_raw	mark line 2: "
  want_text "$OUT" "finding	mark-missing	$t/absent	cap_net_raw	mark line 3: "
  no_text "$OUT" "mark line 4"
  m=$(printf '%s\n' "$t/link cap_net_raw=i" | marks_file m2)
  cd_nss audit --config "$p" --marks "$m" "$t/ok"; want_rc 2
  want_text "$OUT" "finding	mark-refused	$t/link	"
  m=$(printf 'bogus\n' | marks_file m3)
  cd_nss audit --config "$p" --marks "$m" "$t/ok"; want_rc 2; want_text "$ERR" "$m:1: "
  cd_nss audit --config "$p" --marks "$CASE_DIR/none.conf" "$t/ok"; want_rc 2
  want_text "$ERR" "no such marks file"
}

# A file whose fP holds a capability the policy delegates: everyone gains what the policy
# hands out to some (error level, exit 2). fP of a capability nobody is delegated stays a
# "permitted" finding only.
t_audit_fp_bypass() {
  need_root; local p t="$CASE_DIR/tree"; p=$(std_policy)
  capfile "$t/ping" cap_net_raw=ep; capfile "$t/bind" cap_net_bind_service=ep
  cd_nss audit --config "$p" "$t"; want_rc 2
  want_line "$OUT" "finding\tfP-bypass\t$t/ping\tcap_net_raw\tfP bypass: every user gains these, which the policy delegates to some"
  no_text "$OUT" "fP-bypass	$t/bind"; want_text "$OUT" "finding	permitted	$t/bind	"
  rm "$t/ping"
  cd_nss audit --config "$p" "$t"; want_rc 1
  cd_nss audit --json --config "$p" "$CASE_DIR"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" || fail "JSON"
}

# The example of capdelegate-files.conf(5) is a marks file the parser accepts.
t_marks_manpage_example() {
  need_root; local m
  m=$(sed -n '/^\.SH EXAMPLES/,/^\.EE/p' "$ROOT/pam_capdelegate/man/capdelegate-files.conf.5" \
      | sed '1,2d;$d' | sed 's/\\e/\\/g' | marks_file)
  [ "$(grep -c "^/" "$m")" -eq 3 ] || fail "example not found"
  cd_run marks check --marks "$m"
  [ "$RC" -ne 2 ] || fail "the example is rejected"
  want_line "$OUT" "mark\t/opt/net\\\\040tools/probe\tmissing\twarning\tcap_net_raw=i\t-\tno such file (package not installed?): skipped"
}

# ---- behaviours of capdelegate-files.conf(5) and marks apply -------------------------------

# "A path is declared once": a file of exactly two lines, both for one path, is rejected whole.
t_marks_two_lines_one_path() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" "$t/ep cap_net_admin=i" | marks_file)
  cd_run marks check --marks "$m"; want_rc 2
  want_text "$ERR" "$m:2: path declared again (first on line 1): '"
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "$m: marks file rejected (1 error): no file changed"
  [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=ep" ] || fail "applied from a rejected file"
}

# "below directories only root can write": a root-owned directory writable by its group (0775)
# lets that group swap the file before the next apply: refused, file untouched.
# Started with standard input closed (a cron job, a daemon's child), marks check and apply see
# the same files: a marked file opened as descriptor 0 is still a file. Marks at two depths,
# so that one of them is opened while descriptor 0 is free, whichever way the directory walk
# alternates its descriptors.
t_marks_check_stdin_closed() {
  need_root; local m t="$CASE_DIR/m"
  capfile "$t/ok" cap_net_raw=i; capfile "$t/sub/ok" cap_net_raw=i
  capfile "$t/ep" cap_net_raw=ep; capfile "$t/sub/ep" cap_net_raw=ep
  m=$(printf '%s cap_net_raw=i\n' "$t/ok" "$t/sub/ok" "$t/ep" "$t/sub/ep" | marks_file)
  cd_run marks check --marks "$m"; want_rc 1; cp "$OUT" "$CASE_DIR/ref"
  want_line "$OUT" "mark\t$t/sub/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  RC=0; "$BIN" marks check --marks "$m" <&- >"$OUT" 2>"$ERR" || RC=$?
  want_rc 1; cmp -s "$OUT" "$CASE_DIR/ref" || fail "stdin closed: another check: $(diff "$CASE_DIR/ref" "$OUT")"
  RC=0; "$BIN" marks apply --marks "$m" <&- >"$OUT" 2>"$ERR" || RC=$?
  want_rc 0
  [ "$(getcap "$t/sub/ep")" = "$t/sub/ep cap_net_raw=i" ] && [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=i" ] \
    || fail "stdin closed: not applied: $(getcap "$t/ep" "$t/sub/ep")"
}

# A marked file's directory that is refused (writable by its group) or is no directory at all
# is let go at once: 30 such marks hold no more descriptors at a time than one does (a
# descriptor kept per mark would end a large marks file at RLIMIT_NOFILE).
t_marks_refused_dirs_hold_no_descriptor() {
  need_root; local i one many lines=()
  for ((i = 0; i < 15; i++)); do
    mkdir -p "$CASE_DIR/g$i"; chmod 0775 "$CASE_DIR/g$i"; capfile "$CASE_DIR/g$i/f" cap_net_raw=ep
    : >"$CASE_DIR/p$i"
    lines+=("$CASE_DIR/g$i/f cap_net_raw=i" "$CASE_DIR/p$i/f cap_net_raw=i")
  done
  printf '%s\n' "${lines[@]:0:2}" | marks_file one >/dev/null
  printf '%s\n' "${lines[@]}" | marks_file many >/dev/null
  for m in one many; do
    CD_FAULT_MAXFD="$CASE_DIR/maxfd.$m" cd_fault marks check --marks "$CASE_DIR/$m.conf"; want_rc 2
    want_text "$OUT" "$(printf 'mark\t%s\trefused\terror' "$CASE_DIR/g0/f")"
  done
  one=$(cat "$CASE_DIR/maxfd.one"); many=$(cat "$CASE_DIR/maxfd.many")
  echo "highest descriptor: $one for 2 marks, $many for 30" >&2
  [ "$many" -le "$one" ] || fail "30 refused marks held descriptors up to $many, 2 up to $one"
}

t_marks_apply_group_writable_dir() {
  need_root; local d="$CASE_DIR/gdir" m
  mkdir -p "$d"; chmod 0775 "$d"; chown 0:0 "$d"; capfile "$d/f" cap_net_raw=ep
  m=$(printf '%s\n' "$d/f cap_net_raw=i" | marks_file)
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "capdelegate: error: $d/f: "
  want_text "$ERR" "writable by"
  [ "$(getcap "$d/f")" = "$d/f cap_net_raw=ep" ] || fail "changed below a group-writable directory"
  cd_run marks check --marks "$m"; want_rc 2
  want_text "$OUT" "$(printf 'mark\t%s\trefused\terror' "$d/f")"
  # a directory above it of another owner (daemon, uid 1), writable by nobody else: that
  # owner may still swap the file's directory, so it is refused too
  local o="$CASE_DIR/owned-by-1"
  mkdir -p "$o/sub"; chmod 0755 "$o" "$o/sub"; chown 1:0 "$o"; capfile "$o/sub/f" cap_net_raw=ep
  m=$(printf '%s\n' "$o/sub/f cap_net_raw=i" | marks_file)
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "capdelegate: error: $o/sub/f: "
  [ "$(getcap "$o/sub/f")" = "$o/sub/f cap_net_raw=ep" ] || fail "changed below a directory owned by uid 1"
}

# fP is always empty in a mark: an fP bit the mark does not declare (cap_sys_admin beside the
# declared cap_net_raw=i) is an fP bypass for check and is removed by apply.
t_marks_fp_undeclared_cap() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/f" "cap_net_raw=i cap_sys_admin=p"
  m=$(printf '%s\n' "$t/f cap_net_raw=i" | marks_file)
  cd_run marks check --marks "$m"; want_rc 1
  want_text "$OUT" "$(printf 'mark\t%s\tfP-bypass\tdrift\t' "$t/f")"
  want_text "$OUT" "fP bypass: every user gains cap_sys_admin"
  no_text "$OUT" "$(printf '\tok\tok\t')"
  cd_run marks apply --marks "$m"; want_rc 0
  [ "$(getcap "$t/f")" = "$t/f cap_net_raw=i" ] || fail "fP left: $(getcap "$t/f")"
  cd_run marks check --marks "$m"; want_rc 0
}

# shim_run VAR=VALUE ARGS...: the CLI with tests/cli/marks_shim.c preloaded, VAR set.
shim_run() {
  [ -e "$CASE_DIR/marks_shim.so" ] || cc -shared -fPIC -o "$CASE_DIR/marks_shim.so" "$HERE/marks_shim.c" -ldl
  local var=$1; shift
  RC=0; env "$var" LD_PRELOAD="$CASE_DIR/marks_shim.so" "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?
}

# "the file is read again afterwards and must match": a filesystem that takes the value and
# drops it (the shim's cap_set_fd writes nothing) is an error, never a success.
t_marks_apply_xattr_dropped() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" | marks_file)
  shim_run MARKS_SHIM_DROP=1 marks apply --marks "$m"
  want_rc 2
  want_text "$ERR" "$t/ep: does not match the mark after apply (on disk: cap_net_raw=ep)"
}

# A file whose security.capability cannot be read (the shim's cap_get_fd fails with EIO): its
# state is an error, said with the cause, exit 2; never "none" or a match, and apply changes
# nothing it could not read.
t_marks_xattr_unreadable() {
  need_root; local t m; t=$(marks_tree)
  m=$(printf '%s\n' "$t/ep cap_net_raw=i" | marks_file)
  shim_run MARKS_SHIM_GETFAIL=5 marks check --marks "$m"
  want_rc 2
  want_line "$OUT" "mark\t$t/ep\terror\terror\tcap_net_raw=i\t-\tcannot read security.capability: Input/output error"
  shim_run MARKS_SHIM_GETFAIL=5 marks apply --marks "$m"
  want_rc 2
  [ "$(getcap "$t/ep")" = "$t/ep cap_net_raw=ep" ] || fail "changed: $(getcap "$t/ep")"
}

# "the mark is set through that descriptor": the file is swapped for a decoy right after the
# check read it (shim). The judged file (kept under a second name) gets the mark; the decoy now
# at the path is untouched, and apply says the path does not match afterwards.
t_marks_apply_through_descriptor() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/f" cap_net_raw=ep; ln "$t/f" "$t/judged"
  capfile "$t/decoy" cap_net_admin=ep
  m=$(printf '%s\n' "$t/f cap_net_raw=i nosuid" | marks_file)
  chmod 4755 "$t/f"; chmod 4755 "$t/decoy"
  shim_run MARKS_SHIM_SWAP="$t/decoy:$t/f" marks apply --marks "$m"
  [ ! -e "$t/decoy" ] || fail "the shim did not swap the file"
  [ "$(getcap "$t/f")" = "$t/f cap_net_admin=ep" ] || fail "written by path: the decoy now has $(getcap "$t/f")"
  [ "$(stat -c %a "$t/f")" = 4755 ] || fail "chmod by path: the decoy's mode is $(stat -c %a "$t/f")"
  [ "$(getcap "$t/judged")" = "$t/judged cap_net_raw=i" ] || fail "the judged file was not marked: $(getcap "$t/judged")"
  [ "$(stat -c %a "$t/judged")" = 755 ] || fail "the judged file kept its setuid bit"
  want_rc 2; want_text "$ERR" "$t/f: does not match the mark after apply"
}

# A declared path below a regular file cannot exist (ENOTDIR): missing, a warning (exit 1), as
# for a path that does not exist (capdelegate(8) EXIT STATUS: "a file missing").
t_marks_parent_not_a_directory() {
  need_root; local m
  : >"$CASE_DIR/plain"; chmod 0644 "$CASE_DIR/plain"
  m=$(printf '%s\n' "$CASE_DIR/plain/probe cap_net_raw=i" | policy marks)
  cd_run marks check --marks "$m"; want_rc 1
  want_text "$OUT" "$(printf 'mark\t%s\tmissing\twarning\t' "$CASE_DIR/plain/probe")"
}

# ---- two paths, one file: the file is declared once (capdelegate-files.conf(5), PATH) -------

# A merged-/usr tree (bin -> usr/bin): usr/bin/ping and bin/ping are one file. Different marks
# for it, the same mark twice, and a file not installed yet are each an error naming both
# lines; the marks file is rejected as for a path written twice: nothing changes, not even the
# unrelated line. Another file reached through the same link is no alias.
t_marks_alias_directory_link() {
  need_root; local r="$CASE_DIR/r" m
  capfile "$r/usr/bin/ping" cap_net_raw=ep; capfile "$r/usr/bin/other" cap_net_raw=ep
  ln -s usr/bin "$r/bin"
  m=$(printf '%s\n' "$r/usr/bin/ping cap_net_raw=i nosuid" "$r/usr/bin/other cap_net_raw=i" \
      "$r/bin/ping cap_net_admin=i" | marks_file)
  cd_run marks check --marks "$m"; want_rc 2
  want_text "$ERR" "$m:3: lines 1 and 3 name one file, '$r/usr/bin/ping' and '$r/bin/ping' (one directory reached by two paths)"
  want_text "$ERR" "$m: marks file rejected (1 error): no file changed"
  no_text "$OUT" "$(printf 'mark\t')"
  cd_log_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "$m:3: lines 1 and 3 name one file, '$r/usr/bin/ping' and '$r/bin/ping' (one directory reached by two paths)"
  [ "$(getcap "$r/usr/bin/ping")" = "$r/usr/bin/ping cap_net_raw=ep" ] || fail "alias applied: $(getcap "$r/usr/bin/ping")"
  [ "$(getcap "$r/usr/bin/other")" = "$r/usr/bin/other cap_net_raw=ep" ] || fail "applied from a rejected file"
  [ ! -e "$CASE_DIR/syslog" ] || fail "a change was logged"
  # The same mark under both names: still declared twice (which line would a later edit change?).
  m=$(printf '%s\n' "$r/bin/ping cap_net_raw=i" "$r/usr/bin/ping cap_net_raw=i" | marks_file same)
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "$m:2: lines 1 and 2 name one file, '$r/bin/ping' and '$r/usr/bin/ping' (one directory reached by two paths)"
  [ "$(getcap "$r/usr/bin/ping")" = "$r/usr/bin/ping cap_net_raw=ep" ] || fail "applied from a rejected file"
  # Not installed yet: the two lines would clash on the day the package brings the file.
  m=$(printf '%s\n' "$r/usr/bin/later cap_net_raw=i" "$r/bin/later cap_net_admin=i" | marks_file absent)
  cd_run marks check --json --marks "$m"; want_rc 2
  want_text "$ERR" "$m:2: lines 1 and 2 name one file, '$r/usr/bin/later' and '$r/bin/later' (one directory reached by two paths)"
  want_text "$OUT" '"status":"rejected"'
  # Two files through the one link: no alias.
  m=$(printf '%s\n' "$r/bin/ping cap_net_raw=i" "$r/usr/bin/other cap_net_raw=i" | marks_file two)
  cd_run marks apply --marks "$m"; want_rc 0
  [ "$(getcap "$r/usr/bin/ping")" = "$r/usr/bin/ping cap_net_raw=i" ] || fail "ping not marked"
}

# README's step 3 appends ping's mark to the marks file, and the example the package ships (the
# file the lab's systemd guests install) declares the same mark: a reader who meets both sees one
# declaration. Both in one file are one path twice, an error that names the two lines. The
# README's Debian 13 mark (dmesg) is the one the trixie guest adds to the example (overlay.sh).
t_marks_readme_agrees_with_example() {
  need_root; local all readme more trixie shipped r="$CASE_DIR/r" m n first
  all=$(sed -n "s|^echo '\(.*\)' >>/etc/security/capdelegate-files.conf.*|\1|p" "$ROOT/README.md")
  readme=$(head -n 1 <<<"$all") more=$(tail -n +2 <<<"$all")
  shipped=$(grep -v -e '^#' -e '^$' "$ROOT/config/capdelegate-files.conf" | tr -s ' \t' ' ')
  [ -n "$readme" ] && [ "$readme" = "$shipped" ] || fail "README's mark '$readme', the example's '$shipped'"
  trixie=$(sed -n "s|^ *printf '%s\\\\n' '\(.*\)' >>\"\$stage/etc/security/capdelegate-files.conf\"|\1|p" \
    "$ROOT/vm-image/system/overlay.sh" | tr -s ' \t' ' ')
  [ -n "$more" ] && [ "$more" = "$trixie" ] || fail "README's Debian 13 mark '$more', the trixie guest's '$trixie'"
  capfile "$r/usr/bin/ping" cap_net_raw=ep
  m=$({ sed "s|^/|$r/|" "$ROOT/config/capdelegate-files.conf"; echo "$r$readme"; } | marks_file)
  n=$(grep -c '' "$m"); first=$(grep -n "^$r/" "$m" | head -n 1 | cut -d: -f1)
  cd_run marks check --marks "$m"; want_rc 2
  want_text "$ERR" "$m:$n: path declared again (first on line $first)"
}

# Hard links: one inode under two names (any directories). check, apply and audit reject the
# marks file; the file keeps what it had.
t_marks_alias_hard_link() {
  need_root; local r="$CASE_DIR/h" m p
  capfile "$r/sbin/tool" cap_net_raw=ep; capfile "$r/ok" cap_net_raw=ep
  mkdir -p "$r/bin"; ln "$r/sbin/tool" "$r/bin/tool2"
  m=$(printf '%s\n' "$r/sbin/tool cap_net_raw=i" "$r/ok cap_net_raw=i" "$r/bin/tool2 cap_net_admin=i" | marks_file)
  cd_run marks check --marks "$m"; want_rc 2
  want_text "$ERR" "$m:3: lines 1 and 3 name one file, '$r/sbin/tool' and '$r/bin/tool2' (hard links to one inode)"
  cd_run marks apply --marks "$m"; want_rc 2
  want_text "$ERR" "$m: marks file rejected (1 error): no file changed"
  [ "$(getcap "$r/sbin/tool")" = "$r/sbin/tool cap_net_raw=ep" ] || fail "alias applied: $(getcap "$r/sbin/tool")"
  [ "$(getcap "$r/ok")" = "$r/ok cap_net_raw=ep" ] || fail "applied from a rejected file"
  p=$(std_policy)
  cd_nss audit --config "$p" --marks "$m" "$r/ok"; want_rc 2
  want_text "$ERR" "$m:3: lines 1 and 3 name one file, '$r/sbin/tool' and '$r/bin/tool2' (hard links to one inode)"
}

# capdelegate(8), marks apply: a file that cannot be fixed is an error (exit 2) said once on
# standard error; what could not be done first is not followed by another change to that
# file. Removing the setuid bit fails (a read-only mount): its capabilities are not written
# either. Writing the capabilities fails (the shim's cap_set_fd, EIO) after the setuid bit was
# removed: one error, the file not read again as if it had been written.
t_marks_apply_write_fails() {
  need_root; local t="$CASE_DIR/m" m
  unshare -m true 2>/dev/null || skip "no mount namespace (unshare -m)"
  capfile "$t/suid" cap_net_admin=i; chmod 4755 "$t/suid"
  m=$(printf '%s\n' "$t/suid cap_net_raw=i nosuid" | marks_file)
  RC=0
  # shellcheck disable=SC2016
  unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"' sh "$t" \
    "$BIN" marks apply --marks "$m" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2
  want_line "$ERR" "capdelegate: error: $t/suid: cannot remove the setuid/setgid bits: Read-only file system"
  [ "$(count_lines "$ERR" .)" -eq 1 ] || fail "want one message"
  [ "$(getcap "$t/suid")" = "$t/suid cap_net_admin=i" ] || fail "capabilities changed"
  shim_run MARKS_SHIM_SETFAIL=5 marks apply --marks "$m"; want_rc 2
  want_line "$OUT" "$t/suid: removed setuid (mode 4755 -> 0755)"
  want_line "$ERR" "capdelegate: error: $t/suid: cannot set cap_net_raw=i: Input/output error"
  [ "$(count_lines "$ERR" .)" -eq 1 ] || fail "want one message"
  [ "$(getcap "$t/suid")" = "$t/suid cap_net_admin=i" ] || fail "capabilities changed"
}

# Files a mark cannot be judged on, each its own state, the others checked as usual: a
# directory (not a regular file), a file of a pseudo filesystem (a bind mount of one of
# /proc's), and a file or a directory above it that cannot be opened (EIO, tests/cli/fault.c):
# errors (exit 2), never "missing" (only ENOENT is).
t_marks_file_unjudged() {
  need_root; local t="$CASE_DIR/m" m
  unshare -m true 2>/dev/null || skip "no mount namespace (unshare -m)"
  capfile "$t/ok" cap_net_raw=i; mkdir -p "$t/dir"; : >"$t/proc"; chmod 0755 "$t/proc"
  capfile "$t/sub/f" cap_net_raw=i
  m=$(printf '%s cap_net_raw=i\n' "$t/ok" "$t/dir" "$t/proc" "$t/sub/f" | marks_file)
  RC=0
  # shellcheck disable=SC2016
  unshare -m sh -c 'mount --bind /proc/version "$1" && shift && exec "$@"' sh "$t/proc" \
    "$BIN" marks check --marks "$m" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  want_line "$OUT" "mark\t$t/dir\trefused\terror\tcap_net_raw=i\t-\tis not a regular file: not changed"
  want_line "$OUT" "mark\t$t/proc\trefused\terror\tcap_net_raw=i\t-\t$t/proc is on a pseudo filesystem: procfs: not changed"
  want_line "$OUT" "mark\t$t/sub/f\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  CD_FAULT_OPENAT=f:5 cd_fault marks check --marks "$m"; want_rc 2
  want_line "$OUT" "mark\t$t/sub/f\terror\terror\tcap_net_raw=i\t-\tcannot open: Input/output error"
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  CD_FAULT_OPENAT=sub:5 cd_fault marks check --marks "$m"; want_rc 2
  want_line "$OUT" "mark\t$t/sub/f\terror\terror\tcap_net_raw=i\t-\tcannot open its directory: Input/output error"
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
}

# marks check and apply take no operand (a path named there would be ignored in silence) and
# no unknown option: usage, exit 2, no file read or changed.
t_marks_stray_operand() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/f" cap_net_admin=i; m=$(printf '%s\n' "$t/f cap_net_raw=i" | marks_file)
  cd_run marks check --marks "$m" "$t/f"; want_rc 2; want_text "$ERR" "usage: capdelegate marks check"
  [ ! -s "$OUT" ] || fail "a report"
  cd_run marks apply --marks "$m" "$t/f"; want_rc 2; want_text "$ERR" "usage: capdelegate marks"
  cd_run marks apply --bogus --marks "$m"; want_rc 2; want_text "$ERR" "usage: capdelegate marks"
  [ "$(getcap "$t/f")" = "$t/f cap_net_admin=i" ] || fail "applied"
}

# Memory running out while apply examines a file (its directory's name cannot be copied):
# an error, exit 2, and apply stops there: no later file is changed either.
t_marks_apply_stops_out_of_memory() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/a/f" cap_net_admin=i; capfile "$t/b/f" cap_net_admin=i
  m=$(printf '%s cap_net_raw=i\n' "$t/a/f" "$t/b/f" | marks_file)
  # the first copy is the check that no two lines name one file, the second apply's
  CD_FAULT_STRDUP=$t/a CD_FAULT_NTH=2 cd_fault marks apply --marks "$m"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$ERR" "capdelegate: marks: out of memory"
  [ "$(getcap "$t/b/f")" = "$t/b/f cap_net_admin=i" ] || fail "a later file changed"
  [ "$(getcap "$t/a/f")" = "$t/a/f cap_net_admin=i" ] || fail "the file changed"
}

# Memory running out while check examines a file: an error that says so, exit 2 (never a
# report that merely stops short).
t_marks_check_out_of_memory() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/a/f" cap_net_admin=i
  m=$(printf '%s cap_net_raw=i\n' "$t/a/f" | marks_file)
  CD_FAULT_STRDUP=$t/a cd_fault marks check --marks "$m"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$ERR" "capdelegate: marks: out of memory"
}

# A security.capability value with no bit set (revision 2, all sets empty) grants nothing: on
# disk "none", as marks check prints it, and the mark differs.
t_marks_empty_value() {
  need_root; local t="$CASE_DIR/m" m
  mkdir -p "$t"; : >"$t/f"; chmod 0755 "$t/f"
  setfattr -n security.capability -v 0x0000000200000000000000000000000000000000 "$t/f"
  m=$(printf '%s\n' "$t/f cap_net_raw=i" | marks_file)
  cd_run marks check --marks "$m"; want_rc 1
  want_line "$OUT" "mark\t$t/f\tdiffers\tdrift\tcap_net_raw=i\tnone\tfI, fE or rootid differ from the mark"
}

# Two lines naming one file are found whatever filesystems the other marks are on: hard links
# on a tmpfs of the case's own and on the case's directory, their marks mixed with others of
# both (mount namespace of the case's own).
t_marks_alias_two_filesystems() {
  need_root; local t="$CASE_DIR/m" m x
  unshare -m true 2>/dev/null || skip "no mount namespace (unshare -m)"
  for x in a b c d; do capfile "$t/$x" cap_net_raw=i; done; ln "$t/a" "$t/a2"; mkdir -p "$t/tm"
  m=$(printf '%s cap_net_raw=i\n' "$t/a" "$t/tm/x" "$t/b" "$t/tm/y" "$t/a2" "$t/c" "$t/tm/x2" "$t/tm/z" "$t/d" | marks_file)
  RC=0
  # shellcheck disable=SC2016
  unshare -m sh -c 'mount -t tmpfs -o mode=0755 none "$1/tm" && cd "$1/tm" && : >x && : >y && : >z &&
    chmod 0755 x y z && ln x x2 && shift && exec "$@"' sh "$t" "$BIN" marks check --marks "$m" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2
  want_text "$ERR" "$m:5: lines 1 and 5 name one file, '$t/a' and '$t/a2' (hard links to one inode)"
  want_text "$ERR" "$m:7: lines 2 and 7 name one file, '$t/tm/x' and '$t/tm/x2' (hard links to one inode)"
  want_text "$ERR" "marks file rejected (2 errors)"
  # memory running out while the message is made (tests/cli/fault.c): still rejected, said
  m=$(printf '%s cap_net_raw=i\n' "$t/a" "$t/a2" | marks_file m2)
  CD_FAULT_ASPRINTF="lines %zu and %zu name one file, '%s' and '%s' (%s): declare it once" cd_fault marks check --marks "$m"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$ERR" "capdelegate: error: $m: out of memory: no file changed"; [ ! -s "$OUT" ] || fail "a report"
}

# capdelegate(8) "marks audit-rules": one rule per declared file and ABI, key capdelegate; a file
# whose path auditctl would split or misread, or whose directory is missing (the kernel refuses
# such a rule, and auditctl then stops loading every rules file after it), gets a comment and a
# warning instead, exit 1.
t_marks_audit_rules_per_file() {
  need_root; local t="$CASE_DIR/m" m r
  capfile "$t/ok" cap_net_raw=i; mkdir -p "$t/sub"
  m=$(printf '%s\n' "# declared" "$t/ok cap_net_raw=i nosuid" "$t/sub/later cap_net_raw,cap_net_admin=ei" \
    "$t/gone/x cap_net_raw=i" "$t/a\\040b cap_net_raw=i" "$t/a!=b cap_net_raw=i" \
    "$t/sub/$(printf 'n%.0s' $(seq 256)) cap_net_raw=i" | marks_file)
  cd_run marks audit-rules --marks "$m" --arch b64,b32; want_rc 1
  r="-a always,exit -F arch=b64 -S execve -S execveat -F path=$t/ok -F key=capdelegate"
  want_line "$OUT" "$r"; want_line "$OUT" "${r/b64/b32}"; want_line "$OUT" "# $t/ok (line 2)"
  # a file not installed yet, in an existing directory: the rule waits for it
  want_line "$OUT" "-a always,exit -F arch=b64 -S execve -S execveat -F path=$t/sub/later -F key=capdelegate"
  want_line "$OUT" "# $t/gone/x (line 4): no rule: its directory does not exist or is refused"
  want_line "$OUT" "# $t/a\\\\040b (line 5): no rule: its path cannot be written in an audit rule"
  want_line "$OUT" "# $t/a!=b (line 6): no rule: its path cannot be written in an audit rule"
  # a last component longer than NAME_MAX: auditctl refuses the line
  want_line "$OUT" "# $t/sub/$(printf 'n%.0s' $(seq 256)) (line 7): no rule: its path cannot be written in an audit rule"
  [ "$(grep -c '^-a ' "$OUT")" = 4 ] || fail "want 4 rules"
  [ "$(grep -vc '^#' "$OUT")" = 4 ] || fail "a line that is neither rule nor comment"
  want_line "$ERR" "capdelegate: warning: $t/gone/x: its directory does not exist or is refused: its runs are not recorded"
  want_line "$ERR" "capdelegate: warning: $t/a!=b: its path cannot be written in an audit rule: its runs are not recorded"
  cd_run marks audit-rules --marks "$m" --arch b64; want_rc 1
  [ "$(grep -c '^-a ' "$OUT")" = 2 ] && ! grep -q arch=b32 "$OUT" || fail "--arch b64"
  cd_run marks audit-rules --marks "$m" --arch b32; want_rc 1
  [ "$(grep -c '^-a .*arch=b32 ' "$OUT")" = 2 ] && ! grep -q arch=b64 "$OUT" || fail "--arch b32"
  # the default: the running kernel's ABIs (x86_64 runs 32-bit programs too)
  cd_run marks audit-rules --marks "$m"; want_rc 1
  if [ "$(uname -m)" = x86_64 ]; then want_line "$OUT" "$r"; want_line "$OUT" "${r/b64/b32}"; fi
  # every file with a rule: exit 0
  m=$(printf '%s\n' "$t/ok cap_net_raw=i" | marks_file ok)
  cd_run marks audit-rules --marks "$m" --arch b64; want_rc 0; [ ! -s "$ERR" ] || fail "stderr"
  cd_run marks audit-rules --marks "$m" --arch b16; want_rc 2; want_text "$ERR" "usage: capdelegate marks audit-rules"
  [ ! -s "$OUT" ] || fail "rules printed"
  cd_run marks audit-rules --marks "$m" "$t/ok"; want_rc 2; [ ! -s "$OUT" ] || fail "rules printed"
  cd_run marks audit-rules --help; want_rc 0; want_text "$OUT" "key capdelegate"
}

# Nothing declared, no rule: a marks file of comments prints the header only (exit 0); a rejected
# or missing one named by --marks prints nothing (exit 2), so that the previous rules are kept.
t_marks_audit_rules_nothing_declared() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/ok" cap_net_raw=i
  m=$(printf '%s\n' "# nothing" "" | marks_file)
  cd_run marks audit-rules --marks "$m"; want_rc 0
  ! grep -qv '^#' "$OUT" || fail "a rule without a file"
  m=$(printf '%s\n' "$t/ok cap_net_raw=i" "$t/ok cap_net_raw=ep" | marks_file bad)
  cd_run marks audit-rules --marks "$m"; want_rc 2; [ ! -s "$OUT" ] || fail "rules from a rejected file"
  want_text "$ERR" "marks file rejected"
  cd_run marks audit-rules --marks "$CASE_DIR/none.conf"; want_rc 2; [ ! -s "$OUT" ] || fail "rules printed"
  want_line "$ERR" "capdelegate: error: $CASE_DIR/none.conf: no marks declared"
}

# debian/capdelegate-audit-rules, as the package's postinst, trigger and APT hook run it: the
# rules file written whole (mode 0640), rewritten only when it changes, kept when the marks file
# is rejected, removed when nothing is declared and with --remove; never a failure, and nothing
# without a rules directory (auditd not installed). --no-load: this machine's audit rules are not
# the test's to change.
t_marks_audit_rules_sync() {
  need_root; local t="$CASE_DIR/m" d="$CASE_DIR/rules.d" m ino
  local sync="$ROOT/debian/capdelegate-audit-rules"
  capfile "$t/ok" cap_net_raw=i
  m=$(printf '%s\n' "$t/ok cap_net_raw=i" | marks_file)
  ars() { RC=0; CAPDELEGATE_AUDIT_RULES_DIR=$d CAPDELEGATE_CLI=$BIN "$sync" --no-load "$@" >"$OUT" 2>"$ERR" || RC=$?; }
  ars --marks "$m"; want_rc 0; [ ! -e "$d" ] || fail "a rules directory made"
  [ ! -s "$ERR" ] || fail "without auditd there is nothing to say"
  mkdir "$d"; ars --marks "$m"; want_rc 0
  want_line "$d/capdelegate.rules" "-a always,exit -F arch=b64 -S execve -S execveat -F path=$t/ok -F key=capdelegate"
  [ "$(stat -c %a "$d/capdelegate.rules")" = 640 ] || fail "mode $(stat -c %a "$d/capdelegate.rules")"
  ino=$(stat -c %i "$d/capdelegate.rules")
  ars --marks "$m"; want_rc 0
  [ "$(stat -c %i "$d/capdelegate.rules")" = "$ino" ] || fail "rewritten without a change"
  printf '%s\n' "$t/ok cap_net_raw=i" "$t/ok cap_net_raw=ep" >"$m"
  ars --marks "$m"; want_rc 0; want_text "$ERR" "left as it was"
  want_text "$d/capdelegate.rules" "path=$t/ok "
  printf '# nothing\n' >"$m"
  ars --marks "$m"; want_rc 0; [ ! -e "$d/capdelegate.rules" ] || fail "a rule left without a file"
  printf '%s\n' "$t/ok cap_net_raw=i" >"$m"; ars --marks "$m"; [ -e "$d/capdelegate.rules" ] || fail "not written"
  ars --remove; want_rc 0; [ ! -e "$d/capdelegate.rules" ] || fail "--remove left it"
  [ -z "$(ls -A "$d")" ] || fail "left in $d: $(ls -A "$d")"
  ars --bogus; want_rc 2
}
