#!/usr/bin/env bash
# tests/system/run.sh: the systemd guest end to end, in one boot. The project is installed from
# its .debs and enabled with pam-auth-update; logins use programs nobody here wrote: OpenSSH's
# client and server (password authentication driven by expect), util-linux su and login on the
# serial console, with the journal and auditd recording them. Root (over ssh) then changes the
# policy and the PAM stack between logins: a syntax error, strict, purge and reinstall.
# Standard output: one line per check, PASS|FAIL<TAB>name or SKIP<TAB>name<TAB>reason. Logs: stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
export LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
export LAB_T0=${LAB_T0:-$(date +%s)}
T0=$(date +%s)

release=bookworm site=""
usage() { echo "usage: tests/system/run.sh [--help] [--release bookworm|trixie] [--directory]"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
      usage
      echo "  (needs root; transcripts in \$LAB_RESULTS/system for bookworm, the default,"
      echo "  \$LAB_RESULTS/system-RELEASE for another). --directory: the release's guest as the"
      echo "  directory site (slapd, SSSD; tests/system/directory.sh), in \$LAB_RESULTS/system-directory"
      echo "  (bookworm) or \$LAB_RESULTS/system-directory-RELEASE"
      exit 0 ;;
    --release) [ $# -ge 2 ] || { usage >&2; exit 2; }; release=$2; shift 2 ;;
    --directory) site=directory; shift ;;
    *) usage >&2; exit 2 ;;
  esac
done
case "$release" in
  bookworm) work=${LAB_RESULTS:-$LAB_ROOT/_results}/system${site:+-$site} ;;
  trixie) work=${LAB_RESULTS:-$LAB_ROOT/_results}/system${site:+-$site}-$release ;;
  *) echo "tests/system/run.sh: unknown release '$release' (bookworm, trixie)" >&2; exit 2 ;;
esac

log() { printf '[system %s %4ss] %s\n' "$release" "$(( $(date +%s) - T0 ))" "$*" >&2; }
# case names: system/NAME on bookworm, system-trixie/NAME on trixie
suite=${work##*/}
pass() { printf 'PASS\t%s/%s\n' "$suite" "$1"; }
fail() { printf 'FAIL\t%s/%s\n' "$suite" "$1"; log "FAIL $1${2:+: $2}"; }
skip() { printf 'SKIP\t%s/%s\t%s\n' "$suite" "$1" "$2"; }
check() { local name=$1 detail=$2; shift 2; if "$@"; then pass "$name"; else fail "$name" "$detail"; fi; }

if [ "$(id -u)" -ne 0 ]; then skip guest "needs root: builds the guest image (mmdebstrap, chroot, setcap)"; exit 0; fi
for t in expect socat ssh qemu-system-x86_64; do
  command -v "$t" >/dev/null || { log "$t is needed (./lab deps)"; exit 2; }
done

# The image first: it needs no kernel, so ./lab test builds it beside a cold kernel build.
bargs=(--release "$release"); [ -z "$site" ] || bargs+=("--$site")
image=$("$LAB_ROOT/vm-image/system/build.sh" "${bargs[@]}") || { log "image build failed"; exit 2; }
kernel=${CAPDELEGATE_KERNEL:-$("$LAB_ROOT/kernel/lab-kernel.sh" path bzimage)} || { log "no guest kernel"; exit 2; }
export CAPDELEGATE_KERNEL=$kernel
rm -rf "$work"; mkdir -p "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sock=$work/console.sock

# --- before the boot: `timeout N ./lab run` on a terminal ----------------------------------------
# timeout(1) without --foreground gives lab a process group of its own, not the terminal's
# foreground: QEMU would stop on SIGTTOU at its first use of the console. lab says so and what to
# do instead, before it builds or boots anything. script(1) gives it a terminal (the "; echo" keeps
# the shell from exec'ing timeout, which as the session's leader could not leave its group).
script -qec "timeout 60 '$LAB_ROOT/lab' run --system --release $release --image '$image'; echo \"@@ rc=\$?\"" /dev/null \
  </dev/null >"$work/lab-run-timeout.txt" 2>&1 || true
check lab-run/timeout-without-foreground-refused "$(tr -d '\r' <"$work/lab-run-timeout.txt" | paste -sd' ')" \
  eval 'tr -d "\r" <"$work/lab-run-timeout.txt" | grep -qx "@@ rc=2" && grep -q "SIGTTOU" "$work/lab-run-timeout.txt"'

# --- boot ----------------------------------------------------------------------------------------
# As an administrator boots it (./lab run --system [--release R] [--directory]), with the image
# built above; the banner, which names the guest's users, goes to qemu.log.
log "boot: QEMU (TCG), ssh on 127.0.0.1:$port"
t_boot=$(date +%s%N)
"$LAB_ROOT/lab" run --system --release "$release" ${site:+"--$site"} --timeout 1800 --image "$image" \
  --ssh-port "$port" --console-socket "$sock" >"$work/qemu.log" 2>&1 &
qemu=$!
# run.sh's child is timeout(1), which passes the signal on to QEMU.
cleanup() { pkill -TERM -P "$qemu" 2>/dev/null || true; kill "$qemu" 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 1' INT TERM
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.2; done
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
if timeout 300 expect "$here/console.exp" "$sock" - >"$work/console-boot.txt" 2>&1; then
  boot_ms=$(ms "$t_boot"); log "boot: console login prompt after $boot_ms ms"
  pass boot/console-login-prompt
else
  fail boot/console-login-prompt "no prompt within 300 s (see $work/console-boot.txt)"; exit 0
fi
# Nothing on the console before the prompt but what a login needs: no module noise (the kernel
# has no modules; systemd asked for autofs4 when it was not built in).
check boot/console-no-module-noise "$(tr -d '\r' <"$work/console-boot.txt" | grep -m1 -iE 'module|autofs' || true)" \
  eval '! tr -d "\r" <"$work/console-boot.txt" | grep -qiE "Failed to (find|insert) module|autofs"'
# The login screen tells a newcomer who can log in, as the minimal guest's does (/etc/issue).
check boot/issue-names-demo-users "$(grep -m1 'Users:' "$work/console-boot.txt" || echo 'no Users: line')" \
  grep -q 'Users: alice bob carol dave erin, password = user name; root/root' "$work/console-boot.txt"
# So does lab's banner, with the release the image holds (not the one named on the command line).
# shellcheck disable=SC2034 # used in the eval'd check
case $release in bookworm) os="Debian GNU/Linux 12 (bookworm)" ;; *) os="Debian GNU/Linux 13 ($release)" ;; esac
check boot/banner-names-release "$(grep -m1 '^== capdelegate' "$work/qemu.log" || echo 'no banner')" \
  eval 'grep -q "^== capdelegate .* ($os)" "$work/qemu.log"'
for _ in $(seq 60); do ssh-keyscan -T 5 -p "$port" 127.0.0.1 >/dev/null 2>&1 && break; sleep 1; done
log "boot: sshd answers after $(ms "$t_boot") ms"

# login NAME USER PASSWORD COMMAND: one ssh login; transcript $work/NAME.txt; returns ssh.exp's status.
declare -A took=()
login() {
  local name=$1 t rc=0; t=$(date +%s%N)
  timeout 240 expect "$here/ssh.exp" "$port" "$2" "$3" "$4" >"$work/$name.txt" 2>&1 || rc=$?
  took[$name]=$(ms "$t")
  log "login $name ($2): status $rc, ${took[$name]} ms"
  return "$rc"
}
root() { login "$1" root root "$2"; }

# Facts: "@@ key=value" lines; a new "@@ user=" starts a session. fact FILE N KEY: session N's value.
# (CRs and terminal escapes such as bash's bracketed paste stripped first)
facts() { tr -d '\r' <"$work/$1.txt" | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' | awk '/^@@ user=/ { n++ } /^@@ / { print n + 0 "\t" substr($0, 4) }'; }
fact() { facts "$1" | awk -F'\t' -v n="$2" -v k="$3=" '$1 == n && index($2, k) == 1 { print substr($2, length(k) + 1); exit }'; }
is_hex() { [[ "$1" =~ ^[0-9a-fA-F]{1,16}$ ]]; }
hex_eq() { is_hex "$1" && [ $(( 16#$1 )) -eq $(( $2 )) ]; }
hex_and() { is_hex "$1" && [ $(( 16#$1 & $2 )) -ne 0 ]; }
# shellcheck disable=SC2034 # SETPCAP is used inside eval'd checks
NET_RAW=$((1 << 13)) SYSLOG=$((1 << 34)) SETPCAP=$((1 << 8))
declare -A GRANT=([alice]=$NET_RAW [bob]=0 [carol]=$SYSLOG [dave]=0 [erin]=$NET_RAW)

# session FILE N USER CHECKNAME [WANT]: the sets of session N in FILE and ping's result.
session() {
  local f=$1 n=$2 u=$3 c=$4 want=${5:-${GRANT[$3]}} inh prm eff amb rc out
  check "$c/logged-in" "no probe output for $u (see $work/$f.txt)" [ "$(fact "$f" "$n" user)" = "$u" ] || return 0
  inh=$(fact "$f" "$n" self.CapInh) prm=$(fact "$f" "$n" self.CapPrm)
  eff=$(fact "$f" "$n" self.CapEff) amb=$(fact "$f" "$n" self.CapAmb)
  check "$c/CapInh-exact" "CapInh=$inh, want $(printf %016x "$want")" hex_eq "$inh" "$want"
  check "$c/CapPrm-CapEff-CapAmb-zero" "CapPrm=$prm CapEff=$eff CapAmb=$amb" \
    eval 'hex_eq "$prm" 0 && hex_eq "$eff" 0 && hex_eq "$amb" 0'
  rc=$(fact "$f" "$n" ping.rc) out=$(fact "$f" "$n" ping.out)
  if [ "$(( want & NET_RAW ))" -ne 0 ]; then check "$c/ping-works" "rc=$rc: $out" [ "$rc" = 0 ]
  else check "$c/ping-eperm" "rc=$rc: $out" eval '[ "$rc" != 0 ] && [[ $out == *"Operation not permitted"* ]]'; fi
}

# power_off: root powers the guest off from inside; QEMU must end.
power_off() {
  root poweroff 'guest-poweroff' || true
  for _ in $(seq 60); do kill -0 "$qemu" 2>/dev/null || break; sleep 1; done
  check poweroff-from-inside "QEMU still running 60 s after guest-poweroff" eval '! kill -0 "$qemu" 2>/dev/null'
}

# The directory site has checks of its own, on the same boot and helpers.
if [ "$site" = directory ]; then
  # shellcheck source=tests/system/directory.sh
  . "$here/directory.sh"
  power_off
  log "figures: boot to console prompt ${boot_ms} ms; logins (ms): $(for n in "${!took[@]}"; do echo "$n=${took[$n]}"; done | sort | paste -sd' ')"
  log "total $(( $(date +%s) - T0 )) s; transcripts in $work"
  exit 0
fi

# --- 0. a look inside the session stack: lab-probe --pam (pam_exec.so) just before our session
# line, in common-session (sshd, login, su -) and common-session-noninteractive (systemd-user),
# logs the sets of the process running PAM as pam_systemd and the modules before ours left them.
# It changes nothing the session gets; removed again after check 3.
PAMSNAP='session optional pam_exec.so quiet log=/run/lab-pam.log /usr/local/bin/lab-probe --pam'
root pam-snap-on "for f in /etc/pam.d/common-session /etc/pam.d/common-session-noninteractive; do
  sed -i '/pam_capdelegate.so/i $PAMSNAP' \$f; done
echo \"@@ snap=\$(grep -c 'lab-probe --pam' /etc/pam.d/common-session /etc/pam.d/common-session-noninteractive | paste -sd' ')\"" || true
check pam-snapshot/installed "$(fact pam-snap-on 0 snap)" \
  [ "$(fact pam-snap-on 0 snap)" = "/etc/pam.d/common-session:1 /etc/pam.d/common-session-noninteractive:1" ]

# --- 1. ssh as every demo user ------------------------------------------------------------------
for u in alice bob carol dave erin; do
  login "ssh-$u" "$u" "$u" lab-probe || true
  session "ssh-$u" 1 "$u" "ssh/$u"
done
# Debian 13's demonstration with a program that needs its capability whatever ping_group_range
# says: /usr/bin/dmesg marked cap_syslog=ei (trixie's marks file), kernel.dmesg_restrict = 1.
# carol (cap_syslog) reads the kernel log, the others are refused by the kernel.
if [ "$release" != bookworm ]; then
  check dmesg/dmesg_restrict-on "$(fact ssh-bob 1 sysctl.dmesg_restrict)" [ "$(fact ssh-bob 1 sysctl.dmesg_restrict)" = 1 ]
  for u in alice bob carol dave erin; do
    rc=$(fact "ssh-$u" 1 dmesg.rc) out=$(fact "ssh-$u" 1 dmesg.out)
    if [ "$(( GRANT[$u] & SYSLOG ))" -ne 0 ]; then check "dmesg/ssh-$u-reads-kernel-log" "rc=$rc: $out" eval '[ "$rc" = 0 ] && [ -z "$out" ]'
    else check "dmesg/ssh-$u-eperm" "rc=$rc: $out" eval '[ "$rc" != 0 ] && [[ $out == *"Operation not permitted"* ]]'; fi
  done
fi

# --- 2. su from a root ssh session ----------------------------------------------------------------
root su 'lab-probe; su - alice -c lab-probe; su - bob -c lab-probe' || true
check su/root-session-CapInh-empty "root's CapInh=$(fact su 1 self.CapInh)" hex_eq "$(fact su 1 self.CapInh)" 0
session su 2 alice su/alice
session su 3 bob su/bob
check su/alice-parent-is-su "parent=$(fact su 2 parent.comm)" [ "$(fact su 2 parent.comm)" = su ]

# --- 3. the serial console: login under NOROOT with CAP_SETPCAP, without the grant ---------------
t=$(date +%s%N)
timeout 300 expect "$here/console.exp" "$sock" "alice bob" >"$work/console.txt" 2>&1 \
  || log "console: console.exp failed (see $work/console.txt)"
took[console]=$(ms "$t"); log "console: alice and bob in ${took[console]} ms"
for n in 1 2; do
  u=$(fact console "$n" user); [ -n "$u" ] || u=$([ "$n" = 1 ] && echo alice || echo bob)
  session console "$n" "$u" "console/$u"
  l=$(fact console "$n" parent.CapPrm)
  check "console/$u/login-holds-setpcap-not-net_raw" "parent=$(fact console "$n" parent.comm) CapPrm=$l" \
    eval '[ "$(fact console "$n" parent.comm)" = login ] && hex_and "$l" $SETPCAP && ! hex_and "$l" $NET_RAW'
  check "console/$u/login-CapInh-is-grant" "login CapInh=$(fact console "$n" parent.CapInh)" \
    hex_eq "$(fact console "$n" parent.CapInh)" "${GRANT[$u]}"
  check "console/$u/securebits-noroot-locked" "$(fact console "$n" securebits)" \
    eval '[[ $(fact console "$n" securebits) == "03/0x3/"* ]]'
done

# --- 4. what the system recorded: journal, audit, stack order, file capabilities ----------------
root collect 'sed -i "/lab-probe --pam/d" /etc/pam.d/common-session /etc/pam.d/common-session-noninteractive
# the console logins as the journal saw them (for the transcript; checked through lab-probe)
journalctl -q -o short-monotonic --no-pager -u serial-getty@ttyS0.service | grep -v pam_capdelegate | tail -n 40 | sed "s/^/console-journal: /"
sed "s/^/@@ /" /run/lab-pam.log; rm -f /run/lab-pam.log
set -x; journalctl -q -o cat --no-pager | grep "pam_capdelegate(" || true
ausearch --input-logs -m USER --raw </dev/null 2>/dev/null | grep "op=capdelegate-grant" || true
grep -H pam_ /etc/pam.d/common-auth /etc/pam.d/common-session; getcap /usr/bin/ping
echo "@@ dmesg_getcap=$(getcap /usr/bin/dmesg)"
systemctl is-active auditd systemd-logind ssh
echo "@@ failed_units=$(systemctl --failed --no-legend --plain | awk "{ print \$1 }" | paste -sd, -)"
echo "@@ man=$(man 8 capdelegate 2>&1 | grep -m1 -A1 "^NAME" | tail -n 1 | tr -s " ")"
capdelegate marks check >/root/lab/marks-check.out 2>&1; echo "@@ marks_check.rc=$?"
echo "@@ marks_check=$(grep -m1 /ping /root/lab/marks-check.out | tr -s "\t " "  ")"' || true
c=$(tr -d '\r' <"$work/collect.txt")
# logins so far per user: ssh, su, console
declare -A LOGINS=([alice]=3 [bob]=3 [carol]=1 [dave]=1 [erin]=1)
for u in alice bob carol dave erin; do
  # one line per login from the service the user logged in to (systemd-user, the user's own
  # systemd --user manager started by pam_systemd, logs its own line through its PAM service)
  n=$(grep -cE "pam_capdelegate\((sshd|su-l|login):[a-z]+\): user=$u granted=" <<<"$c" || true)
  check "journal/$u-one-notice-per-login" "$n notice lines, want ${LOGINS[$u]}" [ "$n" = "${LOGINS[$u]}" ]
  # (OpenSSH 10, trixie: PAM runs in sshd-session, not in sshd)
  n=$(grep "op=capdelegate-grant" <<<"$c" | grep -E 'exe="/usr/(s?bin/(sshd|su|login)|lib/openssh/sshd-session)"' | grep -c "acct=\"$u\"" || true)
  check "audit/$u-one-record-per-login" "$n USER records, want ${LOGINS[$u]}" [ "$n" = "${LOGINS[$u]}" ]
done
check audit/alice-record-names-grant "$(grep -m1 'acct="alice"' <<<"$c" || echo none)" \
  eval 'grep "op=capdelegate-grant" <<<"$c" | grep "acct=\"alice\"" | grep -q "grant=cap_net_raw"'
order=$(grep -o -E '^/etc/pam.d/common-session:session[^#]*pam_(systemd|capdelegate)\.so' <<<"$c" | grep -o -E 'pam_[a-z]+' | paste -sd' ')
check stack/session-after-pam_systemd "common-session order: $order" [ "$order" = "pam_systemd pam_capdelegate" ]
check stack/auth-additional-optional "common-auth: $(grep common-auth <<<"$c" | grep capdelegate)" \
  eval 'grep -qE "^/etc/pam.d/common-auth:auth[[:space:]]+optional[[:space:]]+pam_capdelegate\.so" <<<"$c"'
check image/ping-fI-only "$(grep /usr/bin/ping <<<"$c")" grep -qx '/usr/bin/ping cap_net_raw=i' <<<"$c"
# shellcheck disable=SC2034 # used in the eval'd check
case $release in bookworm) dmesg_mark="" ;; *) dmesg_mark="/usr/bin/dmesg cap_syslog=ei" ;; esac
check image/dmesg-mark "getcap: '$(fact collect 0 dmesg_getcap)'" eval '[ "$(fact collect 0 dmesg_getcap)" = "$dmesg_mark" ]'
# The image is set up as the README tells an administrator: the mark is declared in the marks
# file (so the trigger and the APT hook keep it), not set by a bare setcap.
check image/marks-check-ping-ok "$(fact collect 0 marks_check), rc=$(fact collect 0 marks_check.rc)" \
  eval '[[ $(fact collect 0 marks_check) == *ping*" ok"* && $(fact collect 0 marks_check.rc) == 0 ]]'
# An administrator reads the packages' man pages in the guest (man-db is installed).
check image/man-capdelegate "man 8 capdelegate: $(fact collect 0 man)" \
  eval '[[ $(fact collect 0 man) == *"capdelegate - "*"capability delegation"* ]]'
check image/no-failed-units "failed: $(fact collect 0 failed_units)" [ -z "$(fact collect 0 failed_units)" ]
check image/services-active "$(grep -E '^(in)?active' <<<"$c" | paste -sd' ')" \
  [ "$(grep -cx active <<<"$c")" = 3 ]

# What the session stacks held just before our session line (lab-probe --pam): the log shows it
# login by login; the checks only want one line for each kind of login.
snaps=$(tr -d '\r' <"$work/collect.txt" | grep '^@@ pam service=' | cut -c4- || true)
while read -r l; do [ -z "$l" ] || log "before pam_capdelegate's session line: $l"; done <<<"$snaps"
for sv in sshd:alice login:alice su-l:alice systemd-user:alice; do
  check "pam-snapshot/${sv%%:*}-${sv#*:}" "no lab-probe --pam line for ${sv%%:*} and ${sv#*:}" \
    grep -q "^pam service=${sv%%:*} user=${sv#*:} " <<<"$snaps"
done
[ "$release" = bookworm ] || . "$here/systemd257.sh"

# --- 4b. the order next to pam_systemd >= 254 (a stand-in: Debian 12's 252 leaves pI alone) ------
# bookworm only: on trixie the real pam_systemd 257 is there (systemd257.sh).
if [ "$release" = bookworm ]; then
# pam_ambient_stub.so does what pam_systemd >= 254 does in open_session: pI := {wake_alarm}, and
# the same bit in pA. su from root runs only the session stack's pI setters (pam_rootok ends auth
# before our auth line), so the order of the session lines decides.
WAKE_ALARM=$((1 << 35))
root order-right 'sed -i "/pam_systemd.so/a session optional pam_ambient_stub.so" /etc/pam.d/common-session
su - alice -c lab-probe; grep -hoE "pam_(systemd|ambient_stub|capdelegate)" /etc/pam.d/common-session | sed "s/^/@@ order=/"' || true
session order-right 1 alice order/module-after-stand-in/su-alice
order=$(facts order-right | awk -F'\t' '$2 ~ /^order=/ { print substr($2, 7) }' | paste -sd' ')
check order/module-after-stand-in/stack "common-session: $order" [ "$order" = "pam_systemd pam_ambient_stub pam_capdelegate" ]
root order-wrong 'sed -i "/pam_ambient_stub.so/d" /etc/pam.d/common-session
echo "session optional pam_ambient_stub.so" >>/etc/pam.d/common-session
echo "session optional pam_exec.so quiet log=/run/lab-pam-last.log /usr/local/bin/lab-probe --pam" >>/etc/pam.d/common-session
su - alice -c lab-probe; sed -i "/pam_ambient_stub.so/d; /lab-pam-last/d" /etc/pam.d/common-session
sed -n "s/^pam service=/@@ su_after_stand_in=&/p" /run/lab-pam-last.log; rm -f /run/lab-pam-last.log' || true
# pI, which the shell inherits, is the stand-in's
check order/stand-in-after-module-replaces-grant "CapInh=$(fact order-wrong 1 self.CapInh)" \
  hex_eq "$(fact order-wrong 1 self.CapInh)" $WAKE_ALARM
# the stand-in raised cap_wake_alarm in su's pA as root; su's change to alice's uid emptied pA
# (the kernel empties it when a process's uids all leave 0: what a PAM module's ambient grant,
# pam_cap's ^cap included, leaves a su, login or sshd session; capdelegate.conf(5))
su_amb=$(fact order-wrong 1 su_after_stand_in | sed -n 's/.* CapAmb=\([0-9a-f]*\).*/\1/p')
check order/stand-in-raises-su-ambient "su's sets after the stand-in: $(fact order-wrong 1 su_after_stand_in)" \
  eval '[[ $(fact order-wrong 1 su_after_stand_in) == "pam service=su-l user=alice "* ]] && hex_and "$su_amb" $WAKE_ALARM'
check order/ambient-emptied-at-uid-change "alice's shell CapAmb=$(fact order-wrong 1 self.CapAmb), su's CapAmb=$su_amb" \
  eval 'hex_eq "$(fact order-wrong 1 self.CapAmb)" 0 && hex_eq "$(fact order-wrong 1 self.CapPrm)" 0'
fi

# --- 5. a policy with a syntax error: every login works, grants nothing, is logged --------------
root syntax-set "printf 'alice cap_net_raw\n@netops cap_net_raww\n' >/etc/security/capdelegate.conf" || true
login syntax-alice alice alice lab-probe || true
session syntax-alice 1 alice syntax/ssh-alice 0
root syntax-su 'su - erin -c lab-probe; journalctl -q -o cat --no-pager -p err | grep "pam_capdelegate(" | tail -n 3' || true
session syntax-su 1 erin syntax/su-erin 0
check syntax/error-logged-with-line "$(grep -m1 'capdelegate.conf:2' "$work/syntax-su.txt" || echo none)" \
  grep -q '/etc/security/capdelegate.conf:2' "$work/syntax-su.txt"

# --- 6. strict on sshd's account line: a broken policy refuses the login, a good one does not ---
# strict refuses everyone while the policy is broken, root included: root's ssh logins (which
# repair the policy) skip the line.
root strict-on 'sed -i "/^@include common-account/a account [success=1 default=ignore] pam_succeed_if.so quiet user = root\naccount required pam_capdelegate.so strict" /etc/pam.d/sshd; grep -A2 common-account /etc/pam.d/sshd' || true
rc=0; login strict-broken alice alice lab-probe || rc=$?
check strict/broken-policy-refuses-ssh "ssh.exp status $rc (3 = refused)" [ "$rc" = 3 ]
root strict-fix 'cp /root/lab/capdelegate.conf /etc/security/capdelegate.conf' || true
login strict-good alice alice lab-probe || true
session strict-good 1 alice strict/good-policy-ssh-alice
root strict-off 'sed -i "/pam_capdelegate.so strict/d; /pam_succeed_if.so quiet user = root/d" /etc/pam.d/sshd' || true

# --- 7. purge and reinstall: no stray files, no broken PAM stack ---------------------------------
root purge 'dpkg -L libpam-capdelegate capdelegate | sort >/root/lab/files
dpkg --purge libpam-capdelegate capdelegate >/dev/null 2>&1; echo "@@ purge.rc=$?"
left=$(while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done </root/lab/files)
echo "@@ purge.left=$(echo $left)"
echo "@@ purge.pam=$(grep -l pam_capdelegate /etc/pam.d/* | paste -sd, -)"
echo "@@ purge.audit=$(ls /etc/audit/rules.d | paste -sd, -) loaded=$(auditctl -l | grep -c key=capdelegate)"' || true
check purge/dpkg-ok "$(fact purge 0 purge.rc)" [ "$(fact purge 0 purge.rc)" = 0 ]
check purge/no-files-left "left: $(fact purge 0 purge.left)" [ -z "$(fact purge 0 purge.left)" ]
check purge/no-pam-lines-left "in: $(fact purge 0 purge.pam)" [ -z "$(fact purge 0 purge.pam)" ]
# the audit rules generated from the marks file go with the package, from rules.d and the kernel
check purge/no-audit-rules-left "rules.d: $(fact purge 0 purge.audit)" [ "$(fact purge 0 purge.audit)" = "audit.rules loaded=0" ]
login purged-bob bob bob lab-probe || true
session purged-bob 1 bob purge/ssh-bob-logs-in-without-module
root reinstall 'apt-get install -y -q /root/debs/*.deb >/dev/null 2>&1; pam-auth-update --enable capdelegate; echo "@@ reinstall.rc=$?"
echo "@@ reinstall.audit=$(grep -c "^-a .*path=/usr/bin/ping " /etc/audit/rules.d/capdelegate.rules) loaded=$(auditctl -l | grep -c "path=/usr/bin/ping .*key=capdelegate")"' || true
check reinstall/apt-and-pam-auth-update "$(fact reinstall 0 reinstall.rc)" [ "$(fact reinstall 0 reinstall.rc)" = 0 ]
check reinstall/audit-rules-back "ping's rules in rules.d and loaded: $(fact reinstall 0 reinstall.audit)" \
  [ "$(fact reinstall 0 reinstall.audit)" = "2 loaded=2" ]
login reinstalled-alice alice alice lab-probe || true
session reinstalled-alice 1 alice reinstall/ssh-alice

# --- 7b. a session that outlives its grant: alice's line ends while she is logged in ------------
# shellcheck source=tests/system/stale.sh
. "$here/stale.sh"

# --- 8. marks restored after package operations -----------------------------------------------
# iputils-ping's postinst runs `setcap cap_net_raw+ep` on every install: everyone could ping. The
# marks file declares /usr/bin/ping, the file Debian 12's dpkg knows as /bin/ping (merged /usr).
# `dpkg -i` of the archived .deb is a reinstall as an upgrade does it; the capdelegate package's
# file trigger (on /bin) must then set the mark again. dpkg.log gives the order: configure
# iputils-ping (its postinst), then trigproc capdelegate.
read -r -d '' marks_restore <<'EOF' || true
exec 2>&1; capdelegate marks apply; echo "@@ apply.rc=$?"
journalctl -q -t capdelegate --cursor-file=/root/lab/jcursor >/dev/null; n=$(wc -l </var/log/dpkg.log)
dpkg -i /var/cache/apt/archives/iputils-ping_*.deb; echo "@@ dpkg.rc=$?"
echo "@@ dpkg.order=$(tail -n +$((n + 1)) /var/log/dpkg.log | awk '$3 == "configure" || $3 == "trigproc" { print $2, $3, $4 }
  $3 == "status" && $4 == "installed" { print $2, $4, $5 }' | paste -sd, -)"
echo "@@ getcap=$(getcap /usr/bin/ping) $(stat -c %A /usr/bin/ping)"
echo "@@ journal=$(journalctl -q -o cat -t capdelegate --cursor-file=/root/lab/jcursor | paste -sd'|' -)"
su - bob -c lab-probe; su - alice -c lab-probe
EOF
root marks-restore "$marks_restore" || true
m() { fact marks-restore 0 "$1"; }
check marks/apply-declared "rc=$(m apply.rc)" [ "$(m apply.rc)" = 0 ]
check marks/dpkg-i-ping "rc=$(m dpkg.rc)" [ "$(m dpkg.rc)" = 0 ]
check marks/trigger-after-ping-postinst "dpkg.log: $(m dpkg.order)" \
  eval '[[ $(m dpkg.order) == *"configure iputils-ping:"*"installed iputils-ping:"*"trigproc capdelegate:"* ]]'
# The window in which ping carries fP: from the configure line (its postinst) to the trigger's.
w=$(tr , '\n' <<<"$(m dpkg.order)" | awk '{ split($1, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3] }
  $2 == "configure" && $3 ~ /^iputils-ping:/ { c = s } $2 == "trigproc" && c != "" { print s - c; exit }')
log "marks: iputils-ping's postinst to capdelegate's trigger: ${w:-?} s (dpkg.log, whole seconds)"
check marks/restored-fI-only-no-setuid "$(m getcap)" [ "$(m getcap)" = "/usr/bin/ping cap_net_raw=i -rwxr-xr-x" ]
# What the postinst left: bookworm's iputils-ping sets cap_net_raw=ep; trixie's sets nothing (its
# ping relies on ping_group_range, opened by linux-sysctl-defaults, a Recommends not installed
# here), and dpkg's new file carries no mark: "none".
# shellcheck disable=SC2034 # used in the eval below
case $release in bookworm) postinst_caps=cap_net_raw=ep ;; *) postinst_caps=none ;; esac
check marks/journal-names-restore "journal: $(m journal)" eval '[[ $(m journal) == *ping*"$postinst_caps -> cap_net_raw=i"* ]]'
# An open ping_group_range would let bob ping through an ICMP datagram socket without any
# capability, and the EPERM checks would prove nothing. Upstream systemd's 50-default.conf opens
# it to every group; Debian 12 does not ship that file, and the image's 60-lab-ping.conf pins 1 0.
check marks/ping_group_range-closed "$(fact marks-restore 1 sysctl.ping_group_range)" \
  [ "$(fact marks-restore 1 sysctl.ping_group_range)" = "1 0" ]
session marks-restore 1 bob marks/restored/su-bob
session marks-restore 2 alice marks/restored/su-alice
# The hole, with the marks file moved aside (the guard of both the trigger and the APT hook):
# nothing restores, bob pings through fP with an empty pI, audit flags it. Then the APT hook as
# apt reads it from its conffile (apt-config), run as apt runs it after dpkg, closes it again.
read -r -d '' marks_hole <<'EOF' || true
exec 2>&1; mv /etc/security/capdelegate-files.conf /root/lab/marks.off
dpkg -i /var/cache/apt/archives/iputils-ping_*.deb >/root/lab/dpkg-hole.out; echo "@@ dpkg.rc=$?"
echo "@@ getcap=$(getcap /usr/bin/ping)"
echo "@@ audit=$(capdelegate audit /usr/bin | grep -E 'fP.bypass' | grep -m1 /ping | tr '\t' ' ')"
su - bob -c lab-probe; su - alice -c lab-probe
mv /root/lab/marks.off /etc/security/capdelegate-files.conf
sh -c "$(apt-config dump --format '%v%n' DPkg::Post-Invoke | grep capdelegate)"
echo "@@ hook=$(getcap /usr/bin/ping)"
capdelegate marks check >/root/lab/check.out; echo "@@ check.rc=$?"
EOF
root marks-hole "$marks_hole" || true
m() { fact marks-hole 0 "$1"; }
if [ "$release" = bookworm ]; then
  check marks-hole/dpkg-i-leaves-fP "$(m getcap), rc=$(m dpkg.rc)" [ "$(m getcap)" = "/usr/bin/ping cap_net_raw=ep" ]
  check marks-hole/audit-fP-bypass "audit: $(m audit)" eval '[[ $(m audit) == *ping* ]]'
  m() { fact marks-hole 1 "$1"; }
  check marks-hole/su-bob-pings-with-empty-pI "rc=$(m ping.rc) CapInh=$(m self.CapInh): $(m ping.out)" \
    eval '[ "$(m ping.rc)" = 0 ] && hex_eq "$(m self.CapInh)" 0'
else
  # trixie: the unguarded reinstall takes the mark away (no fP to bypass with): a denial, not a hole.
  check marks-hole/dpkg-i-drops-mark "getcap: '$(m getcap)', rc=$(m dpkg.rc)" eval '[ -z "$(m getcap)" ] && [ "$(m dpkg.rc)" = 0 ]'
  session marks-hole 1 bob marks-hole/su-bob
  m() { fact marks-hole 2 "$1"; }
  check marks-hole/su-alice-grant-without-mark-eperm "rc=$(m ping.rc) CapInh=$(m self.CapInh): $(m ping.out)" \
    eval '[ "$(m ping.rc)" != 0 ] && hex_eq "$(m self.CapInh)" $NET_RAW'
fi
m() { fact marks-hole 2 "$1"; }
check marks-hole/apt-hook-restores "$(m hook)" [ "$(m hook)" = "/usr/bin/ping cap_net_raw=i" ]
check marks-hole/marks-check-clean "rc=$(m check.rc)" [ "$(m check.rc)" = 0 ]

# The README's demonstration of an upgrade, as written there: apt reinstalls iputils-ping (from
# the image's local archive: the guest has no network), its postinst runs, and the mark is back
# when apt returns, the restore in the journal under the path the marks file declares.
read -r -d '' readme_upgrade <<'EOF' || true
exec 2>&1; n=$(wc -l </var/log/dpkg.log)
journalctl -q -t capdelegate --cursor-file=/root/lab/jcursor >/dev/null
apt-get install --reinstall -y iputils-ping >/root/lab/reinstall.out; echo "@@ apt.rc=$?"
echo "@@ configured=$(tail -n +$((n + 1)) /var/log/dpkg.log | grep -c ' configure iputils-ping:')"
echo "@@ getcap=$(getcap /usr/bin/ping)"
echo "@@ journal=$(journalctl -q -o cat -t capdelegate --cursor-file=/root/lab/jcursor | paste -sd'|' -)"
EOF
root readme-upgrade "$readme_upgrade" || true
m() { fact readme-upgrade 0 "$1"; }
check readme-upgrade/apt-reinstalls-ping "apt-get status $(m apt.rc), $(m configured) configure lines in dpkg.log" \
  eval '[ "$(m apt.rc)" = 0 ] && [ "$(m configured)" = 1 ]'
check readme-upgrade/mark-back "$(m getcap)" [ "$(m getcap)" = "/usr/bin/ping cap_net_raw=i" ]
check readme-upgrade/journal-names-restore "journal: $(m journal)" \
  eval '[[ $(m journal) == *"/usr/bin/ping: $postinst_caps -> cap_net_raw=i"* ]]'

# --- 8b. the audit trail of the marked files ----------------------------------------------------
# The package wrote /etc/audit/rules.d/capdelegate.rules (capdelegate marks audit-rules) when it
# was configured, and auditd loaded it. Since then dpkg and apt replaced /usr/bin/ping (above): a
# path rule follows the name, so the runs below are still recorded. auditd starts a fresh log
# first (SIGUSR1), so that the log holds this step only: alice pings three times (granted
# cap_net_raw: the exec gains it, BPRM_FCAPS), bob once (no grant: the exec is recorded, without
# BPRM_FCAPS, and ping is refused), carol (cap_syslog) logs in and runs nothing marked. Then
# `capdelegate usage` reads that log. The step's log is kept in the transcript (audit-step.log)
# for the host's tests of `capdelegate usage`.
read -r -d '' audit_rotate <<'EOF' || true
exec 2>&1; echo "@@ rules=$(grep -c '^-a ' /etc/audit/rules.d/capdelegate.rules)"
echo "@@ loaded=$(auditctl -l | grep -c 'path=/usr/bin/ping .*key=capdelegate')"
auditctl -l | grep capdelegate; auditctl -s | grep -E '^(enabled|pid|lost)'
old=$(stat -c %i /var/log/audit/audit.log); kill -USR1 "$(cat /run/auditd.pid)"
for _ in $(seq 50); do [ "$(stat -c %i /var/log/audit/audit.log)" != "$old" ] && break; sleep 0.2; done
echo "@@ rotated=$([ "$(stat -c %i /var/log/audit/audit.log)" != "$old" ] && echo yes || echo no)"
EOF
root audit-rotate "$audit_rotate" || true
a() { fact audit-rotate 0 "$1"; }
# one rule per ABI (b64, b32) for each file the marks file declares
check audit-trail/rules-file-from-marks "$(a rules) rules" eval '[ "$(a rules)" -ge 2 ] && [ $(( $(a rules) % 2 )) = 0 ]'
check audit-trail/rules-loaded "auditctl -l: $(a loaded) ping rules" [ "$(a loaded)" -ge 1 ]
check audit-trail/log-rotated "$(a rotated)" [ "$(a rotated)" = yes ]
login audit-alice alice alice 'for i in 1 2 3; do ping -c1 -W3 127.0.0.1 >/dev/null 2>&1; echo "@@ ping$i.rc=$?"; done' || true
login audit-bob bob bob 'ping -c1 -W3 127.0.0.1 2>&1 | tr "\n" " " | sed "s/^/@@ ping.out=/"; echo' || true
login audit-carol carol carol 'echo "@@ idle=yes"' || true
check audit-trail/alice-pings-work "$(fact audit-alice 0 ping1.rc) $(fact audit-alice 0 ping2.rc) $(fact audit-alice 0 ping3.rc)" \
  eval '[ "$(fact audit-alice 0 ping1.rc)$(fact audit-alice 0 ping2.rc)$(fact audit-alice 0 ping3.rc)" = 000 ]'
check audit-trail/bob-ping-refused "$(fact audit-bob 0 ping.out)" eval '[[ $(fact audit-bob 0 ping.out) == *"Operation not permitted"* ]]'
read -r -d '' audit_read <<'EOF' || true
exec 2>&1; log=/var/log/audit/audit.log
for u in alice bob carol; do
  r=$(ausearch -if $log -k capdelegate -ui "$(id -u $u)" --raw 2>/dev/null)
  echo "@@ $u.syscall=$(grep -c '^type=SYSCALL' <<<"$r")"
  echo "@@ $u.fcaps=$(grep -c '^type=BPRM_FCAPS' <<<"$r")"
  echo "@@ $u.exe=$(grep '^type=SYSCALL' <<<"$r" | grep -o ' exe="[^"]*"' | sort -u | paste -sd, -)"
  echo "@@ $u.types=$(cut -d' ' -f1 <<<"$r" | sort -u | paste -sd, -)"
  echo "@@ $u.syscall1=$(grep -m1 '^type=SYSCALL' <<<"$r")"
  echo "@@ $u.fcaps1=$(grep -m1 '^type=BPRM_FCAPS' <<<"$r")"
  echo "@@ $u.path1=$(grep -m1 '^type=PATH' <<<"$r")"
done
echo "@@ log.lines=$(wc -l <$log) log.bytes=$(wc -c <$log)"
echo "@@ log.b64=$(gzip -9c $log | base64 -w0)"
echo "@@ marks.b64=$(base64 -w0 /etc/security/capdelegate-files.conf)"
echo "@@ policy.b64=$(base64 -w0 /etc/security/capdelegate.conf)"
echo "@@ passwd.b64=$(grep -E '^(root|alice|bob|carol|dave|erin):' /etc/passwd | base64 -w0)"
echo "@@ group.b64=$(grep -E '^(root|alice|bob|carol|dave|erin|netops):' /etc/group | base64 -w0)"
if capdelegate usage --help >/dev/null 2>&1; then
  echo "@@ usage=yes"
  capdelegate usage --input $log --since 1d >/root/lab/usage.out 2>&1; echo "@@ usage.rc=$?"
  capdelegate usage --input $log --since 1d --propose >/root/lab/propose.out 2>&1; echo "@@ propose.rc=$?"
  sed "s/^/usage: /" /root/lab/usage.out; sed "s/^/propose: /" /root/lab/propose.out
else
  echo "@@ usage=no"
fi
EOF
root audit-read "$audit_read" || true
a() { fact audit-read 0 "$1"; }
a log.b64 | base64 -d 2>/dev/null | gunzip >"$work/audit-step.log" 2>/dev/null || true
for f in marks policy passwd group; do a "$f.b64" | base64 -d >"$work/audit-step.$f" 2>/dev/null || true; done
log "audit-trail: the step's log, $(a log.lines), kept in $work/audit-step.log"
check audit-trail/alice-three-runs-recorded "SYSCALL records: $(a alice.syscall), exe $(a alice.exe)" \
  eval '[ "$(a alice.syscall)" = 3 ] && [ "$(a alice.exe)" = " exe=\"/usr/bin/ping\"" ]'
check audit-trail/alice-runs-gain-from-file "BPRM_FCAPS records: $(a alice.fcaps): $(a alice.fcaps1)" \
  eval '[ "$(a alice.fcaps)" = 3 ] && [[ $(a alice.fcaps1) =~ " fi="0*"2000 ".*" pp="0*"2000 " ]]'
check audit-trail/bob-run-recorded-without-gain "SYSCALL $(a bob.syscall), BPRM_FCAPS $(a bob.fcaps): $(a bob.syscall1)" \
  eval '[ "$(a bob.syscall)" = 1 ] && [ "$(a bob.fcaps)" = 0 ] && [[ $(a bob.syscall1) == *" key=\"capdelegate\""* ]]'
check audit-trail/carol-nothing "SYSCALL records: $(a carol.syscall)" [ "$(a carol.syscall)" = 0 ]
# capdelegate(8), usage: one record per user, capability and file, tab-separated
u=$(tr -d '\r' <"$work/audit-read.txt" | sed -n 's/^usage: //p') p=$(tr -d '\r' <"$work/audit-read.txt" | sed -n 's/^propose: //p')
T='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
check usage/runs "exit $(a usage.rc)" [ "$(a usage.rc)" = 0 ]
check usage/alice-three-runs-of-ping-with-times "$(grep alice <<<"$u" || echo none)" \
  grep -qE "^used	alice	cap_net_raw	/usr/bin/ping	runs=3	first=$T	last=$T\$" <<<"$u"
check usage/carol-cap_syslog-unused "$(grep carol <<<"$u" || echo none)" grep -qE "^unused	carol	cap_syslog	" <<<"$u"
check usage/bob-denied-run "$(grep bob <<<"$u" || echo none)" \
  grep -qE "^denied	bob	cap_net_raw	/usr/bin/ping	runs=1	first=$T	last=$T\$" <<<"$u"
check usage/nobody-else "$(grep -vE '^(used	alice|unused	carol|denied	bob)	' <<<"$u" | grep -v '^capdelegate: usage: ' | paste -sd'|' -)" \
  eval '[ -z "$(grep -vE "^(used	alice|unused	carol|denied	bob)	" <<<"$u" | grep -v "^capdelegate: usage: ")" ]'
# --propose: carol's line removed (its line in the policy), nothing granted to bob
line=$(grep -n '^carol ' "$work/audit-step.policy" | cut -d: -f1)
check usage/propose-removes-carol "$(paste -sd'|' - <<<"$p")" \
  eval '[ "$(a propose.rc)" = 0 ] && grep -qE "^# /etc/security/capdelegate.conf:$line: carol cap_syslog\$" <<<"$p" && grep -qx "# remove the line" <<<"$p"'
check usage/propose-nothing-for-bob "$(grep -i bob <<<"$p" || echo none)" eval '! grep -qi bob <<<"$p"'

# --- 9. the Ansible role (contrib/ansible) run from the host against this guest -----------------
# bookworm only: the role is the same on both releases; the trixie image has no python3 for it.
# shellcheck source=tests/system/ansible.sh
[ "$release" != bookworm ] || . "$here/ansible.sh"

# --- power off, figures -----------------------------------------------------------------------
power_off
ssh_ms=$(for u in alice bob carol dave erin; do echo "${took[ssh-$u]}"; done | sort -n | paste -sd' ')
log "figures: boot to console prompt ${boot_ms} ms; ssh logins (ms): $ssh_ms; console alice+bob ${took[console]} ms"
log "total $(( $(date +%s) - T0 )) s; transcripts in $work"
