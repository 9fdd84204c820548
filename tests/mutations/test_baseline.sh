#!/usr/bin/env bash
# test_baseline.sh: run.sh's baseline on the unmutated tree (TAP). A case that already fails is
# left out and named; a check that cannot run at all (a program that passes no case and fails, a
# CLI case whose run.sh fails) stops the run with its reason, never a quiet "survived" for every
# mutant it should judge; a case failing only on the coverage build is judged again on the plain
# build. Runs run.sh's own functions on stand-in checks; needs nothing else.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,6p' "$0"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/mutations/run.sh
. "$here/run.sh"
set +e
t=$(mktemp -d); trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
# the stand-ins need no PID namespace (that needs root)
MUT=$t/mut BLD=$t SRC=$t JOBS=2 ISOLATE=(env)
mkdir -p "$MUT" "$t/tests/cli"
n=0 failed=0
ok() { n=$((n + 1)); if "${@:2}"; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=1; fi; }
prog() { printf '#!/bin/sh\n%s\n' "$2" >"$t/$1"; chmod +x "$t/$1"; }
prog passes 'echo "ok 1 - a"; echo "1..1"'
prog one_fails 'echo "ok 1 - a"; echo "not ok 2 - b"; echo "1..2"; exit 1'
prog crashes_late 'echo "ok 1 - a"; kill -SEGV $$'
prog all_fail 'echo "not ok 1 - a"; echo "not ok 2 - b"; echo "1..2"; exit 2'
prog tests/cli/run.sh 'echo "tests/cli: $LAB_BUILD/capdelegate not built (./lab build)" >&2; exit 2'

# run CHECK...: baseline on them in a subshell (die exits); its status, stderr in $t/err, fd 3 in $t/tsv
run() { (baseline "" "$@") 3>"$t/tsv" 2>"$t/err" >/dev/null; echo $?; }
has() { grep -qF -- "$2" "$t/$1"; }

ok "checks that run, one case failing, one crashing after a pass: the run goes on" \
  [ "$(run "tap	passes	$t/passes" "tap	one_fails	$t/one_fails" "tap	crashes_late	$t/crashes_late")" = 0 ]
ok "the failing case is left out and named" has err "already failing, left out: one_fails: b"
ok "nothing said on fd 3" [ ! -s "$t/tsv" ]

: >"$MUT/baseline.tsv"
ok "a program that is not there stops the run (exit 2)" [ "$(run "tap	passes	$t/passes" "tap	stack	$t/gone/stack.sh")" = 2 ]
ok "saying which check, its exit status and its own words" \
  has err "HARNESS FAILURE: check stack could not run on the unmutated tree (exit status 127: "
ok "(what it printed on stderr)" has err "$t/gone/stack.sh"
ok "how to run it by hand" has err "; by hand: cd $t && top_srcdir=$t top_builddir=$t $t/gone/stack.sh"
ok "and what to do" has err "so none runs. Run each by hand as shown"
ok "as a FAIL line for ./lab's count" has tsv "FAIL	mutation harness: check stack could not run"

: >"$MUT/baseline.tsv"
ok "a program all of whose cases fail stops the run" [ "$(run "tap	all_fail	$t/all_fail")" = 2 ]
ok "(exit status 2)" has err "check all_fail could not run on the unmutated tree (exit status 2)"

: >"$MUT/baseline.tsv"
ok "a CLI case whose run.sh could not run stops the run" [ "$(run "cli	audit_x	audit_x")" = 2 ]
ok "with run.sh's reason" has err "check audit_x could not run on the unmutated tree (exit status 2: tests/cli: $t/capdelegate not built (./lab build)); by hand: LAB_BUILD=$t $t/tests/cli/run.sh audit_x"

# A case that fails on the coverage build alone (as the allocation-fault cases do: gcov allocates
# at exit) is judged again on the plain build and held against the mutants; one that fails on
# both stays left out.
prog cov_only 'if [ -n "${GCOV_PREFIX:-}" ]; then echo "not ok 1 - a"; else echo "ok 1 - a"; fi; echo "ok 2 - b"; echo "1..2"'
: >"$MUT/baseline.tsv"; BASE_FAIL=(); mkdir -p "$t/cov/build"
CHECKS=("tap	passes	$t/passes" "tap	cov_only	$t/cov_only" "tap	one_fails	$t/one_fails")
(baseline "$t/cov" "${CHECKS[@]}"; rebaseline_failing; declare -p BASE_FAIL BASE_OK >"$t/state") 3>"$t/tsv" 2>"$t/err" >/dev/null
ok "a case failing on the coverage build alone: judged again on the plain build" \
  has err "baseline: 2 checks fail on the coverage build: again on the plain build"
ok "and held against mutants (not left out)" eval '! grep -q "cov_only: a" "$t/state"'
ok "with the plain build's count of passing cases" has state '[cov_only]="2"'
ok "a case failing on both builds stays left out" has state '["one_fails: b"]="1"'
ok "the coverage run's failing line is gone from the baseline file" eval '! grep -q "^fail	cov_only: a" "$MUT/baseline.tsv"'

echo "1..$n"
exit "$failed"
