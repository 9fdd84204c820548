#!/usr/bin/env bash
# tests/fuzz/run.sh: build and run the libFuzzer harnesses (clang, ASan + UBSan).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: tests/fuzz/run.sh [SECONDS]      fuzz each harness for SECONDS (default 60)
       tests/fuzz/run.sh --test         a short fixed, deterministic budget each; TSV on stdout
       tests/fuzz/run.sh --build        build the harnesses only

Harnesses (tests/fuzz/fuzz_NAME.c), each with its seed corpus in tests/fuzz/corpus/NAME/:
  policy   cd_policy_load + cd_resolve for a fixed set of users and groups
  fcaps    the security.capability decoder (cli_fcaps_decode)
  escape   cd_quote, cli_text_escape, cli_json_string/hex, the UTF-8 scanner
  marks    cd_marks_parse (capdelegate-files.conf), re-read and round-tripped
  userdb   cli_userdb_parse (systemd's user records) against json-c
  usage    usage's reader: an audit log through cu_read_stream (libauparse) and cu_results

Fuzzing prints executions, exec/s and coverage (libFuzzer's cov: edges) per harness, keeps
what it learns in _build/fuzz/corpus/NAME/ (not committed) and copies any crash input into
tests/fuzz/corpus/NAME/ as a regression input. --test runs the committed corpus plus a fixed
number of new inputs with -seed=1 and prints "PASS|FAIL<tab>fuzz: NAME (N execs)".
Needs the configured host build
(./lab build) for config.h. Environment: FUZZ_HARNESSES="policy fcaps escape marks userdb usage" to choose.
By hand: _build/fuzz/fuzz_NAME SCRATCH_DIR tests/fuzz/corpus/NAME (libFuzzer adds what it
learns to the first directory; never name the committed corpus first).
EOF
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
O="$ROOT/_build/fuzz"
read -r -a HARNESSES <<<"${FUZZ_HARNESSES:-policy fcaps escape marks userdb usage}"
# --test: total runs per harness, the corpus included.
declare -A TEST_RUNS=([policy]=100000 [fcaps]=1000000 [escape]=150000 [marks]=100000 [userdb]=100000
  [usage]=30000)

mode=fuzz seconds=60
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --test) mode='test' ;;
  --build) mode='build' ;;
  '') ;;
  *[!0-9]*) usage >&2; exit 2 ;;
  *) seconds=$1 ;;
esac

build() {
  local config="${LAB_BUILD:-$ROOT/_build/host}"   # config.h of the build ./lab made
  [ -f "$config/config.h" ] || { echo "run.sh: $config/config.h missing: run ./lab build" >&2; return 1; }
  # The core's files are listed once, in pam_capdelegate/core/core.am (CORE_SOURCES).
  local core
  core=$(sed -n '/^CORE_SOURCES *=/,/[^\\]$/p' "$ROOT/pam_capdelegate/core/core.am" | sed 's/^CORE_SOURCES *=//; s/\\$//' | tr -s ' \t\n' ' ')
  make -C "$ROOT" -s -f tests/fuzz/fuzz.mk O="$O" CONFIG_H_DIR="$config" CORE_SOURCES="$core" >&2
}

# "key value" pairs from a libFuzzer log: execs, exec/s, cov (edges), ft, corpus, crash.
figures() {
  local log=$1
  awk '
    /^stat::number_of_executed_units:/ { execs = $2 }
    /^stat::average_exec_per_sec:/ { rate = $2 }
    / cov: / { for (i = 1; i < NF; i++) { if ($i == "cov:") cov = $(i + 1); if ($i == "ft:") ft = $(i + 1); if ($i == "corp:") corp = $(i + 1) } }
    /Test unit written to / { crash = $NF }
    END { printf "execs %s\nrate %s\ncov %s\nft %s\ncorp %s\ncrash %s\n", execs + 0, rate + 0, cov + 0, ft + 0, corp ? corp : "-", crash ? crash : "-" }
  ' "$log"
}

# run NAME LOG ARGS...: one harness; its log in LOG. Never fails: the log says what happened.
run_harness() {
  local name=$1 log=$2; shift 2
  mkdir -p "$O/artifacts/$name"
  local dict="$ROOT/tests/fuzz/$name.dict"
  [ -f "$dict" ] && set -- -dict="$dict" "$@"
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$O/fuzz_$name" -artifact_prefix="$O/artifacts/$name/" \
    -print_final_stats=1 -timeout=10 "$@" >"$log" 2>&1 || true
}

for h in "${HARNESSES[@]}"; do
  [ -f "$ROOT/tests/fuzz/fuzz_$h.c" ] || { echo "run.sh: no harness $h" >&2; exit 2; }
done
if [ "$mode" = build ]; then build; exit 0; fi

# Scratch corpora (what --test learns is thrown away).
tmp=$(mktemp -d)
cleanup() { rm -rf --one-file-system "$tmp"; }
trap cleanup EXIT
mkdir -p "$O/logs"

if ! build; then
  [ "$mode" = test ] && for h in "${HARNESSES[@]}"; do printf 'FAIL\tfuzz: %s (build failed)\n' "$h"; done
  exit 1
fi

status=0
for h in "${HARNESSES[@]}"; do
  log="$O/logs/$h.log" seeds="$ROOT/tests/fuzz/corpus/$h"
  if [ "$mode" = test ]; then
    # New inputs go to a scratch directory, never into the committed corpus.
    mkdir -p "$tmp/new-$h"
    t0=$(date +%s%N)
    # -max_total_time only guards against a machine far slower than ours.
    run_harness "$h" "$log" -seed=1 -runs="${TEST_RUNS[$h]}" -max_total_time=120 "$tmp/new-$h" "$seeds"
    declare -A f=(); while read -r k v; do f[$k]=$v; done < <(figures "$log")
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    printf 'fuzz: %s: %s execs, cov %s, %d.%d s\n' "$h" "${f[execs]}" "${f[cov]}" $((ms / 1000)) $((ms % 1000 / 100)) >&2
    if [ "${f[crash]}" = - ] && grep -q '^Done [0-9]* runs' "$log"; then
      printf 'PASS\tfuzz: %s (%s execs)\n' "$h" "${f[execs]}"
    else
      printf 'FAIL\tfuzz: %s (%s execs; crash input %s; log %s)\n' "$h" "${f[execs]}" "${f[crash]}" "$log"
    fi
    continue
  fi
  mkdir -p "$O/corpus/$h"
  echo "fuzz: $h for $seconds s ..." >&2
  run_harness "$h" "$log" -max_total_time="$seconds" "$O/corpus/$h" "$seeds"
  declare -A f=(); while read -r k v; do f[$k]=$v; done < <(figures "$log")
  printf '%-7s %10s execs %8s exec/s  cov: %5s edges  ft: %6s  corpus: %s' \
    "$h" "${f[execs]}" "${f[rate]}" "${f[cov]}" "${f[ft]}" "${f[corp]}"
  if [ "${f[crash]}" != - ]; then
    # Keep the input as a regression test, unless the corpus holds it already.
    keep=
    for k in "$seeds"/*; do cmp -s "$k" "${f[crash]}" && keep=$k && break; done
    if [ -z "$keep" ]; then
      keep="$seeds/regression-$(sha1sum "${f[crash]}" | cut -c1-16)"
      cp "${f[crash]}" "$keep"
    fi
    printf '  CRASH %s (in the corpus as %s; log %s)\n' "${f[crash]}" "${keep#"$ROOT"/}" "$log"
    status=1
  elif ! grep -q '^Done [0-9]* runs' "$log"; then
    printf '  FAILED (see %s)\n' "$log"
    status=1
  else
    printf '\n'
  fi
done
exit $status
