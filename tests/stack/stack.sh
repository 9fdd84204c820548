#!/usr/bin/env bash
# stack.sh [--valgrind] [PROGRAM]: run test_stack (or PROGRAM: test_module) against the built
# pam_capdelegate.so through the real
# libpam, with pam_wrapper (service files from a temp dir) and nss_wrapper (fake users alice,
# bob, carol, dave, erin, frank, grace, henry, svc$acct; groups netops = carol, dave, erin, grace;
# contractors = frank; lab, henry's primary group, lists no member; staff = grace, and
# staff-alias, the same gid under a second name, lists no member), with nss_fault.so
# (tests/stack/nss_fault.c) for NSS outages and case folding.
# Needs root for real assertions.
set -euo pipefail
case "${1:-}" in --help) sed -n '2,4p' "$0"; exit 0 ;; esac
# ./lab test's make distcheck runs make check again in the tarball's copy: there it sets
# CD_SKIP_VALGRIND (the reason) and the valgrind passes, which make check has just run on the
# same sources, are skipped. What distcheck adds, a complete tarball that builds and passes its
# plain and sanitizer tests, it still proves.
if [ "${1:-}" = --valgrind ] && [ -n "${CD_SKIP_VALGRIND:-}" ]; then echo "1..0 # SKIP $CD_SKIP_VALGRIND"; exit 0; fi
# pam_wrapper copies the service files into /tmp/pam.X, X one of 62 letters chosen from the pid,
# and a process that picks a letter another one is setting up at the same moment shares its
# directory and rewrites its files: with the mutants, make -j2 and the model running stack tests
# side by side, a login read another run's half-copied service file (a login without a stack,
# PAM_PERM_DENIED, or another test's policy). As root, each run gets a /tmp of its own
# (tests/own-tmp.sh), where this script and the build stay reachable when they lie below /tmp.
if [ -z "${CD_STACK_OWN_TMP:-}" ]; then
  export CD_STACK_OWN_TMP=1
  here=$(dirname "$0")
  exec "$here/../own-tmp.sh" --keep "$here" --keep "${top_builddir:-.}" -- "$0" "$@"
fi
prog=${*: -1}; case "$prog" in test_*) ;; *) prog=test_stack ;; esac
builddir=${top_builddir:-$(pwd)}
module=$builddir/.libs/pam_capdelegate.so
[ -f "$module" ] || { echo "Bail out! $module not built"; exit 1; }
# Policies below a directory others can write are refused (/tmp too): as root work under /run.
work=$(mktemp -d "$([ "$(id -u)" -eq 0 ] && echo /run || echo "${TMPDIR:-/tmp}")/cd-stack-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
chmod 755 "$work"   # policy files inside must be reachable; they are root-owned 0644
mkdir "$work/services"
cat >"$work/passwd" <<PW
root:x:0:0:root:/root:/bin/bash
alice:x:1001:1001::/home/alice:/bin/sh
bob:x:1002:1002::/home/bob:/bin/sh
carol:x:1003:1003::/home/carol:/bin/sh
dave:x:1004:1004::/home/dave:/bin/sh
erin:x:1005:1005::/home/erin:/bin/sh
frank:x:1006:1006::/home/frank:/bin/sh
grace:x:1007:1007::/home/grace:/bin/sh
CORP\\winuser:x:1008:1008::/home/winuser:/bin/sh
sue@corp.example.com:x:1009:1009::/home/sue:/bin/sh
henry:x:1010:2005::/home/henry:/bin/sh
svc\$acct:x:1011:1011::/home/svc:/bin/sh
PW
cat >"$work/group" <<GR
root:x:0:
alice:x:1001:
bob:x:1002:
carol:x:1003:
dave:x:1004:
erin:x:1005:
netops:x:2000:carol,dave,erin,grace
frank:x:1006:
grace:x:1007:
contractors:x:2001:frank
linux admins:x:2003:CORP\\winuser,sue@corp.example.com
lab:x:2005:
staff:x:2010:grace
staff-alias:x:2010:
svc\$acct:x:1011:
GR
export PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR=$work/services PAM_WRAPPER_DEBUGLEVEL=2
export NSS_WRAPPER_PASSWD=$work/passwd NSS_WRAPPER_GROUP=$work/group
export CMOCKA_MESSAGE_OUTPUT=TAP
fault=$builddir/tests/stack/.libs/nss_fault.so
[ -f "$fault" ] || { echo "Bail out! $fault not built"; exit 1; }
preload=$fault:/usr/lib/x86_64-linux-gnu/libpam_wrapper.so:/usr/lib/x86_64-linux-gnu/libnss_wrapper.so
# No exec below: the EXIT trap that removes $work must still run.
run=()
if [ "${1:-}" = --valgrind ]; then
  # Deep binding confuses valgrind's malloc replacement (pam_wrapper(1)).
  export PAM_WRAPPER_DISABLE_DEEPBIND=1
  run=(valgrind -q --error-exitcode=66 --leak-check=full --errors-for-leak-kinds=definite
       --suppressions="$(dirname "$0")/valgrind.supp")
fi
rc=0
LD_PRELOAD=$preload "${run[@]}" "$builddir/tests/stack/$prog" "$work" "$module" || rc=$?
exit "$rc"
