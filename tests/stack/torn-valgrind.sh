#!/usr/bin/env bash
# torn-valgrind.sh: test_torn under valgrind (memcheck), with fewer transactions than the plain
# run (CD_TORN_LOGINS, 160: 8 processes under valgrind take about 30 s for them).
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,3p' "$0"; exit 0; }
CD_TORN_LOGINS=${CD_TORN_LOGINS:-160} exec "$(dirname "$0")/stack.sh" --valgrind test_torn
