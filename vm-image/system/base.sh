#!/usr/bin/env bash
# base.sh: bootstrap the systemd guest's Debian 12 base root filesystem into DIR (network, ~1 min).
# build.sh caches DIR keyed by a hash of this file: the package list lives here and nowhere else.
set -euo pipefail

if [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  echo "usage: $0 DIR   (as root) bootstrap Debian 12 with systemd, sshd and auditd into DIR (must not exist)"
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
  # Ansible's modules run on the host's python3 (contrib/ansible, run by tests/system/ansible.sh)
  python3
)

suite=bookworm
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}

mmdebstrap --variant=apt --include="$(IFS=,; echo "${PACKAGES[*]}")" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/{doc,locale,info}/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  "$suite" "$dir" "$mirror"

# A maintainer script's process, or anyone reading the tree, can make mmdebstrap's umount of the
# chroot's /proc fail ("target is busy"); never leave a mount in the cache.
if mountpoint -q "$dir/proc"; then umount "$dir/proc" || umount -l "$dir/proc"; fi

if [ -e "$dir/usr/lib/x86_64-linux-gnu/security/pam_cap.so" ]; then
  echo "base.sh: pam_cap.so found in the base: libpam-cap must not be installed" >&2
  exit 1
fi
