#!/usr/bin/env bash
# overlay.sh STAGE DEB...: turn STAGE (a copy of the base) into the systemd guest the way an
# administrator would (README: "Installing on a Debian 12 or 13 host"): apt-get install the
# .debs, pam-auth-update --enable capdelegate, write the policy and the marks file, capdelegate
# marks apply; then the lab's users, console drop-in, sshd and network.
set -euo pipefail

release=bookworm
if [ "${1:-}" = --release ] && [ $# -ge 2 ]; then release=$2; shift 2; fi
if [ "${1:-}" = --help ] || [ $# -lt 2 ]; then
  echo "usage: $0 [--release R] STAGE DEB...   (as root; called by vm-image/system/build.sh)"
  [ "${1:-}" = --help ]; exit
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
stage=$1; shift
files=$here/files
inroot() { chroot "$stage" "$@"; }

# --- the administrator's path ------------------------------------------------------------------
# The .debs stay in the image (/root/debs) for the purge/reinstall test.
mkdir -p "$stage/root/debs"
cp "$@" "$stage/root/debs/"
names=(); for d in "$@"; do names+=("/root/debs/$(basename "$d")"); done
inroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${names[@]}"
inroot pam-auth-update --enable capdelegate
install -m 644 "$LAB_ROOT/config/capdelegate.conf" "$stage/etc/security/capdelegate.conf"
# A copy the tests restore after breaking the policy.
install -D -m 644 "$LAB_ROOT/config/capdelegate.conf" "$stage/root/lab/capdelegate.conf"
# iputils-ping's postinst set cap_net_raw=ep; every reinstall or upgrade of it sets it again. As
# the README tells an administrator: declare the mark in the marks file and apply it, so that the
# package's trigger and APT hook keep it (a bare setcap would be undone by the next upgrade, and
# `marks check` would say no marks are declared).
install -m 644 "$LAB_ROOT/config/capdelegate-files.conf" "$stage/etc/security/capdelegate-files.conf"
# Debian 13: ping needs no capability on a host with linux-sysctl-defaults (ping_group_range open
# to everyone; the lab closes it), dmesg always does under kernel.dmesg_restrict = 1 (Debian's
# kernels' default; 60-lab-ping.conf here): the README's Debian 13 demonstration, carol's
# cap_syslog through dmesg's mark. fE too: dmesg does not raise its own effective set, as ping does.
if [ "$release" != bookworm ]; then
  printf '%s\n' '/usr/bin/dmesg  cap_syslog=ei' >>"$stage/etc/security/capdelegate-files.conf"
fi
inroot capdelegate marks apply
# Then the audit rules recording each run of a declared file, as the package's hooks keep them
# (capdelegate-files.conf(5), AUDIT RULES); auditd loads them at boot.
inroot /usr/lib/capdelegate/capdelegate-audit-rules

# The profile must have put the module after pam_unix in common-auth and after pam_systemd in
# common-session (see pam_capdelegate(8), "Debian: pam-auth-update").
order=$(grep -h -o -E 'pam_(unix|systemd|capdelegate)\.so' "$stage/etc/pam.d/common-auth" "$stage/etc/pam.d/common-session" | paste -sd' ')
[ "$order" = "pam_unix.so pam_capdelegate.so pam_unix.so pam_systemd.so pam_capdelegate.so" ] \
  || { echo "overlay.sh: unexpected module order in common-auth/common-session: $order" >&2; exit 1; }

# --- the lab: users, logins, network -----------------------------------------------------------
echo capdelegate-sys >"$stage/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tcapdelegate-sys\n' >"$stage/etc/hosts"
echo 'LANG=C.UTF-8' >"$stage/etc/default/locale"
# A fixed machine-id: no first-boot logic (systemd-firstboot would prompt on the console).
echo 5e1f0c0a9b7d4c2e8f6a1b3c5d7e9f01 >"$stage/etc/machine-id"
inroot groupadd netops
for u in alice bob carol dave erin; do
  case $u in carol|dave|erin) g=(-G netops) ;; *) g=() ;; esac
  inroot useradd -m -s /bin/bash "${g[@]}" "$u"
done
printf '%s\n' root:root alice:alice bob:bob carol:carol dave:dave erin:erin | inroot chpasswd -c SHA512
# The administrator's last step before logging in: the policy parses and names known subjects.
inroot capdelegate check

install -D -m 644 "$files/serial-getty-capdelegate.conf" \
  "$stage/etc/systemd/system/serial-getty@ttyS0.service.d/capdelegate.conf"
[ "$release" = bookworm ] || install -m 644 "$files/serial-getty-utillinux-login.conf" \
  "$stage/etc/systemd/system/serial-getty@ttyS0.service.d/capdelegate-login.conf"
install -m 644 "$files/sshd-lab.conf" "$stage/etc/ssh/sshd_config.d/lab.conf"
install -D -m 644 "$files/10-lab.network" "$stage/etc/systemd/network/10-lab.network"
install -m 644 "$files/60-lab-ping.conf" "$files/50-pid-max.conf" "$stage/etc/sysctl.d/"
install -m 644 "$files/capdelegate-lab-overlay.service" "$stage/etc/systemd/system/"
install -m 755 "$files/guest-poweroff" "$stage/usr/local/sbin/guest-poweroff"
# The console's login screen names the demo users, as the minimal guest's does.
install -m 644 "$files/issue" "$stage/etc/issue"
[ "$release" = bookworm ] || cat >>"$stage/etc/issue" <<'EOF'
Debian 13: ping needs no capability where linux-sysctl-defaults opens net.ipv4.ping_group_range;
this guest closes it (/etc/sysctl.d/60-lab-ping.conf). dmesg needs cap_syslog: carol may run it.

EOF
install -m 755 "$LAB_ROOT/tests/system/probe" "$stage/usr/local/bin/lab-probe"
# The tests' stand-in for pam_systemd >= 254 (sets pI and pA in open_session); no PAM file uses it.
# bookworm only (systemd 252): trixie's pam_systemd 257 does it for real. Built with the host's
# compiler for the host's release, which is bookworm's.
if [ "$release" = bookworm ]; then
  gcc -std=gnu11 -O2 -Wall -Wextra -shared -fPIC -o "$stage/usr/lib/x86_64-linux-gnu/security/pam_ambient_stub.so" \
    "$LAB_ROOT/tests/system/pam_ambient_stub.c" -lcap
fi
inroot systemctl enable systemd-networkd.service capdelegate-lab-overlay.service
# The guest has no network and apt knows no package (mmdebstrap empties its lists): the README's
# demonstration of an upgrade, `apt-get install --reinstall iputils-ping`, would say "not
# possible, it cannot be downloaded" and exit 0 having run nothing. A local archive of the base's
# own iputils-ping .deb (its Packages made by the host's dpkg-scanpackages; trusted: a lab image)
# gives apt the package as a mirror would; apt-get update reads only it (the mirror is offline).
repo=$stage/var/lib/lab-apt
mkdir -p "$repo"
cp "$stage"/var/cache/apt/archives/iputils-ping_*.deb "$repo/"
(cd "$repo" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)
printf 'Types: deb\nURIs: file:/var/lib/lab-apt\nSuites: ./\nTrusted: yes\n' >"$stage/etc/apt/sources.list.d/lab-local.sources"
inroot apt-get update -q -o Dir::Etc::SourceList=/dev/null >/dev/null
# logind: a user's manager (user@UID.service, started by pam_systemd at the user's first session)
# stays after the session ends, as for a user who stays logged in elsewhere. Starting one costs a
# login about 3 s of the single TCG CPU (a root login over ssh: 3.9 s of guest CPU, 1.0 s with
# the manager running), and stopping it 10 s after each session (logind's default) made every
# login of the suites' hands (root, 11 to 16 logins a suite) and of a user seen before pay it
# again. What a session gets is decided by its own PAM stack either way; the checks that want a
# manager started afresh (trixie's userdb records) stop it first.
mkdir -p "$stage/etc/systemd/logind.conf.d"
printf '[Login]\nUserStopDelaySec=infinity\n' >"$stage/etc/systemd/logind.conf.d/lab.conf"
# man-db's index stays as the image build left it (capdelegate's pages in it): its dpkg trigger
# rebuilt it at every package operation of the tests (purge, reinstall, ping's .deb, the Ansible
# role), about 1 s of the TCG CPU each. man still finds a page by its path.
rm -f "$stage/var/lib/man-db/auto-update"
# Timers that would only compete for the single TCG CPU during a test boot.
inroot systemctl mask apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer
