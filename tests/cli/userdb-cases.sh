# userdb-cases.sh: tests/cli/run.sh's cases for systemd's user records: audit's
# ambient-grant, bounding-drop and userdb-invalid findings, explain's userdb records, and the
# record reader against hostile files (sourced after lib.sh). Each record is a fixture file in
# the case's own --userdb directory; the audited tree is empty, so each run takes milliseconds.

USERDB_CASES=(
  userdb_ambient_grant userdb_ambient_json userdb_bounding_drop userdb_explain
  userdb_name_forms userdb_hostile_json userdb_size_and_depth userdb_file_kinds
  userdb_replaced_before_open userdb_odd_names userdb_search_order userdb_one_record_two_names userdb_numbers fault_alloc_userdb
  userdb_uid_file_names valgrind_userdb_prefixes userdb_string_escapes
  userdb_read_failures fault_asprintf_userdb fault_memstream_userdb fault_real_uid_userdb
  userdb_absent_name_hides_nothing userdb_privileged_merged userdb_privileged_refused
  userdb_privileged_json
)

TAB=$'\t'

# record DIR NAME TEXT: DIR/NAME.user holding TEXT (printf %b: \0, \n and \xNN as bytes).
record() {
  mkdir -p "$1"
  printf '%b' "$3" >"$1/$2.user"
}

# The audit of an empty tree with the standard policy and the records of DIR...
udb_audit() {
  local p="$CASE_DIR/std.conf" args=() d
  [ -f "$p" ] || p=$(std_policy)	# once: a policy younger than 50 ms is read twice
  for d in "$@"; do args+=(--userdb "$d"); done
  mkdir -p "$CASE_DIR/empty"
  cd_nss audit --config "$p" --confdir '' "${args[@]}" "$CASE_DIR/empty"
}

t_userdb_ambient_grant() {
  need_root; local d="$CASE_DIR/db"
  # baseline: no records, warnings only (the empty tree leaves every grant unused)
  mkdir -p "$d"; udb_audit "$d"; want_rc 1; no_text "$OUT" "ambient-grant"
  record "$d" bob '{"userName":"bob","uid":1002,"capabilityAmbientSet":["cap_net_raw","CAP_SYS_TIME"]}'
  record "$d" carol '{"userName":"carol","capabilityAmbientSet":[]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_raw,cap_sys_time${TAB}user record of bob raises these in the ambient set at each login"
  [ "$(count_lines "$OUT" ambient-grant)" -eq 1 ] || fail "an empty ambient set is no grant"
}

t_userdb_ambient_json() {
  need_root; local d="$CASE_DIR/db"
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"],"capabilityBoundingSet":["cap_net_raw"]}'
  record "$d" zed '{"userName":"zed"'
  local p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  cd_nss audit --json --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 2
  "$HERE/check-json.py" --may-be-empty files --may-be-empty matrix --may-be-empty errors \
    --may-be-empty vanished "$MAN" "$OUT" >&2 || fail "JSON schema"
  python3 - "$OUT" "$d" <<'PY' >&2 || fail "userdb in JSON"
import json, sys
doc, d = json.load(open(sys.argv[1])), sys.argv[2]
assert doc["version"] == 6, doc["version"]
assert doc["userdb"]["directories"] == [d], doc["userdb"]
recs = {r["path"]: r for r in doc["userdb"]["records"]}
assert recs[d + "/bob.user"]["user"] == "bob" and recs[d + "/bob.user"]["ambient"] == ["cap_net_raw"], recs
assert recs[d + "/bob.user"]["error"] is None and recs[d + "/bob.user"]["bounding"] == ["cap_net_raw"]
assert recs[d + "/zed.user"]["user"] is None and "truncated" in recs[d + "/zed.user"]["error"], recs
f = {(x["id"], x["path"]): x for x in doc["findings"]}
assert f[("ambient-grant", d + "/bob.user")]["caps"] == ["cap_net_raw"], f
assert f[("ambient-grant", d + "/bob.user")]["line"] is None
assert ("userdb-invalid", d + "/zed.user") in f, f
# bob's bounding set keeps cap_net_raw but not cap_net_admin (@netops)
assert f[("bounding-drop", d + "/bob.user")]["caps"] == ["cap_net_admin"], f
PY
  # report counts it among a fleet's error-level findings
  cp "$OUT" "$CASE_DIR/host.json"
  cd_run report "$CASE_DIR/host.json"; want_rc 2
  want_text "$OUT" "ambient-grant"; want_text "$OUT" "userdb-invalid"
}

t_userdb_bounding_drop() {
  need_root; local d="$CASE_DIR/db"
  record "$d" alice '{"userName":"alice","capabilityBoundingSet":["cap_chown"]}'
  record "$d" carol '{"userName":"carol","capabilityBoundingSet":["cap_syslog","cap_chown"]}'
  record "$d" dave '{"userName":"dave","capabilityBoundingSet":[]}'
  udb_audit "$d"; want_rc 1		# a warning: the session gets less, never more
  want_text "$OUT" "finding${TAB}bounding-drop${TAB}$d/alice.user${TAB}cap_net_raw${TAB}user record of alice leaves these out"
  no_text "$OUT" "$d/carol.user"	# keeps the default line's cap_syslog
  no_text "$OUT" "$d/dave.user"		# dave's own line grants none: nothing to take
  # a user NSS does not know: compared with every grant of the policy
  record "$d" mallory '{"userName":"mallory","capabilityBoundingSet":["cap_net_raw"]}'
  udb_audit "$d"; want_rc 1
  want_text "$OUT" "finding${TAB}bounding-drop${TAB}$d/mallory.user${TAB}cap_net_admin,cap_syslog${TAB}"
  want_text "$OUT" "(user unknown to NSS: every grant of the policy)"
}

t_userdb_explain() {
  need_root; local p d="$CASE_DIR/db"; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw","cap_sys_time"],"capabilityBoundingSet":["cap_net_raw","cap_sys_time"]}'
  record "$d" 1002 '{"userName":"bob","uid":1002}'
  record "$d" alice '{"userName":"alice","capabilityAmbientSet":["cap_chown"]}'
  cd_nss explain bob --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 0
  want_line "$OUT" "pI\tcap_net_admin,cap_net_raw\tgroup"
  want_line "$OUT" "userdb\t$d/bob.user\tambient=cap_net_raw,cap_sys_time\tbounding=cap_net_raw,cap_sys_time\tadds=cap_net_raw,cap_sys_time\tremoves=cap_net_admin\tapplies"
  want_line "$OUT" "userdb\t$d/1002.user\tambient=-\tbounding=-\tadds=none\tremoves=none\tapplies"
  no_text "$OUT" "alice.user"
  # a record of bob that cannot be read: shown, and exit 2
  record "$d" bob '{"userName":"bob",'
  cd_nss explain bob --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 2
  want_line "$OUT" "userdb\t$d/bob.user\tambient=-\tbounding=-\tadds=none\tremoves=none\terror: not a user record systemd reads: truncated"
  want_text "$ERR" "capdelegate: explain: error: $d/bob.user: not a user record systemd reads: truncated"
  want_line "$OUT" "pI\tcap_net_admin,cap_net_raw\tgroup"
}

# Names as systemd's capability_from_name takes them: any case, or a number 0..63 (each digit
# 0-9: "39" is cap_bpf).
t_userdb_name_forms() {
  need_root; local d="$CASE_DIR/db"
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["CAP_NET_RAW","Cap_Syslog","12","cap_net_raw","39"]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_admin,cap_net_raw,cap_syslog,cap_bpf${TAB}"
  # a number of one digit: "7" is cap_setuid, "0" cap_chown
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["7","0"]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_chown,cap_setuid${TAB}"
  # two digits ending in 0 are a number ("10" is cap_net_bind_service); a leading 0 is not
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["10","20"]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_bind_service,cap_sys_pacct${TAB}"
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["07"]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "userdb-invalid"
  # an escaped key is the same key (systemd decodes it): no hiding behind \u0041
  record "$d" bob '{"userName":"bob","capability\\u0041mbientSet":["cap_net_raw"]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_raw${TAB}"
  # nor in a perMachine section (applied when it matches the machine: reported whatever it matches)
  record "$d" bob '{"userName":"bob","perMachine":[{"matchHostname":"elsewhere","capabilityAmbientSet":["cap_sys_time"]}]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_sys_time${TAB}"
  # null: not set
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":null}'
  udb_audit "$d"; want_rc 1; no_text "$OUT" "$d/bob.user"
}

# Every record here is refused, each named with its reason; all in one audit, each in its own
# directory (an error is reported even in a record an earlier directory hides).
t_userdb_hostile_json() {
  need_root; local name text why i=0 dirs=() whys=() names=()
  while IFS='|' read -r name text why; do
    i=$((i + 1))
    record "$CASE_DIR/d$i" "$name" "$text"
    dirs+=("$CASE_DIR/d$i"); names+=("$name"); whys+=("$why")
  done <<'CASES'
bob|hello|not a user record systemd reads: not a JSON object
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_r|not a user record systemd reads: truncated string
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]|not a user record systemd reads: truncated
bob|{"userName":"bob"} x|not a user record systemd reads: trailing bytes after the JSON object
bob|{"userName":"bob"}{"capabilityAmbientSet":["cap_net_raw"]}|not a user record systemd reads: trailing bytes after the JSON object
bob||not a user record systemd reads: empty
bob|["bob"]|not a user record systemd reads: not a JSON object
bob|{"uid":1002,"capabilityAmbientSet":["cap_net_raw"]}|no userName
bob|{"userName":"alice","capabilityAmbientSet":["cap_net_raw"]}|its userName is not the file name
bob|{"userName":"bobby"}|its userName is not the file name
1002|{"userName":"bob","uid":1003}|its uid is not the number in the file name
bob|{"userName":7}|not a user record systemd reads: userName is not a string
bob|{"userName":"bob","capabilityAmbientSet":"cap_net_raw"}|not a user record systemd reads: a capability set is not an array
bob|{"userName":"bob","capabilityBoundingSet":{"cap_net_raw":true}}|not a user record systemd reads: a capability set is not an array
bob|{"userName":"bob","capabilityAmbientSet":[13]}|not a user record systemd reads: a capability set holds a value that is not a string
bob|{"userName":"bob","capabilityAmbientSet":[["cap_net_raw"]]}|not a user record systemd reads: a capability set holds a value that is not a string
bob|{"userName":"bob","capabilityAmbientSet":[null]}|not a user record systemd reads: a capability set holds a value that is not a string
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_rawx"]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_raw2"]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_raw "]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":["0x0d"]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":["64"]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":["all"]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":[""]}|not a user record systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_raw"],"capabilityAmbientSet":[]}|not a user record systemd reads: duplicate key (systemd refuses the record)
bob|{"userName":"bob","capabilityAmbientSet":["cap_net_raw"],"capability\\u0041mbientSet":[]}|not a user record systemd reads: duplicate key (systemd refuses the record)
bob|{"userName":"bob","userName":"alice"}|not a user record systemd reads: duplicate key (systemd refuses the record)
bob|{"userName":"bob"}\0{"capabilityAmbientSet":["cap_net_raw"]}|not a user record systemd reads: the file holds a NUL byte
bob|{"userName":"bob\\u0000x"}|not a user record systemd reads: a string holds U+0000
bob|{"userName":"b\xffob"}|not a user record systemd reads: invalid UTF-8 in a string
bob|{"userName":"bob\x01"}|not a user record systemd reads: control character in a string
bob|{"userName":"bob","x":\xef\xbb\xbf1}|not a user record systemd reads: not JSON
bob|{"userName":"bob","perMachine":{"capabilityAmbientSet":["cap_net_raw"]}}|not a user record systemd reads: perMachine is not an array
bob|{"userName":"bob","perMachine":[["cap_net_raw"]]}|not a user record systemd reads: a perMachine entry is not an object
bob|{"userName":"bob","perMachine":[{"capabilityAmbientSet":["cap_net_raw"],"capabilityAmbientSet":[]}]}|not a user record systemd reads: duplicate key (systemd refuses the record)
bob|{"userName":"bob","x":[1,]}|not a user record systemd reads: not JSON
bob|{"userName":"bob",}|not a user record systemd reads: object key is not a string
bob|{"userName" "bob","capabilityAmbientSet":["cap_net_raw"]}|not a user record systemd reads: expected ':' after an object key
bob|{"userName":"bob","capabilityAmbientSet"|not a user record systemd reads: truncated
bob|{"userName":"bob","x":01}|not a user record systemd reads: number with a leading zero
bob|{"userName":"bob","x":-09}|not a user record systemd reads: number with a leading zero
bob|{"userName":"bob","x":[1 2]}|not a user record systemd reads: expected ',' or the end of the array or object
bob|{"userName":"bob","x":"\\ud800"}|not a user record systemd reads: lone high surrogate in a \u escape
CASES
  [ "$i" -ge 40 ] || fail "only $i hostile records read"
  udb_audit "${dirs[@]}"; want_rc 2
  no_text "$OUT" "ambient-grant"
  for i in "${!dirs[@]}"; do
    want_text "$OUT" "finding${TAB}userdb-invalid${TAB}${dirs[$i]}/${names[$i]}.user${TAB}none${TAB}user record not audited: ${whys[$i]}"
    want_text "$ERR" "capdelegate: audit: error: ${dirs[$i]}/${names[$i]}.user: ${whys[$i]}: user record not audited"
  done
}

# The read is bounded (CLI_USERDB_MAX_BYTES, 262144 bytes) and so is nesting (32 levels).
t_userdb_size_and_depth() {
  need_root; local d="$CASE_DIR/db"
  python3 - "$d" <<'PY'
import os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
def put(name, body):
    with open(os.path.join(d, name + ".user"), "wb") as f:
        f.write(body)
head = b'{"userName":"NAME","capabilityAmbientSet":["cap_net_raw"]}'
# exactly the bound: read; one byte more: refused unread
put("alice", head.replace(b"NAME", b"alice").ljust(262144, b" "))
put("bob", head.replace(b"NAME", b"bob").ljust(262145, b" "))
# 32 levels (the record's own object counts): read; 33 and a bomb: refused
put("carol", b'{"userName":"carol","x":' + b"[" * 31 + b"]" * 31 + b"}")
put("dave", b'{"userName":"dave","x":' + b"[" * 32 + b"]" * 32 + b"}")
put("erin", b'{"userName":"erin","x":' + b"[" * 200000)
PY
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/alice.user${TAB}cap_net_raw${TAB}"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/bob.user${TAB}none${TAB}user record not audited: larger than 262144 bytes: refused unread"
  no_text "$OUT" "$d/carol.user"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/dave.user${TAB}none${TAB}user record not audited: not a user record systemd reads: nested deeper than 32 levels"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/erin.user${TAB}none${TAB}user record not audited: not a user record systemd reads: nested deeper than 32 levels"
}

# Only regular files are read; a FIFO is never opened (it would block), a symlink is
# followed as systemd follows it, one to /dev/null masks the name as in systemd.
t_userdb_file_kinds() {
  need_root; local d="$CASE_DIR/db" p; p=$(std_policy); mkdir -p "$d" "$CASE_DIR/empty"
  mkfifo "$d/fifo.user"; mkdir "$d/dir.user"; ln -s nowhere "$d/gone.user"
  ln -s /dev/null "$d/masked.user"; ln -s /dev/zero "$d/zero.user"
  record "$CASE_DIR/elsewhere" real '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}'
  ln -s "$CASE_DIR/elsewhere/real.user" "$d/bob.user"
  # systemd's other records in the same directories (NAME.group, USER:GROUP.membership) and
  # any other file are no user records: not read, not reported
  printf 'not json' >"$d/alice.group"; printf 'not json' >"$d/alice:netops.membership"
  RC=0
  LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" NSS_WRAPPER_PASSWD="$NSSDIR/passwd" \
    NSS_WRAPPER_GROUP="$NSSDIR/group" timeout 20 "$BIN" audit --config "$p" --confdir '' --userdb "$d" \
    "$CASE_DIR/empty" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 2	# 124 would be a blocked read
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/fifo.user${TAB}none${TAB}user record not audited: not a regular file: a FIFO"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/dir.user${TAB}none${TAB}user record not audited: not a regular file: a directory"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/gone.user${TAB}none${TAB}user record not audited: cannot examine: No such file or directory"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/zero.user${TAB}none${TAB}user record not audited: not a regular file: a character device"
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_raw${TAB}"
  no_text "$OUT" "masked.user"; no_text "$OUT" "alice.group"; no_text "$OUT" ".membership"
  # a directory that is not there holds no record; a file given as one is an error
  udb_audit "$CASE_DIR/none"; want_rc 1; no_text "$ERR" "none"
  udb_audit "$CASE_DIR/elsewhere/real.user"; want_rc 2
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$CASE_DIR/elsewhere/real.user${TAB}none${TAB}user record not audited: cannot read the directory: Not a directory"
}

# A record replaced by a directory between its stat and its open is judged by what was opened:
# not a regular file, and that is the record's one error (its NAME.user-privileged, no JSON
# object, is not read for it).
t_userdb_replaced_before_open() {
  need_root; local d="$CASE_DIR/db" p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}'
  printf '{' >"$d/bob.user-privileged"
  CD_FAULT_HOOK="bob.user:rm $d/bob.user && mkdir $d/bob.user" \
    cd_fault audit --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 2
  [ -d "$d/bob.user" ] || fail "the record was not replaced"
  want_line "$OUT" "finding${TAB}userdb-invalid${TAB}$d/bob.user${TAB}none${TAB}user record not audited: not a regular file: a directory"
}

# A record's name is hostile bytes: the path is escaped like every file name, the user's
# name in the message as the policy spells names.
t_userdb_odd_names() {
  need_root; local d="$CASE_DIR/db"
  record "$d" $'ev\x1b[31mil' '{"userName":"ev\\u001b[31mil","capabilityAmbientSet":["cap_net_raw"]}'
  record "$d" $'new\nline' '{"userName":"new\\nline","capabilityAmbientSet":["cap_net_raw"]}'
  # a name outside the BMP, written as a surrogate pair: U+10000 is 4 bytes of UTF-8, the
  # file's name, so the record is read (not refused for another name) and reported
  record "$d" $'a\xf0\x90\x80\x80' '{"userName":"a\\ud800\\udc00","capabilityAmbientSet":["cap_net_raw"]}'
  # and one whose high surrogate is not the first (U+1F600 = D83D DE00: 0x3D of the high
  # half shifted by 10 bits), which only the whole formula decodes to the file's name
  record "$d" $'b\xf0\x9f\x98\x80' '{"userName":"b\\ud83d\\ude00","capabilityAmbientSet":["cap_net_raw"]}'
  udb_audit "$d"; want_rc 2
  no_text "$OUT" $'\x1b'; no_text "$ERR" $'\x1b'
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/a"
  no_text "$OUT" "userdb-invalid"
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/b"
  [ "$(count_lines "$OUT" '^finding.ambient-grant')" -eq 4 ] || fail "four findings: $(cat "$OUT")"
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/ev\\x1b[31mil.user${TAB}cap_net_raw${TAB}user record of ev\\033\\13331mil raises"
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/new\\x0aline.user${TAB}cap_net_raw${TAB}user record of new\\012line raises"
  [ "$(count_lines "$OUT" '^finding')" -ge 2 ] || fail "two findings"
  [ "$(grep -c . "$OUT")" -eq "$(grep -c '^[#a-z]' "$OUT")" ] || fail "a record broke a line"
}

# systemd's order: a NAME.user in an earlier directory hides the later ones of that name.
t_userdb_search_order() {
  need_root; local a="$CASE_DIR/etc" b="$CASE_DIR/lib"
  record "$a" bob '{"userName":"bob"}'
  record "$b" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}'
  udb_audit "$a" "$b"; want_rc 1; no_text "$OUT" "ambient-grant"
  udb_audit "$b" "$a"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$b/bob.user${TAB}cap_net_raw${TAB}"
  # without --userdb: systemd's search path, in its order
  local p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  cd_nss audit --json --config "$p" --confdir '' "$CASE_DIR/empty"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["userdb"]["directories"]; assert d == ["/etc/userdb", "/run/userdb", "/run/host/userdb", "/usr/local/lib/userdb", "/usr/lib/userdb"], d' "$OUT" \
    || fail "default search path"
}

# Each allocation of audit failing in turn, with records to read (fault-cases.sh's sweep): exit
# 2 with a message of its own, or the unfaulted answer; never a record or finding lost in
# silence (a failed user lookup is not an unknown user). explain's few allocations of records
# are not swept: about 5 s more at load 10.
t_fault_alloc_userdb() {
  need_root; local p d="$CASE_DIR/db" n
  p=$(std_policy); touch -d '-1 hour' "$p"; mkdir -p "$CASE_DIR/empty"
  record "$d" alice '{"userName":"alice","capabilityBoundingSet":["cap_chown"]}'
  record "$d" bob '{"userName":"bob","perMachine":[{"capabilityBoundingSet":["cap_net_raw"]}],"x":"\\u00e9"}'
  record "$d" carol '{"userName":"carol","capabilityAmbientSet":[]}'
  # a companion merged (its strings, its sets), and a mask that hides a later record
  printf '%s' '{"userName":"carol","capabilityAmbientSet":["cap_kill"],"perMachine":[{"x":"\u00e9"}]}' >"$d/carol.user-privileged"
  ln -s /dev/null "$d/dave.user"; record "$CASE_DIR/db2" dave '{"userName":"dave","capabilityAmbientSet":["cap_kill"]}'
  n=$(sweep_alloc audit --threads 1 --config "$p" --confdir "" --userdb "$d" --userdb "$CASE_DIR/db2" "$CASE_DIR/empty"); echo "audit: $n" >&2
}

# systemd's own layout (userdbctl, nss-systemd): NAME.user and a link UID.user -> NAME.user,
# one record read under two names. capdelegate(8), USER RECORDS: the finding is made once, at
# NAME.user; the other name is shown as the same record. A hard link is one record too.
t_userdb_one_record_two_names() {
  need_root; local d="$CASE_DIR/db" h="$CASE_DIR/hard" p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$d" bob '{"userName":"bob","uid":1002,"capabilityAmbientSet":["cap_net_raw"]}'
  ln -s bob.user "$d/1002.user"
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_raw${TAB}"
  [ "$(count_lines "$OUT" ambient-grant)" -eq 1 ] || fail "one record under two names reported $(count_lines "$OUT" ambient-grant) times"
  cd_nss audit --json --config "$CASE_DIR/std.conf" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 2
  python3 - "$OUT" "$d" <<'PY' >&2 || fail "same_as in JSON"
import json, sys
doc = json.load(open(sys.argv[1])); d = sys.argv[2]
recs = {r["path"]: r for r in doc["userdb"]["records"]}
assert recs[d + "/1002.user"]["same_as"] == d + "/bob.user", recs
assert recs[d + "/bob.user"]["same_as"] is None, recs
assert [f["path"] for f in doc["findings"] if f["id"] == "ambient-grant"] == [d + "/bob.user"], doc["findings"]
PY
  cd_nss explain bob --config "$CASE_DIR/std.conf" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 0
  want_line "$OUT" "userdb\t$d/bob.user\tambient=cap_net_raw\tbounding=-\tadds=cap_net_raw\tremoves=none\tapplies"
  want_line "$OUT" "userdb\t$d/1002.user\tambient=cap_net_raw\tbounding=-\tadds=cap_net_raw\tremoves=none\tsame record as $d/bob.user"
  # a hard link: the name that is the user's is the record, whichever sorts first
  record "$h" bob '{"userName":"bob","uid":1002,"capabilityAmbientSet":["cap_sys_time"]}'
  ln "$h/bob.user" "$h/1002.user"
  udb_audit "$h"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$h/bob.user${TAB}cap_sys_time${TAB}"
  [ "$(count_lines "$OUT" ambient-grant)" -eq 1 ] || fail "a hard-linked record reported twice"
  # two files with the same text are two records: each reported
  rm "$h/1002.user"; record "$h" 1002 '{"userName":"bob","uid":1002,"capabilityAmbientSet":["cap_sys_time"]}'
  udb_audit "$h"; want_rc 2
  [ "$(count_lines "$OUT" ambient-grant)" -eq 2 ] || fail "two files are two records"
}

# RFC 8259's numbers, as systemd's parser reads them, in keys audit does not use: each form
# the grammar allows is read (the record then audited), each it refuses refuses the record.
t_userdb_numbers() {
  need_root; local d="$CASE_DIR/db" v i=0
  for v in 0 -0 0.5 -0.25 10 1e5 1E+5 2.5e-3 -12.0e0 0e0 123456789012345678901234567890; do
    i=$((i + 1)); rm -rf "$d"
    record "$d" bob "{\"userName\":\"bob\",\"diskSize\":$v,\"capabilityAmbientSet\":[\"cap_net_raw\"]}"
    udb_audit "$d"; want_rc 2
    want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_raw${TAB}"
    no_text "$OUT" "userdb-invalid"
  done
  # blanks wherever JSON allows them (RFC 8259: around every structural character): read
  rm -rf "$d"
  record "$d" bob $' {\t"userName" : "bob" ,\n"capabilityAmbientSet"\r\n:\t[ "cap_net_raw" ] } \n'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_net_raw${TAB}"
  no_text "$OUT" "userdb-invalid"
  for v in 01 -01 1. .5 1e 1e+ 1E- +1 - 0x10 1.e5; do
    rm -rf "$d"
    record "$d" bob "{\"userName\":\"bob\",\"diskSize\":$v,\"capabilityAmbientSet\":[\"cap_net_raw\"]}"
    udb_audit "$d"; want_rc 2
    want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/bob.user${TAB}"
    no_text "$OUT" "ambient-grant"
  done
}

# UID.user holds uid UID (systemd's userdb drop-ins): every uid_t has at most 10 digits, and a
# 10-digit one is a uid like any other; a record whose uid is not its file's number is refused.
t_userdb_uid_file_names() {
  need_root; local d="$CASE_DIR/db"
  record "$d" 4000000000 '{"userName":"zed","uid":4000000000,"capabilityAmbientSet":["cap_net_raw"]}'
  record "$d" 1234567890 '{"userName":"yves","uid":1234567891,"capabilityAmbientSet":["cap_kill"]}'
  udb_audit "$d"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/4000000000.user${TAB}cap_net_raw${TAB}"
  no_text "$OUT" "userdb-invalid${TAB}$d/4000000000.user"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/1234567890.user${TAB}none${TAB}user record not audited: its uid is not the number in the file name"
  # systemd's uid is an unsigned integer, and its JSON takes a real that converts to one and back
  # unchanged for it: 1002.0, 1002e0 and 1.002e3 are uid 1002 (sd_json_variant_has_type), -0 is
  # uid 0; 1002.5, -1002 and 1e400 (out of a double's range: ERANGE) are no uid. A reader
  # taking the fraction's '.' for a digit would make 100180 of 1002.0.
  local v i=0 ok=(1002.0 1002e0 1.002e3 100200e-2) bad=(1002.5 -1002 1002.0000001 1e400 -1e400 1002e-400)
  for v in "${ok[@]}" "${bad[@]}"; do
    i=$((i + 1)); rm -rf "$d"
    record "$d" 1002 "{\"userName\":\"bob\",\"uid\":$v,\"capabilityAmbientSet\":[\"cap_net_raw\"]}"
    record "$d" 100180 "{\"userName\":\"carol\",\"uid\":1002.0,\"capabilityAmbientSet\":[\"cap_net_raw\"]}"
    record "$d" 0 '{"userName":"root","uid":-0}'
    udb_audit "$d"; want_rc 2
    want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/100180.user${TAB}none${TAB}user record not audited: its uid is not the number in the file name"
    no_text "$OUT" "$d/0.user"
    if [ "$i" -le "${#ok[@]}" ]; then
      want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/1002.user${TAB}cap_net_raw${TAB}"
    else
      want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/1002.user${TAB}none${TAB}user record not audited: its uid is not the number in the file name"
    fi
  done
}

# Every prefix of a record is refused as cut short (or empty), and reading them all reads no
# byte past what the file holds: memcheck sees every read of memory never written.
t_valgrind_userdb_prefixes() {
  need_root; command -v valgrind >/dev/null || skip "valgrind missing"
  local full='{"userName":"bob","uid":1002,"capabilityAmbientSet":["cap_net_raw"],"perMachine":[{"x":[]}],"y":[-1.5e3,true,null]}'
  local p i args=()
  p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  for ((i = 0; i < ${#full}; i++)); do
    mkdir -p "$CASE_DIR/d$i"; printf '%s' "${full:0:i}" >"$CASE_DIR/d$i/bob.user"
    args+=(--userdb "$CASE_DIR/d$i")
  done
  vg_run audit --config "$p" --confdir '' "${args[@]}" "$CASE_DIR/empty"; want_rc 2
  no_text "$OUT" "ambient-grant"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$CASE_DIR/d0/bob.user${TAB}none${TAB}user record not audited: not a user record systemd reads: empty"
  # cut inside a number ("-", "1.5e") the number is bad; anywhere else the record is truncated
  for ((i = 1; i < ${#full}; i++)); do
    grep -qE "^finding${TAB}userdb-invalid${TAB}$CASE_DIR/d$i/bob.user${TAB}none${TAB}user record not audited: not a user record systemd reads: (truncated|bad number)" "$OUT" ||
      fail "prefix of ${i} bytes not refused as cut short: ${full:0:i}"
  done
}

# RFC 8259's string escapes, decoded as systemd decodes them: \u in either case of hex digits,
# to UTF-8 of 1, 2 and 3 bytes, and the surrogate pair; what the file's name must then equal
# (capdelegate(8), USER RECORDS: userName equal to NAME). Keys audit does not read are still
# JSON: a nested object of them is read through, and any escape it holds refused as anywhere.
t_userdb_string_escapes() {
  need_root; local name text why i=0 dirs=() whys=() names=() d="$CASE_DIR/ok"
  # read: the decoded userName is the file's name (é: 2 bytes, € and U+FFFD: 3 bytes)
  record "$d" $'b\xc3\xa9\xe2\x82\xac\xef\xbf\xbdA' '{"userName":"b\\u00E9\\u20AC\\uFFFD\\u0041","capabilityAmbientSet":["CAP_NET_R\\u0041W"]}'
  record "$d" $'c\xc3\xa9' '{"userName":"c\\u00e9","perMachine":null,"capabilityAmbientSet":["\\u0063ap_sys_time"],"x":{"a" : {"b\\u00e9":[1,false,true,null,{}]} , "c":"\\/\\b\\f\\n\\r\\t\\"\\\\"}}'
  record "$d" dave '{"userName":"dave","capabilityAmbientSet":["cap_kill"],"perMachine":[{"x":{"y":{"uid":1}},"capabilityAmbientSet":["cap_chown"]}]}'
  # the edges of UTF-8's lengths: U+07FF is 2 bytes (DF BF), U+0800 is 3 (E0 A0 80), U+FFFF
  # is 3 (EF BF BF, never the 4 of an overlong form), U+10000 is 4 (F0 90 80 80)
  record "$d" $'f\xdf\xbf\xe0\xa0\x80' '{"userName":"f\\u07FF\\u0800","capabilityAmbientSet":["cap_wake_alarm"]}'
  record "$d" $'g\xef\xbf\xbf\xf0\x90\x80\x80' '{"userName":"g\\uFFFF\\uD800\\uDC00","capabilityAmbientSet":["cap_block_suspend"]}'
  # refused: each in its own directory, with its reason
  while IFS='|' read -r name text why; do
    i=$((i + 1))
    record "$CASE_DIR/d$i" "$name" "$text"
    dirs+=("$CASE_DIR/d$i"); names+=("$name"); whys+=("$why")
  done <<'CASES'
bob|{"userName":"bob","x":"\\u1g00"}|bad \u escape
bob|{"userName":"bob","x":"\\u12|truncated \u escape
bob|{"userName":"bob","x":"\\udc00"}|lone low surrogate in a \u escape
bob|{"userName":"bob","x":"\\ud800\\u0041"}|high surrogate without its low surrogate
bob|{"userName":"bob","x":"\\ud800\\udcg0"}|bad \u escape
bob|{"userName":"bob","x":"\\ud800\\udc|truncated \u escape
bob|{"userName":"bob","x":"a\\q"}|bad escape in a string
bob|{"userName":"bob","x":"b\xc3Ab"}|invalid UTF-8 in a string
bob|{"userName":"bob","x":"a\\|truncated string
bob|{"userName":"bob","x":{"a":1,"a\\q":2}}|bad escape in a string
bob|{"userName":"bob","x":{1:2}}|object key is not a string
bob|{"userName":"bob","x":{"a" 1}}|expected ':' after an object key
bob|{"userName":"bob","x":{"a"|truncated
bob|{"userName":"bob","x":{"a":1,|truncated
bob|{"userName":"bob","x":{"a":fals}}|not JSON
bob|{"userName":"bob","x":trux|not JSON
bob|{"userName":"bob","x":tru|truncated
bob|{"userName":"bob","x":{"a":[1,{"b":2,"c":3 "d":4}]}}|expected ',' or the end of the array or object
CASES
  udb_audit "$d" "${dirs[@]}"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/b"
  [ "$(count_lines "$OUT" "^finding${TAB}ambient-grant${TAB}$d/b.*${TAB}cap_net_raw${TAB}")" -eq 1 ] || fail "b\\u00E9... not read as its file's name"
  [ "$(count_lines "$OUT" "^finding${TAB}ambient-grant${TAB}$d/c.*${TAB}cap_sys_time${TAB}")" -eq 1 ] || fail "c\\u00e9 not read as its file's name"
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/dave.user${TAB}cap_chown,cap_kill${TAB}"
  no_text "$OUT" "userdb-invalid${TAB}$d/"
  [ "$(count_lines "$OUT" "^finding${TAB}ambient-grant${TAB}$d/f.*${TAB}cap_wake_alarm${TAB}")" -eq 1 ] || fail "f\\u07FF\\u0800 not read as its file's name"
  [ "$(count_lines "$OUT" "^finding${TAB}ambient-grant${TAB}$d/g.*${TAB}cap_block_suspend${TAB}")" -eq 1 ] || fail "g\\uFFFF\\uD800\\uDC00 not read as its file's name"
  for i in "${!dirs[@]}"; do
    want_text "$OUT" "finding${TAB}userdb-invalid${TAB}${dirs[$i]}/${names[$i]}.user${TAB}none${TAB}user record not audited: not a user record systemd reads: ${whys[$i]}"
  done
  [ "$(count_lines "$OUT" "^finding${TAB}userdb-invalid")" -eq "${#dirs[@]}" ] || fail "one userdb-invalid per refused record"
  # the same escapes spelled otherwise name another user: refused, not read as b\u00e9
  rm -rf "$d"
  record "$d" $'b\xc3\xa9' '{"userName":"b\\u00e8","capabilityAmbientSet":["cap_net_raw"]}'
  record "$d" $'c\xe2\x82\xac' '{"userName":"c\\u20AD","capabilityAmbientSet":["cap_net_raw"]}'
  udb_audit "$d"; want_rc 2; no_text "$OUT" "ambient-grant"
  [ "$(count_lines "$OUT" "^finding${TAB}userdb-invalid${TAB}$d/.*user record not audited: its userName is not the file name")" -eq 2 ] ||
    fail "a userName other than the file's name read"
}

# A record or directory that cannot be read is a userdb-invalid with the system's reason, never
# a record skipped (capdelegate(8), USER RECORDS and FINDINGS): a record whose open fails, one
# whose read fails (/proc/self/mem, followed as systemd follows links: a regular file whose
# first byte cannot be read), a directory that cannot be listed (fdopendir out of memory).
t_userdb_read_failures() {
  need_root; local d="$CASE_DIR/db" e="$CASE_DIR/db2" p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$d" alice '{"userName":"alice","capabilityAmbientSet":["cap_net_raw"]}'
  record "$d" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}'
  ln -s /proc/self/mem "$d/carol.user"
  CD_FAULT_OPENAT=bob.user:13 cd_fault audit --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"
  [ -e "$FIRED" ] || fail "the fault did not fire"
  want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/alice.user${TAB}cap_net_raw${TAB}"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/bob.user${TAB}none${TAB}user record not audited: cannot open: Permission denied"
  want_text "$ERR" "capdelegate: audit: error: $d/bob.user: cannot open: Permission denied: user record not audited"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$d/carol.user${TAB}none${TAB}user record not audited: cannot read: Input/output error"
  no_text "$OUT" "ambient-grant${TAB}$d/bob.user"
  # explain: the user's record unreadable is exit 2, and shown
  CD_FAULT_OPENAT=bob.user:13 cd_fault explain bob --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"
  want_rc 2
  want_line "$OUT" "userdb\t$d/bob.user\tambient=-\tbounding=-\tadds=none\tremoves=none\terror: cannot open: Permission denied"
  # a directory that cannot be listed: its records are unknown, which is not none (audit: a
  # userdb-invalid; explain: shown, exit 2, as a record of the user that cannot be read)
  record "$e" dave '{"userName":"dave","capabilityAmbientSet":["cap_net_raw"]}'
  CD_FAULT_FDOPENDIR=12 cd_fault explain dave --config "$p" --confdir '' --userdb "$e"
  [ -e "$FIRED" ] || fail "the fault did not fire"
  want_rc 2
  want_line "$OUT" "userdb\t$e\tambient=-\tbounding=-\tadds=none\tremoves=none\terror: cannot read the directory: Cannot allocate memory"
  want_text "$ERR" "capdelegate: explain: error: $e: cannot read the directory: Cannot allocate memory: the session may not get the grant shown"
  want_line "$OUT" "pI\tnone\tuser"
  CD_FAULT_FDOPENDIR=12 cd_fault audit --config "$p" --confdir '' --userdb "$e" "$CASE_DIR/empty"; want_rc 2
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$e${TAB}none${TAB}user record not audited: cannot read the directory: Cannot allocate memory"
  # listed part-way, then readdir fails (EIO): the directory is an error too (exit 2), beside
  # what the records listed before it say; never those records alone, as if the list were whole
  CD_FAULT_READDIR="${e##*/}:5" cd_fault audit --config "$p" --confdir '' --userdb "$e" "$CASE_DIR/empty"
  [ -e "$FIRED" ] || fail "the readdir fault did not fire"
  want_rc 2
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$e${TAB}none${TAB}user record not audited: cannot read the directory: Input/output error"
}

# Each asprintf(3) of a record's path and of its error failing in turn (fault-cases.sh's
# sweep): exit 2 with a message of its own, or the unfaulted answer; never a record lost or
# taken for a good one.
t_fault_asprintf_userdb() {
  need_root; local p d="$CASE_DIR/db" n
  p=$(std_policy); touch -d '-1 hour' "$p"; mkdir -p "$CASE_DIR/empty"
  record "$d" alice '{"userName":"alice","capabilityAmbientSet":["cap_net_raw"]}'
  record "$d" bob '{"userName":"bob",'
  record "$d" carol '{"userName":"bobby"}'
  n=$(CD_FAULT_ASPRINTF='%s%s%s' SWEEP=CD_FAULT_NTH sweep_alloc audit --threads 1 --config "$p" --confdir "" --userdb "$d" "$CASE_DIR/empty")
  echo "audit: $n" >&2
  [ "${n%% *}" -ge 5 ] || fail "$n: fewer than the records' paths and errors"
  # a companion's name and path, the error naming it, and a mask's path
  printf '%s' '{"capabilityAmbientSet":["cap_kill"]}' >"$d/alice.user-privileged"
  printf '%s' '{' >"$d/carol.user-privileged"; ln -s /dev/null "$d/dave.user"
  local f
  for f in '%s-privileged' 'cannot merge %s: %s' '%s/%s'; do
    n=$(CD_FAULT_ASPRINTF="$f" SWEEP=CD_FAULT_NTH sweep_alloc audit --threads 1 --config "$p" --confdir "" --userdb "$d" "$CASE_DIR/empty")
    echo "audit, $f: $n" >&2
    [ "${n%% *}" -ge 1 ] || fail "$f: $n"
  done
}

# Each open_memstream(3) (a decoded JSON string, an output row) failing in turn: exit 2 with a
# message of its own, or the unfaulted answer; a string that could not be decoded is never read
# as another, nor its record taken for a good one.
t_fault_memstream_userdb() {
  need_root; local p d="$CASE_DIR/db" n
  p=$(std_policy); touch -d '-1 hour' "$p"; mkdir -p "$CASE_DIR/empty"
  record "$d" alice '{"userName":"alice","capabilityAmbientSet":["cap_net_raw"],"x":{"y":"z"}}'
  record "$d" bob '{"userName":"bob","capabilityBoundingSet":["cap_chown"]}'
  n=$(SWEEP=CD_FAULT_MEMSTREAM sweep_alloc audit --threads 1 --config "$p" --confdir "" --userdb "$d" "$CASE_DIR/empty")
  echo "audit: $n" >&2
  [ "${n%% *}" -ge 9 ] || fail "$n: fewer than the records' strings"
  # ... and each close of one failing in turn (a string's last flush needs memory)
  n=$(SWEEP=CD_FAULT_MEMSTREAM_CLOSE sweep_alloc audit --threads 1 --config "$p" --confdir "" --userdb "$d" "$CASE_DIR/empty")
  echo "audit, closes: $n" >&2
  [ "${n%% *}" -ge 9 ] || fail "$n: fewer than the records' strings closed"
  # the first stream is the first record's first string: memory, not a record refused
  CD_FAULT_MEMSTREAM=1 cd_fault audit --threads 1 --config "$p" --confdir "" --userdb "$d" "$CASE_DIR/empty"
  want_rc 2; want_line "$ERR" "capdelegate: audit: out of memory; no report"
  no_text "$OUT" "userdb-invalid"
  # a string refused (a control character) whose stream's close fails as well: the record is
  # refused for what it holds, as without the fault, never taken for memory running out
  record "$CASE_DIR/bad" alice '{"userName":"alice\x01"}'
  CD_FAULT_MEMSTREAM_CLOSE=2 cd_fault audit --threads 1 --config "$p" --confdir "" --userdb "$CASE_DIR/bad" "$CASE_DIR/empty"
  [ -e "$FIRED" ] || fail "no second close"
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$CASE_DIR/bad/alice.user${TAB}"
  want_text "$OUT" "control character in a string"; no_text "$ERR" "out of memory"
}

# A uid written as a real (1002.0) is read from a copy of its text: memory running out there is
# an error, exit 2, never the record refused as if its uid were not the number in its name.
t_fault_real_uid_userdb() {
  need_root; local p d="$CASE_DIR/db"
  p=$(std_policy); touch -d '-1 hour' "$p"; mkdir -p "$CASE_DIR/empty"
  record "$d" 1002 '{"userName":"bob","uid":1002.0,"capabilityAmbientSet":["cap_net_raw"]}'
  CD_FAULT_STRDUP=1002.0 cd_fault audit --threads 1 --config "$p" --confdir "" --userdb "$d" "$CASE_DIR/empty"
  [ -e "$FIRED" ] || fail "no fault"
  want_rc 2; want_line "$ERR" "capdelegate: audit: out of memory; no report"
  no_text "$OUT" "userdb-invalid"
}

# systemd's lookup by name (userdb-dropin.c, search_and_open) opens NAME.user in each directory
# in turn and goes on to the next only when the open fails with ENOENT: a dangling link (or a
# name gone meanwhile) hides nothing, and the later record is the one a login applies. Any
# other name that opens stops the search there: a mask (a link to /dev/null, which opens and
# is no record), or a record that cannot be read (systemd's lookup then fails).
t_userdb_absent_name_hides_nothing() {
  need_root; local a="$CASE_DIR/etc" b="$CASE_DIR/lib" p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$b" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}'
  mkdir -p "$a"; ln -s nowhere "$a/bob.user"
  udb_audit "$a" "$b"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$b/bob.user${TAB}cap_net_raw${TAB}"
  cd_nss audit --json --config "$p" --confdir '' --userdb "$a" --userdb "$b" "$CASE_DIR/empty"
  python3 - "$OUT" "$a" "$b" <<'PY' >&2 || fail "JSON: the later record is hidden by nothing"
import json, sys
doc, a, b = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
recs = {r["path"]: r for r in doc["userdb"]["records"]}
assert recs[b + "/bob.user"]["hidden_by"] is None, recs
assert "No such file or directory" in recs[a + "/bob.user"]["error"], recs
PY
  cd_nss explain bob --config "$p" --confdir '' --userdb "$a" --userdb "$b" "$CASE_DIR/empty"; want_rc 2
  want_line "$OUT" "userdb\t$b/bob.user\tambient=cap_net_raw\tbounding=-\tadds=cap_net_raw\tremoves=none\tapplies"
  # a mask opens: the search stops there, and the later record is never applied
  rm "$a/bob.user"; ln -s /dev/null "$a/bob.user"
  udb_audit "$a" "$b"; want_rc 1; no_text "$OUT" "ambient-grant"
  cd_nss explain bob --config "$p" --confdir '' --userdb "$a" --userdb "$b" "$CASE_DIR/empty"; want_rc 0
  want_line "$OUT" "userdb\t$b/bob.user\tambient=cap_net_raw\tbounding=-\tadds=cap_net_raw\tremoves=none\thidden by $a/bob.user"
  # a name whose open fails otherwise (a link to itself: ELOOP) stops it too: systemd's lookup
  # fails, and the later record is never applied
  rm "$a/bob.user"; ln -s bob.user "$a/bob.user"
  udb_audit "$a" "$b"; want_rc 2
  want_text "$OUT" "finding${TAB}userdb-invalid${TAB}$a/bob.user${TAB}none${TAB}user record not audited: cannot examine: Too many levels of symbolic links"
  no_text "$OUT" "ambient-grant"
}

# NAME.user-privileged beside NAME.user (systemd's userdb-dropin.c load_user): systemd merges its
# top-level keys into the record, each replacing the record's own key of that name, so it may
# set or clear capabilityAmbientSet, capabilityBoundingSet and perMachine. Its "privileged"
# section carries no capability set (user-record.c reads passwords and keys there).
t_userdb_privileged_merged() {
  need_root; local d="$CASE_DIR/db" e="$CASE_DIR/other" p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$d" bob '{"userName":"bob","uid":1002}'
  printf '%s' '{"capabilityAmbientSet":["cap_sys_time"],"privileged":{"hashedPassword":["x"]}}' >"$d/bob.user-privileged"
  # the companion's key replaces the record's: null clears the record's set
  record "$d" carol '{"userName":"carol","capabilityAmbientSet":["cap_kill"]}'
  printf '%s' '{"capabilityAmbientSet":null}' >"$d/carol.user-privileged"
  # perMachine replaced whole, bounding set from the companion
  record "$d" alice '{"userName":"alice","perMachine":[{"matchHostname":"x","capabilityAmbientSet":["cap_chown"]}]}'
  printf '%s' '{"perMachine":[],"capabilityBoundingSet":["cap_chown"]}' >"$d/alice.user-privileged"
  # a set inside the privileged section is not one systemd applies
  record "$d" dave '{"userName":"dave"}'
  printf '%s' '{"privileged":{"capabilityAmbientSet":["cap_net_raw"]}}' >"$d/dave.user-privileged"
  # the companion of a record in another directory is not merged
  record "$e" erin '{"userName":"erin"}'
  mkdir -p "$d"; printf '%s' '{"capabilityAmbientSet":["cap_net_raw"]}' >"$d/erin.user-privileged"
  # a dangling companion is none (systemd: ENOENT, the record is complete)
  record "$d" frank '{"userName":"frank","capabilityAmbientSet":["cap_setuid"]}'
  ln -s nowhere "$d/frank.user-privileged"
  udb_audit "$d" "$e"; want_rc 2
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/bob.user${TAB}cap_sys_time${TAB}user record of bob raises"
  no_text "$OUT" "ambient-grant${TAB}$d/carol.user"
  no_text "$OUT" "$d/alice.user${TAB}cap_chown"
  want_text "$OUT" "finding${TAB}bounding-drop${TAB}$d/alice.user${TAB}cap_net_raw${TAB}"
  no_text "$OUT" "$d/dave.user"; no_text "$OUT" "$e/erin.user"
  want_text "$OUT" "finding${TAB}ambient-grant${TAB}$d/frank.user${TAB}cap_setuid${TAB}"
  no_text "$OUT" "userdb-invalid"
  [ "$(count_lines "$OUT" ambient-grant)" -eq 2 ] || fail "two ambient grants"
  # UID.user and UID.user-privileged linked to the name's, as nss-systemd(8) lays them out: one record
  ln -s bob.user "$d/1002.user"; ln -s bob.user-privileged "$d/1002.user-privileged"
  udb_audit "$d" "$e"; want_rc 2
  [ "$(count_lines "$OUT" "ambient-grant${TAB}$d/")" -eq 2 ] || fail "bob's record reported twice"
  cd_nss explain bob --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 0
  want_line "$OUT" "userdb\t$d/bob.user\tambient=cap_sys_time\tbounding=-\tadds=cap_sys_time\tremoves=none\tapplies, with $d/bob.user-privileged"
  want_line "$OUT" "userdb\t$d/1002.user\tambient=cap_sys_time\tbounding=-\tadds=cap_sys_time\tremoves=none\tsame record as $d/bob.user"
}

# A companion systemd opens and cannot merge makes its lookup of the record fail: the record is
# a userdb-invalid, and it still hides the name in later directories.
t_userdb_privileged_refused() {
  need_root; local name text why i=0 dirs=() whys=() names=() last="$CASE_DIR/last"
  while IFS='|' read -r name text why; do
    i=$((i + 1))
    record "$CASE_DIR/d$i" "$name" '{"userName":"bob","uid":1002}'
    if [ "$text" = '@null' ]; then ln -s /dev/null "$CASE_DIR/d$i/$name.user-privileged"
    elif [ "$text" = '@dir' ]; then mkdir "$CASE_DIR/d$i/$name.user-privileged"
    else printf '%b' "$text" >"$CASE_DIR/d$i/$name.user-privileged"; fi
    dirs+=("$CASE_DIR/d$i"); names+=("$name"); whys+=("$why")
  done <<'CASES'
bob|{"capabilityAmbientSet":["cap_net_raw"]|cannot merge CASEDIR/bob.user-privileged: not a JSON object systemd reads: truncated
bob|["cap_net_raw"]|cannot merge CASEDIR/bob.user-privileged: not a JSON object systemd reads: not a JSON object
bob|{"capabilityAmbientSet":["cap_net_raw"],"capabilityAmbientSet":[]}|cannot merge CASEDIR/bob.user-privileged: not a JSON object systemd reads: duplicate key (systemd refuses the record)
bob|{"capabilityAmbientSet":["cap_bogus"]}|cannot merge CASEDIR/bob.user-privileged: not a JSON object systemd reads: a capability set names a capability libcap does not know
bob|{"userName":"alice"}|its userName is not the file name
1002|{"uid":1003}|its uid is not the number in the file name
bob|@null|cannot merge CASEDIR/bob.user-privileged: not a regular file: a character device
bob|@dir|cannot merge CASEDIR/bob.user-privileged: not a regular file: a directory
CASES
  record "$last" bob '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}'
  udb_audit "${dirs[@]}" "$last"; want_rc 2
  no_text "$OUT" "ambient-grant"
  for i in "${!dirs[@]}"; do
    want_text "$OUT" "finding${TAB}userdb-invalid${TAB}${dirs[$i]}/${names[$i]}.user${TAB}none${TAB}user record not audited: ${whys[$i]//CASEDIR/${dirs[$i]}}"
  done
}

# audit --json: each record names the companion merged into it (capdelegate(8), JSON OUTPUT).
t_userdb_privileged_json() {
  need_root; local d="$CASE_DIR/db" p; p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  record "$d" bob '{"userName":"bob","capabilityBoundingSet":["cap_net_raw"]}'
  printf '%s' '{"capabilityAmbientSet":["cap_sys_time"]}' >"$d/bob.user-privileged"
  record "$d" carol '{"userName":"carol"}'
  cd_nss audit --json --config "$p" --confdir '' --userdb "$d" "$CASE_DIR/empty"; want_rc 2
  "$HERE/check-json.py" --may-be-empty files --may-be-empty matrix --may-be-empty errors \
    --may-be-empty vanished "$MAN" "$OUT" >&2 || fail "JSON schema"
  python3 - "$OUT" "$d" <<'PY' >&2 || fail "userdb.records[].privileged"
import json, sys
doc, d = json.load(open(sys.argv[1])), sys.argv[2]
recs = {r["path"]: r for r in doc["userdb"]["records"]}
bob, carol = recs[d + "/bob.user"], recs[d + "/carol.user"]
assert bob["privileged"] == d + "/bob.user-privileged", bob
assert bob["ambient"] == ["cap_sys_time"] and bob["bounding"] == ["cap_net_raw"], bob
assert carol["privileged"] is None and carol["privileged_hex"] is None, carol
assert d + "/bob.user-privileged" not in recs, recs
PY
}
