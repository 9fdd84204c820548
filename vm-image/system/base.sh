#!/usr/bin/env bash
# base.sh: bootstrap the systemd guest's base root filesystem of a Debian release into DIR
# (network, ~1-2 min). build.sh caches DIR keyed by a hash of this file and the release: the
# package lists live here and nowhere else.
set -euo pipefail

release=bookworm
if [ "${1:-}" = --release ] && [ $# -ge 2 ]; then release=$2; shift 2; fi
if [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  echo "usage: $0 [--release bookworm|trixie] DIR   (as root) bootstrap Debian 12 (bookworm, the default)"
  echo "  or 13 (trixie) with systemd, sshd and auditd into DIR (must not exist)"
  [ "${1:-}" = --help ]; exit
fi
dir=$1

# A plain Debian system as an administrator has it: systemd + logind, OpenSSH, auditd, and the
# tools the tests read capabilities with. apt is here to install the project's .debs. NOT libpam-cap.
PACKAGES=(
  systemd systemd-sysv udev dbus libpam-systemd
  openssh-server auditd
  login passwd libpam-modules libpam-runtime
  iputils-ping libcap2-bin procps util-linux mount
  # an administrator reads the man pages the packages install (man capdelegate)
  man-db
  # the .debs' Depends that the list above does not pull in: build.sh installs the .debs with apt
  # offline (the image is built without the mirror). trixie's systemd no longer depends on
  # libjson-c5 (bookworm's does, through libcryptsetup12)
  libjson-c5 sensible-utils
)
case "$release" in
  # Ansible's modules run on the guest's python3 (contrib/ansible, run by tests/system/ansible.sh
  # on bookworm only: the role is the same on both releases, and python3 costs the trixie image
  # about 40 MB and a minute or more of bootstrap)
  bookworm) PACKAGES+=(python3) ;;
  # trixie: systemd 257's pam_systemd (ambient sets), util-linux's login, OpenSSH 10, libpam 1.7.
  # systemd-run --user needs the user manager's D-Bus (dbus-user-session)
  trixie) PACKAGES+=(dbus-user-session) ;;
  *) echo "base.sh: unknown release '$release' (bookworm, trixie)" >&2; exit 2 ;;
esac

suite=$release
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}

mmdebstrap --variant=apt --include="$(IFS=,; echo "${PACKAGES[*]}")" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/{doc,locale,info}/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --customize-hook='mkdir -p "$1/var/lib/lab-archives" && cp "$1"/var/cache/apt/archives/iputils-ping_*.deb "$1/var/lib/lab-archives/"' \
  "$suite" "$dir" "$mirror"

# The guest has no network: its reinstall test (tests/system/run.sh) needs iputils-ping's .deb of
# the version in the base, which apt downloaded into the chroot. mmdebstrap empties apt's cache
# after the customize hooks; the hook kept a copy, put back into the cache here.
mv "$dir"/var/lib/lab-archives/iputils-ping_*.deb "$dir/var/cache/apt/archives/"
rmdir "$dir/var/lib/lab-archives"

# A maintainer script's process, or anyone reading the tree, can make mmdebstrap's umount of the
# chroot's /proc fail ("target is busy"); never leave a mount in the cache.
if mountpoint -q "$dir/proc"; then umount "$dir/proc" || umount -l "$dir/proc"; fi

if [ -e "$dir/usr/lib/x86_64-linux-gnu/security/pam_cap.so" ]; then
  echo "base.sh: pam_cap.so found in the base: libpam-cap must not be installed" >&2
  exit 1
fi
