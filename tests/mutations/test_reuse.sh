#!/usr/bin/env bash
# test_reuse.sh: the promise of run.sh --reuse (TAP). A kept kill stands only while nothing it
# depends on has changed: the mutant, the files its kind of check reads (a unit or stack program:
# core, module, man pages, tests/unit, tests/stack, tests/own-tmp.sh; a CLI case: all of
# pam_capdelegate, config, tests/cli, tests/stack, tests/bench; both: the build files and the
# runner), and the machine's packages. Runs run.sh's own functions against a scratch git tree;
# needs git, nothing else.
set -euo pipefail
[ "${1:-}" = --help ] && { sed -n '2,7p' "$0"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/mutations/run.sh
. "$here/run.sh"
set +e
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ROOT=$t/tree SRC=$t/tree MUT=$t/mut REUSE=$t/reuse
mkdir -p "$MUT" "$REUSE"
n=0 failed=0
ok() { n=$((n + 1)); if "${@:2}"; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=1; fi; }
put() { mkdir -p "$(dirname "$ROOT/$1")"; printf '%s\n' "$2" >"$ROOT/$1"; }
keys() { REUSE_INPUTS=(); echo "$(reuse_inputs tap) $(reuse_inputs cli)"; }
tap_of() { echo "${1% *}"; }
cli_of() { echo "${1#* }"; }

for f in configure.ac Makefile.am tests/tests.am tests/mutations/run.sh tests/mutations/apply.py \
         pam_capdelegate/core/cd_policy.c pam_capdelegate/module/pam.c pam_capdelegate/man/capdelegate.conf.5 \
         pam_capdelegate/cli/cli_check.c config/capdelegate.conf tests/unit/test_policy.c \
         tests/stack/stack.sh tests/own-tmp.sh tests/cli/run.sh tests/bench/audit-bench.sh kernel/series README.md; do
  put "$f" "first $f"
done
git -C "$ROOT" init -q && git -C "$ROOT" add -A

# changed FILE: the tap and cli keys after FILE's content changed (then put back)
changed() { local was; was=$(cat "$ROOT/$1"); put "$1" "changed $1"; keys; put "$1" "$was"; }
k0=$(keys)
ok "the keys are the same when nothing changed" [ "$(keys)" = "$k0" ]
for f in configure.ac Makefile.am tests/tests.am tests/mutations/run.sh pam_capdelegate/core/cd_policy.c; do
  k=$(changed "$f")
  ok "$f changes both kinds' keys" [ "$(tap_of "$k")" != "$(tap_of "$k0")" ] && [ "$(cli_of "$k")" != "$(cli_of "$k0")" ]
done
for f in pam_capdelegate/module/pam.c pam_capdelegate/man/capdelegate.conf.5 tests/stack/stack.sh tests/own-tmp.sh; do
  k=$(changed "$f"); ok "$f changes the unit and stack programs' key" [ "$(tap_of "$k")" != "$(tap_of "$k0")" ]
done
for f in pam_capdelegate/cli/cli_check.c config/capdelegate.conf tests/cli/run.sh tests/bench/audit-bench.sh; do
  k=$(changed "$f")
  ok "$f changes the CLI cases' key, not the programs'" [ "$(cli_of "$k")" != "$(cli_of "$k0")" ] && [ "$(tap_of "$k")" = "$(tap_of "$k0")" ]
done
k=$(changed tests/unit/test_policy.c)
ok "tests/unit changes the programs' key, not the CLI cases'" [ "$(tap_of "$k")" != "$(tap_of "$k0")" ] && [ "$(cli_of "$k")" = "$(cli_of "$k0")" ]
for f in kernel/series README.md; do k=$(changed "$f"); ok "$f (read by no check) changes neither key" [ "$k" = "$k0" ]; done
put pam_capdelegate/core/cd_new.c "a file not yet committed"
ok "a new file in the core, not yet in git, changes the keys" [ "$(tap_of "$(keys)")" != "$(tap_of "$k0")" ]
rm "$ROOT/pam_capdelegate/core/cd_new.c"
dpkg-query() { echo "libcap2 1:2.66-4+upgraded amd64"; }
ok "another package version changes both keys" [ "$(tap_of "$(keys)")" != "$(tap_of "$k0")" ] && [ "$(cli_of "$(keys)")" != "$(cli_of "$k0")" ]
unset -f dpkg-query
ok "and back, the keys are as before" [ "$(keys)" = "$k0" ]

# reuse_key: the mutant's own text and the killing check are part of it
printf 'a\n' >"$t/m1.mut"; printf 'b\n' >"$t/m2.mut"
REUSE_INPUTS=()
ok "two mutants killed by one check have two keys" [ "$(reuse_key "$t/m1.mut" tap module)" != "$(reuse_key "$t/m2.mut" tap module)" ]
ok "one mutant killed by two checks has two keys" [ "$(reuse_key "$t/m1.mut" tap module)" != "$(reuse_key "$t/m1.mut" tap stack)" ]

# reused_kills: a kept kill whose key still holds is a verdict; a stale one runs again
muts=("$t/m1.mut" "$t/m2.mut")
printf 'm1\ttap\tmodule\t%s\tmodule: test_x\nm2\ttap\tmodule\t%s\tmodule: test_y\n' \
  "$(reuse_key "$t/m1.mut" tap module)" "$(reuse_key "$t/m2.mut" tap module)" >"$REUSE/kills.tsv"
: >"$MUT/verdicts"
ok "both kills kept while nothing changed" [ -z "$(reused_kills)" ] && [ "$(grep -c '^killed' "$MUT/verdicts")" = 2 ]
printf 'b, edited\n' >"$t/m2.mut"; : >"$MUT/verdicts"
ok "an edited mutant runs again" [ "$(reused_kills)" = 1 ] && [ "$(cut -f2 "$MUT/verdicts")" = m1 ]
put pam_capdelegate/core/cd_policy.c "edited"; REUSE_INPUTS=(); : >"$MUT/verdicts"
ok "after a core edit both run again" [ "$(reused_kills | paste -sd' ')" = "0 1" ] && [ ! -s "$MUT/verdicts" ]

# keep_kills: this run's kills are kept under the keys reused_kills checks; a survivor's kept kill
# is dropped; a kill kept from before (not run this time) stays
printf 'c\n' >"$t/m3.mut"; muts=("$t/m1.mut" "$t/m2.mut" "$t/m3.mut"); rm -f "$REUSE/kills.tsv"
printf 'm3\ttap\tstack\told-key\tstack: test_z\nm9\tcli\tsome_case\tk9\tcli: some_case\n' >"$REUSE/kills.tsv"
printf 'killed\tm1\tmodule: test_x\t0\nsurvived\tm3\tSURVIVED\t2\nkilled\tm2\tcli: case_y\t1\n' >"$MUT/verdicts"
printf 'm1\ttap\tmodule\t/b/test_module\nm2\tcli\tcase_y\tcase_y\n' >"$MUT/killers.new"
keep_kills
ok "keep_kills keeps this run's two kills and the other mutant's, drops the survivor's" \
  [ "$(cut -f1 "$REUSE/kills.tsv" | sort | paste -sd' ')" = "m1 m2 m9" ]
ok "each with its killing check and failure" grep -qx "m2	cli	case_y	[0-9a-f]*	cli: case_y" "$REUSE/kills.tsv"
muts=("$t/m1.mut" "$t/m2.mut"); : >"$MUT/verdicts"
ok "the next run keeps both kills" [ -z "$(reused_kills)" ] && [ "$(grep -c 'kept: ' "$MUT/verdicts")" = 2 ]
echo "1..$n"
exit "$failed"
