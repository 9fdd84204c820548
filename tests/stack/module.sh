#!/usr/bin/env bash
# module.sh [--valgrind]: the module's own stack tests (test_module.c: capset failures, audit
# records, syslog priorities, PAM_USER changes) in stack.sh's fake users and groups.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,3p' "$0"; exit 0; }
exec "$(dirname "$0")/stack.sh" "$@" test_module
