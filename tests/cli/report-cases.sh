# report-cases.sh: `capdelegate report FILE...`, the fleet view of many hosts' `audit --json`
# (sourced by run.sh). Every fixture is made by the real `capdelegate audit --json` on a
# fixture tree, each "host" in its own UTS and mount namespaces (unshare --uts --mount,
# hostname, a machine-id of its own bound over /etc/machine-id), then cut, broken or edited by
# hand for the hostile inputs.

REPORT_CASES=(
  report_audit_records_host report_two_hosts report_drift_and_errors report_bad_inputs
  report_odd_host_name report_missing_host report_usage report_unreadable_and_shapes
  fault_alloc_report fault_memstream_report valgrind_report report_user_and_group_one_name
  report_subjects_sorted report_audit_records_machine_id report_file_named_twice
  report_duplicate_keys report_host_hex_contradicts_host report_clones_told_apart
  report_one_machine_twice report_one_name_without_machine_id fault_alloc_report_identity
  valgrind_report_identity report_many_subjects report_subject_on_two_lines report_stdin_closed
  report_duplicate_key_surrogate report_group_name_with_blank
)

# host_audit NAME POLICY ARGS...: audit --json as host NAME, whose /etc/machine-id holds
# $MACHINE_ID (printf %b; unset: 32 hex digits of its own, from NAME); prints the JSON file's
# path.
host_audit() {
  local name=$1 pol=$2 f="$CASE_DIR/$1.json" mid="$CASE_DIR/$1.machine-id"; shift 2
  if [ -n "${MACHINE_ID+set}" ]; then printf '%b' "$MACHINE_ID" >"$mid"
  else printf '%s' "$name" | md5sum | cut -c1-32 >"$mid"; fi
  unshare --uts --mount -- sh -c 'mount --bind "$1" /etc/machine-id && hostname "$2" && shift 2 && exec "$@"' \
    sh "$mid" "$name" "$BIN" audit --json --config "$pol" "$@" >"$f" || [ $? -le 2 ]
  echo "$f"
}

# Two hosts whose policies differ: alice has cap_sys_time more on web2, bob a line on web2
# only; @netops the same on both.
report_hosts() {
  local t="$CASE_DIR/tree" p1 p2
  capfile "$t/ping" cap_net_raw=i; capfile "$t/adm" cap_net_admin=i
  p1=$(policy web1 <<'P'
alice    cap_net_raw
@netops  cap_net_raw, cap_net_admin
P
)
  p2=$(policy web2 <<'P'
alice    cap_net_raw, cap_sys_time
@netops  cap_net_admin, cap_net_raw
bob      cap_net_raw
P
)
  H1=$(host_audit web1 "$p1" "$t"); H2=$(host_audit web2 "$p2" "$t")
}

# mid_of NAME: the machine-id host_audit gives host NAME.
mid_of() { printf '%s' "$1" | md5sum | cut -c1-32; }

need_unshare() {
  need_root; unshare --uts true 2>/dev/null || skip "no UTS namespace (unshare --uts)"
  [ -f /etc/machine-id ] && unshare --mount true 2>/dev/null || skip "no /etc/machine-id to bind over, or no mount namespace"
}

# A grant is a capability, a kind and a subject: two rules of one subject text and different
# kinds are two grants, in the table and in --json, never one subject held on twice the hosts.
# audit writes a group's subject as @name; a file written otherwise (another tool, an edit by
# hand) names the group alice as "alice", the user's own text.
t_report_user_and_group_one_name() {
  need_unshare; local p h
  p=$(printf 'alice cap_net_raw\n@alice cap_net_raw\n' | policy)
  mkdir -p "$CASE_DIR/empty"
  for h in web1 web2; do
    host_audit "$h" "$p" "$CASE_DIR/empty" >/dev/null
    python3 - "$CASE_DIR/$h.json" <<'PY' || fail "$h: no group rule to rename"
import json, sys
d = json.load(open(sys.argv[1]))
n = 0
for r in d["policy"]["rules"]:
    if r["kind"] == "group":
        r["subject"], n = "alice", n + 1
assert n == 1, d["policy"]["rules"]
json.dump(d, open(sys.argv[1], "w"))
PY
  done
  cd_run report "$CASE_DIR/web1.json" "$CASE_DIR/web2.json"
  for k in user group; do for h in web1 web2; do
    want_line "$OUT" "grant\tcap_net_raw\t$k\talice\t$h"
  done; done
  cd_run report --json "$CASE_DIR/web1.json" "$CASE_DIR/web2.json"
  python3 - "$OUT" <<'PY' || fail "report --json's grants: $(cat "$OUT")"
import json, sys
g = json.load(open(sys.argv[1]))["grants"]
got = sorted((x["capability"], x["kind"], x["subject"], tuple(h["host"] for h in x["hosts"])) for x in g)
want = [("cap_net_raw", k, "alice", ("web1", "web2")) for k in ("group", "user")]
assert got == want, got
PY
}

# A group name with a blank (winbind's "linux admins") is printed in the policy's own form,
# @linux\040admins, in both tables and both forms, as check and explain print it: a bare blank
# would read as two words and split the aligned table's SUBJECT column. --json keeps the name
# as audit wrote it (NSS's bytes).
t_report_group_name_with_blank() {
  need_unshare; local p1 p2 NSSDIR="$CASE_DIR/nss" f
  mkdir -p "$CASE_DIR/empty" "$NSSDIR"
  printf 'root:x:0:0::/root:/bin/sh\n' >"$NSSDIR/passwd"
  printf 'root:x:0:\nlinux admins:x:2003:\n' >"$NSSDIR/group"
  p1=$(printf '@linux\\040admins cap_net_raw\n' | policy web1)
  p2=$(printf '@linux\\040admins cap_net_raw, cap_sys_time\n' | policy web2)
  host_audit web1 "$p1" "$CASE_DIR/empty" >/dev/null; host_audit web2 "$p2" "$CASE_DIR/empty" >/dev/null
  f=("$CASE_DIR/web1.json" "$CASE_DIR/web2.json")
  grep -qF '"@linux admins"' "${f[0]}" || fail "audit --json does not name @linux admins: $(cat "${f[0]}")"
  cd_run report "${f[@]}"; want_rc 1
  want_line "$OUT" 'grant\tcap_net_raw\tgroup\t@linux\\040admins\tweb1'
  want_line "$OUT" 'grant\tcap_sys_time\tgroup\t@linux\\040admins\tweb2'
  want_line "$OUT" 'differs\tgroup\t@linux\\040admins\tweb1=cap_net_raw\tweb2=cap_net_raw,cap_sys_time'
  no_text "$OUT" "linux admins"
  cd_tty report "${f[@]}"; want_rc 1
  tables_aligned "$OUT" >"$CASE_DIR/headers" || fail "report's tables are not aligned"
  grep -q '^CAPABILITY ' "$CASE_DIR/headers" || fail "no grants table: $(cat "$CASE_DIR/headers")"
  grep -q '^KIND ' "$CASE_DIR/headers" || fail "no differences table: $(cat "$CASE_DIR/headers")"
  [ "$(grep -c '@linux\\040admins  ' "$OUT")" = 4 ] || fail "want @linux\\040admins in 4 rows, as a cell of its own"
  no_text "$OUT" "linux admins"
  cd_run report --json "${f[@]}"; want_rc 1
  python3 - "$OUT" <<'PY' || fail "report --json's subjects: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
assert {x["subject"] for x in d["grants"]} == {"@linux admins"}, d["grants"]
assert [x["subject"] for x in d["differs"]] == ["@linux admins"], d["differs"]
PY
}

# The grants table is sorted by capability, kind, subject, then host: two subjects of one
# capability, written bob before alice on both hosts, come out alice's hosts, then bob's, and
# --json holds one grant per subject with both hosts (never a subject split by the other's).
t_report_subjects_sorted() {
  need_unshare; local p
  p=$(printf 'bob cap_net_raw\nalice cap_net_raw\n' | policy)
  mkdir -p "$CASE_DIR/empty"
  host_audit web1 "$p" "$CASE_DIR/empty" >/dev/null; host_audit web2 "$p" "$CASE_DIR/empty" >/dev/null
  cd_run report "$CASE_DIR/web1.json" "$CASE_DIR/web2.json"; want_rc 0
  [ "$(grep '^grant' "$OUT" | cut -f4,5 | paste -sd' ')" = "alice	web1 alice	web2 bob	web1 bob	web2" ] \
    || fail "grant order: $(grep '^grant' "$OUT" | cut -f4,5 | paste -sd' ')"
  cd_run report --json "$CASE_DIR/web1.json" "$CASE_DIR/web2.json"; want_rc 0
  python3 - "$OUT" <<'PY' || fail "report --json's grants: $(cat "$OUT")"
import json, sys
g = json.load(open(sys.argv[1]))["grants"]
got = [(x["subject"], [h["host"] for h in x["hosts"]]) for x in g]
assert got == [("alice", ["web1", "web2"]), ("bob", ["web1", "web2"])], got
PY
}

# audit --json records the host's name, as gethostname gives it, and its bytes in hex.
t_report_audit_records_host() {
  need_unshare; local p; p=$(policy <<<"alice cap_net_raw")
  local f; f=$(host_audit web1 "$p" "$CASE_DIR")
  python3 - "$f" <<'PY' || fail "host field"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 6, d["version"]
assert d["host"] == "web1" and d["host_hex"] == b"web1".hex(), (d["host"], d["host_hex"])
PY
}

t_report_two_hosts() {
  need_unshare; report_hosts
  cd_run report "$H1" "$H2"; want_rc 1
  want_line "$OUT" "host\tweb1\t$H1\thost-field\t$(mid_of web1)"
  want_line "$OUT" "host\tweb2\t$H2\thost-field\t$(mid_of web2)"
  want_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb1"
  want_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb2"
  want_line "$OUT" "grant\tcap_sys_time\tuser\talice\tweb2"
  no_line "$OUT" "grant\tcap_sys_time\tuser\talice\tweb1"
  want_line "$OUT" "grant\tcap_net_admin\tgroup\t@netops\tweb1"
  # side by side, one field per host; the lines of @netops say the same in another order
  want_line "$OUT" "differs\tuser\talice\tweb1=cap_net_raw\tweb2=cap_net_raw,cap_sys_time"
  want_line "$OUT" "differs\tuser\tbob\tweb1=-\tweb2=cap_net_raw"
  no_text "$OUT" "@netops	web1="
  [ "$(count_lines "$OUT" '^differs')" -eq 2 ] || fail "differs records"
  no_match "$OUT" '^(drift|error)'
  [ ! -s "$ERR" ] || fail "stderr not empty"
  # the same file twice is reported once: it agrees with itself (the naming is an error)
  cd_run report "$H1" "$H1"; want_rc 2
  no_match "$OUT" '^differs'
  cd_tty report "$H1" "$H2"; want_rc 1
  want_text "$OUT" "== Subjects whose policy lines differ between hosts"
  want_line "$OUT" "KIND  SUBJECT  web1         web2"
  want_line "$OUT" "user  alice    cap_net_raw  cap_net_raw,cap_sys_time"
  # every table of the report is there on a terminal, its rows aligned
  want_text "$OUT" "== Hosts"
  grep -qE "^web2 +$H2 +host-field +$(mid_of web2)\$" "$OUT" || fail "no row of web2 in the hosts table"
  want_text "$OUT" "== Who holds each capability where (policy lines)"
  grep -qE '^cap_sys_time +user +alice +web2$' "$OUT" || fail "no row of alice's cap_sys_time in the grants table"
  cd_run report --json "$H1" "$H2"; want_rc 1
  python3 - "$OUT" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert [h["host"] for h in d["hosts"]] == ["web1", "web2"], d["hosts"]
g = {(x["capability"], x["subject"]): [h["host"] for h in x["hosts"]] for x in d["grants"]}
assert g[("cap_sys_time", "alice")] == ["web2"] and g[("cap_net_raw", "alice")] == ["web1", "web2"], g
diff = {x["subject"]: [h["caps"] for h in x["hosts"]] for x in d["differs"]}
assert diff == {"alice": [["cap_net_raw"], ["cap_net_raw", "cap_sys_time"]], "bob": [None, ["cap_net_raw"]]}, diff
assert d["drift"] == [] and d["errors"] == [] and d["rejected"] == []
PY
  # one subject holding two capabilities: a grant each (sorted by capability, one after the
  # other: the second is not folded into the first)
  local p3 h3; p3=$(policy web3 <<<"alice cap_net_raw, cap_sys_time"); h3=$(host_audit web3 "$p3" "$CASE_DIR/tree")
  cd_run report --json "$h3"; want_rc 0
  python3 - "$OUT" <<'PY' || fail "JSON grants of one subject"
import json, sys
d = json.load(open(sys.argv[1]))
g = [(x["capability"], x["kind"], x["subject"], [h["host"] for h in x["hosts"]]) for x in d["grants"]]
assert g == [("cap_net_raw", "user", "alice", ["web3"]), ("cap_sys_time", "user", "alice", ["web3"])], g
PY
}

# Drifted marks are listed with their host (exit 1); an error-level finding too (exit 2).
t_report_drift_and_errors() {
  need_unshare; local t="$CASE_DIR/tree" p m a b c
  capfile "$t/ping" cap_net_raw=i
  p=$(policy <<<"alice cap_net_raw")
  m=$(printf '%s\n' "$t/ping cap_net_admin=i" | policy marks)
  a=$(host_audit db1 "$p" --marks "$m" "$t"); b=$(host_audit db2 "$p" "$t")
  cd_run report "$a" "$b"; want_rc 1
  want_text "$OUT" "$(printf 'drift\tdb1\tmark-differs\t%s\t' "$t/ping")"
  no_match "$OUT" $'^drift\tdb2'
  no_match "$OUT" '^error'
  capfile "$t/bypass" cap_net_raw=ep
  c=$(host_audit db3 "$p" "$t")
  cd_run report "$b" "$c"; want_rc 2
  want_text "$OUT" "$(printf 'error\tdb3\tfP-bypass\t%s\t' "$t/bypass")"
  no_match "$OUT" $'^error\tdb2'
  cd_run report --json "$a" "$c"; want_rc 2
  python3 - "$OUT" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert [(x["host"], x["id"]) for x in d["drift"]] == [("db1", "mark-differs")], d["drift"]
assert [(x["host"], x["id"]) for x in d["errors"]] == [("db3", "fP-bypass")], d["errors"]
# capdelegate(8): the keys, and of drift and errors (host, id, path, message), each host as
# host and host_hex
assert sorted(d) == ["differs", "drift", "ended", "errors", "grants", "hosts", "rejected", "version"], sorted(d)
for x in d["drift"] + d["errors"]:
    assert sorted(x) == ["host", "host_hex", "id", "machine_id", "message", "path"], x
for x in d["grants"]:
    assert sorted(x) == ["capability", "hosts", "kind", "subject"], x
PY
}

# Each bad file is named with why (exit 2); the good one is still reported.
t_report_bad_inputs() {
  need_unshare; report_hosts
  local d="$CASE_DIR/bad"; mkdir -p "$d"
  head -c 200 "$H2" >"$d/truncated"
  sed 's/"bounding"/"bounding",,/' "$H2" >"$d/malformed"
  { cat "$H2"; echo '{}'; } >"$d/garbage"
  { cat "$H2"; printf '\0{}'; } >"$d/garbage0"
  python3 -c 'print("{\"version\":3,\"a\":" + "[" * 5000 + "]" * 5000 + "}")' >"$d/deep"
  sed 's/"host":"web2"/"host":"we\\u0000b2"/' "$H2" >"$d/nul"
  sed 's/"kind":"user"/"kind":7/' "$H2" >"$d/shape"
  sed 's/"version":[0-9]*,//' "$H2" >"$d/noversion"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["findings"][0]["message"]; print(json.dumps(d))' "$H2" >"$d/nomessage"
  truncate -s 65M "$d/huge"
  printf '{"version":3,"host":"\xff"}' >"$d/utf8"
  : >"$d/empty"
  # an array's key holding another type: rejected as missing, never read as an array
  local py='import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); print(json.dumps(d))'
  python3 -c "$py" "$H2" 'd["policy"]["rules"] = {"0": d["policy"]["rules"][0]}' >"$d/rulesobj"
  python3 -c "$py" "$H2" 'd["findings"] = "none"' >"$d/findingsstr"
  python3 -c "$py" "$H2" 'd["policy"]["rules"][0]["caps"] = "cap_net_raw"' >"$d/capsstr"
  cd_run report "$H1" "$d/truncated" "$d/malformed" "$d/garbage" "$d/garbage0" "$d/deep" "$d/nul" \
    "$d/shape" "$d/noversion" "$d/nomessage" "$d/huge" "$d/utf8" "$d/empty" "$d" \
    "$d/rulesobj" "$d/findingsstr" "$d/capsstr"; want_rc 2
  want_line "$ERR" "capdelegate: report: $d/truncated: rejected, not reported: byte 200: truncated: the document does not end"
  want_text "$ERR" "capdelegate: report: $d/malformed: rejected, not reported: "
  local n; n=$(stat -c %s "$H2")
  want_line "$ERR" "capdelegate: report: $d/garbage: rejected, not reported: byte $n: unexpected character"
  want_line "$ERR" "capdelegate: report: $d/garbage0: rejected, not reported: byte $n: more after the document (trailing garbage)"
  want_line "$ERR" "capdelegate: report: $d/deep: rejected, not reported: byte 32: nesting too deep"
  want_line "$ERR" "capdelegate: report: $d/nul: rejected, not reported: host: not a string"
  want_line "$ERR" "capdelegate: report: $d/shape: rejected, not reported: policy.rules[]: an entry without kind, subject and caps"
  want_line "$ERR" "capdelegate: report: $d/noversion: rejected, not reported: no version: not an audit --json document"
  want_line "$ERR" "capdelegate: report: $d/nomessage: rejected, not reported: findings[]: an entry without id, path and message"
  want_line "$ERR" "capdelegate: report: $d/huge: rejected, not reported: larger than 64 MiB: not an audit"
  want_text "$ERR" "capdelegate: report: $d/utf8: rejected, not reported: "
  want_line "$ERR" "capdelegate: report: $d/empty: rejected, not reported: byte 0: truncated: the document does not end"
  want_line "$ERR" "capdelegate: report: $d: rejected, not reported: not a regular file"
  want_line "$ERR" "capdelegate: report: $d/rulesobj: rejected, not reported: policy.rules: missing or not an array"
  want_line "$ERR" "capdelegate: report: $d/findingsstr: rejected, not reported: findings: missing or not an array"
  want_line "$ERR" "capdelegate: report: $d/capsstr: rejected, not reported: policy.rules[]: an entry without kind, subject and caps"
  [ "$(wc -l <"$ERR")" -eq 16 ] || fail "one line per bad file"
  want_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb1"
  no_text "$OUT" "web2"
  cd_run report --json "$d/garbage" "$H1"; want_rc 2
  python3 - "$OUT" "$d/garbage" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["file"] for x in d["rejected"]] == [sys.argv[2]] and len(d["hosts"]) == 1, d
PY
}

# A host name of odd bytes (escape sequence, tab, not UTF-8) is escaped in table and TSV, and
# exact (host_hex) in valid JSON.
t_report_odd_host_name() {
  need_unshare; local p f t="$CASE_DIR/tree"; p=$(policy <<<"alice cap_net_raw")
  capfile "$t/ping" cap_net_raw=i
  f="$CASE_DIR/odd.json"
  unshare --uts -- python3 -c '
import os, socket, sys
socket.sethostname(b"h\x1b[31m\tx\xff")
os.execv(sys.argv[1], sys.argv[1:])' "$BIN" audit --json --config "$p" "$t" >"$f" || [ $? -le 2 ]
  cd_run report "$f"; want_rc 0
  want_line "$OUT" 'grant\tcap_net_raw\tuser\talice\th\\x1b[31m\\x09x\\xff'
  no_text "$OUT" $'\x1b'
  cd_tty report "$f"; want_rc 0
  want_text "$OUT" 'h\x1b[31m\x09x\xff'
  no_text "$OUT" $'\x1b'
  cd_run report --json "$f"; want_rc 0
  python3 - "$OUT" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hosts"][0]
assert bytes.fromhex(h["host_hex"]) == b"h\x1b[31m\tx\xff", h
assert h["host"] == "h\x1b[31m\tx\ufffd", h
PY
  no_text "$OUT" $'\x1b'
  # a host_hex of odd length is no byte string, nor is one with a digit that is not lower-case
  # hex in either half of a pair: the file is rejected, never named by the pairs before the
  # bad digit, nor by its host field alone (capdelegate(8), report)
  local bad
  for bad in 41424 4142z3 41423z 4142zz 4142G3 414243G 41420043; do
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["host"]="web1"; d["host_hex"]=sys.argv[2]; print(json.dumps(d))' "$f" "$bad" >"$CASE_DIR/badhex.json"
    cd_run report "$CASE_DIR/badhex.json"; want_rc 2
    want_line "$ERR" "capdelegate: report: $CASE_DIR/badhex.json: rejected, not reported: host_hex: not the hex of a host name (pairs of lower-case hex digits, no 00)"
    no_text "$OUT" "grant	"
  done
}

# Without a host field, the file name stands for the host, and report says so.
t_report_missing_host() {
  need_unshare; report_hosts
  local f="$CASE_DIR/old.json"
  python3 - "$H2" "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); del d["host"]; del d["host_hex"]
json.dump(d, open(sys.argv[2], "w"))
PY
  cd_run report "$H1" "$f"; want_rc 1
  want_line "$ERR" "capdelegate: report: $f: no host name recorded (an audit before version 3?): the file name stands for the host"
  want_line "$OUT" "host\t$f\t$f\tfile-name\t$(mid_of web2)"
  want_line "$OUT" "grant\tcap_sys_time\tuser\talice\t$f"
}

t_report_usage() {
  cd_run report; want_rc 2; want_text "$ERR" "usage: capdelegate report"
  cd_run report --help; want_rc 0; want_text "$OUT" "usage: capdelegate report"
  cd_run report --bogus x; want_rc 2
  cd_run help; want_text "$OUT" "report  [--json|--tsv] FILE..."
}

# More files report must reject whole, each named with why (exit 2), the good one still
# reported: a file not there, one whose read fails (/proc/self/mem: a regular file whose first
# byte cannot be read), documents of another type, a rule without caps. White space after the
# document is allowed. Standard output that cannot be written is an error too.
t_report_unreadable_and_shapes() {
  need_unshare; report_hosts
  local d="$CASE_DIR/bad" py='import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); print(json.dumps(d))'
  mkdir -p "$d"
  ln -s /proc/self/mem "$d/eio"
  echo '[]' >"$d/array"
  echo '"web2"' >"$d/string"
  python3 -c "$py" "$H2" 'del d["policy"]["rules"][0]["caps"]' >"$d/nocaps"
  python3 -c "$py" "$H2" 'd["policy"]["rules"][0]["caps"] = ["cap_net_raw", 7]' >"$d/capint"
  python3 -c "$py" "$H2" 'd["policy"]["rules"][0]["caps"] = [7, "cap_net_raw"]' >"$d/capint1"
  { cat "$H2"; printf ' \t\r\n\n  '; } >"$d/blanks"
  cd_run report "$H1" "$d/missing" "$d/eio" "$d/array" "$d/string" "$d/nocaps" "$d/capint" "$d/capint1" "$d/blanks"; want_rc 2
  want_line "$ERR" "capdelegate: report: $d/missing: rejected, not reported: No such file or directory"
  want_line "$ERR" "capdelegate: report: $d/eio: rejected, not reported: Input/output error"
  want_line "$ERR" "capdelegate: report: $d/array: rejected, not reported: not a JSON object"
  want_line "$ERR" "capdelegate: report: $d/string: rejected, not reported: not a JSON object"
  want_line "$ERR" "capdelegate: report: $d/nocaps: rejected, not reported: policy.rules[]: an entry without kind, subject and caps"
  want_line "$ERR" "capdelegate: report: $d/capint: rejected, not reported: policy.rules[]: an entry without kind, subject and caps"
  want_line "$ERR" "capdelegate: report: $d/capint1: rejected, not reported: policy.rules[]: an entry without kind, subject and caps"
  no_text "$ERR" "$d/blanks"
  [ "$(wc -l <"$ERR")" -eq 7 ] || fail "one line per bad file"
  want_line "$OUT" "host\tweb1\t$H1\thost-field\t$(mid_of web1)"
  want_line "$OUT" "host\tweb2\t$d/blanks\thost-field\t$(mid_of web2)"
  want_line "$OUT" "differs\tuser\tbob\tweb1=-\tweb2=cap_net_raw"
  # an error-level finding with an empty message: on a terminal its row ends at its path,
  # without the blanks of an empty last column
  python3 -c "$py" "$H2" 'd["findings"].append({"id": "fP-bypass", "path": "/opt/x", "message": ""})' >"$d/quiet"
  cd_tty report "$d/quiet"; want_rc 2
  want_text "$OUT" "== Error-level findings"
  grep -qE '^web2  fP-bypass  /opt/x'$'\r''?$' "$OUT" || fail "the row with an empty message"
  no_match "$OUT" ' '$'\r''?$'
  # a report that cannot be written is not a report: exit 2 and why
  RC=0; "$BIN" report "$H1" "$H2" >/dev/full 2>"$ERR" || RC=$?
  want_rc 2; want_line "$ERR" "capdelegate: report: standard output: No space left on device"
  RC=0; "$BIN" report --json "$H1" >/dev/full 2>"$ERR" || RC=$?
  want_rc 2; want_line "$ERR" "capdelegate: report: standard output: No space left on device"
}

# Each allocation of report failing in turn (fault-cases.sh's sweep): exit 2 with a message of
# its own, or the unfaulted answer. Two hosts that differ (the side-by-side table), one named
# by its file, both as tables, TSV and JSON.
t_fault_alloc_report() {
  need_unshare; report_hosts
  local f="$CASE_DIR/old.json" n
  python3 - "$H2" "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); del d["host"]; d["host_hex"] = "7a"
json.dump(d, open(sys.argv[2], "w"))
PY
  n=$(sweep_alloc report "$H1" "$f"); echo "report: $n" >&2
  n=$(sweep_alloc report --json "$H1" "$f"); echo "report --json: $n" >&2
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["host_hex"]="zz"; del d["host"]; json.dump(d, open(sys.argv[2], "w"))' "$H2" "$f"
  n=$(sweep_alloc report "$H1" "$f"); echo "report, a host named by its file: $n" >&2
}

# Each open_memstream(3) of report (a subject's capabilities on a host, the side-by-side
# table's header, an output row), then each close of one, failing in turn: exit 2 with a
# message of its own, or the unfaulted answer.
t_fault_memstream_report() {
  need_unshare; report_hosts
  local n
  n=$(SWEEP=CD_FAULT_MEMSTREAM sweep_alloc report "$H1" "$H2"); echo "report: $n" >&2
  [ "${n%% *}" -ge 10 ] || fail "$n: fewer than the subjects' and header's streams"
  n=$(SWEEP=CD_FAULT_MEMSTREAM sweep_alloc report --json "$H1" "$H2"); echo "report --json: $n" >&2
  # ... and each of their fclose(3) failing in turn (the stream's last flush is an allocation)
  n=$(SWEEP=CD_FAULT_MEMSTREAM_CLOSE sweep_alloc report "$H1" "$H2"); echo "report, closes: $n" >&2
  [ "${n%% *}" -ge 10 ] || fail "$n: fewer than the subjects' and header's streams closed"
  n=$(SWEEP=CD_FAULT_MEMSTREAM_CLOSE sweep_alloc report --json "$H1" "$H2"); echo "report --json, closes: $n" >&2
}

# report under valgrind (memcheck; any error fails): two hosts whose lines differ, as a table,
# as TSV and as JSON. The side-by-side rows hold one string per host, freed per row; none may
# be read or freed past the last host.
t_valgrind_report() {
  need_unshare; command -v valgrind >/dev/null || skip "valgrind missing"
  report_hosts
  vg_run report "$H1" "$H2"; want_rc 1
  want_text "$OUT" "web1="; want_text "$OUT" "web2="
  vg_run report --tsv "$H1" "$H2"; want_rc 1
  vg_run report --json "$H1" "$H2"; want_rc 1
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["differs"], d' "$OUT" \
    || fail "report --json lists no difference"
}

# audit --json records the host's machine-id (machine-id(5)) as systemd reads /etc/machine-id
# (id128_read_fd, plain format, all zeros refused): 32 hex digits of either case, with a
# newline after them or not, written in lower case; anything else is null.
t_report_audit_records_machine_id() {
  need_unshare; local p f v want; p=$(policy <<<"alice cap_net_raw")
  while IFS='|' read -r v want; do
    f=$(MACHINE_ID="$v" host_audit web1 "$p" "$CASE_DIR")
    python3 - "$f" "$want" <<'PY' || fail "machine-id file '$v'"
import json, sys
d = json.load(open(sys.argv[1])); want = None if sys.argv[2] == "null" else sys.argv[2]
assert d["machine_id"] == want, (d["machine_id"], want)
assert list(d)[:4] == ["version", "host", "host_hex", "machine_id"], list(d)
PY
  done <<'IDS'
3d1219c7c4c5404aaa1f6d2a48adfda4\n|3d1219c7c4c5404aaa1f6d2a48adfda4
3D1219C7C4C5404AAA1F6D2A48ADFDA4|3d1219c7c4c5404aaa1f6d2a48adfda4
0123456789abcdefABCDEF0123456789|0123456789abcdefabcdef0123456789
|null
uninitialized\n|null
uninitialized|null
00000000000000000000000000000000\n|null
3d1219c7-c4c5-404a-aa1f-6d2a48adfda4\n|null
3d1219c7c4c5404aaa1f6d2a48adfda4\n\n|null
3d1219c7c4c5404aaa1f6d2a48adfdag\n|null
 3d1219c7c4c5404aaa1f6d2a48adfda4|null
3d1219c7c4c5404aaa1f6d2a48adfda|null
IDS
  local p2; p2=$(policy <<<"alice cap_net_raw"); mkdir -p "$CASE_DIR/empty"
  MACHINE_ID=3d1219c7c4c5404aaa1f6d2a48adfda4 host_audit web1 "$p2" "$CASE_DIR/empty" >/dev/null
  "$HERE/check-json.py" --may-be-empty files --may-be-empty matrix --may-be-empty errors \
    --may-be-empty vanished --may-be-empty findings --may-be-empty userdb.records "$MAN" "$CASE_DIR/web1.json" >&2 || fail "JSON schema"
}

# One file named twice (or by two paths: a link) is one host: reported once, every row once,
# and the second naming said and counted an error of usage (exit 2).
t_report_file_named_twice() {
  need_unshare; report_hosts
  ln -s "$H1" "$CASE_DIR/link.json"
  cd_run report "$H1" "$H2" "$H1" "$CASE_DIR/link.json"; want_rc 2
  want_line "$ERR" "capdelegate: report: $H1: the same file as $H1, named again: reported once"
  want_line "$ERR" "capdelegate: report: $CASE_DIR/link.json: the same file as $H1, named again: reported once"
  [ "$(wc -l <"$ERR")" -eq 2 ] || fail "one line per naming again"
  [ "$(count_lines "$OUT" '^host	')" -eq 2 ] || fail "two hosts"
  [ "$(count_lines "$OUT" "^grant	cap_net_raw	user	alice	web1\$")" -eq 1 ] || fail "a row doubled"
  want_line "$OUT" "differs\tuser\talice\tweb1=cap_net_raw\tweb2=cap_net_raw,cap_sys_time"
  cd_run report --json "$H1" "$H1"; want_rc 2
  python3 - "$OUT" "$H1" <<'PY' || fail "JSON"
import json, sys
d, f = json.load(open(sys.argv[1])), sys.argv[2]
assert [h["file"] for h in d["hosts"]] == [f], d["hosts"]
assert d["rejected"] == [{"file": f, "file_hex": f.encode().hex(), "why": "the same file as " + f + ", named again: reported once"}], d["rejected"]
assert all(len(g["hosts"]) == 1 for g in d["grants"]), d["grants"]
PY
}

# Two equal keys in one object: json-c keeps the last, so the file could say one host, rule or
# finding to one reader and another to the next. Any such object rejects the file (a key
# spelled with escapes is the same key), with the byte where the second one starts.
t_report_duplicate_keys() {
  need_unshare; report_hosts
  local d="$CASE_DIR/dup" f k n at
  local py='import sys; t=open(sys.argv[1]).read(); exec(sys.argv[2]); open(sys.argv[3], "w").write(t)'
  mkdir -p "$d"
  python3 -c "$py" "$H1" 't = t.replace("{", "{\"host\":\"evil\",", 1)' "$d/host"
  python3 -c "$py" "$H1" 't = t.replace("{", "{\"ho\\u0073t\":\"evil\",", 1)' "$d/escaped"
  python3 -c "$py" "$H1" 't = t.replace("\"caps\":", "\"caps\":[],\"caps\":", 1)' "$d/caps"
  python3 -c "$py" "$H1" 't = t.replace("\"scan\":{", "\"scan\":{\"x\":1,\"x\":2,", 1)' "$d/unread"
  python3 -c "$py" "$H1" 't = t.replace("\"scan\":{", "\"scan\":{\"a\":{\"x\":[{\"y\":1,\"y\":2}]},", 1)' "$d/deep"
  cd_run report "$H2" "$d/host" "$d/escaped" "$d/caps" "$d/unread" "$d/deep"; want_rc 2
  # FILE:KEY:N: the second key starts where "KEY": does for the Nth time
  for f in host:host:2 escaped:host:1 caps:caps:2 unread:x:2 deep:y:2; do
    IFS=: read -r f k n <<<"$f"
    at=$(python3 -c 'import sys; t=open(sys.argv[1]).read(); k="\"%s\":" % sys.argv[2]; i=-1
for _ in range(int(sys.argv[3])): i=t.index(k, i + 1)
print(i)' "$d/$f" "$k" "$n")
    want_line "$ERR" "capdelegate: report: $d/$f: rejected, not reported: byte $at: the key \"$k\" twice in one object (json-c would keep the last)"
  done
  [ "$(wc -l <"$ERR")" -eq 5 ] || fail "one line per file"
  want_line "$OUT" "host\tweb2\t$H2\thost-field\t$(mid_of web2)"
  no_text "$OUT" "web1"; no_text "$OUT" "evil"
  # equal keys in two objects are no contradiction
  python3 -c "$py" "$H1" 't = t.replace("\"scan\":{", "\"scan\":{\"a\":{\"x\":1},\"b\":{\"x\":1},", 1)' "$d/apart"
  cd_run report "$d/apart"; want_rc 0
  # nor is a value equal to a key beside it, or to its own key: a value is no key
  python3 -c "$py" "$H1" 't = t.replace("\"scan\":{", "\"scan\":{\"a\":\"a\",\"b\":\"c\",\"c\":[\"b\"],", 1)' "$d/values"
  cd_run report "$d/values"; want_rc 0
  # an allocation failing while the keys are gathered (each in turn): exit 2, never the file
  # read as if the key it could not keep were not there
  n=$(sweep_alloc report "$d/host"); echo "report, a key twice: $n" >&2
}

# json-c reads a lone surrogate escape (\ud800, \udc00, a high one before no low one) as U+FFFD:
# beside a key of U+FFFD, written or escaped, it is that key twice. A key of U+FFFE is another.
t_report_duplicate_key_surrogate() {
  need_unshare; report_hosts
  local d="$CASE_DIR/dup" f at
  local py='import sys; t=open(sys.argv[1]).read(); t=t.replace("\"scan\":{", "\"scan\":{" + sys.argv[2], 1); open(sys.argv[3], "w").write(t)'
  mkdir -p "$d"
  python3 -c "$py" "$H1" '"\ud800":1,"\ufffd":2,' "$d/high"
  python3 -c "$py" "$H1" '"\udc00x":1,"�x":2,' "$d/low"
  python3 -c "$py" "$H1" '"\ud800\u0041":1,"\ufffdA":2,' "$d/unpaired"
  python3 -c "$py" "$H1" '"\ud800":1,"\ufffe":2,' "$d/fffe"
  cd_run report "$d/high" "$d/low" "$d/unpaired"; want_rc 2
  for f in high:'\ufffd"' low:'�x"' unpaired:'\ufffdA"'; do
    at=$(python3 -c 'import sys; print(open(sys.argv[1]).read().index(sys.argv[2]) - 1)' "$d/${f%%:*}" "${f#*:}")
    want_text "$ERR" "capdelegate: report: $d/${f%%:*}: rejected, not reported: byte $at: the key \""
  done
  [ "$(wc -l <"$ERR")" -eq 3 ] || fail "one line per file"
  cd_run report "$d/fffe"; want_rc 0
}

# host is host_hex's bytes as audit writes them (valid UTF-8 kept, each other byte U+FFFD): a
# file whose two disagree says two names; rejected, with both. Either alone names the host.
t_report_host_hex_contradicts_host() {
  need_unshare; report_hosts
  local d="$CASE_DIR/hex" py='import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); print(json.dumps(d))'
  mkdir -p "$d"
  python3 -c "$py" "$H1" 'd["host_hex"] = b"web2".hex()' >"$d/other"
  python3 -c "$py" "$H1" 'd["host"] = "h\ufffdx"; d["host_hex"] = "68c3a978"' >"$d/notfffd"
  python3 -c "$py" "$H1" 'd["host"] = "web1 "' >"$d/space"
  python3 -c "$py" "$H1" 'd["host"] = "h\ufffdx"; d["host_hex"] = "68ff78"; d["machine_id"] = "1" * 32' >"$d/fffd"
  python3 -c "$py" "$H1" 'del d["host_hex"]; d["host"] = "alone"; d["machine_id"] = "2" * 32' >"$d/hostonly"
  python3 -c "$py" "$H1" 'del d["host"]; d["host_hex"] = b"hexonly".hex(); d["machine_id"] = "3" * 32' >"$d/hexonly"
  cd_run report "$d/other" "$d/notfffd" "$d/space" "$d/fffd" "$d/hostonly" "$d/hexonly"; want_rc 2
  want_line "$ERR" "capdelegate: report: $d/other: rejected, not reported: host_hex is web2, host is web1: two names"
  want_line "$ERR" "capdelegate: report: $d/notfffd: rejected, not reported: host_hex is h\xc3\xa9x, host is h\xef\xbf\xbdx: two names"
  want_line "$ERR" "capdelegate: report: $d/space: rejected, not reported: host_hex is web1, host is web1 : two names"
  [ "$(wc -l <"$ERR")" -eq 3 ] || fail "one line per rejected file"
  want_line "$OUT" "host\th\\\\xffx\t$d/fffd\thost-field\t11111111111111111111111111111111"
  want_line "$OUT" "host\talone\t$d/hostonly\thost-field\t22222222222222222222222222222222"
  want_line "$OUT" "host\thexonly\t$d/hexonly\thost-field\t33333333333333333333333333333333"
}

# Hosts are told apart by their machine-id (machine-id(5): a clone made anew gets its own), not
# by the name each audit gives itself: two machines of one name (clones, or one taking
# another's name) are two hosts, each shown as NAME@MACHINE-ID, and report warns (exit 1). A
# name that would read as another's NAME@MACHINE-ID is shown with its own machine-id too.
t_report_clones_told_apart() {
  need_unshare; local t="$CASE_DIR/tree" p1 p2 a b c m1=11111111111111111111111111111111
  local m2=22222222222222222222222222222222 m3=33333333333333333333333333333333
  capfile "$t/ping" cap_net_raw=i
  p1=$(policy one <<<"alice cap_net_raw"); p2=$(policy two <<<"alice cap_net_raw, cap_sys_time")
  a="$CASE_DIR/a.json" b="$CASE_DIR/b.json" c="$CASE_DIR/c.json"
  mv "$(MACHINE_ID=$m1 host_audit web "$p1" "$t")" "$a"
  mv "$(MACHINE_ID=$m2 host_audit web "$p2" "$t")" "$b"
  # hostname(1) refuses '@' in a name; the kernel does not: the name edited in
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["host"]="web@"+sys.argv[2]; d["host_hex"]=d["host"].encode().hex(); d["machine_id"]=sys.argv[3]; print(json.dumps(d))' "$a" "$m1" "$m3" >"$c"
  cd_run report "$a" "$b" "$c"; want_rc 1
  want_line "$ERR" "capdelegate: report: warning: $b: names itself web, as $a does: told apart by machine-id (web@$m1, web@$m2)"
  want_line "$ERR" "capdelegate: report: warning: $c: names itself web@$m1, as another host is shown: told apart by machine-id (web@$m1@$m3)"
  want_line "$OUT" "host\tweb@$m1\t$a\thost-field\t$m1"
  want_line "$OUT" "host\tweb@$m2\t$b\thost-field\t$m2"
  want_line "$OUT" "host\tweb@$m1@$m3\t$c\thost-field\t$m3"
  want_line "$OUT" "grant\tcap_sys_time\tuser\talice\tweb@$m2"
  no_line "$OUT" "grant\tcap_sys_time\tuser\talice\tweb@$m1"
  want_line "$OUT" "differs\tuser\talice\tweb@$m1=cap_net_raw\tweb@$m2=cap_net_raw,cap_sys_time\tweb@$m1@$m3=cap_net_raw"
  # ... and so on: a fourth host named as the third is shown is told apart by its machine-id too
  local m4=44444444444444444444444444444444 e="$CASE_DIR/e.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["host"]=sys.argv[2]; d["host_hex"]=d["host"].encode().hex(); d["machine_id"]=sys.argv[3]; print(json.dumps(d))' "$a" "web@$m1@$m3" "$m4" >"$e"
  cd_run report "$a" "$b" "$c" "$e"; want_rc 1
  want_line "$ERR" "capdelegate: report: warning: $e: names itself web@$m1@$m3, as another host is shown: told apart by machine-id (web@$m1@$m3@$m4)"
  want_line "$OUT" "host\tweb@$m1@$m3\t$c\thost-field\t$m3"
  want_line "$OUT" "host\tweb@$m1@$m3@$m4\t$e\thost-field\t$m4"
  cd_run report --json "$a" "$b"; want_rc 1
  python3 - "$OUT" "$m1" "$m2" <<'PY' || fail "JSON"
import json, sys
d, m1, m2 = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert d["version"] == 3, d["version"]
assert [(h["host"], h["machine_id"]) for h in d["hosts"]] == [("web", m1), ("web", m2)], d["hosts"]
x = d["differs"][0]["hosts"]
assert [(h["host"], h["machine_id"], h["caps"]) for h in x] == [("web", m1, ["cap_net_raw"]), ("web", m2, ["cap_net_raw", "cap_sys_time"])], x
g = {x["capability"]: [h["machine_id"] for h in x["hosts"]] for x in d["grants"]}
assert g == {"cap_net_raw": [m1, m2], "cap_sys_time": [m2]}, g
PY
}

# One machine-id in two files: one machine audited twice, or a clone whose machine-id was never
# made anew; reporting both would show one machine as two. The later file is rejected, named
# with the earlier one (exit 2), whatever names they give themselves.
t_report_one_machine_twice() {
  need_unshare; local t="$CASE_DIR/tree" p a b m=44444444444444444444444444444444
  mkdir -p "$t"; p=$(policy <<<"alice cap_net_raw")
  a=$(MACHINE_ID=$m host_audit web1 "$p" "$t"); b=$(MACHINE_ID=$m host_audit web2 "$p" "$t")
  cd_run report "$a" "$b"; want_rc 2
  want_line "$ERR" "capdelegate: report: $b: rejected, not reported: machine-id $m is also $a's (web1): one machine in two files, or a clone whose machine-id was not made anew"
  want_line "$OUT" "host\tweb1\t$a\thost-field\t$m"
  no_text "$OUT" "web2"
}

# Without a machine-id (an audit before version 5, or a host whose /etc/machine-id is unset) a
# host is known by its name only: a second file of that name cannot be told apart from the
# first, and is rejected with it named (exit 2).
t_report_one_name_without_machine_id() {
  need_unshare; local t="$CASE_DIR/tree" p a b c
  mkdir -p "$t"; p=$(policy <<<"alice cap_net_raw")
  a="$CASE_DIR/a.json"; mv "$(MACHINE_ID='' host_audit web1 "$p" "$t")" "$a"
  b="$CASE_DIR/b.json"; mv "$(MACHINE_ID='uninitialized\n' host_audit web1 "$p" "$t")" "$b"
  c="$CASE_DIR/c.json"; mv "$(host_audit web1 "$p" "$t")" "$c"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["machine_id"] is None' "$a" || fail "machine_id not null"
  cd_run report "$a" "$b" "$c"; want_rc 2
  want_line "$ERR" "capdelegate: report: $b: rejected, not reported: names itself web1, as $a does, and no machine-id tells them apart"
  want_line "$ERR" "capdelegate: report: $c: rejected, not reported: names itself web1, as $a does, and no machine-id tells them apart"
  want_line "$OUT" "host\tweb1\t$a\thost-field\t-"
}

# A fleet of every case of identity: clones of one name (shown with their machine-ids), a name
# that reads as one of those, a machine-id twice, a file named again, a key twice, a host_hex
# that is not host's. Sets FLEET to the files, in order.
identity_fleet() {
  local t="$CASE_DIR/tree" p1 p2 f=() py='import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); print(json.dumps(d))'
  capfile "$t/ping" cap_net_raw=i
  p1=$(policy one <<<"alice cap_net_raw"); p2=$(policy two <<<"alice cap_net_raw, cap_sys_time")
  mv "$(MACHINE_ID=11111111111111111111111111111111 host_audit web "$p1" "$t")" "$CASE_DIR/a.json"
  mv "$(MACHINE_ID=22222222222222222222222222222222 host_audit web "$p2" "$t")" "$CASE_DIR/b.json"
  python3 -c "$py" "$CASE_DIR/a.json" 'd["host"] = "web@" + "1" * 32; d["host_hex"] = d["host"].encode().hex(); d["machine_id"] = "3" * 32' >"$CASE_DIR/c.json"
  python3 -c "$py" "$CASE_DIR/a.json" 'd["host"] = "db"; d["host_hex"] = b"db".hex()' >"$CASE_DIR/d.json"
  python3 -c 'import sys; t=open(sys.argv[1]).read(); print(t.replace("{", "{\"host\":\"evil\",", 1))' "$CASE_DIR/b.json" >"$CASE_DIR/e.json"
  python3 -c "$py" "$CASE_DIR/b.json" 'd["host_hex"] = b"other".hex(); d["machine_id"] = "4" * 32' >"$CASE_DIR/f.json"
  FLEET=("$CASE_DIR/a.json" "$CASE_DIR/b.json" "$CASE_DIR/c.json" "$CASE_DIR/d.json" "$CASE_DIR/a.json"
         "$CASE_DIR/e.json" "$CASE_DIR/f.json")
}

# Each allocation, memory stream and asprintf of report's judging of hosts failing in turn:
# exit 2 with a message of its own, or the unfaulted answer (fault-cases.sh's sweep).
t_fault_alloc_report_identity() {
  need_unshare; identity_fleet
  local n fmt
  cd_run report "${FLEET[@]}"; want_rc 2
  want_text "$OUT" "web@11111111111111111111111111111111@33333333333333333333333333333333"
  n=$(sweep_alloc report "${FLEET[@]}"); echo "report: $n" >&2
  n=$(sweep_alloc report --json "${FLEET[@]}"); echo "report --json: $n" >&2
  n=$(SWEEP=CD_FAULT_MEMSTREAM sweep_alloc report "${FLEET[@]}"); echo "report, streams: $n" >&2
  [ "${n%% *}" -ge 4 ] || fail "$n: fewer than the reasons' streams"
  n=$(SWEEP=CD_FAULT_MEMSTREAM_CLOSE sweep_alloc report "${FLEET[@]}"); echo "report, closes: $n" >&2
  for fmt in '%s@%s' 'byte %zu: %s'; do
    n=$(CD_FAULT_ASPRINTF="$fmt" SWEEP=CD_FAULT_NTH sweep_alloc report "${FLEET[@]}"); echo "report, $fmt: $n" >&2
    [ "${n%% *}" -ge 1 ] || fail "$fmt: $n"
  done
}

# The same fleet under valgrind (memcheck, leaks too): as a table, TSV and JSON.
t_valgrind_report_identity() {
  need_unshare; command -v valgrind >/dev/null || skip "valgrind missing"
  identity_fleet
  VG_LEAKS=1 vg_run report "${FLEET[@]}"; want_rc 2
  want_text "$OUT" "web@22222222222222222222222222222222"
  VG_LEAKS=1 vg_run report --json "${FLEET[@]}"; want_rc 2
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["hosts"]) == 3 and len(d["rejected"]) == 4, d["rejected"]' "$OUT" \
    || fail "report --json: $(head -c 600 "$OUT")"
}

# A fleet of many subjects, more than the report's tables first hold (each grows as it fills):
# every subject's grant and difference reported, none lost or run together. Two hosts of 100
# users each, the last of them with a capability more on web2; within a time that leaves no
# doubt (a table that never grows would look for a free slot for ever).
t_report_many_subjects() {
  need_unshare; report_hosts
  local py='import json,sys; d=json.load(open(sys.argv[1])); more=sys.argv[2] == "more"
d["policy"]["rules"] = [{"kind": "user", "subject": "u%03d" % i, "caps": ["cap_net_raw"] + (["cap_sys_time"] if more and i == 99 else [])} for i in range(100)]
print(json.dumps(d))'
  python3 -c "$py" "$H1" same >"$CASE_DIR/a.json"; python3 -c "$py" "$H2" more >"$CASE_DIR/b.json"
  RC=0; timeout 60 "$BIN" report "$CASE_DIR/a.json" "$CASE_DIR/b.json" >"$OUT" 2>"$ERR" || RC=$?
  want_rc 1
  [ "$(count_lines "$OUT" '^grant	cap_net_raw	user	u[0-9]*	web[12]$')" -eq 200 ] || fail "not 200 grants of cap_net_raw"
  want_line "$OUT" "grant\tcap_net_raw\tuser\tu000\tweb1"
  want_line "$OUT" "grant\tcap_sys_time\tuser\tu099\tweb2"
  [ "$(count_lines "$OUT" '^differs')" -eq 1 ] || fail "one subject differs"
  want_line "$OUT" "differs\tuser\tu099\tweb1=cap_net_raw\tweb2=cap_net_raw,cap_sys_time"
}

# A subject's column holds the capabilities of all its lines on that host, each name once and
# sorted: alice's two lines on web1 (cap_net_raw in both) are web1=cap_net_raw,cap_sys_time, and
# no difference from web3's one line of both.
t_report_subject_on_two_lines() {
  need_unshare; local p1 p2 a b; mkdir -p "$CASE_DIR/empty"
  p1=$(printf 'alice cap_sys_time, cap_net_raw\nalice cap_net_raw\n' | policy one)
  p2=$(printf 'alice cap_net_raw\n' | policy two)
  a=$(host_audit web1 "$p1" "$CASE_DIR/empty"); b=$(host_audit web2 "$p2" "$CASE_DIR/empty")
  cd_run report "$a" "$b"; want_rc 1
  want_line "$OUT" "differs\tuser\talice\tweb1=cap_net_raw,cap_sys_time\tweb2=cap_net_raw"
  p2=$(printf 'alice cap_net_raw, cap_sys_time\n' | policy three)
  b=$(host_audit web3 "$p2" "$CASE_DIR/empty")
  cd_run report "$a" "$b"; want_rc 0
  no_text "$OUT" "differs"
}

# report with its standard input closed: the first FILE it opens gets descriptor 0 and is read
# like any other.
t_report_stdin_closed() {
  need_unshare; report_hosts
  RC=0; "$BIN" report "$H1" "$H2" <&- >"$OUT" 2>"$ERR" || RC=$?
  want_rc 1
  want_line "$OUT" "host\tweb1\t$H1\thost-field\t$(mid_of web1)"
  want_line "$OUT" "grant\tcap_net_raw\tuser\talice\tweb1"
}
