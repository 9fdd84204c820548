#!/usr/bin/env bash
# tests/mutations/run.sh: prove the host and CLI suites can fail. Each tests/mutations/*.mut is
# one plausible bug; it is applied to a scratch copy of the tree, built, and the suites run until
# the first test that fails (the mutant is then "killed"). A mutant no test notices SURVIVED.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: tests/mutations/run.sh [--tsv] [--reuse DIR] [--list] [--save-hints] [MUTANT...]
       tests/mutations/run.sh --generated [--seed S] [--sample N] [--tsv] [ID...]

Apply each tests/mutations/*.mut (or the named ones) to a scratch copy of the tree in
$LAB_MUTATE (default _build/mutate: src/ and build/, reused between runs so that make only
rebuilds what a mutant changes), build it, and run the unit, stack and CLI tests, stopping at the
first one that fails. MUTATE_JOBS (default: the number of CPUs) mutants at a time, each job in a
scratch tree of its own (the second in w2/, ...). Tests that already fail on the unmutated tree
are left out (and named); a check that cannot run there at all (no case passes and it fails)
stops the run with its reason, before its mutants would survive unjudged.
Prints a table (mutant, the test that killed it or SURVIVED) and a last line
"mutation: K killed, S survived of N".
  --tsv    also print one line per mutant on stdout, PASS (killed) or FAIL (survived, or the
           mutant no longer applies or builds) <TAB> name; the table then goes to stderr
  --reuse DIR  keep each hand-made mutant's kill in DIR under a hash of what the kill depends
           on (the mutant, the sources and test files its check reads, this runner, the
           machine's packages and kernel); a mutant whose hash is unchanged keeps its kill
           without being built or run. A survivor is never kept. ./lab test passes its cache;
           ./lab mutate does not, and runs every mutant.
  --list   print the mutant names and exit
  --generated  mutants made by tests/mutations/generate.py from the C sources instead (see its
           --help), N of them (default 150) chosen by seed S (default 1). Each runs only the
           checks that execute its line: a coverage build ($LAB_MUTATE/cov, gcov) runs every
           check once with its own .gcda files; the map is cached by a hash of the sources and
           tests. A mutant no check executes is NOT COVERED (counts as survived); one that does
           not build is STILLBORN, and one whose file compiles to the same machine code as
           the original's (gcc -O2, as the product is built) is SAME CODE: both are left out
           of the score. The
           last line is then "mutation: K killed, S survived, B stillborn, E same code of N
           (score K/(K+S) = X%)".
           With IDs (as the table prints them): those mutants only.
Each mutant tries first the check that killed it last time ($MUT/killers, else the hints in
tests/mutations/killers.tsv); --save-hints writes those hints from $MUT/killers.
Needs root for the stack and most CLI tests (as another user they skip, and mutants survive).
USAGE
}

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
MUT="${LAB_MUTATE:-$ROOT/_build/mutate}"
# The scratch tree of this job: job 1's is $MUT/src and $MUT/build, job N's under $MUT/wN/.
W="$MUT" SRC="$MUT/src" BLD="$MUT/build"
JOBS="${MUTATE_JOBS:-$(nproc)}"
# Built for the tests below; the sanitizer and valgrind variants are left out for speed: a bug
# the plain test misses, they miss too.
PROGS=(tests/unit/test_policy tests/unit/test_load tests/unit/test_manpage tests/unit/test_dlopen
  tests/unit/test_marks)
STACK=(tests/stack/stack.sh tests/stack/module.sh)
# A mutant may loop forever: a check that runs out of time fails (kills it). The coverage run
# multiplies these (a build with --coverage at -O0 is slower, and a check cut short by a
# signal writes no coverage).
TAP_TIMEOUT=15 CLI_TIMEOUT=120
# A check whose baseline is not known yet gets these (see lazy_baseline).
UNKNOWN_TAP_TIMEOUT=90 UNKNOWN_CLI_TIMEOUT=600
# A mutant may do anything its process may: a generated mutant of cli_edit.c called kill(-1),
# which as root ends every process of the machine. Each check runs in a PID namespace of its
# own with its own /proc (and so a mount namespace): what a mutant signals, or sees in /proc,
# is the check's own processes.
# unshare --fork blocks SIGTERM while it waits for its child, so each timeout around it also
# sends SIGKILL 5 s later (-k 5): unshare then dies, and --kill-child ends the namespace.
ISOLATE=(unshare --pid --fork --mount-proc --kill-child)
GENERATED=0 COVMAP= REUSE=
# Each mutant compiles its file twice (mutated, then put back for the next): through ccache
# (./lab deps installs it; its cache in the lab's), the second is a hit, as are mutants met before.
# Paths below $MUT are hashed as seen from the build directory (CCACHE_BASEDIR), and the build
# directory itself not (CCACHE_NOHASHDIR: only the debug information names it), so that job 2's
# tree ($MUT/w2), the same files at the same depth, is built from job 1's objects.
if [ -d /usr/lib/ccache ]; then
  export PATH=/usr/lib/ccache:$PATH CCACHE_DIR=${CCACHE_DIR:-${LAB_CACHE:-$ROOT/.cache}/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
  export CCACHE_BASEDIR=$MUT CCACHE_NOHASHDIR=1
fi
T0=$(date +%s)

log() { printf '[mutate %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf 'mutate: %s\n' "$*" >&2; exit 2; }

# The scratch tree: the checkout's tracked and not-ignored files, copied only when they differ
# so that make sees no change where there is none. One sha256sum over each side, not a cmp per
# file: 400 forks took 36 s of CPU (166 s at nice 10 beside the guests) for nothing to copy.
sync_tree() {
  mkdir -p "$SRC" "$BLD"
  local f
  git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || die "$ROOT is not a git checkout: no file list"
  (cd "$ROOT" && git ls-files -z -co --exclude-standard) | { grep -zv '^crash-' || true; } >"$W/files"
  # a file missing on one side prints no line there (sha256sum's complaint is dropped), so it differs
  (cd "$ROOT" && xargs -0 -r sha256sum -- <"$W/files" 2>/dev/null || true) | LC_ALL=C sort >"$W/sums.checkout"
  (cd "$SRC" && xargs -0 -r sha256sum -- <"$W/files" 2>/dev/null || true) | LC_ALL=C sort >"$W/sums.scratch"
  LC_ALL=C comm -23 "$W/sums.checkout" "$W/sums.scratch" | cut -c67- | while IFS= read -r f; do
    [ -f "$ROOT/$f" ] || continue
    # not cp -p: a fresh mtime makes make rebuild what a stopped run left mutated
    mkdir -p "$SRC/$(dirname "$f")"; cp "$ROOT/$f" "$SRC/$f"
  done
  [ -x "$SRC/configure" ] || (cd "$SRC" && autoreconf -fi >"$W/autoreconf.log" 2>&1) \
    || die "autoreconf failed (see $W/autoreconf.log)"
  [ -f "$BLD/Makefile" ] || (cd "$BLD" && "$SRC/configure" >"$W/configure.log" 2>&1) \
    || die "configure failed (see $W/configure.log)"
}

targets() {
  local t=("${PROGS[@]}" tests/stack/test_stack tests/stack/nss_fault.la tests/cli/fault.la)
  grep -q 'tests/stack/test_module' "$SRC/tests/tests.am" && t+=(tests/stack/test_module)
  grep -q 'tests/nss/nss_login' "$SRC/tests/tests.am" &&
    t+=(tests/nss/nss_login tests/nss/nss_cdtest.la tests/nss/nss_cdother.la)
  printf '%s\n' "${t[@]}"
}

# "all" first, then the test programs: one make with both goals builds libcdcore twice at once.
build() {
  mapfile -t tg < <(targets)
  make -C "$BLD" -s -j2 all >"$W/make.log" 2>&1 && make -C "$BLD" -s -j2 "${tg[@]}" >>"$W/make.log" 2>&1
}

# run_tap NAME CMD...: the TAP names of failed cases, or "NAME: exit N" for a crash. Prints
# "ok-count<TAB>rc" first so that the baseline can be compared. The check's stderr goes to
# $CHECK_ERR (default: nowhere).
run_tap() {
  local name=$1; shift
  local out rc=0
  # a mutant may hang (a FIFO opened blocking): the plain programs take a few seconds
  out=$(cd "$BLD" && CMOCKA_MESSAGE_OUTPUT=TAP top_srcdir="$SRC" top_builddir="$BLD" \
        timeout -k 5 "$TAP_TIMEOUT" "${ISOLATE[@]}" "$@" 2>"${CHECK_ERR:-/dev/null}") || rc=$?
  printf '%s\t%s\n' "$(grep -c '^ok' <<<"$out" || true)" "$rc"
  sed -nE "s/^not ok [0-9]+ - (.*)$/$name: \\1/p" <<<"$out"
}

# One list of checks: "kind<TAB>name<TAB>command". Every host program, then each CLI case.
CHECKS=()
list_checks() {
  CHECKS=()
  local p c
  for p in "${PROGS[@]}"; do CHECKS+=("tap	$(basename "$p")	$BLD/$p"); done
  for p in "${STACK[@]}"; do [ -x "$SRC/$p" ] && CHECKS+=("tap	$(basename "$p" .sh)	$SRC/$p"); done
  # the module and explain against the real glibc NSS (and nscd, where ./lab unpacked it)
  [ ! -x "$SRC/tests/nss/run.sh" ] || CHECKS+=("tap	nss	$SRC/tests/nss/run.sh")
  while read -r c; do CHECKS+=("cli	$c	$c"); done < <("$SRC/tests/cli/run.sh" --list)
}

# check_one KIND NAME CMD: print the first failure not in the baseline, nothing when all pass.
declare -A BASE_OK BASE_RC BASE_FAIL BASE_TIME
check_one() {
  local kind=$1 name=$2 cmd=$3 res head line
  # a machine busy with other work: three times what the check took on the unmutated tree
  local t3=$((3 * ${BASE_TIME[$name]:-0})) TAP_TIMEOUT=$TAP_TIMEOUT CLI_TIMEOUT=$CLI_TIMEOUT
  [ "$t3" -le "$TAP_TIMEOUT" ] || TAP_TIMEOUT=$t3
  [ "$t3" -le "$CLI_TIMEOUT" ] || CLI_TIMEOUT=$t3
  # no baseline yet (see lazy_baseline): the longest any check took on a busy machine
  [ -n "${BASE_TIME[$name]:-}" ] || TAP_TIMEOUT=$UNKNOWN_TAP_TIMEOUT CLI_TIMEOUT=$UNKNOWN_CLI_TIMEOUT
  if [ "$kind" = cli ]; then
    [ -z "${BASE_FAIL[cli: $cmd]:-}" ] || return 0
    res=$(LAB_BUILD="$BLD" timeout -k 5 "$CLI_TIMEOUT" "${ISOLATE[@]}" "$SRC/tests/cli/run.sh" "$cmd" 2>/dev/null || echo "FAIL	cli: $cmd")
    if grep -q '^FAIL' <<<"$res" && [ -z "${BASE_FAIL[cli: $cmd]:-}" ]; then echo "cli: $cmd"; fi
    return 0
  fi
  res=$(run_tap "$name" "$cmd")
  head=$(head -1 <<<"$res")
  while read -r line; do
    [ -n "$line" ] && [ -z "${BASE_FAIL[$line]:-}" ] && { echo "$line"; return 0; }
  done < <(tail -n +2 <<<"$res")
  if [ "${head%%	*}" -lt "${BASE_OK[$name]:-0}" ] || { [ "${head##*	}" -ne 0 ] && [ "${BASE_RC[$name]:-0}" -eq 0 ]; }; then
    echo "$name: exit ${head##*	} after ${head%%	*} passing cases"
  fi
}

# baseline [COV] [CHECK...]: each check (default: every check) once on the unmutated tree, JOBS
# at a time, added to $MUT/baseline.tsv; then baseline_load. With COV, on the coverage build
# COV/build instead, each check writing its .gcda files under COV/data/NAME (see coverage_map).
# A check that cannot run at all (a program that passes no case and fails, a CLI case whose
# run.sh fails: "could not run") is a "broken" line: its exit status, how to run it by hand,
# the end of its stderr.
baseline() {
  local cov=${1:-} j i pids=() kind name cmd res rc head how t list=("${CHECKS[@]}")
  [ $# -le 1 ] || list=("${@:2}")
  for ((j = 0; j < JOBS; j++)); do
    # the long timeout: the unmutated tree does not hang, and a busy machine is no broken check
    # (the coverage build, slower, ten times the short one)
    ( CHECK_ERR=$MUT/stderr.$j
      if [ -n "$cov" ]; then BLD=$cov/build TAP_TIMEOUT=$((TAP_TIMEOUT * 10)); else TAP_TIMEOUT=$UNKNOWN_TAP_TIMEOUT; fi
      for ((i = j; i < ${#list[@]}; i += JOBS)); do
        IFS=$'\t' read -r kind name cmd <<<"${list[$i]}"
        cmd=${cmd/#"$MUT/build/"/"$BLD/"}
        [ -z "$cov" ] || export GCOV_PREFIX="$cov/data/$name"
        t=$SECONDS rc=0
        if [ "$kind" = cli ]; then
          res=$(LAB_BUILD="$BLD" "${ISOLATE[@]}" "$SRC/tests/cli/run.sh" "$cmd" 2>"$CHECK_ERR") || rc=$?
          if [ "$rc" -ne 0 ] || grep -q '^FAIL' <<<"$res"; then printf 'fail\tcli: %s\n' "$cmd"; fi
          how="LAB_BUILD=$BLD $SRC/tests/cli/run.sh $cmd"
        else
          res=$(run_tap "$name" "$cmd"); head=$(head -1 <<<"$res"); rc=${head##*	}
          printf 'tap\t%s\t%s\n' "$name" "$head"
          tail -n +2 <<<"$res" | sed '/^$/d; s/^/fail\t/'
          [ "${head%%	*}" -eq 0 ] || rc=0
          how="cd $BLD && top_srcdir=$SRC top_builddir=$BLD $cmd"
        fi
        [ "$rc" -eq 0 ] || printf 'broken\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$how" \
                             "$(tail -n 4 "$CHECK_ERR" | tr '\t\n' '  ' | sed 's/ *$//')"
        printf 'time\t%s\t%s\n' "$name" "$((SECONDS - t))"
      done
      rm -f "$CHECK_ERR" ) >"$MUT/baseline.$j" &
    pids+=($!)
  done
  for j in "${pids[@]}"; do wait "$j"; done
  cat "$MUT"/baseline.[0-9]* >>"$MUT/baseline.tsv"
  rm -f "$MUT"/baseline.[0-9]*
  baseline_load "$MUT/baseline.tsv"
}

# baseline_load FILE: fills BASE_OK and BASE_RC (a program's passing cases and exit status),
# BASE_FAIL (failures not held against a mutant) and BASE_TIME (seconds; a check with a time
# has a baseline). A check that could not run on the unmutated tree stops the run: no mutant
# it should judge could fail it, and each would survive unjudged after running every other
# check (the stack programs below a /tmp that hid the checkout made every module mutant
# "survive" so). The reason is said on stderr and, with --tsv, as a FAIL line.
baseline_load() {
  local kind rest name i j how broken=()
  while IFS=$'\t' read -r kind rest; do
    case "$kind" in
      time) IFS=$'\t' read -r name i <<<"$rest"; BASE_TIME[$name]=$i ;;
      tap) IFS=$'\t' read -r name i j <<<"$rest"; BASE_OK[$name]=$i BASE_RC[$name]=$j ;;
      fail) read -r rest <<<"$rest"; [ -n "${BASE_FAIL[$rest]:-}" ] ||
              log "baseline: already failing, left out: $rest"; BASE_FAIL[$rest]=1 ;;
      broken) IFS=$'\t' read -r name i how j <<<"$rest"
              broken+=("check $name could not run on the unmutated tree (exit status $i${j:+: $j}); by hand: $how") ;;
    esac
  done <"$1"
  [ "${#broken[@]}" -gt 0 ] || return 0
  for j in "${broken[@]}"; do
    log "HARNESS FAILURE: $j"
    { printf 'FAIL\tmutation harness: %s\n' "$j" >&3; } 2>/dev/null || true
  done
  die "${#broken[@]} check(s) could not run on the unmutated tree (above): the mutants they should judge would survive unjudged, so none runs. Run each by hand as shown, fix what stops it, run again"
}

# try_check FILE ONLY CHECK: check_one on this job's tree, unless the check cannot meet the
# mutated FILE (the unit and stack programs do not contain the CLI's own files) or is not in
# ONLY (a generated mutant's covering checks, comma-separated; empty: every check).
try_check() {
  local file=$1 only=$2 kind cname cmd
  IFS=$'\t' read -r kind cname cmd <<<"$3"
  # the unit and stack programs run no CLI code; the nss suite does (check, explain, audit)
  case "$kind:$cname:$file" in tap:nss:*) ;; tap:*:pam_capdelegate/cli/*) return 0 ;; esac
  [ -z "$only" ] || [[ ",$only," == *",$cname,"* ]] || return 0
  # CHECKS name job 1's tree
  cmd=${cmd/#"$MUT/build/"/"$BLD/"}; cmd=${cmd/#"$MUT/src/"/"$SRC/"}
  check_one "$kind" "$cname" "$cmd"
}

# build_for CHECK: build only what CHECK runs: a unit program alone; a stack program with the
# module it loads and the NSS fault library (not the CLI, nor the other programs: half the CPU
# of a whole build); for a CLI case the product and the CLI's preloaded fault libraries, not the
# unit and stack programs; else all.
build_for() {
  local kind name
  IFS=$'\t' read -r kind name _ <<<"$1"
  case "$kind:$name" in
    tap:test_policy|tap:test_load|tap:test_manpage)
      make -C "$BLD" -s -j2 "tests/unit/$name" >"$W/make.log" 2>&1 ;;
    tap:test_dlopen)
      make -C "$BLD" -s -j2 pam_capdelegate.la tests/unit/test_dlopen >"$W/make.log" 2>&1 ;;
    tap:stack|tap:module)
      make -C "$BLD" -s -j2 pam_capdelegate.la tests/stack/nss_fault.la \
        "tests/stack/test_$name" >"$W/make.log" 2>&1 ;;
    tap:nss)
      make -C "$BLD" -s -j2 all >"$W/make.log" 2>&1 && make -C "$BLD" -s -j2 tests/nss/nss_login \
        tests/nss/nss_cdtest.la tests/nss/nss_cdother.la >>"$W/make.log" 2>&1 ;;
    cli:*) make -C "$BLD" -s -j2 all >"$W/make.log" 2>&1 &&
           make -C "$BLD" -s -j2 tests/stack/nss_fault.la tests/cli/fault.la >>"$W/make.log" 2>&1 ;;
    *) build ;;
  esac
}

# mutant M: apply M to this job's tree, build, run the checks (its last killer first); sets $by
# (empty: survived) and $killer; puts the tree back. A generated mutant M is "ID<TAB>CHECKS":
# only the checks that execute its line run.
mutant() {
  local m=$1 name file c kind cname cmd prev order=() only=
  by= killer=
  if [ "$GENERATED" -eq 1 ]; then
    IFS=$'\t' read -r name only <<<"$m"; file=${name%%:*}
    [ "$only" != - ] || { by="NOT COVERED"; return; }
    cp "$SRC/$file" "$W/pristine"
    # the scratch tree's copy: editing the checkout during a run changes nothing
    rm -f "$W/orig.o"; object_code "$file" "$W/orig.o" || true
    python3 "$SRC/tests/mutations/generate.py" apply "$name" "$SRC" 2>"$W/apply.err" || by="BROKEN (no longer applies: $(tr '\n' ' ' <"$W/apply.err"))"
    [ -n "$by" ] || ! same_code "$file" || by="SAME CODE"
  else
    # made by prepare_mutants before the jobs started, from the same synced files
    name=$(basename "$m" .mut)
    [ -s "$MUT/mutated/$name.file" ] || { by="BROKEN (cannot read)"; return; }
    file=$(<"$MUT/mutated/$name.file")
    cp "$SRC/$file" "$W/pristine"
    if [ -f "$MUT/mutated/$name.text" ]; then cp "$MUT/mutated/$name.text" "$SRC/$file"
    else by="BROKEN (no longer applies: $(tr '\n' ' ' <"$MUT/mutated/$name.err"))"; fi
  fi
  local log=$MUT/$(tr '/:' '__' <<<"$name").make.log
  prev=$(last_killer "$name")
  # only a check this run has (a renamed case must not kill by failing to exist)
  for c in "${CHECKS[@]}"; do IFS=$'\t' read -r kind cname cmd <<<"$c"; [ "$cname" != "$prev" ] || order=("$c"); done
  # The hinted check first, built for alone (most mutants die there); then the whole build and
  # every other check in order.
  if [ -n "$by" ]; then :
  elif [ "${#order[@]}" -gt 0 ] && ! build_for "${order[0]}"; then
    by="BROKEN (does not build, see $log)"; cp "$W/make.log" "$log"
  elif [ "${#order[@]}" -gt 0 ] && by=$(try_check "$file" "$only" "${order[0]}") && [ -n "$by" ]; then
    killer=${order[0]}
  elif ! build; then
    by="BROKEN (does not build, see $log)"; cp "$W/make.log" "$log"
  else
    for c in "${CHECKS[@]}"; do
      [ "$c" != "${order[0]:-}" ] || continue
      by=$(try_check "$file" "$only" "$c"); [ -z "$by" ] || { killer=$c; break; }
    done
  fi
  cp "$W/pristine" "$SRC/$file"   # a fresh mtime: make rebuilds it for the next mutant
}

# Trivial compiler equivalence: a mutant whose file compiles to the very object code of the
# original cannot behave otherwise in the product (the compiler proved the change means
# nothing there: `x <= 10` for `x < 11`, an index inside sizeof, a flag's 1 made 2 where it is
# only tested for truth). object_code FILE OUT compiles the scratch tree's FILE as the build
# does (config.h, the core's headers, gnu11, PIC, -O2 as Debian and ./lab build it) without
# debug information, which holds line and column numbers; the original's object is kept by the
# file's content, so each file is compiled once per job. Only -O2, the code that ships: the -O0 builds here
# only measure coverage. same_code FILE: the mutated FILE gives the
# same bytes as the original.
object_code() {
  local file=$1 out=$2 sum
  if [ "$out" = "$W/orig.o" ]; then
    sum=$(sha256sum <"$SRC/$file" | cut -c1-16)
    [ -f "$W/tce/$sum.o" ] || { mkdir -p "$W/tce"; compile_object "$file" "$W/tce/$sum.o"; } || return 1
    cp "$W/tce/$sum.o" "$out"
  else
    compile_object "$file" "$out"
  fi
}
compile_object() {
  ${CC:-gcc} -DHAVE_CONFIG_H -I"$BLD" -I"$SRC/pam_capdelegate/core" -I"$SRC/$(dirname "$1")" -std=gnu11 \
    -O2 -g0 -fPIC -w -c "$SRC/$1" -o "$2" 2>/dev/null
}
same_code() {
  [ -s "$W/orig.o" ] && object_code "$1" "$W/mut.o" && cmp -s "$W/orig.o" "$W/mut.o"
}

# prepare_mutants INDEX...: the mutated file of each hand-made mutant muts[INDEX], made from
# the scratch tree in one Python run (apply.py --all) into $MUT/mutated: a Python start costs
# about 0.5 s of CPU here, and two per mutant were a fifth of a CLI mutant's cost.
prepare_mutants() {
  local i list=()
  rm -rf "$MUT/mutated"; mkdir -p "$MUT/mutated"
  for i in "$@"; do list+=("${muts[$i]}"); done
  [ "${#list[@]}" -eq 0 ] || python3 "$HERE/apply.py" --all "$SRC" "$MUT/mutated" "${list[@]}" 2>"$MUT/mutated/errors" ||
    log "apply.py: $(tr '\n' ' ' <"$MUT/mutated/errors")"
}

# last_killer NAME: the check that killed mutant NAME last time: this machine's last run
# ($MUT/killers: NAME, then the check as CHECKS has it), else the hints kept with the mutants
# (tests/mutations/killers.tsv: NAME<TAB>CHECK, written by --save-hints), so that a fresh clone
# also tries it first. Only an order: a verdict still needs that check to fail.
last_killer() {
  local k
  k=$(awk -F'\t' -v n="$1" '$1 == n { print $3; exit }' "$MUT/killers" 2>/dev/null) || true
  [ -n "$k" ] || k=$(awk -F'\t' -v n="$1" '$1 == n { print $2; exit }' "$HERE/killers.tsv" 2>/dev/null) || true
  printf '%s' "$k"
}

# save_hints: tests/mutations/killers.tsv from this machine's last runs, hand-made mutants only
# (a generated mutant's id names a line number, which moves with every edit).
save_hints() {
  [ -s "$MUT/killers" ] || die "no killers recorded in $MUT yet: run the mutants first"
  { echo "# mutant<TAB>the check that killed it last (an order hint for tests/mutations/run.sh: written by --save-hints)"
    awk -F'\t' '$1 !~ /:/ { print $1 "\t" $3 }' "$MUT/killers" | while IFS=$'\t' read -r n k; do
      [ -f "$HERE/$n.mut" ] && printf '%s\t%s\n' "$n" "$k"; done; } >"$HERE/killers.tsv"
  log "wrote $HERE/killers.tsv ($(($(wc -l <"$HERE/killers.tsv") - 1)) mutants)"
}

# next_mutant: the index (in muts) of the next mutant of this round (todo) no job has taken;
# fails when none is left.
next_mutant() {
  local i
  i=$( { flock 7; read -r i <"$MUT/queue"; echo $((i + 1)) >"$MUT/queue"; echo "$i"; } 7>"$MUT/queue.lock")
  [ "$i" -lt "${#todo[@]}" ] && echo "${todo[$i]}"
}

# run_jobs INDEX...: the mutants muts[INDEX], JOBS at a time.
run_jobs() {
  todo=("$@")
  local n=$JOBS j pids=()
  [ "$n" -le "${#todo[@]}" ] || n=${#todo[@]}
  echo 0 >"$MUT/queue"
  log "${#todo[@]} mutants, $n at a time"
  for ((j = 1; j <= n; j++)); do job "$j" & pids+=($!); done
  for j in "${pids[@]}"; do wait "$j" || die "a mutation job failed (see above)"; done
}

# The baseline of the hand-made mutants is taken lazily: before they start only for the checks
# that killed them last (hinted_baseline INDEX...: of the mutants muts[INDEX] about to run),
# since the whole baseline (every unit and stack program and each CLI case once) costs more than
# the mutants themselves. A mutant that gets past its hint meets checks with no baseline, where
# any failure kills it (check_one gives them the long timeouts). lazy_baseline then confirms
# those kills: the baseline of each check that killed that way, on the unmutated tree; a mutant
# whose killer fails or comes near the timeout unmutated too runs again. So do the survivors
# when some check had no baseline (a program passing fewer cases than its baseline also kills).
# Each round leaves fewer checks without a baseline, so the rounds end.
hinted_baseline() {
  local i k c hinted=()
  local -A want=()
  for i in "$@"; do k=$(last_killer "$(basename "${muts[$i]}" .mut)"); [ -z "$k" ] || want[$k]=1; done
  for c in "${CHECKS[@]}"; do [ -z "${want[$(cut -f2 <<<"$c")]:-}" ] || hinted+=("$c"); done
  log "baseline: the ${#hinted[@]} checks that killed these mutants last (of ${#CHECKS[@]}), $JOBS at a time"
  [ "${#hinted[@]}" -eq 0 ] || baseline "" "${hinted[@]}"
}

# clean_baseline NAME: the check passed on the unmutated tree well inside the timeout it had
# without a baseline.
clean_baseline() {
  local f limit=$UNKNOWN_TAP_TIMEOUT
  [ -z "${BASE_RC[$1]:-}" ] || [ "${BASE_RC[$1]}" -eq 0 ] || return 1
  [ -n "${BASE_OK[$1]:-}" ] || limit=$UNKNOWN_CLI_TIMEOUT
  [ $((3 * BASE_TIME[$1])) -le "$limit" ] || return 1
  for f in "${!BASE_FAIL[@]}"; do [[ "$f" != "$1: "* && "$f" != "cli: $1" ]] || return 1; done
}

lazy_baseline() {
  local again=() need=() c i kind name cmd unknown=() v by round=1
  while :; do
    again=() unknown=()
    if [ -s "$MUT/unconfirmed" ]; then
      mapfile -t need < <(cut -f2- "$MUT/unconfirmed" | sort -u)
      log "baseline: the ${#need[@]} checks that killed a mutant before they had one"
      baseline "" "${need[@]}"
      while IFS=$'\t' read -r i kind name cmd; do
        clean_baseline "$name" || { log "baseline: $name fails or is slow unmutated: mutant ${muts[$i]##*/} again"; again+=("$i"); }
      done <"$MUT/unconfirmed"
      rm -f "$MUT/unconfirmed"
    fi
    for c in "${CHECKS[@]}"; do [ -n "${BASE_TIME[$(cut -f2 <<<"$c")]:-}" ] || unknown+=("$c"); done
    if [ "${#unknown[@]}" -gt 0 ] && grep -q '^survived	[^	]*	SURVIVED	' "$MUT/verdicts"; then
      log "baseline: the other ${#unknown[@]} checks, for the survivors"
      baseline "" "${unknown[@]}"
      while IFS=$'\t' read -r v name by i; do again+=("$i"); done < <(grep '^survived	[^	]*	SURVIVED	' "$MUT/verdicts")
    fi
    [ "${#again[@]}" -gt 0 ] || return 0
    mapfile -t again < <(printf '%s\n' "${again[@]}" | sort -un)
    for i in "${again[@]}"; do
      awk -F'\t' -v i="$i" '$4 != i' "$MUT/verdicts" >"$MUT/verdicts.tmp"; mv "$MUT/verdicts.tmp" "$MUT/verdicts"
      [ ! -f "$MUT/killers.new" ] || { awk -F'\t' -v n="$(basename "${muts[$i]}" .mut)" '$1 != n' "$MUT/killers.new" >"$MUT/killers.tmp"; mv "$MUT/killers.tmp" "$MUT/killers.new"; }
    done
    round=$((round + 1)); log "round $round: ${#again[@]} mutants again, with the baseline now known"
    run_jobs "${again[@]}"
  done
}

# job N: take mutants until none is left; one TSV line (fd 3), one table line and one verdict
# line each, written whole so that jobs do not interleave within a line.
job() {
  local i m name t by killer verdict
  if [ "$1" -gt 1 ]; then
    W="$MUT/w$1" SRC="$MUT/w$1/src" BLD="$MUT/w$1/build"
    sync_tree; build || die "job $1: the unmutated tree does not build (see $W/make.log)"
  fi
  rm -rf "$W/tce"   # the originals' objects (same_code), made again for these headers
  while i=$(next_mutant); do
    m=${muts[$i]} t=$(date +%s)
    if [ "$GENERATED" -eq 1 ]; then name=${m%%	*}; else name=$(basename "$m" .mut); fi
    mutant "$m"
    case "$by" in
      "") by=SURVIVED verdict=survived ;;
      "NOT COVERED") verdict=survived ;;
      "SAME CODE") verdict=same ;;
      "BROKEN (does not build"*) if [ "$GENERATED" -eq 1 ]; then by=STILLBORN verdict=stillborn
          else verdict=survived; fi ;;
      BROKEN*) verdict=survived ;;
      *) verdict=killed
         printf '%s\t%s\n' "$name" "$killer" >>"$MUT/killers.new"
         # killed by a check with no baseline yet: lazy_baseline confirms the check itself passes
         [ -n "${BASE_TIME[$(cut -f2 <<<"$killer")]:-}" ] || printf '%s\t%s\n' "$i" "$killer" >>"$MUT/unconfirmed" ;;
    esac
    printf '%s\t%s\t%s\t%s\n' "$verdict" "$name" "$by" "$i" >>"$MUT/verdicts"
    printf '%-36s %4ss  %s\n' "$name" "$(( $(date +%s) - t ))" "$by"
  done
  build || true   # leave the scratch build unmutated
}

# ---- generated mutants: which checks execute which line -----------------------------------

# The key of the coverage map: the sources, the tests, the build files and the map's maker, by
# content (not the other mutation tools: they run no check).
coverage_key() {
  (cd "$ROOT" && git ls-files -co --exclude-standard -- configure.ac Makefile.am pam_capdelegate tests \
     | grep -v -e '^crash-' -e '^tests/mutations/[^c]' | while read -r f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
     | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

# rebaseline_failing: the checks of $CHECKS that failed a case on the coverage build run again
# on the plain build, the one the mutants are built in, and only what fails there too is left
# out: a check left out judges no mutant. The allocation-fault cases once failed under
# --coverage alone (the shim failed gcov's own allocations at exit), and a loader mutant that
# only a failed allocation shows survived so. Their lines of the coverage run give way to the
# plain run's.
rebaseline_failing() {
  local c kind name cmd again=() names=()
  for c in "${CHECKS[@]}"; do
    IFS=$'\t' read -r kind name cmd <<<"$c"
    if [ "$kind" = cli ]; then [ -z "${BASE_FAIL[cli: $cmd]:-}" ] || again+=("$c")
    else ! grep -qF "fail	$name: " "$MUT/baseline.tsv" || again+=("$c"); fi
  done
  [ "${#again[@]}" -gt 0 ] || return 0
  log "baseline: ${#again[@]} checks fail on the coverage build: again on the plain build"
  for c in "${again[@]}"; do names+=("$(cut -f2 <<<"$c")"); done
  awk -F'\t' -v list="$(printf '%s\n' "${names[@]}")" '
    BEGIN { n = split(list, a, "\n"); for (i = 1; i <= n; i++) if (a[i] != "") drop[a[i]] = 1 }
    $1 == "fail" { k = $2; sub(/^cli: /, "", k); sub(/: .*$/, "", k); if (k in drop) next }
    ($1 == "tap" || $1 == "time" || $1 == "broken") && ($2 in drop) { next }
    { print }' "$MUT/baseline.tsv" >"$MUT/baseline.tsv.tmp"
  mv "$MUT/baseline.tsv.tmp" "$MUT/baseline.tsv"
  BASE_FAIL=()
  baseline "" "${again[@]}"
}

# coverage_map: set COVMAP to the path of the map (JSON: file -> line -> the checks executing it), made
# if the cache has none for these sources: a --coverage build of job 1's tree in $MUT/cov, then
# every check once, which is also the baseline (baseline-KEY.tsv beside the map): each writes
# its .gcda files under its own GCOV_PREFIX.
coverage_map() {
  local key map cov="$MUT/cov"
  key=$(coverage_key); map="$MUT/coverage-$key.json"
  if [ -f "$map" ] && [ -f "$MUT/baseline-$key.tsv" ]; then
    log "coverage: cached ($map)"; baseline_load "$MUT/baseline-$key.tsv"; COVMAP=$map; return
  fi
  log "coverage: --coverage build in $cov/build"
  mkdir -p "$cov/build"
  [ -f "$cov/build/Makefile" ] || (cd "$cov/build" && "$SRC/configure" CFLAGS="-O0 -g --coverage" \
      LDFLAGS="--coverage" LIBS="-lgcov" >"$cov/configure.log" 2>&1) || die "coverage: configure failed (see $cov/configure.log)"
  (W=$cov BLD=$cov/build; build) || die "coverage: the build failed (see $cov/make.log)"
  rm -rf "$cov/data"; mkdir -p "$cov/data"
  log "coverage and baseline: ${#CHECKS[@]} checks, $JOBS at a time"
  baseline "$cov"
  rebaseline_failing
  python3 "$HERE/coverage.py" "$cov/build" "$cov/data" "$map.tmp" || die "coverage: gcov failed"
  cp "$MUT/baseline.tsv" "$MUT/baseline-$key.tsv"; mv "$map.tmp" "$map"
  COVMAP=$map
}

# report: the survivors, the stillborn and the same code, then the score.
report_generated() {
  local k s b e nc n
  k=$(grep -c '^killed' "$MUT/verdicts" || true); s=$(grep -c '^survived' "$MUT/verdicts" || true)
  b=$(grep -c '^stillborn' "$MUT/verdicts" || true); n=$(grep -c . "$MUT/verdicts" || true)
  e=$(grep -c '^same' "$MUT/verdicts" || true)
  nc=$(grep -c '	NOT COVERED$' "$MUT/verdicts" || true)
  echo
  echo "survivors ($s, of which $nc not covered by any check):"
  { grep '^survived' "$MUT/verdicts" || true; } | cut -f2,3 | sort | while IFS=$'\t' read -r id by; do
    printf '  %s%s  %s\n' "$id" "$([ "$by" != "NOT COVERED" ] || echo ' (not covered)')" \
      "$(grep -m1 -F "$id	" "$MUT/sample" | cut -f4)"
  done
  echo "stillborn ($b, left out of the score):"
  { grep '^stillborn' "$MUT/verdicts" || true; } | cut -f2 | sort | sed 's/^/  /'
  echo "same code ($e, the original's object code at -O2: left out of the score):"
  { grep '^same' "$MUT/verdicts" || true; } | cut -f2 | sort | while read -r id; do
    printf '  %s  %s\n' "$id" "$(grep -m1 -F "$id	" "$MUT/sample" | cut -f4)"
  done
  echo "mutation: $k killed, $s survived, $b stillborn, $e same code of $n (score K/(K+S) = $(
    awk -v k="$k" -v s="$s" 'BEGIN { printf "%.1f%%", (k + s) ? 100 * k / (k + s) : 0 }'))"
}

# ---- kills kept between runs (--reuse DIR) ------------------------------------------------

# A kill depends on the mutant, on every file the killing check builds or reads, on this runner,
# and on the machine (the packages it links and runs, the kernel it runs on). reuse_inputs KIND
# hashes the files of the scratch tree (as synced: what the checks saw) that a check of KIND
# reads: a unit or stack program ("tap") never contains the CLI's own files (try_check skips
# them for the same reason); a CLI case builds and runs all of the product.
reuse_inputs() {
  local paths=(configure.ac Makefile.am tests/tests.am tests/mutations/run.sh tests/mutations/apply.py)
  case "$1" in
    tap) paths+=(pam_capdelegate/core pam_capdelegate/module pam_capdelegate/man tests/unit tests/stack tests/own-tmp.sh) ;;
    cli) paths+=(pam_capdelegate config tests/cli tests/stack tests/bench) ;;
  esac
  { (cd "$ROOT" && git ls-files -co --exclude-standard -- "${paths[@]}") | grep -v '^crash-' | LC_ALL=C sort |
      while read -r f; do [ -f "$SRC/$f" ] && printf '%s\0' "$f"; done | (cd "$SRC" && xargs -0 -r sha256sum)
    dpkg-query -W -f '${Package} ${Version} ${Architecture}\n' 2>/dev/null; uname -r; } | sha256sum | cut -c1-32
}

# reuse_key MUTANT KIND CHECK: the hash a kill of MUTANT (its .mut file) by CHECK of KIND is
# kept under (batch_keys for one mutant).
declare -A REUSE_INPUTS=()
reuse_key() { local muts=("$1"); printf '0\t%s\t%s\n' "$2" "$3" | batch_keys | cut -f2; }

# batch_keys: reads "INDEX<TAB>KIND<TAB>CHECK" lines, prints "INDEX<TAB>KEY": the key of a kill
# of muts[INDEX] by CHECK, sha256 of three lines: the inputs' hash for KIND, CHECK, and the
# mutant text's sha256. A handful of processes for all the mutants, not a few each (beside the
# guests at nice 10 a fork costs about 0.1 s: 140 mutants one by one took 160 s).
batch_keys() {
  local i kind cname hex f d
  local -A mut_hex=()
  d=$(mktemp -d "$MUT/keys.XXXXXX")
  while read -r hex f; do mut_hex[$f]=$hex; done < <(sha256sum -- "${muts[@]}")
  while IFS=$'\t' read -r i kind cname; do
    [ -n "${REUSE_INPUTS[$kind]:-}" ] || REUSE_INPUTS[$kind]=$(reuse_inputs "$kind")
    printf '%s\n' "${REUSE_INPUTS[$kind]}" "$cname" "${mut_hex[${muts[$i]}]}  -" >"$d/$i"
  done
  if compgen -G "$d/*" >/dev/null; then
    (cd "$d" && sha256sum -- *) | while read -r hex f; do printf '%s\t%s\n' "$f" "${hex:0:32}"; done
  fi
  rm -rf "$d"
}

# mutant_names: NAMES[INDEX], muts[INDEX]'s name (its file's, without .mut); no process each
mutant_names() { local i n; NAMES=(); for i in "${!muts[@]}"; do n=${muts[$i]##*/}; NAMES[$i]=${n%.mut}; done; }

# reused_kills: for each mutant whose kept kill still has its hash, a verdict line now; prints
# the indices of the others (the mutants to run).
reused_kills() {
  local i name kind cname key by
  local -A k_kind=() k_check=() k_key=() k_by=() now=()
  mutant_names
  if [ -f "$REUSE/kills.tsv" ]; then
    while IFS=$'\t' read -r name kind cname key by; do
      k_kind[$name]=$kind k_check[$name]=$cname k_key[$name]=$key k_by[$name]=$by
    done <"$REUSE/kills.tsv"
  fi
  while IFS=$'\t' read -r i key; do now[$i]=$key; done < <(
    for i in "${!muts[@]}"; do
      name=${NAMES[$i]}
      [ -z "${k_key[$name]:-}" ] || printf '%s\t%s\t%s\n' "$i" "${k_kind[$name]}" "${k_check[$name]}"
    done | batch_keys)
  for i in "${!muts[@]}"; do
    name=${NAMES[$i]}
    if [ -n "${now[$i]:-}" ] && [ "${now[$i]}" = "${k_key[$name]}" ]; then
      printf 'killed\t%s\t%s (kept: nothing it depends on changed)\t%s\n' "$name" "${k_by[$name]}" "$i" >>"$MUT/verdicts"
    else
      echo "$i"
    fi
  done
}

# keep_kills: each mutant this run killed, with its killer and hash, into $REUSE/kills.tsv
# (NAME<TAB>KIND<TAB>CHECK<TAB>KEY<TAB>the failure that killed it); a survivor's kept kill is
# dropped.
keep_kills() {
  local v name by i kind cname cmd key
  local -A killer_kind=() killer_check=() key_of=() new=()
  mkdir -p "$REUSE"; mutant_names
  [ ! -f "$MUT/killers.new" ] || while IFS=$'\t' read -r name kind cname cmd; do
    killer_kind[$name]=$kind killer_check[$name]=$cname
  done <"$MUT/killers.new"
  while IFS=$'\t' read -r v name by i; do
    [ "$v" = killed ] && [[ "$by" != *"(kept: "* ]] && [ -n "${killer_kind[$name]:-}" ] || continue
    new[$i]=$by
  done <"$MUT/verdicts"
  while IFS=$'\t' read -r i key; do key_of[$i]=$key; done < <(
    for i in "${!new[@]}"; do
      name=${NAMES[$i]}; printf '%s\t%s\t%s\n' "$i" "${killer_kind[$name]}" "${killer_check[$name]}"
    done | batch_keys)
  { flock 8
    touch "$REUSE/kills.tsv"
    { grep '^survived' "$MUT/verdicts" || true; } | cut -f2 >"$REUSE/lost"
    for i in "${!new[@]}"; do
      name=${NAMES[$i]}
      printf '%s\t%s\t%s\t%s\t%s\n' "$name" "${killer_kind[$name]}" "${killer_check[$name]}" "${key_of[$i]}" "${new[$i]}"
    done >"$REUSE/kills.new"
    awk -F'\t' 'FILENAME == ARGV[1] { drop[$1] = 1; next }
                 FILENAME == ARGV[2] { drop[$1] = 1; print; next }
                 !($1 in drop)' "$REUSE/lost" "$REUSE/kills.new" "$REUSE/kills.tsv" >"$REUSE/kills.tmp"
    mv "$REUSE/kills.tmp" "$REUSE/kills.tsv"; rm -f "$REUSE/kills.new" "$REUSE/lost"
  } 8>"$REUSE/kills.lock"
}

main() {
  local tsv=0 names=() m seed=1 sample=150
  while [ $# -gt 0 ]; do
    case "$1" in
      -h|--help) usage; exit 0 ;;
      --tsv) tsv=1 ;;
      --generated) GENERATED=1 ;;
      --seed) [ $# -ge 2 ] || die "--seed needs a value"; seed=$2; shift ;;
      --sample) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "--sample needs a number"; sample=$2; shift ;;
      --list) for m in "$HERE"/*.mut; do basename "$m" .mut; done; exit 0 ;;
      --save-hints) save_hints; exit 0 ;;
      --reuse) [ $# -ge 2 ] || die "--reuse needs a directory"; REUSE=$2; shift ;;
      -*) usage >&2; exit 2 ;;
      *) names+=("$1") ;;
    esac
    shift
  done
  command -v python3 >/dev/null || die "python3 missing (./lab deps)"
  "${ISOLATE[@]}" true 2>/dev/null ||
    die "cannot run a check in a PID namespace of its own (${ISOLATE[*]}; needs root): no mutant runs without one"
  local muts=()
  if [ "$GENERATED" -eq 1 ]; then :
  elif [ "${#names[@]}" -eq 0 ]; then muts=("$HERE"/*.mut)
  else for m in "${names[@]}"; do [ -f "$HERE/$m.mut" ] || die "no mutant $m"; muts+=("$HERE/$m.mut"); done; fi
  if [ "$tsv" -eq 1 ]; then exec 3>&1 1>&2; else exec 3>/dev/null; fi

  mkdir -p "$MUT"
  exec 9>"$MUT/lock"
  flock -n 9 || die "another run uses $MUT (set LAB_MUTATE to another directory)"
  : >"$MUT/baseline.tsv"
  log "scratch tree $SRC, build $BLD"
  sync_tree
  rm -f "$MUT/killers.new" "$MUT/unconfirmed" "$MUT"/*.make.log; : >"$MUT/verdicts"
  local todo=() run=()
  if [ -n "$REUSE" ] && [ "$GENERATED" -eq 0 ]; then
    mapfile -t run < <(reused_kills)
    log "$(( ${#muts[@]} - ${#run[@]} )) kills kept (nothing they depend on changed; $REUSE/kills.tsv), ${#run[@]} mutants to run"
  else
    run=("${!muts[@]}")
  fi
  [ "$JOBS" -ge 1 ] 2>/dev/null || die "MUTATE_JOBS=$JOBS: expected a number, 1 or more"
  if [ "${#run[@]}" -gt 0 ] || [ "$GENERATED" -eq 1 ]; then
    build || die "the unmutated tree does not build (see $MUT/make.log)"
    list_checks
  fi
  if [ "$GENERATED" -eq 1 ]; then
    coverage_map
    local ids=(); for m in "${names[@]}"; do ids+=(--id "$m"); done
    python3 "$HERE/generate.py" sample --seed "$seed" --sample "$sample" --root "$SRC" \
      --coverage "$COVMAP" "${ids[@]}" >"$MUT/sample" || die "generate.py failed"
    mapfile -t muts < <(cut -f1,2 "$MUT/sample")
    # the baseline needs only the checks some mutant runs
    local needed kept=() c
    needed=$(cut -f2 "$MUT/sample" | tr ',' '\n' | sort -u)
    for c in "${CHECKS[@]}"; do ! grep -qxF -- "$(cut -f2 <<<"$c")" <<<"$needed" || kept+=("$c"); done
    # the quickest first: a mutant stops at the first check that fails
    mapfile -t CHECKS < <(for c in "${kept[@]}"; do
      printf '%s\t%s\n' "${BASE_TIME[$(cut -f2 <<<"$c")]:-0}" "$c"; done | sort -s -n -k1,1 | cut -f2-)
  fi
  [ "${#muts[@]}" -gt 0 ] || die "no mutants"
  [ "$GENERATED" -eq 0 ] || run=("${!muts[@]}")
  if [ "${#run[@]}" -gt 0 ]; then
    [ "$JOBS" -le "${#run[@]}" ] || JOBS=${#run[@]}
    [ "$GENERATED" -eq 1 ] || prepare_mutants "${run[@]}"
    [ "$GENERATED" -eq 1 ] || hinted_baseline "${run[@]}"
    run_jobs "${run[@]}"
    [ "$GENERATED" -eq 1 ] || lazy_baseline
    [ -z "$REUSE" ] || [ "$GENERATED" -eq 1 ] || keep_kills
  fi
  # one line per mutant on fd 3 (--tsv), once its verdict is final
  local v name by i
  while IFS=$'\t' read -r v name by i; do
    case "$v" in
      killed) printf 'PASS\tmutation %s killed by %s\n' "$name" "$by" ;;
      survived) printf 'FAIL\tmutation %s %s\n' "$name" "$by" ;;
    esac
  done <"$MUT/verdicts" >&3
  # The next run tries each mutant's killer first: same verdicts, found sooner.
  if [ -f "$MUT/killers.new" ]; then
    touch "$MUT/killers"
    sort -s -u -t '	' -k1,1 "$MUT/killers.new" "$MUT/killers" >"$MUT/killers.tmp"
    mv "$MUT/killers.tmp" "$MUT/killers"; rm -f "$MUT/killers.new"
  fi
  local n killed
  n=$(grep -c . "$MUT/verdicts" || true); killed=$(grep -c '^killed' "$MUT/verdicts" || true)
  [ "$n" -eq "${#muts[@]}" ] || die "$n verdicts for ${#muts[@]} mutants"
  log "done"
  if [ "$GENERATED" -eq 1 ]; then report_generated; return; fi
  echo "mutation: $killed killed, $((n - killed)) survived of $n"
}

# sourced (tests/mutations/test_reuse.sh tests the functions): define them, run nothing
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
