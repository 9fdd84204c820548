#!/usr/bin/env bash
# trs-to-tsv.sh BUILDDIR: turn automake's per-test logs (TAP driver) into ./lab's result lines,
# one per test case: PASS|FAIL|SKIP <tab> name. A test program that did not run to completion
# shows up as ERROR in its log and counts as a failure.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,4p' "$0"; exit 0; }
builddir=${1:?usage: trs-to-tsv.sh BUILDDIR}
find "$builddir" -path "$builddir/capdelegate-*" -prune -o -name '*.trs' -print | sort | while read -r trs; do
  log=${trs%.trs}.log
  [ -f "$log" ] || { printf 'FAIL\t%s: no log\n' "$trs"; continue; }
  sed -nE 's/^(PASS|XFAIL): (.*)$/PASS\t\2/p; s/^(FAIL|XPASS|ERROR): (.*)$/FAIL\t\2/p; s/^SKIP: (.*)$/SKIP\t\1/p' "$log"
done
