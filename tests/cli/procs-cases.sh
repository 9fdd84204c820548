# procs-cases.sh: audit --processes judging each thread's pI against what the policy gives its
# user now (capdelegate(8), audit and FINDINGS; capdelegate.conf(5), WINDOWS): a grant taken
# back, a grant within, a line whose window ended, NSS failing, root. Each case runs its
# processes and the CLI in a PID namespace of its own, whose /proc shows them alone, so that
# an exit status is the case's and not that of whatever else runs on the host (sourced by
# run.sh). Needs root (setpriv, unshare, loginuid).
# shellcheck shell=bash disable=SC2016

PROCS_CASES=(procs_stale_beyond_grant procs_exit_status procs_window_ended procs_nss_failure
  procs_root_named procs_unit_and_service procs_thread_ended)

# The functions a namespace's script (pr_ns) uses; $CASE_DIR, $BIN, $NSSDIR and
# $NSS_WRAPPER_LIB come from the case.
# shellcheck disable=SC2016
PR_LIB='set -euo pipefail
# start NAME UID CAPS [LOGINUID [CGROUP]]: a sleeping process of UID (0: root) whose pI is
# CAPS (setpriv: +net_raw,+syslog); NAME.pid. With LOGINUID, its loginuid is set first, as
# pam_loginuid sets it at login, which gives it an audit session (NAME.sid); 4294967295 unsets
# it, as a service has it. With CGROUP, it runs in that cgroup below $PR_CGROOT.
start() {
  local ids=() i
  [ "$2" = 0 ] || ids=(--reuid "$2" --regid "$2" --clear-groups)
  ( if [ -n "${4:-}" ]; then echo "$4" >/proc/self/loginuid; fi
    if [ -n "${5:-}" ]; then echo "$BASHPID" >"$PR_CGROOT/$5/cgroup.procs"; fi
    exec setpriv --inh-caps "$3" "${ids[@]}" sleep 60 ) >/dev/null &
  echo $! >"$CASE_DIR/$1.pid"
  for i in $(seq 100); do [ "$(cat /proc/$!/comm 2>/dev/null)" = sleep ] && break; sleep 0.05; done
  [ "$(cat /proc/$!/comm)" = sleep ]
  cat /proc/$!/sessionid >"$CASE_DIR/$1.sid"
}
# threads NAME: a process of alice (uid 1001) started with pI cap_net_raw,cap_syslog whose
# main thread then lowers its own to cap_net_raw while a second thread keeps both (capset(2)
# acts on the calling thread alone). NAME.pid; NAME.tid, the second thread.
threads() {
  local i
  setpriv --inh-caps +net_raw,+syslog --reuid 1001 --regid 1001 --clear-groups python3 -c "
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
class Header(ctypes.Structure):
    _fields_ = [(\"version\", ctypes.c_uint32), (\"pid\", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [(\"effective\", ctypes.c_uint32), (\"permitted\", ctypes.c_uint32),
                (\"inheritable\", ctypes.c_uint32)]
up = threading.Event()
def worker():
    os.write(3, b\"%d\\n\" % threading.get_native_id())
    up.set()
    time.sleep(60)
threading.Thread(target=worker, daemon=True).start()
up.wait()
h, d = Header(0x20080522, 0), (Data * 2)()
if libc.capget(ctypes.byref(h), d) != 0:
    raise OSError(ctypes.get_errno(), \"capget\")
d[1].inheritable = 0                     # cap_syslog is bit 34: the second word
if libc.capset(ctypes.byref(h), d) != 0:
    raise OSError(ctypes.get_errno(), \"capset\")
os.write(3, b\"ready\\n\")
time.sleep(60)
" 3>"$CASE_DIR/$1.tid" &
  echo $! >"$CASE_DIR/$1.pid"
  for i in $(seq 100); do grep -q ready "$CASE_DIR/$1.tid" && break; sleep 0.05; done
  grep -q ready "$CASE_DIR/$1.tid"
  sed -i /ready/d "$CASE_DIR/$1.tid"
}
# cli TAG ARGS...: the CLI under nss_wrapper (and nss_fault, as cd_nss runs it): TAG.out,
# TAG.err, TAG.rc. With PR_FAULT=1, under tests/cli/fault.c too (CD_FAULT_* from the caller).
cli() {
  local tag=$1 rc=0 pre=; shift
  [ -z "${PR_FAULT:-}" ] || pre="$(dirname "$BIN")/tests/cli/.libs/fault.so:"
  LD_PRELOAD="$pre$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
    NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
    "$BIN" "$@" >"$CASE_DIR/$tag.out" 2>"$CASE_DIR/$tag.err" || rc=$?
  echo "$rc" >"$CASE_DIR/$tag.rc"
}
'

need_procs_ns() {
  need_root
  command -v setpriv >/dev/null || skip "setpriv missing"
  unshare --pid --fork --mount-proc true 2>/dev/null || skip "no PID namespace (unshare --pid)"
  [ -e /proc/self/sessionid ] || skip "no audit sessions (a kernel without CONFIG_AUDIT)"
}

# pr_ns SCRIPT: SCRIPT (with PR_LIB's functions; the policy's path in $P) in a PID namespace
# of its own; its processes end with it. With $PR_CGROOT set (a cgroup directory), in a cgroup
# namespace too whose root is that cgroup: the threads' cgroup paths read from there.
pr_ns() {
  local ns=(unshare --pid --fork --mount-proc --kill-child)
  [ -z "${PR_CGROOT:-}" ] || ns=(sh -c 'echo $$ >"$PR_CGROOT/cgroup.procs" && exec "$@"' sh unshare --cgroup "${ns[@]:1}")
  CASE_DIR=$CASE_DIR BIN=$BIN NSSDIR=$NSSDIR NSS_WRAPPER_LIB=$NSS_WRAPPER_LIB P=$P PR_CGROOT=${PR_CGROOT:-} \
    "${ns[@]}" bash -c "$PR_LIB$1" >&2 || fail "the namespace's script failed"
}

# pr_run TAG: TAG's output, error and exit status as cd_nss leaves them ($OUT, $ERR, $RC).
pr_run() { OUT="$CASE_DIR/$1.out" ERR="$CASE_DIR/$1.err" RC=$(cat "$CASE_DIR/$1.rc"); }
pr_pid() { cat "$CASE_DIR/$1.pid"; }
# pr_holder NAME USER UID: how a finding names process NAME's holder and its audit session.
pr_holder() {
  local sid; sid=$(cat "$CASE_DIR/$1.sid")
  if [ "$sid" = 4294967295 ]; then printf '%s (uid %s), no audit session' "$2" "$3"
  else printf '%s (uid %s), audit session %s' "$2" "$3" "$sid"; fi
}
# pr_finding ID WHERE CAPS HOLDER: some finding line starts so.
pr_finding() {
  grep -qF -- "$(printf 'finding\t%s\t%s\t%s\t%s' "$@")" "$OUT" || fail "no $1 finding at $2 ($3) of $4"
}

# A tree whose files consume every capability the policies below give, so that an audit of it
# has no finding of its own: the processes' findings decide the exit status.
pr_tree() {
  capfile "$CASE_DIR/tree/ping" cap_net_raw=i
  capfile "$CASE_DIR/tree/ip" cap_net_admin=i
  capfile "$CASE_DIR/tree/dmesg" cap_syslog=i
}

PR_POLICY='alice    cap_net_raw
@netops  cap_net_raw, cap_net_admin
dave     cap_syslog
'

# capdelegate(8), audit --processes: a thread holding in pI more than the policy gives its
# user now is a stale-grant finding naming the thread (/proc/PID; /proc/PID/task/TID for
# another thread), the user, the audit session and exactly the bits held beyond the grant;
# a thread within its user's grant is not one, nor are root's threads when no line names root.
t_procs_stale_beyond_grant() {
  need_procs_ns; local P; P=$(policy <<<"$PR_POLICY"); pr_tree
  pr_ns 'start alice 1001 +net_raw,+syslog 1001   # alice: cap_net_raw; cap_syslog beyond
         start bob 1002 +net_raw,+net_admin       # bob, in netops: within
         start carol 1003 +net_raw                # carol: nothing; all of it beyond
         start root 0 +net_raw,+syslog            # root: no line names root
         threads alicet
         cli text audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         cli json audit --json --processes --config "$P" --confdir "" "$CASE_DIR/tree"' || return 1
  local a b c r t tid; a=$(pr_pid alice) b=$(pr_pid bob) c=$(pr_pid carol) r=$(pr_pid root)
  t=$(pr_pid alicet) tid=$(cat "$CASE_DIR/alicet.tid")
  pr_run text; want_rc 1
  pr_finding stale-grant "/proc/$a" cap_syslog "$(pr_holder alice alice 1001)"
  want_text "$OUT" "(it gives cap_net_raw); no process can take them from another: they stay until the session ends"
  pr_finding stale-grant "/proc/$c" cap_net_raw "$(pr_holder carol carol 1003)"
  want_text "$OUT" "(it gives none); no process"
  pr_finding stale-grant "/proc/$t/task/$tid" cap_syslog "alice (uid 1001)"
  no_text "$OUT" "/proc/$b"$'\t'; no_text "$OUT" "/proc/$r"$'\t'; no_text "$OUT" "/proc/$t"$'\t'
  [ "$(grep -c $'^finding\t' "$OUT")" = 3 ] || fail "want the three stale threads alone"
  want_line "$OUT" "process\t$b\t$b\tbob\tsleep\tcap_net_admin,cap_net_raw"	# still listed
  pr_run json
  python3 - "$OUT" "$a" "$b" "$c" "$r" "$t" "$tid" "$(cat "$CASE_DIR/alice.sid")" <<'PY' >&2 || fail "JSON processes[] and findings[]"
import json, sys
d = json.load(open(sys.argv[1]))
a, b, c, r, t, tid, sid = map(int, sys.argv[2:])
procs = {x["tid"]: x for x in d["processes"]}
def judged(tid, state, grant, beyond):
    x = procs[tid]
    assert (x["state"], x["grant"], x["beyond"]) == (state, grant, beyond), x
judged(a, "stale", ["cap_net_raw"], ["cap_syslog"])
assert procs[a]["sessionid"] == sid, procs[a]
judged(b, "within", ["cap_net_admin", "cap_net_raw"], [])
judged(c, "stale", [], ["cap_net_raw"])
judged(r, "root", None, None)
judged(t, "within", ["cap_net_raw"], [])
judged(tid, "stale", ["cap_net_raw"], ["cap_syslog"])
f = sorted((x["path"], x["caps"]) for x in d["findings"] if x["id"] == "stale-grant")
assert f == sorted([("/proc/%d" % a, ["cap_syslog"]), ("/proc/%d" % c, ["cap_net_raw"]),
                    ("/proc/%d/task/%d" % (t, tid), ["cap_syslog"])]), f
assert all(x["id"] == "stale-grant" for x in d["findings"]), d["findings"]
PY
  "$HERE/check-json.py" --may-be-empty userdb.records --may-be-empty errors --may-be-empty vanished \
    "$MAN" "$OUT" >&2 || fail "JSON does not match the schema in capdelegate(8)"
}

# capdelegate(8), EXIT STATUS: audit --processes exits 1 when a thread holds a stale grant,
# 0 when every thread is within its user's grant (root's threads are not judged).
t_procs_exit_status() {
  need_procs_ns; local P; P=$(policy <<<"$PR_POLICY"); pr_tree
  pr_ns 'start bob 1002 +net_raw                  # within
         start dave 1004 +syslog 1004             # within, in a session
         start root 0 +net_raw,+syslog,+sys_admin
         cli within audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         start carol 1003 +net_admin              # carol: nothing
         cli stale audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"' || return 1
  pr_run within; want_rc 0; no_match "$OUT" "^finding"
  pr_run stale; want_rc 1
  pr_finding stale-grant "/proc/$(pr_pid carol)" cap_net_admin "$(pr_holder carol carol 1003)"
  [ "$(grep -c $'^finding\t' "$OUT")" = 1 ] || fail "want carol's finding alone"
}

# capdelegate.conf(5), WINDOWS: a line whose window ended gives nothing at the next login,
# and audit --processes reports the process its user still runs as holding a stale grant; a
# line not yet in force gives nothing either; one in force, its grant.
t_procs_window_ended() {
  need_procs_ns; local P ended soon later
  ended=$(date -u -d '-1 min' +%Y-%m-%dT%H:%M:%SZ) soon=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%MZ)
  later=$(date -u -d '+2 hours' +%Y-%m-%dT%H:%MZ)
  P=$(printf 'alice cap_net_raw until %s\ncarol cap_net_raw from %s\ndave cap_syslog until %s\n' \
        "$ended" "$soon" "$later" | policy)
  pr_tree
  pr_ns 'start alice 1001 +net_raw 1001
         start carol 1003 +net_raw
         start dave 1004 +syslog
         cli text audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         cli json audit --json --processes --config "$P" --confdir "" "$CASE_DIR/tree"' || return 1
  pr_run text; [ "$RC" -ge 1 ] || fail "exit $RC with stale grants"
  pr_finding stale-grant "/proc/$(pr_pid alice)" cap_net_raw "$(pr_holder alice alice 1001)"
  want_text "$OUT" "(it gives none)"
  pr_finding stale-grant "/proc/$(pr_pid carol)" cap_net_raw "$(pr_holder carol carol 1003)"
  no_text "$OUT" "/proc/$(pr_pid dave)"$'\t'
  pr_run json
  python3 - "$OUT" "$(pr_pid alice)" "$(pr_pid dave)" <<'PY' >&2 || fail "JSON states"
import json, sys
d = json.load(open(sys.argv[1]))
procs = {x["pid"]: x for x in d["processes"]}
assert procs[int(sys.argv[2])]["state"] == "stale", procs
assert procs[int(sys.argv[3])]["state"] == "within", procs
PY
}

# pam_capdelegate(8), GROUPS, and capdelegate(8), FINDINGS: a user whose grant rests on a group
# NSS cannot answer for now is grant-unknown (error level: exit 2), never taken as within or
# as holding nothing; so is a thread whose uid cannot be looked up. A user whose own line
# decides needs no group lookup, as at login: still judged.
t_procs_nss_failure() {
  need_procs_ns; local P; P=$(policy <<<"$PR_POLICY"); pr_tree
  pr_ns 'start alice 1001 +net_raw,+syslog        # her own line: judged, stale
         start bob 1002 +net_raw                  # netops: unknown
         start carol 1003 +net_raw                # her uid cannot be looked up
         CD_FAULT_GROUPS=netops:2000 CD_FAULT_UIDS=1003 \
           cli down audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         CD_FAULT_GROUPS=netops:2000 CD_FAULT_UIDS=1003 \
           cli json audit --json --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         cli up audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"' || return 1
  local a b c; a=$(pr_pid alice) b=$(pr_pid bob) c=$(pr_pid carol)
  pr_run down; want_rc 2
  pr_finding stale-grant "/proc/$a" cap_syslog "$(pr_holder alice alice 1001)"
  pr_finding grant-unknown "/proc/$b" cap_net_raw "$(pr_holder bob bob 1002)"
  want_text "$OUT" "what the policy gives the user now cannot be computed (cannot tell whether the user is in group netops: a group backend fails"
  pr_finding grant-unknown "/proc/$c" cap_net_raw "uid 1003 (no name in NSS)"
  want_text "$OUT" "(cannot look up uid 1003: Resource temporarily unavailable)"
  pr_run json
  python3 - "$OUT" "$b" "$c" <<'PY' >&2 || fail "JSON: unknown"
import json, sys
d = json.load(open(sys.argv[1]))
procs = {x["pid"]: x for x in d["processes"]}
for pid in map(int, sys.argv[2:]):
    assert (procs[pid]["state"], procs[pid]["grant"], procs[pid]["beyond"]) == ("unknown", None, None), procs[pid]
PY
  # report: a host's grant-unknown is an error-level finding there too (an error record, exit 2)
  local doc="$CASE_DIR/json.out"; OUT="$CASE_DIR/out" ERR="$CASE_DIR/err"
  cd_run report --tsv "$doc"; want_rc 2
  want_text "$OUT" "$(printf '\tgrant-unknown\t/proc/%s\tbob (uid 1002)' "$b")"
  # NSS answering again: bob within, carol stale
  pr_run up; want_rc 1
  no_text "$OUT" "/proc/$b"$'\t'
  pr_finding stale-grant "/proc/$c" cap_net_raw "$(pr_holder carol carol 1003)"
}

# capdelegate(8), audit --processes: root's threads are judged when a user line names root
# (here one whose window ended), as any user's.
t_procs_root_named() {
  need_procs_ns; local P
  P=$(printf 'root cap_net_raw until %s\nalice cap_net_raw\n' "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%MZ)" | policy)
  pr_tree
  pr_ns 'start root 0 +net_raw
         cli text audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"' || return 1
  pr_run text; want_rc 1
  pr_finding stale-grant "/proc/$(pr_pid root)" cap_net_raw "$(pr_holder root root 0)"
}

# capdelegate(8), audit --processes: a finding names the system manager's unit that holds the
# thread's cgroup (session-7.scope; user@1003.service for the user manager's own units); in a
# user manager, pam_systemd's own cap_wake_alarm is not counted; a system service (no audit session, its cgroup below /system.slice/) is
# not judged, whatever its pI holds, while a process there with an audit session is. The
# cgroups are made in the name=systemd hierarchy below a directory of the case's own, which a
# cgroup namespace shows the CLI as the root.
t_procs_unit_and_service() {
  need_procs_ns; local P cg=/sys/fs/cgroup/systemd d rc=0
  [ -w "$cg/cgroup.procs" ] || skip "no writable name=systemd cgroup hierarchy at $cg"
  unshare --cgroup true 2>/dev/null || skip "no cgroup namespace (unshare --cgroup)"
  P=$(policy <<<"$PR_POLICY"); pr_tree
  local PR_CGROOT; PR_CGROOT="$cg/capdelegate-cli.${CASE_DIR//\//_}.$$"
  local mgr=user.slice/user-1003.slice/user@1003.service
  # another user's record raises cap_net_raw; carol's own record raises it for her manager
  mkdir -p "$CASE_DIR/udb-bob" "$CASE_DIR/udb-carol"
  echo '{"userName":"bob","capabilityAmbientSet":["cap_net_raw"]}' >"$CASE_DIR/udb-bob/bob.user"
  echo '{"userName":"carol","capabilityAmbientSet":["cap_net_raw"]}' >"$CASE_DIR/udb-carol/carol.user"
  mkdir -p "$PR_CGROOT/system.slice/lab.service" "$PR_CGROOT/user.slice/user-1003.slice/session-7.scope" \
    "$PR_CGROOT/$mgr/init.scope" "$PR_CGROOT/$mgr/app.slice/app.service"
  pr_ns 'start svc 1003 +net_raw 4294967295 system.slice/lab.service
         start sess 1003 +net_raw,+wake_alarm 1003 user.slice/user-1003.slice/session-7.scope
         start mgr 1003 +net_raw,+wake_alarm 4294967295 user.slice/user-1003.slice/user@1003.service/init.scope
         start alarm 1003 +wake_alarm 4294967295 user.slice/user-1003.slice/user@1003.service/app.slice/app.service
         start app 1003 +net_raw 4294967295 user.slice/user-1003.slice/user@1003.service/app.slice/app.service
         start svcsess 1003 +net_raw 1003 system.slice/lab.service
         cli text audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         cli json audit --json --processes --config "$P" --confdir "" "$CASE_DIR/tree"
         cli other audit --processes --config "$P" --confdir "" --userdb "$CASE_DIR/udb-bob" "$CASE_DIR/tree"
         cli own audit --processes --config "$P" --confdir "" --userdb "$CASE_DIR/udb-carol" "$CASE_DIR/tree"' || rc=1
  for d in user.slice/user-1003.slice/session-7.scope "$mgr/init.scope" "$mgr/app.slice/app.service" \
           "$mgr/app.slice" "$mgr" user.slice/user-1003.slice user.slice system.slice/lab.service \
           system.slice ""; do
    for _ in $(seq 50); do rmdir "$PR_CGROOT/$d" 2>/dev/null && break; sleep 0.1; done
  done
  [ "$rc" = 0 ] || return 1
  [ ! -e "$PR_CGROOT" ] || fail "cgroup $PR_CGROOT left behind"
  pr_run text; want_rc 1
  pr_finding stale-grant "/proc/$(pr_pid sess)" cap_net_raw,cap_wake_alarm "$(pr_holder sess carol 1003), unit session-7.scope: "
  pr_finding stale-grant "/proc/$(pr_pid svcsess)" cap_net_raw "$(pr_holder svcsess carol 1003), unit lab.service: "
  no_text "$OUT" "/proc/$(pr_pid svc)"$'\t'
  # a user manager and its services: judged (no audit session, but not below /system.slice/),
  # named by the system manager's unit, the one systemctl stops; cap_wake_alarm, which
  # pam_systemd gives a user manager itself, is not counted there (it is in a session's scope)
  pr_finding stale-grant "/proc/$(pr_pid mgr)" cap_net_raw "carol (uid 1003), no audit session, unit user@1003.service: "
  no_text "$OUT" "/proc/$(pr_pid alarm)"$'\t'
  pr_finding stale-grant "/proc/$(pr_pid app)" cap_net_raw "carol (uid 1003), no audit session, unit user@1003.service: "
  want_line "$OUT" "process\t$(pr_pid svc)\t$(pr_pid svc)\tcarol\tsleep\tcap_net_raw"	# listed
  no_text "$ERR" "out of memory"
  # what systemd raises in a user manager is the ambient set of that user's own record, not
  # another's: bob's record leaves carol's manager beyond her grant, her own takes it within
  pr_run other
  pr_finding stale-grant "/proc/$(pr_pid mgr)" cap_net_raw "carol (uid 1003), no audit session, unit user@1003.service: "
  pr_finding stale-grant "/proc/$(pr_pid app)" cap_net_raw "carol (uid 1003), no audit session, unit user@1003.service: "
  pr_run own
  no_text "$OUT" "/proc/$(pr_pid mgr)"$'\t'
  no_text "$OUT" "/proc/$(pr_pid app)"$'\t'
  pr_finding stale-grant "/proc/$(pr_pid sess)" cap_net_raw,cap_wake_alarm "$(pr_holder sess carol 1003), unit session-7.scope: "
  pr_run json
  python3 - "$OUT" "$(pr_pid svc)" "$(pr_pid sess)" "$(pr_pid alarm)" <<'PY' >&2 || fail "JSON state and unit"
import json, sys
d = json.load(open(sys.argv[1]))
procs = {x["pid"]: x for x in d["processes"]}
svc, sess = procs[int(sys.argv[2])], procs[int(sys.argv[3])]
assert (svc["state"], svc["grant"], svc["sessionid"], svc["unit"]) == ("service", None, None, "lab.service"), svc
assert (sess["state"], sess["unit"], sess["unit_hex"]) == ("stale", "session-7.scope", b"session-7.scope".hex()), sess
alarm = procs[int(sys.argv[4])]
assert (alarm["state"], alarm["grant"], alarm["beyond"], alarm["unit"]) == ("within", [], [], "user@1003.service"), alarm
PY
}

# A thread that ends between the listing of /proc and the reading of its status (fault.c fails
# the open of its status with ENOENT, as the kernel does then) is not listed nor judged; the
# threads still there are.
t_procs_thread_ended() {
  need_procs_ns; local P; P=$(policy <<<"$PR_POLICY"); pr_tree
  pr_ns 'start carol 1003 +net_raw
         start gone 1003 +net_raw
         g=$(cat "$CASE_DIR/gone.pid")
         PR_FAULT=1 CD_FAULT_FOPEN="/$g/task/$g/status:2" \
           cli text audit --processes --config "$P" --confdir "" "$CASE_DIR/tree"' || return 1
  pr_run text; want_rc 1
  pr_finding stale-grant "/proc/$(pr_pid carol)" cap_net_raw "$(pr_holder carol carol 1003)"
  no_text "$OUT" "/proc/$(pr_pid gone)"
  no_match "$OUT" "^process	$(pr_pid gone)	"
}
