# plausible-cases.sh: CLI cases each written from one promise of capdelegate(8) or
# capdelegate-files.conf(5) that a plausible bug breaks while every other case passes: two edits
# racing for one lock, an edit that keeps the file's length, a warning of the core's own in
# check's count, a worker thread's pI beside an empty main thread's, import-pam-cap's reduction
# by every earlier line, fE set exactly by marks apply, the bounding set cutting what an exec
# gains (sourced by run.sh).
# shellcheck shell=bash disable=SC2034,SC2016

PLAUSIBLE_CASES=(edit_lock_name_still_the_lock_taken edit_same_length_installed
  check_core_warning_counted audit_processes_worker_beside_empty_main
  import_reduced_by_every_earlier_line marks_apply_effective_exactly bounding_set_cuts_gains)

# The policy directory of an edit case: root's, 0755, the main file holding $1. Sets PL_P.
pl_policy_dir() {
  PL_P="$CASE_DIR/etc/capdelegate.conf"
  mkdir -p "$CASE_DIR/etc"; chmod 0755 "$CASE_DIR/etc"
  printf '%s' "$1" >"$PL_P"; chmod 0644 "$PL_P"
}

# pl_editor NAME < BODY: an editor script, the copy's path in $f. Prints its path.
pl_editor() {
  local e="$CASE_DIR/$1.sh"
  { printf '#!/bin/bash\nf="${!#}"\n'; cat; } >"$e"
  chmod 0755 "$e"; echo "$e"
}

# pl_await FILE: FILE exists within 10 s.
pl_await() { local i; for i in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; fail "no $1"; }

# capdelegate(8), edit: two edits of one file cannot both hold the lock. Edit B opens the lock
# file while edit A holds it; A then ends (its lock's name removed, the lock released) and edit
# C creates and locks a new lock file at the name; only then does B take its lock, on the file
# it opened, which no longer has the name. B must see that what it locked is not the lock and
# meet C's: "being edited", exit 2, its editor never run, C's edit installed. A shim's hook
# (CD_FAULT_FLOCK_HOOK, tests/cli/fault.c) runs between B's open and its flock; it checks that
# a process (B: A has ended) holds the removed lock file open, so the case cannot pass by
# another order of events.
t_edit_lock_name_still_the_lock_taken() {
  need_root; local a lock="$CASE_DIR/etc/.capdelegate.conf.lock" ea eb ec
  pl_policy_dir $'root cap_net_raw\n'
  ea=$(pl_editor a <<SH
touch "$CASE_DIR/a-editing"; for _ in \$(seq 200); do [ ! -e "$CASE_DIR/a-go" ] || break; sleep 0.05; done
printf 'root cap_kill\n' >>"\$f"
SH
)
  ec=$(pl_editor c <<SH
touch "$CASE_DIR/c-editing"; for _ in \$(seq 200); do [ ! -e "$CASE_DIR/c-go" ] || break; sleep 0.05; done
printf 'root cap_syslog\n' >>"\$f"
SH
)
  eb=$(pl_editor b <<SH
touch "$CASE_DIR/b-ran"; printf 'root cap_chown\n' >>"\$f"
SH
)
  EDITOR="$ea" VISUAL="" SUDO_EDITOR="" "$BIN" edit --config "$PL_P" --confdir "" </dev/null \
    >"$CASE_DIR/out-a" 2>"$CASE_DIR/err-a" & a=$!
  pl_await "$CASE_DIR/a-editing"
  # run by B's flock: A ends, C locks a new lock file; B must still hold the removed one
  cat >"$CASE_DIR/third.sh" <<SH
set -e
touch "$CASE_DIR/a-go"
for _ in \$(seq 200); do
  s=\$(awk '/^State:/ { print \$2 }' /proc/$a/status 2>/dev/null || echo gone)
  [ "\$s" = Z ] || [ "\$s" = gone ] || [ -z "\$s" ] && break; sleep 0.05
done
( sh -c 'echo \$\$ >"$CASE_DIR/c.pid"; exec env EDITOR="$ec" VISUAL= SUDO_EDITOR= "$BIN" edit --config "$PL_P" --confdir ""' \
    </dev/null >"$CASE_DIR/out-c" 2>"$CASE_DIR/err-c"; echo \$? >"$CASE_DIR/c.rc" ) &
for _ in \$(seq 200); do [ ! -e "$CASE_DIR/c-editing" ] || break; sleep 0.05; done
[ -e "$CASE_DIR/c-editing" ]
[ -n "\$(find /proc/[0-9]*/fd -lname "$lock (deleted)" 2>/dev/null)" ]
SH
  FIRED="$CASE_DIR/fired"; RC=0
  CD_FAULT_FIRED="$FIRED" CD_FAULT_FLOCK_HOOK="sh $CASE_DIR/third.sh" \
    LD_PRELOAD="$(dirname "$BIN")/tests/cli/.libs/fault.so" EDITOR="$eb" VISUAL="" SUDO_EDITOR="" \
    "$BIN" edit --config "$PL_P" --confdir "" </dev/null >"$OUT" 2>"$ERR" || RC=$?
  touch "$CASE_DIR/c-go"
  wait "$a" || fail "edit A: exit $?"
  for _ in $(seq 400); do [ ! -e "$CASE_DIR/c.rc" ] || break; sleep 0.05; done
  [ -e "$FIRED" ] || fail "the hook never ran"
  want_rc 2
  want_text "$ERR" "$PL_P is being edited (pid $(cat "$CASE_DIR/c.pid") holds $lock): try again when that edit ends"
  [ ! -e "$CASE_DIR/b-ran" ] || fail "edit B ran its editor holding a lock file no longer at the lock's name"
  [ "$(cat "$CASE_DIR/c.rc" 2>/dev/null)" = 0 ] || fail "edit C: exit $(cat "$CASE_DIR/c.rc" 2>/dev/null): $(cat "$CASE_DIR/err-c")"
  [ "$(cat "$PL_P")" = "$(printf 'root cap_net_raw\nroot cap_kill\nroot cap_syslog')" ] || fail "policy: $(cat "$PL_P")"
}

# capdelegate(8), edit: a copy left as the file was is "unchanged"; any other text is judged and
# installed, also one of the same length: a capability swapped for one of the same length
# (cap_net_raw for cap_setfcap, a warning), a grant revoked and padded to the same width.
t_edit_same_length_installed() {
  need_root; local e
  pl_policy_dir $'alice cap_net_raw\n'
  for e in 's/cap_net_raw/cap_setfcap/' 's/cap_net_raw/none       /'; do
    ED=$(pl_editor "swap" <<SH
sed -i '$e' "\$f"
SH
)
    local before; before=$(wc -c <"$PL_P")
    RC=0
    LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" NSS_WRAPPER_PASSWD="$NSSDIR/passwd" \
      NSS_WRAPPER_GROUP="$NSSDIR/group" EDITOR="$ED" VISUAL="" SUDO_EDITOR="" \
      "$BIN" edit --config "$PL_P" --confdir "" </dev/null >"$OUT" 2>"$ERR" || RC=$?
    want_rc 0; no_text "$ERR" "unchanged"
    [ "$(wc -c <"$PL_P")" = "$before" ] || fail "the edit changed the length: not the case meant"
    case $e in
      *setfcap*) want_line "$OUT" "$PL_P: installed, 1 rule, 1 warning in the policy"
                 [ "$(cat "$PL_P")" = "alice cap_setfcap" ] || fail "policy: $(cat "$PL_P")" ;;
      *) want_line "$OUT" "$PL_P: installed, 1 rule, 0 warnings in the policy"
         [ "$(cat "$PL_P")" = "alice none       " ] || fail "policy: $(cat "$PL_P")" ;;
    esac
    printf 'alice cap_net_raw\n' >"$PL_P"
  done
}

# capdelegate(8), check: a name read with an octal escape that a winbind name could have meant
# literally is a warning, the core's own line; check counts every warning it prints, so that
# one alone makes exit 1 and "1 warning" (the user exists here: no "unknown" warning beside it).
t_check_core_warning_counted() {
  need_root; local p NSSDIR="$CASE_DIR/nss"
  mkdir -p "$NSSDIR"
  printf 'root:x:0:0::/root:/bin/sh\nCORP@234:x:1020:1020::/:/bin/sh\n' >"$NSSDIR/passwd"
  printf 'root:x:0:\nCORP@234:x:1020:\n' >"$NSSDIR/group"
  p=$(printf 'CORP\\100234 cap_net_raw\n' | policy)
  cd_nss check --config "$p" --confdir ""; want_rc 1
  want_text "$ERR" "capdelegate: warning: $p:1: user 'CORP@234' is read with \\100 as an octal escape"
  no_text "$ERR" "unknown to NSS"
  want_line "$OUT" "$p: ok, 1 rule, 1 warning"
  # and counted with check's own warnings: an unknown user beside it makes two
  p=$(printf 'CORP\\100234 cap_net_raw\nzed cap_kill\n' | policy two)
  cd_nss check --config "$p" --confdir ""; want_rc 1
  want_line "$OUT" "$p: ok, 2 rules, 2 warnings"
}

# capdelegate(8), audit --processes: one record per thread, so a thread whose pI differs from
# its main thread's is listed on its own; also when the main thread's pI is empty (the process
# as a whole would not be listed).
t_audit_processes_worker_beside_empty_main() {
  need_root; local p pid tid; p=$(std_policy)
  two_thread_process 0 0x2000   # the main thread's pI empty, the worker's cap_net_raw
  pid=$TPID tid=$TID
  grep -q '^CapInh:	0000000000000000$' "/proc/$pid/task/$pid/status" || { kill "$pid"; fail "the main thread's pI is not empty"; }
  cd_nss audit --processes --config "$p" "$CASE_DIR"
  cp "$OUT" "$CASE_DIR/text"
  cd_nss audit --json --processes --config "$p" "$CASE_DIR"
  kill "$pid"
  want_line "$CASE_DIR/text" "process\t$pid\t$tid\troot\tworker\tcap_net_raw"
  no_match "$CASE_DIR/text" "^process	$pid	$pid	"
  python3 - "$OUT" "$pid" "$tid" <<'PY2' >&2 || fail "JSON processes[]: want the worker alone"
import json, sys
d = json.load(open(sys.argv[1]))
pid, tid = int(sys.argv[2]), int(sys.argv[3])
got = [(x["tid"], x["comm"], x["inheritable"]) for x in d["processes"] if x["pid"] == pid]
assert got == [(tid, "worker", ["cap_net_raw"])], got
PY2
}

# capdelegate(8), import-pam-cap: a later line is translated with only what every earlier line
# pam_cap may apply first to a user it reaches gives too. @g3 (cap_net_raw,cap_sys_admin) after
# @g1 (cap_net_raw) and @g2 (cap_sys_admin): a member of g1 and g3 gets cap_net_raw from pam_cap
# (line 1), so @g3 is reduced by g1 and by g2, to none; reduced by g2 alone it would give him
# cap_sys_admin too. erin, in g1 and g3, is resolved by the core: cap_net_raw.
t_import_reduced_by_every_earlier_line() {
  local p NSSDIR="$CASE_DIR/nss" t
  mkdir -p "$NSSDIR"
  printf 'root:x:0:0::/root:/bin/sh\nerin:x:1005:1005::/:/bin/sh\n' >"$NSSDIR/passwd"
  printf 'root:x:0:\nerin:x:1005:\ng1:x:3001:erin\ng2:x:3002:\ng3:x:3003:erin\n' >"$NSSDIR/group"
  p=$(printf 'cap_net_raw @g1\ncap_sys_admin @g2\ncap_net_raw,cap_sys_admin @g3\n' | pam_cap_conf)
  cd_nss import-pam-cap "$p"; want_rc 1
  want_line "$OUT" "@g1             cap_net_raw"
  want_line "$OUT" "@g2             none"
  want_line "$OUT" "@g3             none"
  want_text "$ERR" "difference: $p:3: '@g3' and $p:1: '@g1' both match a member of groups g1 and g3"
  want_text "$ERR" "difference: $p:3: '@g3' and $p:2: '@g2' both match a member of groups g2 and g3"
  no_text "$ERR" "user erin:"
  want_text "$ERR" "0 known users get another set"
  need_root
  t=$(policy translation <"$OUT")
  cd_nss explain erin --config "$t" --confdir "" "$CASE_DIR/nss"; want_rc 0
  want_line "$OUT" "pI\tcap_net_raw\tgroup"
}

# capdelegate(8), marks: ok means fI and fE as declared; marks apply sets exactly the declared
# marks. A file marked cap_net_raw=ei under a cap_net_raw=i mark (and the other way round)
# differs, is not ok, and apply corrects it: fE off, or on, as declared.
t_marks_apply_effective_exactly() {
  need_root; local t="$CASE_DIR/m" m
  capfile "$t/ei" cap_net_raw=ei
  capfile "$t/i" cap_net_raw=i
  m=$(printf '%s\n' "$t/ei cap_net_raw=i" "$t/i cap_net_raw=ei" | marks_file)
  cd_run marks check --marks "$m"; want_rc 1
  want_line "$OUT" "mark\t$t/ei\tdiffers\tdrift\tcap_net_raw=i\tcap_net_raw=ei\tfI, fE or rootid differ from the mark"
  want_line "$OUT" "mark\t$t/i\tdiffers\tdrift\tcap_net_raw=ei\tcap_net_raw=i\tfI, fE or rootid differ from the mark"
  no_match "$OUT" "	ok	ok	"
  cd_run marks apply --marks "$m"; want_rc 0
  want_line "$OUT" "$t/ei: cap_net_raw=ei -> cap_net_raw=i"
  want_line "$OUT" "$t/i: cap_net_raw=i -> cap_net_raw=ei"
  [ "$(getcap "$t/ei")" = "$t/ei cap_net_raw=i" ] || fail "on disk: $(getcap "$t/ei")"
  [ "$(getcap "$t/i")" = "$t/i cap_net_raw=ei" ] || fail "on disk: $(getcap "$t/i")"
  cd_run marks check --marks "$m"; want_rc 0
  want_line "$OUT" "mark\t$t/ei\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
}

# capdelegate(8), explain and audit: what an exec gains is (X & fP) | (pI & fI), X the bounding
# set of the process that runs the CLI. With cap_net_bind_service out of it, bind_ep
# (cap_net_bind_service=ep) gains alice nothing, and ping_i (cap_net_raw=i) still gains her
# cap_net_raw through pI; with the whole set, bind_ep gains it.
t_bounding_set_cuts_gains() {
  need_root; local p t; p=$(std_policy); t=$(std_tree)
  command -v setpriv >/dev/null || skip "setpriv missing"
  cut() { RC=0
    LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
      setpriv --bounding-set=-net_bind_service -- "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?; }
  cd_nss explain alice --config "$p" --confdir "" "$t/bin"
  want_text "$OUT" "$(printf 'exec\t%s\tfP=cap_net_bind_service\tfI=none\tfE=yes\tpP'"'"'=cap_net_bind_service\t' "$t/bin/bind_ep")"
  cut explain alice --config "$p" --confdir "" "$t/bin"
  want_text "$OUT" "$(printf 'exec\t%s\tfP=cap_net_bind_service\tfI=none\tfE=yes\tpP'"'"'=none\tpE'"'"'=none\t' "$t/bin/bind_ep")"
  want_text "$OUT" "$(printf 'exec\t%s\tfP=none\tfI=cap_net_raw\tfE=no\tpP'"'"'=cap_net_raw\t' "$t/bin/ping_i")"
  cut audit --config "$p" --confdir "" "$t"
  no_match "$OUT" "^gain	alice	$t/bin/bind_ep	"
  want_line "$OUT" "gain\talice\t$t/bin/ping_i\tcap_net_raw\tnone"
}
