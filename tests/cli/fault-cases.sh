# fault-cases.sh: the CLI when a call fails under it (sourced by tests/cli/run.sh). The shim
# tests/cli/fault.c (built by make) fails one allocation, one strdup or one stat. The promise
# pinned, capdelegate(8) EXIT STATUS: a failure is an error (exit 2, said on standard error),
# never another answer: no grant, finding or file is left out in silence.
# shellcheck shell=bash disable=SC2034

FAULT_CASES=(fault_alloc_check_explain fault_alloc_audit fault_alloc_import fault_alloc_marks
  fault_strdup_targets fault_import_huge_group audit_descriptor_budget valgrind_import_check
  fault_stat_ancestor audit_threads_started fault_stat_vanished_root_file fault_alloc_processes
  fault_processes_cgroup_memory
  fault_stat_vanished_inner_file audit_reopen_by_name fault_dropin_dir_unlisted
  fault_alloc_dropin_notes fault_print_cut_short valgrind_audit_problems fault_walk_examine_dir
  fault_walk_cwd_unopened fault_getxattr_errors audit_dir_moved_during_scan fault_fstat_marks_staged
  fault_alloc_audit_roots fault_asprintf_dropin_path fault_marks_duplicate_search
  fault_log_message_lost fault_octal_warning_memory fault_alloc_check_rejected_dropin)

# cd_fault ARGS...: cd_nss with tests/cli/fault.c preloaded first; $FIRED exists afterwards if
# the fault fired. The fault is chosen by CD_FAULT_* in the environment.
cd_fault() {
  FIRED="$CASE_DIR/fired"; rm -f "$FIRED"
  # shellcheck disable=SC2031
  RC=0
  CD_FAULT_FIRED="$FIRED" \
  LD_PRELOAD="$(dirname "$BIN")/tests/cli/.libs/fault.so:$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
    NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
    "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?
}

# sweep_alloc ARGS...: run the CLI with its 1st, 2nd, ... allocation failing until none fires
# (with SWEEP=CD_FAULT_NTH and CD_FAULT_STRDUP=TEXT: each copy of TEXT in turn; with
# CD_FAULT_ASPRINTF=FORMAT: each asprintf of FORMAT)
# (then the output must be the unfaulted one). Each faulted run either gives exactly the
# unfaulted output, messages and status (the allocation was not needed), or exits 2 (an error)
# with a message on stderr that the unfaulted run did not give: never an exit 2 in silence.
# Prints the number of allocations swept.
sweep_alloc() {
  local n ref="$CASE_DIR/ref" ref_rc
  CD_FAULT_STRDUP='' CD_FAULT_ASPRINTF='' cd_fault "$@"; ref_rc=$RC; cp "$OUT" "$ref"; cp "$ERR" "$ref.err"
  [ "$ref_rc" -le 2 ] || { fail "unfaulted run: exit $ref_rc"; return 1; }
  for ((n = 1; n < 5000; n++)); do
    export "${SWEEP:-CD_FAULT_ALLOC}=$n"; cd_fault "$@"
    if [ ! -e "$FIRED" ]; then
      [ "$RC" -eq "$ref_rc" ] && cmp -s "$OUT" "$ref" && cmp -s "$ERR" "$ref.err" || { fail "allocation $n: not fired, yet another result"; return 1; }
      echo "$((n - 1)) allocations"; return 0
    fi
    if [ "$RC" -eq "$ref_rc" ] && cmp -s "$OUT" "$ref" && cmp -s "$ERR" "$ref.err"; then
      continue   # not needed, or a fallback with the same result
    elif [ "$RC" -ne 2 ]; then
      fail "allocation $n failed: exit $RC (unfaulted $ref_rc), another output: $*"; return 1
    elif ! grep '^capdelegate: ' "$ERR" | grep -qvxF -f "$ref.err"; then
      fail "allocation $n failed: exit 2 with no message of its own: $*"; return 1
    fi
  done
  fail "more than 5000 allocations"
}

t_fault_alloc_check_explain() {
  need_root; local p d="$CASE_DIR/capdelegate.d" n
  p=$(std_policy)
  mkdir -p "$d"; printf 'carol cap_kill\n@netops cap_sys_time\nCORP\\100carol cap_chown\n' >"$d/10-x.conf"
  for n in 20 30 40 50 60 70; do printf 'carol cap_kill\n' >"$d/$n-more-drop-ins.conf"; done
  chmod 0644 "$d"/*.conf
  touch -d '-1 hour' "$p" "$d"/*.conf   # no "modified N seconds ago" note: N would differ
  n=$(sweep_alloc check --config "$p" --confdir "$d"); echo "check: $n" >&2
  n=$(sweep_alloc explain bob --config "$p" --confdir "$d" "$CASE_DIR"); echo "explain: $n" >&2
}

# capdelegate(8), CHECK: the verdict line names the file at fault. A rejected drop-in beside a
# good main file: each allocation failing in turn gives the same verdict naming the drop-in, or
# an error of its own (out of memory), never the main file blamed in silence.
t_fault_alloc_check_rejected_dropin() {
  need_root; local p d="$CASE_DIR/capdelegate.d" n
  p=$(std_policy)
  mkdir -p "$d"; printf 'carol cap_kill
bob 12
' >"$d/10-bad.conf"
  chmod 0644 "$d/10-bad.conf"; touch -d '-1 hour' "$p" "$d/10-bad.conf"
  n=$(sweep_alloc check --config "$p" --confdir "$d"); echo "check: $n" >&2
  cd_fault check --config "$p" --confdir "$d"; want_rc 2
  want_text "$OUT" "$d/10-bad.conf: syntax error: the module grants nothing"
}

t_fault_alloc_audit() {
  need_root; local p t="$CASE_DIR/tree" n
  p=$(std_policy)
  capfile "$t/bin/ping" cap_net_raw=ep; capfile "$t/sub/dir/tool" cap_net_admin,cap_syslog=i
  chmod 0777 "$t/sub"   # a writable-directory finding
  chmod 0666 "$t/bin/ping"   # a writable-file finding (chmod keeps security.capability)
  n=$(sweep_alloc audit --threads 1 --config "$p" --confdir "" "$t"); echo "audit: $n" >&2
  # an error in the reference: a PATH that does not exist (its record must not be lost); apart,
  # since its exit 2 would hide any other loss
  n=$(sweep_alloc audit --threads 1 --config "$p" --confdir "" "$t/none" "$t/bin"); echo "audit with an error: $n" >&2
}

t_fault_alloc_import() {
  need_root; local c="$CASE_DIR/capability.conf" n
  # xnetops, first: pam_cap also matches group netops by it (a lookup that must not fail in
  # silence: the group exists, so the translation reports the accident)
  printf 'cap_sys_time xnetops\ncap_net_raw @netops\ncap_sys_admin bob\ncap_kill *\n' >"$c"
  n=$(sweep_alloc import-pam-cap "$c"); echo "import: $n" >&2
  # ... and a file that translates (exit 0 or 1), where an error would not hide behind the
  # reference's own exit 2
  printf 'cap_net_raw @netops\ncap_sys_admin bob\ncap_kill *\n' >"$c"
  cd_nss import-pam-cap "$c"; [ "$RC" -le 1 ] || fail "the translated file: exit $RC"
  n=$(sweep_alloc import-pam-cap "$c"); echo "import, translated: $n" >&2
  # the line import builds to ask the core whether a subject is one (asprintf: libc's memory,
  # outside the sweep above), failing for each word in turn
  n=$(CD_FAULT_ASPRINTF=$'%s none\n' SWEEP=CD_FAULT_NTH sweep_alloc import-pam-cap "$c"); echo "import, probe lines: $n" >&2
  [ "${n%% *}" -ge 3 ] || fail "import built $n probe lines for 3 subjects"
}

t_fault_alloc_marks() {
  need_root; local m t="$CASE_DIR/tree" n
  capfile "$t/ping" cap_net_raw=ep; : >"$t/plain"; chmod 0755 "$t/plain"   # all three drift
  capfile "$t/suid" cap_net_raw=i; chmod 4755 "$t/suid"                     # setuid on a nosuid mark
  m=$(printf '%s cap_net_raw=i\n%s cap_net_admin,cap_net_raw=ei nosuid\n%s cap_net_raw=i nosuid\n' \
        "$t/ping" "$t/plain" "$t/suid" | policy marks)
  n=$(sweep_alloc marks check --marks "$m"); echo "marks check: $n" >&2
}

# The search for a path declared twice needs one array of a pointer per mark; when it cannot
# be had, the file is not known to be free of duplicates: an error (exit 2, out of memory),
# never a check of marks as if none were declared twice. 37 marks: an array of 296 bytes, a
# size no other allocation of marks check has here (the fault must fire on that one).
t_fault_marks_duplicate_search() {
  local m i
  m=$(for ((i = 10; i < 47; i++)); do printf '/nonexistent/capdelegate-%d cap_net_raw=i\n' "$i"; done | policy marks)
  cd_fault marks check --marks "$m"
  [ "$RC" -ne 2 ] || fail "unfaulted: exit 2"
  CD_FAULT_MALLOC_SIZE=$((37 * 8)) cd_fault marks check --marks "$m"
  [ -e "$FIRED" ] || fail "no 296-byte allocation"
  want_rc 2; want_text "$ERR" "$m: out of memory: no file changed"; no_text "$OUT" "mark	"
}

# capdelegate.conf(5): a name read with an octal escape a winbind name could have meant
# literally is warned about; when the memory to word that warning cannot be had, the policy is
# out of memory (exit 2, no grant), never read as if it had no such name, and the file at
# fault is the drop-in the name is in. A 45-byte name: its text's array is 181 bytes.
t_fault_octal_warning_memory() {
  need_root; local p d="$CASE_DIR/capdelegate.d"
  p=$(printf 'alice cap_net_raw\n' | policy)
  mkdir -p "$d"; printf 'CORP\\100abcdefghijklmnopqrstuvwxyzabcdefghijklmn cap_kill\n' >"$d/10-z.conf"
  chmod 0644 "$d/10-z.conf"
  cd_fault check --config "$p" --confdir "$d"; want_rc 1
  want_text "$ERR" "$d/10-z.conf:1: user 'CORP@abcdefghijklmnopqrstuvwxyzabcdefghijklmn' is read with \\100 as an octal escape"
  CD_FAULT_MALLOC_SIZE=181 cd_fault check --config "$p" --confdir "$d"
  [ -e "$FIRED" ] || fail "no 181-byte allocation"
  want_rc 2; want_line "$OUT" "$d/10-z.conf: system error: the module grants nothing"
  want_text "$ERR" "$p: out of memory: no capabilities granted"; no_text "$OUT" "rule	"
}

# Each message about the policy is formatted (vasprintf) while the policy is read, and kept
# until the reading is known whole: one that cannot be formatted is never dropped in silence
# (the log says a message was lost there) and the policy is out of memory (exit 2, no grant),
# as when a message cannot be kept: a verdict whose reasons are not all logged is not given.
# check of a policy with two bad lines, each message failing in turn.
t_fault_log_message_lost() {
  local p n lost="capdelegate: error: out of memory: a message was lost here"
  p=$(printf 'alice cap_nosuch\nbob\n' | policy)
  cd_fault check --config "$p" --confdir ""; want_rc 2
  want_line "$OUT" "$p: syntax error: the module grants nothing"
  for ((n = 1; n < 50; n++)); do
    CD_FAULT_VASPRINTF=$n cd_fault check --config "$p" --confdir ""
    [ -e "$FIRED" ] || break
    want_rc 2; want_text "$ERR" "$lost"
    want_text "$ERR" "capdelegate: error: out of memory: some messages about the policy were lost"
    want_text "$ERR" "$p: out of memory: no capabilities granted"
    want_line "$OUT" "$p: system error: the module grants nothing"
  done
  [ "$n" -ge 3 ] || fail "only $((n - 1)) messages formatted"
  echo "$((n - 1)) messages" >&2
}

# One chosen allocation, by the text copied: what the command was about to rely on.
t_fault_strdup_targets() {
  need_root; local t="$CASE_DIR/m" d="$CASE_DIR/img" m p rc
  # marks apply reads each changed file again; if that reading fails, the file is not known to
  # match its mark: an error (exit 2), never a success. Each copy of the new value's text fails
  # in turn (the file is marked again each time).
  local k
  for ((k = 1; ; k++)); do
    capfile "$t/f" cap_net_raw=ep
    m=$(printf '%s cap_net_raw=i\n' "$t/f" | marks_file)
    CD_FAULT_NTH=$k CD_FAULT_STRDUP=cap_net_raw=i cd_fault marks apply --marks "$m"
    [ -e "$FIRED" ] || break
    want_rc 2
  done
  [ "$k" -gt 2 ] || fail "want the copy made by the check after apply among those failed"
  want_rc 0
  # marks check of a value the kernel does not show (revision 1): its text is part of the verdict
  unreadable_image "$d" >/dev/null
  m=$(printf '%s cap_net_raw=i\n' "$d/mnt/rev1" | marks_file marks2)
  CD_FAULT_STRDUP=unreadable cd_fault marks check --marks "$m"; rc=$RC
  umount "$d/mnt"
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"; RC=$rc; want_rc 2
  # explain without PATH walks the directories of $PATH: the copy of $PATH fails
  p=$(std_policy); mkdir -p "$CASE_DIR/bin"
  local path="$CASE_DIR/bin:$PATH"
  PATH=$path CD_FAULT_STRDUP=$path cd_fault explain alice --config "$p" --confdir ""
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"; want_rc 2
}

# import-pam-cap looks a group up as the module does (pam_capdelegate(8)): ERANGE past a 256 MiB
# buffer is a failed lookup, and a failed lookup translates nothing (exit 2). Group netops here
# needs about 300 MiB (nss_fault.c's huge group; never filled, the lookup gives up first).
t_fault_import_huge_group() {
  need_root; local c="$CASE_DIR/capability.conf"
  printf 'cap_sys_time xnetops\n' >"$c"    # pam_cap also matches group netops by it
  CD_FAULT_HUGE_GROUP=netops:2000:bob:15000000 cd_fault import-pam-cap "$c"; want_rc 2
  want_text "$ERR" "capdelegate: error: cannot look up group netops: $(python3 -c 'import os; print(os.strerror(34))')"
  # the module's own lookup (explain runs it): the same limit, so bob's group line grants
  # nothing, said, however his membership would have read
  local p; p=$(printf '@netops cap_net_raw\n' | policy huge)
  CD_FAULT_HUGE_GROUP=netops:2000:bob:15000000 cd_fault explain bob --config "$p" --confdir ""; want_rc 2
  want_line "$ERR" "capdelegate: explain: bob: cannot look up gid 2000: $(python3 -c 'import os; print(os.strerror(34))'): login grants nothing"
}

# capdelegate(8), audit: each thread holds at most 8 descriptors past its first, "fewer, and
# fewer threads, under a low RLIMIT_NOFILE"; the report does not depend on it. One thread walks
# a tree 30 directories deep under limits from 40 down to 17: the same report each time, and
# never more descriptors held (the highest one openat returned) under a lower limit.
t_audit_descriptor_budget() {
  need_root; local p t="$CASE_DIR/deep" d n max prev=100000
  p=$(std_policy)
  d=$t; for ((n = 1; n <= 30; n++)); do d=$d/d$n; done
  capfile "$d/tool" cap_net_raw=i
  cd_nss audit --threads 1 --config "$p" --confdir "" "$t"; want_rc 1; cp "$OUT" "$CASE_DIR/ref"
  for n in 40 30 25 22 21 20 19 17; do
    (ulimit -n "$n"; CD_FAULT_MAXFD="$CASE_DIR/maxfd" cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
     want_rc 1; cmp -s "$OUT" "$CASE_DIR/ref" || fail "RLIMIT_NOFILE $n: another report")
    max=$(cat "$CASE_DIR/maxfd")
    [ "$max" -le "$prev" ] || fail "RLIMIT_NOFILE $n: descriptors up to $max, more than under a higher limit ($prev)"
    prev=$max
  done
}

# The walker's other way back up: when a directory it closed (descriptor budget) cannot be
# opened again as '..' of the one below it (tests/cli/fault.c fails every openat of '..'), it
# is opened again by name from the nearest open ancestor, and the walk reads the rest of it:
# the same report as without the limit. Each level of the chain has a second subdirectory,
# holding a capability file, that is read only after the walk came back up.
t_audit_reopen_by_name() {
  need_root; local p t="$CASE_DIR/deep" d n
  p=$(std_policy)
  d=$t; for ((n = 1; n <= 12; n++)); do d=$d/d$n; capfile "$d/z/tool$n" cap_net_raw=i; done
  cd_nss audit --threads 1 --config "$p" --confdir "" "$t"; want_rc 1; cp "$OUT" "$CASE_DIR/ref"
  [ "$(grep -c '^file' "$OUT")" -eq 12 ] || fail "want 12 files in the reference"
  (ulimit -n 17; CD_FAULT_OPENAT=..:2 cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
   [ -e "$FIRED" ] || fail "no openat of .. failed: no directory was closed"
   want_rc 1; cmp -s "$OUT" "$CASE_DIR/ref" || fail "another report: $(diff "$CASE_DIR/ref" "$OUT")"
   [ ! -s "$ERR" ] || fail "a message: $(cat "$ERR")")
}

# Memory read before it is written is a bug a plain run may not show: import-pam-cap and check
# under valgrind (memcheck; any error fails). The capability.conf has every kind of word pam_cap
# matches (*, @group, a bare word that is also a group after its first byte, a capability in the
# user column); the policy repeats long names line after line (the parser's memo of the last
# name compares 8 bytes at a time)
t_valgrind_import_check() {
  need_root; command -v valgrind >/dev/null || skip "valgrind missing"
  local c="$CASE_DIR/capability.conf" p
  printf '%s\n' 'cap_net_raw *' 'cap_net_admin @netops alice' 'cap_sys_time xnetops' \
    'cap_kill cap_chown' '# a comment' 'all bob' 'cap_syslog * carol' 'cap_chown carol *' >"$c"
  # ... and ends without a newline (the parser relies on the NUL the loader puts after the text)
  p=$(printf '%s\n' 'alice cap_net_admin' 'bob cap_net_admin,cap_net_raw' 'carol cap_net_raw' \
      'dave cap_net_raw, cap_net_admin' | { cat; printf '@netops cap_net_admin'; } | policy)
  vg_run import-pam-cap "$c"; want_rc 1; want_text "$OUT" "@netops"
  vg_run check --config "$p" --confdir ""; want_rc 0; want_text "$OUT" ": ok, 5 rules"
  # a last line that is a name alone, no newline: the name's scan stops at that NUL
  p=$(printf 'alice cap_kill\n@netops' | policy bare)
  vg_run check --config "$p" --confdir ""; want_rc 2; want_text "$ERR" "$p:2: missing capabilities field"
  # marks check with a file named three times (a hard link, a directory link): the alias
  # search's tables, one entry per mark
  local r="$CASE_DIR/r" m
  capfile "$r/usr/bin/ping" cap_net_raw=ep; ln "$r/usr/bin/ping" "$r/usr/bin/ping2"; ln -s usr/bin "$r/bin"
  m=$(printf '%s\n' "$r/usr/bin/ping cap_net_raw=i" "$r/usr/bin/ping2 cap_net_raw=i" "$r/bin/ping cap_net_raw=i" | policy marks)
  vg_run marks check --marks "$m"; want_rc 2
  want_text "$ERR" "$m:2: lines 1 and 2 name one file, '$r/usr/bin/ping' and '$r/usr/bin/ping2' (hard links to one inode)"
  want_text "$ERR" "$m:3: lines 1 and 3 name one file, '$r/usr/bin/ping' and '$r/bin/ping' (one directory reached by two paths)"
}

# vg_run ARGS...: the CLI under valgrind; with VG_LEAKS=1 a block lost for good is an error too
vg_run() {
  RC=0
  local leaks=(); [ -z "${VG_LEAKS:-}" ] || leaks=(--leak-check=full --errors-for-leak-kinds=definite)
  LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" NSS_WRAPPER_PASSWD="$NSSDIR/passwd" \
    NSS_WRAPPER_GROUP="$NSSDIR/group" valgrind -q --error-exitcode=99 "${leaks[@]}" "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?
  [ "$RC" -ne 99 ] || fail "valgrind found an error in: $*"
}

# capdelegate(8), audit: only an entry its directory listed and that is gone when opened is
# "vanished"; a PATH's directory that cannot be examined is an error (exit 2), whatever the
# errno: here stat(2) of the PATH's parent says ENOENT (the unsafe-ancestor check needs it).
t_fault_stat_ancestor() {
  need_root; local p t="$CASE_DIR/anc"
  p=$(std_policy); capfile "$t/sub/dir/tool" cap_net_raw=i
  CD_FAULT_STAT="$t/sub:2" cd_fault audit --config "$p" --confdir "" "$t/sub/dir"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$OUT" "error\t$t/sub\tcannot examine\tENOENT\tNo such file or directory"
  no_match "$OUT" "^vanished"
}

# capdelegate(8), audit --threads N: N threads walk the tree (each started once); without it,
# one per CPU audit may run on: all of them, or the one a CPU affinity (taskset) leaves it.
t_audit_threads_started() {
  need_root; local p t="$CASE_DIR/tree" n
  p=$(std_policy); capfile "$t/a/tool" cap_net_raw=i; mkdir -p "$t/b" "$t/c"
  for n in 1 3; do
    CD_FAULT_THREADS="$CASE_DIR/threads" cd_fault audit --threads "$n" --config "$p" --confdir "" "$t"
    want_rc 1; [ "$(cat "$CASE_DIR/threads")" -eq "$n" ] || fail "--threads $n: $(cat "$CASE_DIR/threads") threads"
  done
  CD_FAULT_THREADS="$CASE_DIR/threads" cd_fault audit --config "$p" --confdir "" "$t"
  want_rc 1; [ "$(cat "$CASE_DIR/threads")" -eq "$(nproc)" ] || fail "default: $(cat "$CASE_DIR/threads") threads, $(nproc) CPUs"
  command -v taskset >/dev/null || skip "taskset missing"
  [ "$(nproc --all)" -gt 1 ] || skip "one CPU: an affinity of one CPU leaves as many as the machine has"
  taskset -p -c 0 "$BASHPID" >/dev/null   # this case's shell, and so the audit it starts
  CD_FAULT_THREADS="$CASE_DIR/threads" cd_fault audit --config "$p" --confdir "" "$t"
  want_rc 1; [ "$(cat "$CASE_DIR/threads")" -eq 1 ] || fail "on one CPU: $(cat "$CASE_DIR/threads") threads"
}

# A PATH that is a file with capabilities, gone between reading its value and its stat (the
# second stat of it here): vanished, listed, not an error, and the report goes on.
t_fault_stat_vanished_root_file() {
  need_root; local p t="$CASE_DIR/v"
  p=$(std_policy); capfile "$t/tool" cap_net_raw=i
  CD_FAULT_STAT="$t/tool:2" CD_FAULT_STAT_NTH=2 cd_fault audit --config "$p" --confdir "" "$t/tool"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 1
  want_line "$OUT" "vanished\t$t/tool"; no_match "$OUT" "^error"
  # the PATH itself cannot be examined (EIO) when the walk starts: an error, never a guess at
  # what it is
  CD_FAULT_STAT="$t/tool:5" CD_FAULT_STAT_NTH=1 cd_fault audit --config "$p" --confdir "" "$t/tool"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$OUT" "error\t$t/tool\tcannot examine\tEIO\tInput/output error"
  no_match "$OUT" "^file"
}

# The same for a file inside a directory the walker reads (fstatat of its entry): gone after
# its security.capability was read, it is reported vanished and the scan goes on, its sibling
# reported as usual: never an error, never the scan stopped.
t_fault_stat_vanished_inner_file() {
  need_root; local p t="$CASE_DIR/v"
  p=$(std_policy); capfile "$t/tool" cap_net_raw=i; capfile "$t/other" cap_syslog=i
  CD_FAULT_STATAT="tool:2" cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 1
  want_line "$OUT" "vanished\t$t/tool"; no_match "$OUT" "^error"
  want_text "$OUT" "file"$'\t'"$t/other"$'\t'; [ ! -s "$ERR" ] || fail "a message: $(cat "$ERR")"
}

# audit --processes with each allocation failing in turn: the process this case starts with a
# pI is listed as it is unfaulted (its name and user too), or the audit exits 2 saying why: a
# process is never left out, or shown otherwise, in silence. Other processes come and go, so
# only this one's line and the exit status are compared.
t_fault_alloc_processes() {
  need_root; local p pid line n ref_rc
  command -v setpriv >/dev/null || skip "setpriv missing"
  p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  setpriv --inh-caps +net_raw sleep 120 &
  pid=$!; sleep 0.3
  line=$(printf 'process\t%s\t%s\troot\tsleep\tcap_net_raw' "$pid" "$pid")
  cd_fault audit --processes --config "$p" --confdir "" "$CASE_DIR/empty"; ref_rc=$RC
  want_line "$OUT" "$line" || { kill "$pid"; return 1; }
  for ((n = 1; n < 1000; n++)); do
    CD_FAULT_ALLOC=$n cd_fault audit --processes --config "$p" --confdir "" "$CASE_DIR/empty"
    [ -e "$FIRED" ] || break
    if [ "$RC" -eq 2 ]; then
      grep -q '^capdelegate: ' "$ERR" || { kill "$pid"; fail "allocation $n: exit 2 with no message"; return 1; }
    elif [ "$RC" -ne "$ref_rc" ] || ! grep -qxF -- "$line" "$OUT"; then
      kill "$pid"; fail "allocation $n: exit $RC (unfaulted $ref_rc), the process not shown as it is"; return 1
    fi
  done
  kill "$pid"
  [ "$n" -gt 1 ] && [ "$n" -lt 1000 ] || fail "$n allocations"
  echo "audit --processes: $((n - 1)) allocations" >&2
}

# A thread's cgroup file whose reading runs out of memory (getline: ENOMEM): an error, exit 2,
# never the process shown without its unit as if it had none.
t_fault_processes_cgroup_memory() {
  need_root; local p pid
  command -v setpriv >/dev/null || skip "setpriv missing"
  p=$(std_policy); mkdir -p "$CASE_DIR/empty"
  setpriv --inh-caps +net_raw sleep 120 &
  pid=$!; sleep 0.3
  CD_FAULT_GETLINE="/task/$pid/cgroup:12" cd_fault audit --processes --config "$p" --confdir "" "$CASE_DIR/empty"
  kill "$pid"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$ERR" "capdelegate: out of memory; processes listed in part"
}

# The drop-in directory cannot be listed (fdopendir fails: its memory ran out): the policy is
# never read without its drop-ins (here one that takes alice's grant away), check exits 2
# saying why, and the module grants nothing.
t_fault_dropin_dir_unlisted() {
  need_root; local p d="$CASE_DIR/capdelegate.d"
  p=$(printf 'alice cap_net_raw\n' | policy); mkdir -p "$d"
  printf 'alice none\n' >"$d/10-none.conf"; chmod 0644 "$d/10-none.conf"
  CD_FAULT_FDOPENDIR=12 cd_fault check --config "$p" --confdir "$d"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_text "$ERR" "$d: cannot read the directory: Cannot allocate memory: no capabilities granted"
  want_text "$OUT" ": the module grants nothing"
}

# Each allocation of check failing in turn, with a drop-in directory holding a file the module
# does not read (its note) and a dangling link (an error): the same answer, or exit 2 with a
# message of its own; never a note lost in silence, never a crash.
t_fault_alloc_dropin_notes() {
  need_root; local p d="$CASE_DIR/capdelegate.d" n
  p=$(std_policy); mkdir -p "$d"
  printf 'carol cap_kill\n' >"$d/10-x.conf"; chmod 0644 "$d/10-x.conf"
  : >"$d/README"; ln -s "$CASE_DIR/nowhere" "$d/20-gone.conf"
  touch -d '-1 hour' "$p" "$d/10-x.conf"
  n=$(sweep_alloc check --config "$p" --confdir "$d"); echo "check: $n" >&2
  want_text "$CASE_DIR/ref.err" "README: not read"
  want_text "$CASE_DIR/ref.err" "dangling symbolic link"
}

# Memory running out while a name is being printed cuts the report short with an error (exit
# 2): what was printed comes first, the error last, also when both go to one terminal or file
# (stdout is flushed before the message).
t_fault_print_cut_short() {
  need_root; local p n both="$CASE_DIR/both" seen=0
  p=$(std_policy)
  for ((n = 1; n < 200; n++)); do
    FIRED="$CASE_DIR/fired"; rm -f "$FIRED"; RC=0
    CD_FAULT_FIRED="$FIRED" CD_FAULT_ALLOC=$n \
      LD_PRELOAD="$(dirname "$BIN")/tests/cli/.libs/fault.so:$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" \
      NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
      "$BIN" check --tsv --config "$p" --confdir "" >"$both" 2>&1 || RC=$?
    [ -e "$FIRED" ] || break
    grep -q 'report cut short' "$both" || continue
    seen=$((seen + 1)); want_rc 2
    [ "$(tail -n 1 "$both")" = "capdelegate: error: out of memory while printing: report cut short" ] ||
      { OUT=$both; fail "allocation $n: the message is not last"; return 1; }
    grep -q ': ok, 4 rules, 0 warnings$' "$both" || { OUT=$both; fail "allocation $n: the verdict line lost"; return 1; }
  done
  [ "$seen" -gt 0 ] || fail "no allocation while printing failed"
}

# audit frees what it reports: errors and vanished entries (sorted, duplicates dropped), each
# a path of its own; under valgrind nothing is lost for good. Two errors (a PATH that is not
# there, a directory no one may enter) and a capability file.
t_valgrind_audit_problems() {
  need_root; command -v valgrind >/dev/null || skip "valgrind missing"
  local p t="$CASE_DIR/vt"
  p=$(std_policy); capfile "$t/bin/ping" cap_net_raw=ep
  VG_LEAKS=1 vg_run audit --threads 1 --config "$p" --confdir "" "$t" "$CASE_DIR/not-there" "$CASE_DIR/also-not-there"
  want_rc 2
  want_text "$OUT" "error${TAB:-	}$CASE_DIR/also-not-there"
  want_text "$OUT" "error${TAB:-	}$CASE_DIR/not-there"
}

# capdelegate(8), audit: "any other failure (... a directory or file below it that cannot be
# opened, read or examined) is an error, listed with its path, the operation and the errno":
# not vanished (only an entry gone when opened is), even with ENOENT, and the rest is read.
# A directory whose own status cannot be read (statx of its descriptor), a PATH whose
# filesystem cannot be examined (fstatfs): each an error, the other PATH and directories
# walked as usual, and no descriptor kept for a directory given up (never more held than
# unfaulted).
t_fault_walk_examine_dir() {
  need_root; local p t="$CASE_DIR/t" n ref
  p=$(std_policy)
  for n in 1 2 3; do capfile "$t/a/$n/x/tool" cap_net_raw=i; done; capfile "$t/b/tool" cap_net_raw=i
  CD_FAULT_MAXFD="$CASE_DIR/maxfd" cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
  want_rc 1; ref=$(cat "$CASE_DIR/maxfd")
  want_text "$OUT" "$(printf '# scanned\t9 directories\t4 regular files\t4 capability files\t')"
  CD_FAULT_MAXFD="$CASE_DIR/maxfd" CD_FAULT_STATX=/x:2 cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
  [ -e "$FIRED" ] || fail "no fault (statx)"; want_rc 2
  for n in 1 2 3; do
    want_line "$OUT" "error\t$t/a/$n/x\tcannot examine directory\tENOENT\tNo such file or directory"
  done
  want_line "$OUT" "# scanned\t6 directories\t1 regular file\t1 capability file\t0 mounts skipped\t0 vanished\t3 errors"
  want_line "$OUT" "file\t$t/b/tool\t2\tnone\tcap_net_raw\tno\t-\t-"; no_match "$OUT" "^vanished"
  [ "$(cat "$CASE_DIR/maxfd")" -le "$ref" ] || fail "descriptors up to $(cat "$CASE_DIR/maxfd"), $ref unfaulted"
  CD_FAULT_FSTATFS=/a:2 cd_fault audit --threads 1 --config "$p" --confdir "" "$t/a" "$t/b"
  [ -e "$FIRED" ] || fail "no fault (fstatfs)"; want_rc 2
  want_line "$OUT" "error\t$t/a\tcannot examine mount\tENOENT\tNo such file or directory"
  want_line "$OUT" "# scanned\t1 directory\t1 regular file\t1 capability file\t0 mounts skipped\t0 vanished\t1 error"
  want_line "$OUT" "file\t$t/b/tool\t2\tnone\tcap_net_raw\tno\t-\t-"; no_match "$OUT" "^vanished"
}

# Relative PATHs are opened from the working directory the audit started in, also when it
# cannot hold that directory open (open(".") fails): the same report.
t_fault_walk_cwd_unopened() {
  need_root; local p t="$CASE_DIR/t"
  p=$(std_policy); capfile "$t/sub/tool" cap_net_raw=i; cd "$t"
  cd_nss audit --threads 1 --config "$p" --confdir "" sub; want_rc 1; cp "$OUT" "$CASE_DIR/ref"
  want_line "$OUT" "file\tsub/tool\t2\tnone\tcap_net_raw\tno\t-\t-"
  CD_FAULT_OPEN=.:13 cd_fault audit --threads 1 --config "$p" --confdir "" sub
  [ -e "$FIRED" ] || fail "no fault"; want_rc 1
  cmp -s "$OUT" "$CASE_DIR/ref" || fail "another report: $(diff "$CASE_DIR/ref" "$OUT")"
}

# capdelegate(8), audit: fP, fI and fE are "unknown for a value the kernel will not show",
# never none. getxattr saying ERANGE (a value longer than any valid one) is such a value, as
# EINVAL is (revision 1 or malformed): in a directory and as a PATH. Any other failure to read
# it is an error naming the file.
t_fault_getxattr_errors() {
  need_root; local p t="$CASE_DIR/t"
  p=$(std_policy); capfile "$t/tool" cap_net_raw=i; capfile "$t/other" cap_syslog=i
  local unknown='0\tunknown\tunknown\tunknown\t-\tvalue not shown by the kernel: revision 1 (applies at exec) or malformed (execve fails)'
  CD_FAULT_GETXATTR=tool:34 cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
  [ -e "$FIRED" ] || fail "no fault (directory)"; want_rc 1
  want_line "$OUT" "file\t$t/tool\t$unknown"; want_text "$OUT" "finding	unreadable	$t/tool	none	"
  want_line "$OUT" "file\t$t/other\t2\tnone\tcap_syslog\tno\t-\t-"; no_text "$OUT" "gain	alice"
  CD_FAULT_GETXATTR=$t/tool:34 cd_fault audit --config "$p" --confdir "" "$t/tool"
  [ -e "$FIRED" ] || fail "no fault (PATH)"; want_rc 1
  want_line "$OUT" "file\t$t/tool\t$unknown"; want_text "$OUT" "finding	unreadable	$t/tool	none	"
  CD_FAULT_GETXATTR=tool:5 cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
  [ -e "$FIRED" ] || fail "no fault (EIO)"; want_rc 2
  want_line "$OUT" "error\t$t/tool\tcannot read security.capability\tEIO\tInput/output error"
}

# The walker keeps at most 8 descriptors past its first, and goes back up to a directory it
# closed through '..' of the one below, checked to be that directory. Here, as it comes back up
# (the first openat of '..', tests/cli/fault.c's hook), someone moves d5's two subdirectories
# (the one just read and the one still to read) out of the tree: '..' is no longer d5, which is
# opened again by its name, and the subdirectory still to read is vanished, never read where it
# went. Then the same with d5 itself replaced by a new directory: the rest of d5 cannot be
# read, an error naming it (exit 2), never the new directory read in its place.
t_audit_dir_moved_during_scan() {
  need_root; local p t="$CASE_DIR/t" d5 s x
  p=$(std_policy)
  for x in 1 2; do
    rm -rf "$t" "$CASE_DIR/away"; mkdir -p "$CASE_DIR/away"
    d5=$t/d1/d2/d3/d4/d5
    for s in a b; do capfile "$d5/$s/x1/x2/x3/x4/x5/x6/x7/tool" cap_net_raw=i; done
    local hook="cd $t/d1/d2/d3/d4 && mv d5/a d5/b $CASE_DIR/away/"
    [ "$x" = 1 ] || hook="$hook && mv d5 d5old && mkdir d5 && mkdir d5/a d5/b"
    CD_FAULT_OPENFDS="$CASE_DIR/fds.ref" cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
    CD_FAULT_OPENFDS="$CASE_DIR/fds" CD_FAULT_HOOK="..:$hook" cd_fault audit --threads 1 --config "$p" --confdir "" "$t"
    [ -e "$FIRED" ] || fail "the hook did not run"
    # the directory found moved is let go like the others: no descriptor left at exit
    [ "$(cat "$CASE_DIR/fds")" = "$(cat "$CASE_DIR/fds.ref")" ] \
      || fail "descriptors open at exit: $(cat "$CASE_DIR/fds"), $(cat "$CASE_DIR/fds.ref") without the move"
    [ "$(count_lines "$OUT" '^file')" -eq 1 ] || fail "want the file of the subdirectory read first only"
    no_text "$OUT" "$CASE_DIR/away"
    if [ "$x" = 1 ]; then
      want_rc 1
      [ "$(count_lines "$OUT" '^vanished')" -eq 1 ] || fail "want the subdirectory not read yet vanished"
      grep -qxE "vanished	$d5/[ab]" "$OUT" || fail "want $d5/a or b vanished"
      no_match "$OUT" "^error"
    else
      want_rc 2
      want_line "$OUT" "error\t$d5\tdirectory moved during the scan: the rest of it was not read\tESTALE\tStale file handle"
      [ "$(count_lines "$OUT" '^error')" -eq 1 ] || fail "want one error"
      no_match "$OUT" "^vanished"
    fi
  done
}

# A file whose status cannot be read through its open descriptor (fstat fails, EIO) is an
# error naming it, never judged from a guess: marks check, for a marked file and for its
# directory (exit 2, the other marks checked as usual), and check --staged, for the staged
# file ("nothing checked", exit 2), as is a staged file that cannot be read.
t_fault_fstat_marks_staged() {
  need_root; local t="$CASE_DIR/m" m p f
  capfile "$t/ok" cap_net_raw=i; capfile "$t/sub/f" cap_net_raw=i
  m=$(printf '%s cap_net_raw=i\n' "$t/ok" "$t/sub/f" | policy marks)
  CD_FAULT_FSTAT=/sub/f:5 cd_fault marks check --marks "$m"; [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$OUT" "mark\t$t/sub/f\terror\terror\tcap_net_raw=i\t-\tcannot stat: Input/output error"
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  CD_FAULT_FSTAT=/sub:5 cd_fault marks check --marks "$m"; [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$OUT" "mark\t$t/sub/f\terror\terror\tcap_net_raw=i\t-\tcannot stat its directory: Input/output error"
  want_line "$OUT" "mark\t$t/ok\tok\tok\tcap_net_raw=i\tcap_net_raw=i\tmatches the mark"
  p=$(std_policy); f=$(printf 'bob cap_syslog\n' | policy staged)
  CD_FAULT_FSTAT=/staged.conf:5 cd_fault check --config "$p" --confdir "" --staged "$f"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$ERR" "capdelegate: $f: cannot stat: Input/output error: nothing checked"
  # ... and one that cannot be read (EIO): never judged on what was read before the error
  CD_FAULT_READ=/staged.conf:5 cd_fault check --config "$p" --confdir "" --staged "$f"
  [ -e "$FIRED" ] || fail "no fault"; want_rc 2
  want_line "$ERR" "capdelegate: $f: read error: Input/output error: nothing checked"
}

# Each allocation of an audit failing in turn, with every kind of PATH at once: two
# directories (the second queued after the first), a capability file named itself, a fifo
# (nothing to walk), a file with a long name (the path grows), and declared marks: the same
# report, or exit 2 with a message of its own, never a record lost in silence or a crash.
t_fault_alloc_audit_roots() {
  need_root; local p t="$CASE_DIR/r" m n long
  p=$(std_policy); long=$(head -c 150 /dev/zero | tr '\0' l)
  capfile "$t/a/$long" cap_net_raw=i; capfile "$t/b/tool" cap_net_admin=i; capfile "$t/f" cap_syslog=i
  mkfifo "$t/fifo"
  m=$(printf '%s cap_net_raw=i\n' "$t/b/tool" "$t/f" | policy marks)
  cd_nss audit --threads 1 --config "$p" --confdir "" "$t/fifo" "$t/a"; want_rc 1
  want_line "$OUT" "# scanned\t1 directory\t1 regular file\t1 capability file\t0 mounts skipped\t0 vanished\t0 errors"
  n=$(sweep_alloc audit --threads 1 --config "$p" --confdir "" --marks "$m" "$t/a" "$t/b" "$t/f" "$t/fifo")
  echo "audit: $n" >&2
  want_text "$CASE_DIR/ref" "finding	mark-differs	$t/b/tool	"
}

# The path of a drop-in cannot be made (asprintf, libc's memory: outside sweep_alloc) as the
# policy is read: an error (exit 2), out of memory said, the module grants nothing; never the
# policy read without that drop-in.
t_fault_asprintf_dropin_path() {
  need_root; local p d="$CASE_DIR/capdelegate.d"
  p=$(printf 'alice cap_net_raw\n' | policy)
  mkdir -p "$d"; printf 'bob none\n' >"$d/10-bob.conf"; chmod 0644 "$d/10-bob.conf"
  CD_FAULT_ASPRINTF='%s/%s' cd_fault check --config "$p" --confdir "$d"
  [ -e "$FIRED" ] || fail "no fault at line $LINENO"
  want_rc 2; want_line "$ERR" "capdelegate: error: $p: out of memory: no capabilities granted"
  want_line "$OUT" "$p: system error: the module grants nothing"
  no_text "$OUT" "rule"
}
