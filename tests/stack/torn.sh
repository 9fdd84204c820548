#!/usr/bin/env bash
# torn.sh [--valgrind]: the torn-read test (test_torn.c): a writer rewrites the policy
# in place and by rename while 8 processes log in; no grant may come from part of a version.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,3p' "$0"; exit 0; }
exec "$(dirname "$0")/stack.sh" "$@" test_torn
