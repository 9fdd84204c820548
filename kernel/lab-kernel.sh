#!/usr/bin/env bash
# kernel/lab-kernel.sh: build the patched guest kernel and its selftests, boot them in QEMU (TCG)
# and report one result line per test case on stdout. Progress goes to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
CACHE="${LAB_CACHE:-${CAPDELEGATE_CACHE:-$ROOT/.cache}}"
TREES=(6.1 6.12)                  # Debian 12's linux-source-* packages; 6.1 is the design's tree

# --tree T (anywhere in the arguments) picks the tree; default 6.1.
TREE=6.1 ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tree) [ $# -ge 2 ] || { echo "lab-kernel: --tree needs a value (${TREES[*]})" >&2; exit 2; }
            TREE=$2; shift 2 ;;
    --tree=*) TREE=${1#--tree=}; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
set -- ${ARGS[@]+"${ARGS[@]}"}
case " ${TREES[*]} " in *" $TREE "*) ;; *) echo "lab-kernel: no tree '$TREE' (trees: ${TREES[*]})" >&2; exit 2 ;; esac

# everything of ours lives in K: 6.1 keeps the cache directory it always had
if [ "$TREE" = 6.1 ]; then K="$CACHE/kernel"; else K="$CACHE/kernel-$TREE"; fi
SRC="$K/linux-source-$TREE"       # unpacked tree, series applied in place
OBJ="$K/build"                    # O= build dir: never moved or copied
OUT="$K/out"                      # stable artifacts: bzImage, selftests/, fixtures.img, run-as
TARBALL=/usr/src/linux-source-$TREE.tar.xz
PKG=linux-source-$TREE
PATCHES="$HERE/patches/$TREE"     # this tree's form of each patch named in kernel/series
MUTATIONS="$HERE/mutations/$TREE" # this tree's form of each mutation
SELFTESTS=(test_inheritable test_caps64 test_execve)
BOOT_TIMEOUT=${LAB_KERNEL_BOOT_TIMEOUT:-420}
T0=${LAB_T0:-$(date +%s)}

usage() {
  cat <<'EOF'
usage: kernel/lab-kernel.sh [--tree 6.1|6.12] COMMAND

  --tree T              the Debian 12 source package linux-source-T (default 6.1); each tree
                        has its own cache directory, patches/T/ and mutations/T/
  build                 unpack linux-source-T, apply kernel/series, configure (tinyconfig +
                        kernel/guest.config), build bzImage, static selftests and the fixture
                        disk; cached by a hash of the inputs
  path bzimage|selftests|fixtures
                        print the absolute path of the built artifact (building first if needed)
  test                  boot the kernel in QEMU (TCG) and print PASS/FAIL/SKIP<TAB>name per case
  mutation              apply each kernel/mutations/T/*.patch on top of the series, rebuild, boot,
                        and require failures: PASS<TAB>mutation NAME caught by: ...
  results CONSOLE.LOG    print the result lines of a saved console log (expects the tree built)
  --help                this text

Environment: LAB_CACHE (default ./.cache), LAB_KERNEL_BOOT_TIMEOUT (seconds, default 420).
EOF
}

log() { printf '[kernel %s %4ss] %s\n' "$TREE" "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf 'lab-kernel: %s\n' "$*" >&2; exit 2; }

deb_version() { dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || die "package $PKG not installed (./lab deps)"; }

# Hash of everything a kernel build depends on; $1: an extra (mutation) patch or "".
inputs_hash() {
  { deb_version; cat "$HERE/series" "$HERE/guest.config"
    while read -r p; do cat "$PATCHES/$p"; done < "$HERE/series"
    [ -z "${1:-}" ] || cat "$1"; } | sha256sum | cut -c1-16
}

unpack() {
  local v; v=$(deb_version)
  if [ -f "$K/unpacked" ] && [ "$(cat "$K/unpacked")" = "$v" ] && [ -f "$SRC/Makefile" ]; then return; fi
  log "unpack $TARBALL ($PKG $v)"
  rm -rf "$SRC" "$OBJ" "$K/applied" "$K/stamp" "$K/config-stamp" "$OUT"
  mkdir -p "$K"
  tar -C "$K" -xf "$TARBALL"
  mkdir -p "$K/applied"
  echo "$v" > "$K/unpacked"
}

# Bring the tree to exactly the patches "$@" (in order). $K/applied/NNN holds copies of what is
# applied; the longest identical prefix stays, the rest is reverted newest first.
tree_set() {
  local want=("$@") have=() i keep=0 f
  mkdir -p "$K/applied"
  mapfile -t have < <(find "$K/applied" -type f | sort)
  while [ "$keep" -lt "${#have[@]}" ] && [ "$keep" -lt "${#want[@]}" ] \
        && cmp -s "${have[$keep]}" "${want[$keep]}"; do keep=$((keep + 1)); done
  for ((i = ${#have[@]} - 1; i >= keep; i--)); do
    log "revert $(basename "${have[$i]}")"
    patch -d "$SRC" -p1 -R -s -f --no-backup-if-mismatch < "${have[$i]}" >&2 || die "cannot revert ${have[$i]}"
    rm -f "${have[$i]}"
  done
  for ((i = keep; i < ${#want[@]}; i++)); do
    f=$(printf '%s/%03d-%s' "$K/applied" "$i" "$(basename "${want[$i]}")")
    log "apply $(basename "${want[$i]}")"
    patch -d "$SRC" -p1 -s -f --dry-run < "${want[$i]}" >&2 || die "${want[$i]} does not apply"
    patch -d "$SRC" -p1 -s -f --no-backup-if-mismatch < "${want[$i]}" >&2 || die "cannot apply ${want[$i]}"
    cp "${want[$i]}" "$f"
  done
}

series_paths() { while read -r p; do [ -n "$p" ] && echo "$PATCHES/$p"; done < "$HERE/series"; }

configure() {
  log "configure: tinyconfig + kernel/guest.config"
  make -s -C "$SRC" O="$OBJ" ARCH=x86_64 tinyconfig > "$K/merge_config.log" 2>&1 \
    || { cat "$K/merge_config.log" >&2; die "tinyconfig failed"; }
  "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" "$HERE/guest.config" \
    >> "$K/merge_config.log" 2>&1 || { cat "$K/merge_config.log" >&2; die "merge_config failed"; }
  make -s -C "$SRC" O="$OBJ" ARCH=x86_64 olddefconfig >> "$K/merge_config.log" 2>&1 \
    || { cat "$K/merge_config.log" >&2; die "olddefconfig failed"; }
  local line missing=0
  while read -r line; do
    case "$line" in
      CONFIG_*) grep -qxF "$line" "$OBJ/.config" || { log "config: $line dropped"; missing=1; } ;;
      "# CONFIG_"*" is not set") line=${line#\# }; line=${line%% *}
        ! grep -q "^$line=" "$OBJ/.config" || { log "config: $line switched on again"; missing=1; } ;;
    esac
  done < "$HERE/guest.config"
  [ "$missing" -eq 0 ] || die "configure: guest.config values did not survive olddefconfig"
}

make_bzimage() {
  local t=$(date +%s) pid
  log "make -j2 bzImage (a cold build: about 5 min on an idle 2-core machine, 512 s measured at load 8; a rebuild after a patch: seconds; log: $K/make.log)"
  make -C "$SRC" O="$OBJ" ARCH=x86_64 -j2 bzImage > "$K/make.log" 2>&1 & pid=$!
  local n=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1; n=$((n + 1))
    [ $((n % 30)) -ne 0 ] || log "  building, $(( $(date +%s) - t )) s: $(tail -1 "$K/make.log" | cut -c1-60)"
  done
  wait "$pid" || { tail -30 "$K/make.log" >&2; die "kernel build failed"; }
  log "bzImage built in $(( $(date +%s) - t )) s"
}

# The kernel in $OBJ for the series plus optional mutation $1; rebuilt only when inputs changed.
build_kernel() {
  local h; h=$(inputs_hash "${1:-}")
  unpack
  if [ -f "$K/stamp" ] && [ "$(cat "$K/stamp")" = "$h" ] && [ -f "$OBJ/arch/x86/boot/bzImage" ]; then
    log "kernel $h up to date"; return
  fi
  rm -f "$K/stamp"          # the tree is in flux until the build succeeds
  local ps; mapfile -t ps < <(series_paths; [ -z "${1:-}" ] || echo "$1")
  tree_set "${ps[@]}"
  # reconfigure only when the config inputs changed (a mutation touching Kconfig counts)
  local ch; ch=$(inputs_hash "$( [ -n "${1:-}" ] && grep -q '^+++ .*Kconfig' "$1" && echo "$1")")
  if [ ! -f "$K/config-stamp" ] || [ "$(cat "$K/config-stamp")" != "$ch" ] || [ ! -f "$OBJ/.config" ]; then
    rm -f "$K/config-stamp"; configure; echo "$ch" > "$K/config-stamp"
  fi
  make_bzimage
  echo "$h" > "$K/stamp"
}

build_selftests() {
  local d="$SRC/tools/testing/selftests/capabilities" o="$OUT/selftests" t
  rm -rf "$o"; mkdir -p "$o"
  log "selftests: static ${SELFTESTS[*]} validate_cap, and run-as"
  for t in test_inheritable test_caps64; do
    gcc -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -static -o "$o/$t" "$d/$t.c"
  done
  # upstream's tests; libcap-ng's static getpwuid/initgroups link warnings do not apply here
  for t in test_execve validate_cap; do
    gcc -std=gnu11 -O2 -Wall -static -o "$o/$t" "$d/$t.c" -lcap-ng 2> "$K/$t.link.log" \
      || { cat "$K/$t.link.log" >&2; die "selftests: $t does not build"; }
  done
  # validate_cap is test_execve's exec target (it copies it to a tmpfs with mode 0700): kept
  # non-executable so that a runner executing every program of the directory skips it
  chmod 0644 "$o/validate_cap"
  gcc -std=gnu11 -O2 -Wall -Wextra -static -o "$OUT/run-as" "$HERE/guest/run-as.c"
}

# security.capability values exec must see but setxattr refuses: placed with debugfs.
build_fixtures() {
  local d="$OUT/fixtures.d" img="$OUT/fixtures.img" name hex err
  rm -rf "$d" "$img"; mkdir -p "$d"
  declare -A vals=(
    [v1_fi]='00000001 00000000 00200000'            # rev 1, fI = {net_raw}
    [v1_fe_fi]='01000001 00000000 00200000'         # rev 1 + effective
    [v1_fi_all]='00000001 00000000 ffffffff'        # rev 1, fI = all low bits
    [v2_fi_high]='00000002 00000000 00000000 00000000 04000000'   # rev 2, fI = {syslog}
    [bad_v1_size20]='00000001 00000000 00200000 00000000 00000000'
    [bad_v2_size16]='00000002 00000000 00200000 00000000'
    [bad_v3_size20]='00000003 00000000 00200000 00000000 00000000'
    [bad_rev4]='00000004 00000000 00200000 00000000 00000000'
    [bad_size2]='0100'
  )
  for name in "${!vals[@]}"; do
    cp "$OUT/selftests/test_caps64" "$d/$name"
    hex=$(tr -d ' ' <<< "${vals[$name]}")
    xxd -r -p <<< "$hex" > "$OUT/$name.xattr"
  done
  mke2fs -q -t ext4 -d "$d" -F "$img" 16M >"$img.log" 2>&1 || { cat "$img.log" >&2; die "fixtures: mke2fs failed"; }
  for name in "${!vals[@]}"; do
    # debugfs reports a failed request on stderr and still exits 0: judge by its output
    err=$(debugfs -w -R "ea_set -f $OUT/$name.xattr /$name security.capability" "$img" 2>&1 >/dev/null \
      | grep -v '^debugfs [0-9]' || true)
    [ -z "$err" ] || die "fixtures: debugfs ea_set $name: $err"
    rm -f "$OUT/$name.xattr"
  done
  rm -rf "$d"
  log "fixtures: $img (${#vals[@]} labelled files)"
}

# Build everything for the series; artifacts in $OUT are replaced only by a clean series build.
cmd_build() {
  build_kernel ""
  # selftests, fixtures and initramfs also depend on this script and guest/
  local h; h=$({ cat "$K/stamp" "$HERE/lab-kernel.sh" "$HERE"/guest/*; } | sha256sum | cut -c1-16)
  if [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$h" ]; then return; fi
  mkdir -p "$OUT"
  build_selftests
  build_fixtures
  build_initramfs
  cp "$OBJ/arch/x86/boot/bzImage" "$OUT/bzImage"
  echo "$h" > "$OUT/stamp"
  log "artifacts in $OUT"
}

build_initramfs() {
  local d="$OUT/initramfs.d"
  rm -rf "$d"; mkdir -p "$d"/{bin,dev,proc,sys,tmp,fixtures,selftests}
  cp /bin/busybox "$d/bin/busybox"
  cp "$HERE/guest/init.sh" "$d/init"
  cp "$OUT/selftests"/* "$d/selftests/"
  cp "$OUT/run-as" "$d/bin/run-as"
  (cd "$d" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) > "$OUT/initramfs.cpio.gz"
  rm -rf "$d"
}

# Boot $1 (a bzImage) with the test initramfs and fixture disk; console to $2. no_timer_check:
# under TCG on a loaded host the early check that the timer interrupt arrives can lose the CPU
# for its whole window and the boot ends in "IO-APIC + timer doesn't work!" (a panic seen once
# at load 6; every guest boot of the lab passes it for the same reason).
boot() {
  local t=$(date +%s) rc=0
  log "boot $(basename "$1") (TCG, timeout ${BOOT_TIMEOUT}s, console: $2)"
  : > "$2"
  timeout -k 5 "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -m 512 -smp 1 \
    -display none -monitor none -no-reboot -serial "file:$2" \
    -kernel "$1" -initrd "$OUT/initramfs.cpio.gz" \
    -drive "file=$OUT/fixtures.img,format=raw,if=virtio,readonly=on" \
    -append "console=ttyS0 panic=-1 rdinit=/init no_timer_check" < /dev/null >&2 || rc=$?
  [ "$rc" -ne 124 ] || log "boot: timed out after ${BOOT_TIMEOUT}s"
  log "guest finished in $(( $(date +%s) - t )) s (qemu rc=$rc)"
}

# Every case the console must report: KUnit cases and harness TESTs from the patched tree.
expected_cases() {
  local c="$SRC/tools/testing/selftests/capabilities" who t
  sed -n 's/^\s*KUNIT_CASE(\([A-Za-z0-9_]*\)).*/kunit commoncap.\1/p' "$SRC/security/commoncap_test.c"
  for who in root uid1000; do
    for t in test_inheritable test_caps64; do
      sed -n "s/^TEST(\([A-Za-z0-9_]*\)).*/selftest $who $t.\1/p" "$c/$t.c"
    done
  done
}

# Console log $1 -> result lines; missing cases and unfinished programs are FAILs.
# (here-strings, not pipes into grep -q: with pipefail an early exit would look like a miss)
results() {
  local parsed names ends name who end
  parsed=$(awk -f "$HERE/guest/parse-console.awk" "$1")
  names=$(cut -f2 <<< "$parsed")
  ends=$(grep '^END' <<< "$parsed" | cut -f2 || true)
  grep -v '^END' <<< "$parsed" || true
  while read -r name; do
    grep -qxF "$name" <<< "$names" || printf 'FAIL\t%s\tmissing from the console output\n' "$name"
  done < <(expected_cases)
  for who in "root test_inheritable" "uid1000 test_inheritable" "root test_caps64" \
             "uid1000 test_caps64" "root test_execve"; do
    end=$(grep "^$who rc=" <<< "$ends" || true)
    if [ -z "$end" ]; then printf 'FAIL\tselftest %s\tdid not finish (crash or timeout)\n' "$who"
    elif [ "$end" != "$who rc=0" ]; then printf 'FAIL\tselftest %s exit status\t%s\n' "$who" "$end"
    fi
  done
  grep -q '^@@ DONE' "$1" || log "results: the guest did not reach the end of /init"
}

# The series itself, per patch: checkpatch.pl --strict of this tree finds 0 errors and 0 warnings
# (its verdict cached by the patch, the script and the package version), and the patch equals
# every other tree's form of it but for context (what one series per tree may differ in).
series_checks() {
  local p name key f out t o
  mkdir -p "$K/checkpatch"
  for p in $(series_paths); do
    name=$(basename "$p" .patch)
    key=$({ cat "$p" "$SRC/scripts/checkpatch.pl"; deb_version; } | sha256sum | cut -c1-16)
    f="$K/checkpatch/$key"
    if [ ! -f "$f" ]; then
      log "checkpatch --strict $name"
      (cd "$SRC" && perl scripts/checkpatch.pl --strict --terse --show-types "$p" > "$f.tmp" 2>&1 || true)
      mv "$f.tmp" "$f"
    fi
    out=$(grep -o 'total: [0-9]* errors, [0-9]* warnings' "$f" || echo "no checkpatch summary")
    if [ "$out" = "total: 0 errors, 0 warnings" ]; then printf 'PASS\tcheckpatch --strict %s\n' "$name"
    else printf 'FAIL\tcheckpatch --strict %s\t%s: %s\n' "$name" "$out" "$(grep -E ': (ERROR|WARNING):' "$f" | sed 's/^[^:]*://' | paste -sd';' -)"; fi
    for t in "${TREES[@]}"; do
      [ "$t" != "$TREE" ] || continue
      o="$HERE/patches/$t/$(basename "$p")"
      if [ -f "$o" ] && cmp -s <(patch_core "$p") <(patch_core "$o"); then
        printf 'PASS\tseries %s equals the %s form but for context\n' "$name" "$t"
      else printf 'FAIL\tseries %s equals the %s form but for context\t%s\n' "$name" "$t" \
        "$([ -f "$o" ] && echo "added or removed lines differ" || echo "no patches/$t/$(basename "$p")")"; fi
    done
  done
}
# A patch without what legitimately differs between trees: context lines, hunk headers, blob ids.
patch_core() { grep -Ev '^( |@@ |index [0-9a-f]+\.\.|From [0-9a-f]{40} )' "$1"; }

cmd_test() {
  cmd_build
  build_initramfs
  boot "$OUT/bzImage" "$K/console.log"
  results "$K/console.log"
  series_checks
}

# A mutant's bzImage, kept by the hash of its inputs: a warm run finds it without rebuilding
# (and boots it only when its verdict is not kept: cmd_mutation). Prints the path; builds into
# the tree only when it is missing.
mutant_bzimage() {
  local m=$1 h f
  h=$(inputs_hash "$m"); f="$K/mutants/$h.bzImage"
  if [ -f "$f" ]; then log "mutation $(basename "$m" .patch): bzImage $h cached"; echo "$f"; return; fi
  # In the background and waited for: a subshell whose status is tested ("if ! (...)") runs
  # with set -e off, so a failing patch or cp would not stop it.
  build_kernel "$m" >&2 & wait $! || return 1
  mkdir -p "$K/mutants"
  cp "$OBJ/arch/x86/boot/bzImage" "$f.tmp" && mv "$f.tmp" "$f"
  echo "$f"
}

# The names of the mutations of every tree, sorted (kernel/mutations/*/NAME.patch).
mutation_names() {
  local t f
  for t in "${TREES[@]}"; do for f in "$HERE/mutations/$t"/*.patch; do [ -e "$f" ] && basename "$f" .patch; done; done | sort -u
}

# What a mutant's boot is judged on besides its bzImage: the initramfs's files (not its cpio,
# whose mtimes change at every build), the fixture disk, this script (the boot's command line,
# results()), the console parser and QEMU's version.
judge_inputs() {
  { sha256sum /bin/busybox "$HERE/guest/init.sh" "$OUT/run-as" "$OUT/selftests"/* "$OUT/fixtures.img" \
      "$HERE/lab-kernel.sh" "$HERE/guest/parse-console.awk" | cut -d' ' -f1
    qemu-system-x86_64 --version | head -n 1; } | sha256sum | cut -c1-16
}
# A verdict is kept only when the boot ran to its end and every case that failed failed in a test
# (no case missing, every program finished, no case stopped by the harness's timeout): a timeout
# or a crash on a loaded host is never kept.
keepable() {
  grep -q '^@@ DONE' "$1" && ! grep -q 'terminated by timeout' "$1" &&
    ! grep -qE $'\t(missing from the console output|did not finish)' <<< "$2"
}

cmd_mutation() {
  cmd_build
  build_initramfs
  local m name res caught img keep=() judge v
  # A mutant caught once is caught again by the same bzImage, tests and QEMU: its verdict is kept
  # under the hash of all of them ($K/mutants/*.verdict) and a warm run boots only mutants whose
  # kernel or tests changed (LAB_KERNEL_FRESH=1 boots every one). Only catches are kept.
  judge=$(judge_inputs)
  # every mutation has a form for each tree: one missing here is a FAIL, not a silent gap
  for name in $(mutation_names); do
    m="$MUTATIONS/$name.patch"
    [ -f "$m" ] || { printf 'FAIL\tmutation %s\thas no form for tree %s (kernel/mutations/%s/)\n' "$name" "$TREE" "$TREE"; continue; }
    log "mutation $name"
    if ! img=$(mutant_bzimage "$m"); then
      printf 'FAIL\tmutation %s\tdoes not apply or build\n' "$name"; continue
    fi
    keep+=("$(basename "$img")")
    v="$K/mutants/$(sha256sum "$img" | cut -c1-16)-$judge.verdict"
    if [ -z "${LAB_KERNEL_FRESH:-}" ] && [ -s "$v" ]; then
      keep+=("$(basename "$v")")
      log "mutation $name: caught before by this bzImage and these tests (kept: $(basename "$v"))"
      cat "$v"; continue
    fi
    boot "$img" "$K/console-$name.log"
    res=$(results "$K/console-$name.log")
    caught=$(awk -F'\t' '$1 == "FAIL" { print $2 }' <<< "$res" | paste -sd, - | sed 's/,/, /g')
    if [ -n "$caught" ]; then
      printf 'PASS\tmutation %s caught by: %s\n' "$name" "$caught" | tee "$v.tmp"
      if keepable "$K/console-$name.log" "$res"; then mv "$v.tmp" "$v"; keep+=("$(basename "$v")"); else rm -f "$v.tmp"; fi
    else printf 'FAIL\tmutation %s not caught\n' "$name"; rm -f "$v"; fi
  done
  # bzImages of mutants unused for 14 days are dropped: the cache is shared between checkouts,
  # and another checkout's series or mutations give other hashes that are still in use there
  local f
  for f in "${keep[@]}"; do touch "$K/mutants/$f"; done
  find "$K/mutants" \( -name '*.bzImage' -o -name '*.verdict' \) -mtime +14 -delete 2>/dev/null || true
  log "mutation: restoring the series build"
  build_kernel ""
}

with_lock() { mkdir -p "$K"; exec 9>"$K/lock"; flock 9; "$@"; }

cmd_path() {
  case "${1:-}" in
    bzimage) with_lock cmd_build; echo "$OUT/bzImage" ;;
    selftests) with_lock cmd_build; echo "$OUT/selftests" ;;
    fixtures) with_lock cmd_build; echo "$OUT/fixtures.img" ;;
    *) die "path: expected bzimage, selftests or fixtures" ;;
  esac
}

main() {
  case "${1:-}" in
    build) with_lock cmd_build ;;
    path) shift; cmd_path "$@" ;;
    test) with_lock cmd_test ;;
    mutation) with_lock cmd_mutation ;;
    results) [ -f "${2:-}" ] || die "results: expected a console log"; results "$2" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
