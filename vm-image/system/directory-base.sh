#!/usr/bin/env bash
# directory-base.sh [--release R] BASE DIR: the directory site's base: a copy of the
# system base of release R (BASE, from base.sh; bookworm by default) with OpenLDAP's server and
# SSSD installed by apt from the mirror the host's apt uses, as base.sh's mmdebstrap does. A layer
# on the cached base rather than a second mmdebstrap with a longer list: base.sh stays byte for
# byte what it was, so the default system suite's cached base (keyed by base.sh's hash) is
# untouched, and only the extra packages are downloaded. build.sh --directory caches DIR keyed by
# BASE's key and this file's hash: the package list lives here and nowhere else.
set -euo pipefail

release=bookworm
if [ "${1:-}" = --release ] && [ $# -ge 2 ]; then release=$2; shift 2; fi
if [ "${1:-}" = --help ] || [ $# -ne 2 ]; then
  echo "usage: $0 [--release bookworm|trixie] BASE DIR   (as root; network) copy BASE to DIR"
  echo "  (must not exist) and apt-get install slapd, ldap-utils, SSSD's LDAP back end, its NSS and"
  echo "  PAM modules and tools into it"
  [ "${1:-}" = --help ]; exit
fi
base=$1 dir=$2
[ -d "$base" ] || { echo "directory-base.sh: no base $base" >&2; exit 2; }
[ ! -e "$dir" ] || { echo "directory-base.sh: $dir exists" >&2; exit 2; }

# slapd: the site's directory; ldap-utils: ldapmodify for the change-in-the-directory check;
# sssd-ldap (+ sssd-common): the LDAP back end; libnss-sss and libpam-sss: what logins go through;
# sssd-tools and sssd-dbus: sssctl domain-status, to see whether SSSD is online or offline (it
# asks the InfoPipe responder, sssd_ifp, which sssd-dbus holds).
# libpam-cap: Debian's pam_cap, side by side with capdelegate in a scratch PAM service only
# (directory-overlay.sh takes its profile out of common-auth).
# nscd: the name service cache nslcd sites run, started only by the directory suite's nscd check
# (directory-overlay.sh disables it at boot).
PACKAGES=(slapd ldap-utils sssd-ldap sssd-common libnss-sss libpam-sss sssd-tools sssd-dbus libpam-cap
  nscd)

mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}

cp -a "$base" "$dir"
# Whatever happens below, no mount stays behind in the (half-built) tree.
unmount_all() { local m; for m in dev/pts dev proc; do ! mountpoint -q "$dir/$m" || umount "$dir/$m" || umount -l "$dir/$m"; done; }
trap unmount_all EXIT
mount -t proc proc "$dir/proc"
mount --bind /dev "$dir/dev"
mount --bind /dev/pts "$dir/dev/pts"
# apt in the chroot resolves the mirror with the host's resolver; the base's file comes back after.
cp "$dir/etc/resolv.conf" "$dir/etc/resolv.conf.lab"
cp /etc/resolv.conf "$dir/etc/resolv.conf"
# No service starts in the chroot (slapd's and sssd's postinsts would try): policy-rc.d's 101.
printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"; chmod 755 "$dir/usr/sbin/policy-rc.d"
# mmdebstrap left the base's sources.list naming the mirror base.sh used; it must be this one.
grep -qx "deb $mirror $release main" "$dir/etc/apt/sources.list" \
  || { echo "directory-base.sh: $dir/etc/apt/sources.list does not name $mirror" >&2; exit 1; }
# slapd's postinst would make a database for the host name's domain with an unknown admin
# password; the overlay replaces its configuration and database entirely anyway.
echo 'slapd slapd/no_configuration boolean true' | chroot "$dir" debconf-set-selections
chroot "$dir" apt-get update -q
chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
chroot "$dir" apt-get clean
rm -rf "$dir"/var/lib/apt/lists/* "$dir/usr/sbin/policy-rc.d"
mv "$dir/etc/resolv.conf.lab" "$dir/etc/resolv.conf"
# The image keeps iputils-ping's .deb (base.sh) for the system suite's reinstall test; apt-get
# clean above removed it from the archive cache: put back the base's copy.
cp "$base"/var/cache/apt/archives/iputils-ping_*.deb "$dir/var/cache/apt/archives/"
