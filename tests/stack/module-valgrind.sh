#!/usr/bin/env bash
# module-valgrind.sh: test_module under valgrind (memcheck; definite leaks are errors).
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2p' "$0"; exit 0; }
exec "$(dirname "$0")/stack.sh" --valgrind test_module
