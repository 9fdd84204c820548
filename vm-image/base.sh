#!/usr/bin/env bash
# base.sh: bootstrap the guest's Debian 12 base root filesystem into DIR (slow: network, ~30-60 s).
# build.sh caches DIR keyed by a hash of this file, so the package list lives here and nowhere else:
# changing it (or this script) is what triggers a new bootstrap; project files never do.
set -euo pipefail

if [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  echo "usage: $0 DIR   (as root) bootstrap Debian 12 with the guest's packages into DIR (must not exist)"
  [ "${1:-}" = --help ]; exit
fi
dir=$1

# Only what login, the demo and the tests need. NOT libpam-cap: only pam_capdelegate may set pI.
# busybox provides syslogd (pam_syslog needs /dev/log) and `ip` (loopback) for the shell init.
PACKAGES=(
  login passwd libpam-modules libpam-runtime
  iputils-ping libcap2-bin procps util-linux mount
  busybox
)

suite=bookworm
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}

mmdebstrap --variant=essential --include="$(IFS=,; echo "${PACKAGES[*]}")" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/{doc,locale,info}/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  "$suite" "$dir" "$mirror"

# Refuse a base that would let pam_cap do our module's job.
if [ -e "$dir/usr/lib/x86_64-linux-gnu/security/pam_cap.so" ]; then
  echo "base.sh: pam_cap.so found in the base: libpam-cap must not be installed" >&2
  exit 1
fi
