# lib.sh: helpers for tests/cli/run.sh (sourced). A test case is a shell function run in a
# subshell with `set -e`; it fails by returning non-zero (or by a failed `want`), skips by
# calling `skip REASON`.

# Run the CLI; stdout in $OUT, stderr in $ERR, exit status in $RC. Never fails by itself.
cd_run() {
  RC=0
  "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?
}

# The CLI under nss_wrapper: the users and groups of $NSSDIR instead of the system's.
# nss_fault.so (tests/stack) comes first: it puts nss_wrapper's answers in glibc's terms (ENOENT
# for "no such entry" is 0 in glibc), which the CLI, failing closed on lookup errors, relies on.
cd_nss() {
  RC=0
  LD_PRELOAD="$(dirname "$BIN")/tests/stack/.libs/nss_fault.so:$NSS_WRAPPER_LIB" NSS_WRAPPER_PASSWD="$NSSDIR/passwd" NSS_WRAPPER_GROUP="$NSSDIR/group" \
    "$BIN" "$@" >"$OUT" 2>"$ERR" || RC=$?
}

fail() { echo "  failed: $*" >&2; echo "  --- stdout:" >&2; cat "$OUT" >&2 2>/dev/null || true
         echo "  --- stderr:" >&2; cat "$ERR" >&2 2>/dev/null || true; return 1; }
skip() { echo "$*" >"$CASE_DIR/skip"; exit 77; }

want_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, want $1"; }
# want_line FILE TEXT: some line of FILE is exactly TEXT (tabs written as \t).
want_line() { local t; t=$(printf '%b' "$2"); grep -qxF -- "$t" "$1" || fail "no line '$2' in $1"; }
# one_line FILE TEXT: FILE holds that one line and nothing else.
one_line()  { [ "$(cat "$1")" = "$2" ] || fail "want only the line '$2' in $1"; }
no_line()   { local t; t=$(printf '%b' "$2"); ! grep -qxF -- "$t" "$1" || fail "unexpected line '$2' in $1"; }
want_text() { grep -qF -- "$2" "$1" || fail "no '$2' in $1"; }
no_text()   { ! grep -qF -- "$2" "$1" || fail "unexpected '$2' in $1"; }
no_match()  { ! grep -qE -- "$2" "$1" || fail "unexpected match of /$2/ in $1"; }
count_lines() { grep -c -- "$2" "$1" || true; }

need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (setcap, root-owned policy files)"; }

# A root-owned 0644 policy file from stdin; prints its path.
policy() {
  local p="$CASE_DIR/${1:-policy}.conf"
  cat >"$p"
  chmod 0644 "$p"
  echo "$p"
}

# linux_admins: $NSSDIR's passwd and group as winbind names them: CORP\winuser in the group
# "linux admins"; prints the path of a policy granting @linux\040admins cap_net_raw.
linux_admins() {
  mkdir -p "$NSSDIR"
  printf 'root:x:0:0::/root:/bin/sh\nCORP\\winuser:x:1008:1008::/:/bin/sh\n' >"$NSSDIR/passwd"
  printf 'root:x:0:\nlinux admins:x:2003:CORP\\winuser\n' >"$NSSDIR/group"
  printf '@linux\\040admins cap_net_raw\n' | policy
}

# The fixture tree: one file per kind, all created fresh for the case. Prints its path.
capfile() { # capfile PATH SETCAP-TEXT
  mkdir -p "$(dirname "$1")"
  : >"$1"
  chmod 0755 "$1"
  setcap "$2" "$1"
}
# Revision 3 with a rootid: setcap cannot write one, raw bytes can (the kernel keeps v3 when the
# rootid is not the caller's namespace root).
rev3file() { # rev3file PATH MAGIC PERM_LO INH_LO PERM_HI INH_HI ROOTID (8 hex digits each, LE)
  mkdir -p "$(dirname "$1")"
  : >"$1"
  setfattr -n security.capability -v "0x$2$3$4$5$6$7" "$1"
}
