#!/usr/bin/env bash
# tests/vm/run.sh: the guest login tests. Needs root (the image build) and QEMU; boots the guest
# once under TCG, in four phases: the demo policy (every user, plus the kernel selftests), a policy
# with a syntax error, a world-writable policy, and a policy granting capabilities outside login's
# bounding set (the leak test); root switches the policy between them. login.exp only drives the
# console and records a transcript; this script judges it.
# Standard output: one line per check, PASS|FAIL<TAB>name or SKIP<TAB>name<TAB>reason. Logs: stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
export LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
export LAB_T0=${LAB_T0:-$(date +%s)}
T0=$(date +%s)

# --tree T: boot the kernel of Debian's linux-source-T (kernel/lab-kernel.sh --tree T) with that
# tree's selftests and fixtures; transcripts then go to $LAB_RESULTS/vm-T.
tree="" work=${LAB_RESULTS:-$LAB_ROOT/_results}/vm
case "${1:-}" in
  --help|-h)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    echo "usage: tests/vm/run.sh [--tree 6.1|6.12] [--help]   (transcripts in \$LAB_RESULTS/vm[-TREE])"
    exit 0 ;;
  --tree) [ $# -ge 2 ] || { echo "tests/vm/run.sh: --tree needs a value" >&2; exit 2; }
          tree=$2 work=$work-$2 ;;
  "") ;;
  *) echo "tests/vm/run.sh: unknown argument $1 (usage: tests/vm/run.sh [--tree T])" >&2; exit 2 ;;
esac
kernel_sh=("$LAB_ROOT/kernel/lab-kernel.sh" ${tree:+--tree "$tree"})

log() { printf '[vm-tests %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
pass() { printf 'PASS\tvm/%s\n' "$1"; }
fail() { printf 'FAIL\tvm/%s\n' "$1"; log "FAIL $1${2:+: $2}"; }
skip() { printf 'SKIP\tvm/%s\t%s\n' "$1" "$2"; }
# check NAME DETAIL CONDITION...: PASS if the condition command succeeds; DETAIL explains a FAIL.
check() { local name=$1 detail=$2; shift 2; if "$@"; then pass "$name"; else fail "$name" "$detail"; fi; }

if [ "$(id -u)" -ne 0 ]; then
  skip guest "needs root: builds the guest image (mmdebstrap, setcap)"; exit 0
fi
command -v expect >/dev/null && command -v qemu-system-x86_64 >/dev/null \
  || { log "expect and qemu-system-x86 are needed (./lab deps)"; exit 2; }

# --- inputs: kernel, image, selftests ----------------------------------------------------------
# With --tree the tree's own kernel, selftests and fixtures, whatever CAPDELEGATE_* say.
[ -z "$tree" ] || unset CAPDELEGATE_KERNEL CAPDELEGATE_SELFTESTS CAPDELEGATE_FIXTURES
kernel=${CAPDELEGATE_KERNEL:-$("${kernel_sh[@]}" path bzimage)} \
  || { log "no guest kernel (kernel/lab-kernel.sh ${tree:+--tree $tree }path bzimage failed)"; exit 2; }
export CAPDELEGATE_KERNEL=$kernel
"$LAB_ROOT/vm-image/build.sh" >/dev/null || { log "image build failed"; exit 2; }
# CAPDELEGATE_SELFTESTS / CAPDELEGATE_FIXTURES override the kernel series' paths (set but empty:
# none, e.g. to check the login tests against a mutated module without the kernel cache).
if [ -n "${CAPDELEGATE_SELFTESTS+set}" ]; then selftests=$CAPDELEGATE_SELFTESTS
else selftests=$("${kernel_sh[@]}" path selftests 2>/dev/null) || selftests=""; fi
if [ -n "${CAPDELEGATE_FIXTURES+set}" ]; then fixtures=$CAPDELEGATE_FIXTURES
else fixtures=$("${kernel_sh[@]}" path fixtures 2>/dev/null) || fixtures=""; fi
rm -rf "$work"; mkdir -p "$work"

# The policies of the four phases: the first is installed by PID 1 from the overlay, the others by
# root between logins (/lab/use-policy), each with its mode.
printf 'alice    cap_net_raw\n@netops  cap_net_raww\ncarol    cap_syslog\n' >"$work/syntax.conf"
# login's own pI holds setpcap, setuid, setgid, chown and fowner (raised for the ambient set). A
# module that fails to apply the policy and leaves pI alone hands them to the user (Debian's pam_cap
# does); ours must set pI to exactly the grantable part of the grant.
printf 'alice  cap_sys_admin\nbob    cap_net_raw, cap_sys_module\n' >"$work/leak.conf"
declare -A POLICY=([demo]=$LAB_ROOT/config/capdelegate.conf [syntax]=$work/syntax.conf
                   [writable]=$LAB_ROOT/config/capdelegate.conf [leak]=$work/leak.conf)
declare -A MODE=([demo]=644 [syntax]=644 [writable]=666 [leak]=644)

# The tar archive PID 1 extracts before login starts: the demo policy, the later ones, the tools.
make_overlay() {
  local root=$work/boot/root b
  mkdir -p "$root/lab/policies" "$root/etc/security"
  install -m 755 "$here/probe" "$here/collect" "$here/use-policy" "$root/lab/"
  install -m "${MODE[demo]}" "${POLICY[demo]}" "$root/etc/security/capdelegate.conf"
  for b in syntax writable leak; do install -m "${MODE[$b]}" "${POLICY[$b]}" "$root/lab/policies/$b.conf"; done
  if [ -n "$selftests" ] && [ -d "$selftests" ]; then
    install -m 755 "$here/run-selftests" "$root/lab/"
    mkdir -p "$root/lab/selftests"; cp -a "$selftests/." "$root/lab/selftests/"
  fi
  # Files and /lab only: directory entries for /etc would re-own and re-mode the guest's /etc.
  (cd "$root" && { echo lab; find lab etc -mindepth 1 ! -type d -o -path 'lab/*' -type d; } \
    | tar --owner=0 --group=0 --numeric-owner --no-recursion -cf "$work/boot/overlay.tar" -T -)
}

# boot "STEP...": one boot, login.exp's steps (users, and policy=NAME to switch); writes each
# phase's facts to $work/PHASE/facts as "USER<TAB>key=value" lines, the first phase being demo.
boot() {
  local extra=() t=$(date +%s) b
  log "boot: $1, then root"
  [ -n "$fixtures" ] && extra=(--fixtures "$fixtures")
  expect "$here/login.exp" "$work/boot/transcript" "$1" \
    "$LAB_ROOT/vm-image/run.sh" --quiet --timeout 900 --overlay "$work/boot/overlay.tar" "${extra[@]}" \
    || log "boot: login.exp failed (see $work/boot/transcript)"
  for b in demo syntax writable leak; do mkdir -p "$work/$b"; : >"$work/$b/facts"; done
  # Facts are "@@ key=value" lines; strip CRs and terminal escapes (bash's bracketed paste).
  tr -d '\r' <"$work/boot/transcript" | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' | awk -v dir="$work" '
    BEGIN       { p = "demo" }
    /^@@ phase=/ { p = substr($0, 10); u = ""; next }
    /^@@ user=/ { u = substr($0, 9) }
    /^@@ /      { print (u == "" ? "-" : u) "\t" substr($0, 4) >(dir "/" p "/facts") }'
  log "boot: done in $(( $(date +%s) - t )) s, $(grep -m1 -o 'boot_to_login_ms=[0-9]*' "$work/demo/facts" || echo 'no login prompt')"
}

# fact BOOT USER KEY: the value recorded for KEY in USER's session (first one).
fact() { awk -F'\t' -v u="$2" -v k="$3=" '$1 == u && index($2, k) == 1 { print substr($2, length(k) + 1); exit }' "$work/$1/facts"; }
logs() { awk -F'\t' 'index($2, "log=") == 1 { print substr($2, 5) }' "$work/$1/facts"; }
has_user() { grep -qx "$2"$'\t'"user=$2" "$work/$1/facts"; }
# A value read from the guest is untrusted text: anything but hex fails the one check (inside
# $(( )) it would abort the whole suite, or be evaluated as an expression).
is_hex() { [[ "$1" =~ ^[0-9a-fA-F]{1,16}$ ]]; }
hex_eq() { is_hex "$1" && [ $(( 16#$1 )) -eq $(( $2 )) ]; }
hex_and() { is_hex "$1" && [ $(( 16#$1 & $2 )) -ne 0 ]; }

NET_RAW=$((1 << 13)) SYSLOG=$((1 << 34)) SETPCAP=$((1 << 8))
declare -A EXPECT=([alice]=$NET_RAW [bob]=0 [carol]=$SYSLOG [dave]=0 [erin]=$NET_RAW)

# session_checks BOOT USER EXPECTED_MASK: the capability sets of the shell and of login.
session_checks() {
  local b=$1 u=$2 want=$3 inh prm eff amb l
  check "$b/$u/logs-in" "no session recorded" has_user "$b" "$u" || return 0
  inh=$(fact "$b" "$u" shell.CapInh) prm=$(fact "$b" "$u" shell.CapPrm)
  eff=$(fact "$b" "$u" shell.CapEff) amb=$(fact "$b" "$u" shell.CapAmb)
  check "$b/$u/shell-CapInh-exact" "CapInh=$inh, want $(printf %016x "$want")" hex_eq "$inh" "$want"
  check "$b/$u/shell-CapPrm-CapEff-CapAmb-zero" "CapPrm=$prm CapEff=$eff CapAmb=$amb" \
    eval 'hex_eq "$prm" 0 && hex_eq "$eff" 0 && hex_eq "$amb" 0'
  # The proof that delegation went through CAP_SETPCAP only: login (the shell's parent) holds
  # setpcap but none of the capabilities it handed out, and its own pI holds the grant.
  l=$(fact "$b" "$u" login.CapPrm)
  check "$b/$u/login-has-setpcap-not-grant" "comm=$(fact "$b" "$u" login.comm) CapPrm=$l" \
    eval '[ "$(fact "$b" "$u" login.comm)" = login ] && hex_and "$l" $SETPCAP && ! hex_and "$l" $((NET_RAW | SYSLOG))'
  check "$b/$u/login-CapInh-is-grant" "login CapInh=$(fact "$b" "$u" login.CapInh)" \
    hex_eq "$(fact "$b" "$u" login.CapInh)" "$want"
}

# ping_check BOOT USER ok|eperm
ping_check() {
  local rc out; rc=$(fact "$1" "$2" ping.rc) out=$(fact "$1" "$2" ping.out)
  if [ "$3" = ok ]; then check "$1/$2/ping-works" "rc=$rc: $out" [ "$rc" = 0 ]
  else check "$1/$2/ping-eperm" "rc=$rc: $out" eval '[ "$rc" != 0 ] && [[ $out == *"Operation not permitted"* ]]'; fi
}
dmesg_check() {
  local rc out; rc=$(fact "$1" "$2" dmesg.rc) out=$(fact "$1" "$2" dmesg.out)
  if [ "$3" = ok ]; then check "$1/$2/dmesg-delegated-works" "rc=$rc: $out" [ "$rc" = 0 ]
  else check "$1/$2/dmesg-delegated-eperm" "rc=$rc: $out" eval '[ "$rc" != 0 ] && [[ $out == *"Operation not permitted"* ]]'; fi
}
# notice_check BOOT USER [WORD]: the module's LOG_NOTICE line for USER (containing WORD).
notice_check() {
  local b=$1 u=$2 w=${3:-}
  check "$b/$u/syslog-notice${w:+-$w}" "no notice line" \
    eval 'logs "$b" | grep "pam_capdelegate" | grep "\.notice" | grep -w "user=$u" | grep -q -- "$w"'
}
# policy_check PHASE: the policy the phase ran under is the one meant, with its mode and owner.
policy_check() {
  local b=$1 sha; sha=$(sha256sum <"${POLICY[$b]}" | cut -d' ' -f1)
  check "$b/policy-installed" "mode=$(fact "$b" root policy_mode) sha256=$(fact "$b" root policy_sha256)" \
    eval '[ "$(fact "$b" root policy_mode)" = "${MODE[$b]} root:root" ] && [ "$(fact "$b" root policy_sha256)" = "$sha" ]'
}
poweroff_check() {
  local b=$1
  check "$b/poweroff-from-inside" "$(grep -m1 'error=' "$work/$b/facts" || echo "qemu status $(fact "$b" root qemu_status)")" \
    eval '[ -n "$(fact "$b" root poweroff_ms)" ] && [ "$(fact "$b" root qemu_status)" = 0 ]'
}
all_zero() { local f; for f in CapInh CapPrm CapEff CapAmb; do hex_eq "$(fact "$1" "$2" "shell.$f")" 0 || return 1; done; }

make_overlay
boot "alice bob carol dave erin policy=syntax alice carol erin policy=writable alice carol erin policy=leak alice bob"

# --- phase 1: the demo policy, every user -----------------------------------------------------
policy_check demo
for u in alice bob carol dave erin; do
  session_checks demo "$u" "${EXPECT[$u]}"
  notice_check demo "$u"
done
ping_check demo alice ok; ping_check demo erin ok
ping_check demo bob eperm; ping_check demo dave eperm; ping_check demo carol eperm
dmesg_check demo carol ok; dmesg_check demo bob eperm
check demo/root/no-capabilities "CapInh/Prm/Eff/Amb not all 0" all_zero demo root
# login's sets, as PID 1 gave them: exactly chown, fowner, setgid, setuid, setpcap (0x1c9) in pP;
# the bounding set adds net_raw and syslog (0x4000021c9); NOROOT + NOROOT_LOCKED in every session.
check demo/login-CapPrm-exactly-login-needs "CapPrm=$(fact demo alice login.CapPrm)" \
  hex_eq "$(fact demo alice login.CapPrm)" 0x1c9
check demo/bounding-set "CapBnd=$(fact demo alice shell.CapBnd)" hex_eq "$(fact demo alice shell.CapBnd)" 0x4000021c9
for u in alice root; do
  check "demo/$u/securebits-noroot-locked" "$(fact demo $u securebits)" \
    eval '[[ $(fact demo $u securebits) == "03/0x3/"* ]]'
done
check demo/sysctl-dmesg_restrict "$(fact demo alice sysctl.dmesg_restrict)" [ "$(fact demo alice sysctl.dmesg_restrict)" = 1 ]
check demo/sysctl-ping_group_range "$(fact demo alice sysctl.ping_group_range)" [ "$(fact demo alice sysctl.ping_group_range)" = "1 0" ]
getcaps=$(fact demo root getcap)
check demo/image/ping-fI-only "$getcaps" eval '[[ $getcaps == *"/usr/bin/ping cap_net_raw=i|"* ]]'
check demo/image/dmesg-delegated-fIfE "$getcaps" eval '[[ $getcaps == *"/usr/local/bin/dmesg-delegated cap_syslog=ei|"* ]]'
check demo/image/no-pam_cap "pam_cap.so present" [ "$(fact demo root pam_cap_present)" = 0 ]
check demo/image/pam.d-login-uses-module "no pam_capdelegate line" [ "$(fact demo root pam_login)" -ge 1 ]
check demo/no-policy-error-logged "a pam_capdelegate LOG_ERR line with the demo policy" \
  eval '! logs demo | grep pam_capdelegate | grep -q "\.err"'
# login holds no CAP_AUDIT_WRITE (only what it needs plus CAP_SETPCAP), so the kernel refuses the
# module's audit record; the module then logs nothing about it, which the check above covers.
skip demo/audit-record "login runs without CAP_AUDIT_WRITE in this guest: no audit record to check"

# The kernel series' selftests, run by the guest's PID 1 with full capabilities.
if [ -z "$selftests" ] || [ ! -d "$selftests" ]; then
  skip selftests "no selftests directory (kernel/lab-kernel.sh path selftests, or CAPDELEGATE_SELFTESTS)"
else
  check selftests/ran "no selftests-done marker" grep -q $'\tselftests-done$' "$work/demo/facts"
  check selftests/kunit-ran "no KUnit result in the guest's kernel log" \
    grep -q $'\ttap kunit ' "$work/demo/facts"
  # A program may print several TAP runs (test_execve: as root, then as a non-root uid): number
  # repeated case names so that every case is its own check.
  declare -A seen=()
  while read -r name rest; do
      if [[ $rest =~ ^[[:space:]]*(not )?ok\ ([0-9]+)\ (.*)$ ]]; then
        desc=${BASH_REMATCH[3]} ; id="selftests/$name/${BASH_REMATCH[2]} ${desc%% #*}"
        seen[$id]=$(( ${seen[$id]:-0} + 1 )); [ "${seen[$id]}" = 1 ] || id="$id (run ${seen[$id]})"
        if [[ $desc == *"# SKIP"* ]]; then skip "$id" "${desc#*# SKIP}"
        elif [ -z "${BASH_REMATCH[1]}" ]; then pass "$id"; else fail "$id"; fi
      fi
    done < <(awk -F'\t' 'index($2, "tap ") == 1 { print substr($2, 5) }' "$work/demo/facts")
  awk -F'\t' 'index($2, "selftest_rc ") == 1 { print substr($2, 13) }' "$work/demo/facts" \
  | while IFS== read -r name rc; do check "selftests/$name/exit-status" "rc=$rc" [ "$rc" = 0 ]; done
fi

# --- phases 2 and 3: a broken policy grants nothing, blocks no login, is logged ----------------
for b in syntax writable; do
  policy_check "$b"
  for u in alice carol erin; do session_checks "$b" "$u" 0; done
  ping_check "$b" alice eperm
done
check syntax/error-logged-file-line "no LOG_ERR line naming capdelegate.conf:2" \
  eval 'logs syntax | grep "\.err" | grep -q "/etc/security/capdelegate.conf:2:"'
check writable/error-logged-file "no LOG_ERR line naming the policy file" \
  eval 'logs writable | grep "\.err" | grep -q "/etc/security/capdelegate.conf"'

# --- phase 4: capabilities outside login's bounding set (see leak.conf above) ----------------
policy_check leak
session_checks leak alice 0
session_checks leak bob "$NET_RAW"
ping_check leak alice eperm; ping_check leak bob ok
notice_check leak alice cap_sys_admin
notice_check leak bob cap_sys_module
poweroff_check leak

log "done in $(( $(date +%s) - T0 )) s; transcripts in $work"
