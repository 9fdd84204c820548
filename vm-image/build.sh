#!/usr/bin/env bash
# build.sh: build (or find in the cache) the guest's ext4 image and print its path on stdout.
#
# Two cache levels under $LAB_CACHE/vm, so that changing the project's files never redoes the
# Debian bootstrap:
#   base-<hash of base.sh>/      the bootstrapped Debian root (base.sh holds the package list)
#   image-<hash of all inputs>.ext4  base + the files of the project's .debs + the overlay below
# The overlay (users, policy, PAM line, file capabilities, init) is applied to a copy of the base;
# mke2fs -d keeps owners, modes and security.capability xattrs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(dirname "$here")}
LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
vmc=$LAB_CACHE/vm
T0=${LAB_T0:-$(date +%s)}

case "${1:-}" in
  -h|--help) echo "usage: $0   (as root) build or reuse the guest image; prints its path. Progress on stderr."
             echo "Environment: CAPDELEGATE_SRC=DIR packages the project from DIR instead of this checkout."; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--help]" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "build.sh: needs root (mmdebstrap, chown, setcap)" >&2; exit 2; }

log() { printf '[vm-image %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
. "$here/progress.sh"
mkdir -p "$vmc"
# One build at a time per cache: ./lab run and ./lab test may run at once in a shared checkout.
exec 9>"$vmc/lock"
flock -w 900 9 || { echo "build.sh: $vmc/lock still held after 900 s" >&2; exit 1; }

# --- stage 1: Debian base (cached by the hash of base.sh) -------------------------------------
base_key=$(cat "$here/base.sh" | sha256sum | cut -c1-16)
base=$vmc/base-$base_key
if [ -d "$base" ]; then
  log "base: cached ($base)"
else
  log "base: bootstrapping Debian 12 with mmdebstrap (about 1 min: 59 s measured on the 2-core machine at load 8, beside the other guest's bootstrap; longer on a busier machine; log: $vmc/base.log)"
  rm -rf "$base.tmp"
  with_progress "mmdebstrap" "$vmc/base.log" "$here/base.sh" "$base.tmp" || { tail -n 30 "$vmc/base.log" >&2; exit 1; }
  mv "$base.tmp" "$base"
  # Bases of older package lists are dead weight (~100 MB each).
  find "$vmc" -maxdepth 1 -name 'base-*' ! -name "base-$base_key" -exec rm -rf {} +
  log "base: done ($(du -sh "$base" | cut -f1))"
fi

# --- stage 2: the project, as its packages install it ----------------------------------------
# The .debs are built for the guest's paths (/usr, /etc, the multiarch PAM directory) and cached
# by a hash of the tree (vm-image/system/debs.sh): the systemd guest installs them with apt,
# this guest takes their files, so the project is built once for both. (The host build in
# _build/host cannot serve: it is configured for /usr/local, and the policy's path is compiled
# in.) No maintainer script runs here: the overlay below does what this guest needs.
debs_out=$("$here/system/debs.sh") || { echo "build.sh: the packages did not build" >&2; exit 1; }
mapfile -t debs <<<"$debs_out"
dest=$vmc/install
rm -rf "$dest"; mkdir -p "$dest"
for d in "${debs[@]}"; do dpkg-deb -x "$d" "$dest"; done
log "project: the files of $(printf '%s ' "${debs[@]##*/}")"
[ -f "$dest/usr/lib/x86_64-linux-gnu/security/pam_capdelegate.so" ] && [ -x "$dest/usr/sbin/capdelegate" ] \
  || { echo "build.sh: the packages hold no pam_capdelegate.so or capdelegate" >&2; exit 1; }

# --- stage 3: the image, keyed by everything that goes into it --------------------------------
image_key=$( {
  echo "$base_key"
  (cd "$dest" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
  (cd "$dest" && find . -printf '%p %m %l\n' | sort)
  cat "$0" "$here/init" "$here/pam-login.snippet" "$here/issue" "$LAB_ROOT/config/capdelegate.conf"
} | sha256sum | cut -c1-16)
image=$vmc/image-$image_key.ext4
if [ -f "$image" ]; then
  log "image: cached ($image)"
  echo "$image"; exit 0
fi

log "image: overlaying project files, users, policy and file capabilities"
stage=$vmc/stage
rm -rf "$stage"
# A failed step must not leave a 200 MB staging root behind.
trap 'rm -rf "$stage" "$image.tmp"' EXIT
cp -a "$base" "$stage"
cp -a "$dest/." "$stage/"

install -m 755 "$here/init" "$stage/sbin/capdelegate-init"
install -m 644 "$LAB_ROOT/config/capdelegate.conf" "$stage/etc/security/capdelegate.conf"
install -m 644 "$here/issue" "$stage/etc/issue"
echo capdelegate >"$stage/etc/hostname"
# pam_env in Debian's login stack reads it; without it every login logs an error.
echo 'LANG=C.UTF-8' >"$stage/etc/default/locale"
# Root holds no capabilities in the guest and so cannot power it off; PID 1 does it on SIGUSR1
# (same uid, so no capability is needed to send it).
printf '#!/bin/sh\n# Ask PID 1 to power the guest off (root has no CAP_SYS_BOOT here).\nexec kill -USR1 1\n' \
  >"$stage/usr/local/sbin/guest-poweroff"
chmod 755 "$stage/usr/local/sbin/guest-poweroff"

# Our module right after the password check; it acts in pam_sm_setcred.
grep -q '^@include common-auth' "$stage/etc/pam.d/login"
sed -i "/^@include common-auth/r $here/pam-login.snippet" "$stage/etc/pam.d/login"

# Demo users: password = user name; root's password is root. SHA512 keeps logins quick under TCG.
chroot "$stage" groupadd netops
for u in alice bob carol dave erin; do
  case $u in carol|dave|erin) g=(-G netops) ;; *) g=() ;; esac
  chroot "$stage" useradd -m -s /bin/bash "${g[@]}" "$u"
done
printf '%s\n' root:root alice:alice bob:bob carol:carol dave:dave erin:erin \
  | chroot "$stage" chpasswd -c SHA512

# File capabilities: fI only on ping (Debian ships it =ep), fI+fE on a copy of dmesg (a
# capability >= 32, and the path for programs that do not raise their effective bit themselves).
setcap cap_net_raw=i "$stage/usr/bin/ping"
cp -a "$stage/usr/bin/dmesg" "$stage/usr/local/bin/dmesg-delegated"
setcap cap_syslog=ei "$stage/usr/local/bin/dmesg-delegated"
mkdir -p "$stage/lab"

log "image: mke2fs -d"
rm -f "$image.tmp"
mke2fs -q -t ext4 -L capdelegate -d "$stage" -F "$image.tmp" 1G >"$vmc/mke2fs.log" 2>&1 || { cat "$vmc/mke2fs.log" >&2; exit 1; }
mv "$image.tmp" "$image"
rm -rf "$stage"
# Keep the three newest images; each is ~200 MB of real blocks.
ls -1t "$vmc"/image-*.ext4 | tail -n +4 | xargs -r rm -f
log "image: done ($image)"
echo "$image"
