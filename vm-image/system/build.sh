#!/usr/bin/env bash
# build.sh: build (or find in the cache) the systemd guest's ext4 image of a Debian release and
# print its path.
#
# Cached under $LAB_CACHE/vm-system (bookworm) or $LAB_CACHE/vm-system-RELEASE like vm-image/build.sh:
#   base-<hash of base.sh>/          Debian with systemd, sshd, auditd (base.sh --release RELEASE)
#   image-<hash of all inputs>.ext4  base + the project's .debs built for that release (debs.sh:
#                                    apt-get install, pam-auth-update --enable) + the overlay below
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
T0=${LAB_T0:-$(date +%s)}

release=bookworm
case "${1:-}" in
  -h|--help) echo "usage: $0 [--release bookworm|trixie]   (as root) build or reuse the systemd guest's image"
             echo "  of that Debian release (default bookworm); prints its path. Progress on stderr."; exit 0 ;;
  --release) [ $# -eq 2 ] || { echo "usage: $0 [--release R]" >&2; exit 2; }; release=$2 ;;
  "") ;;
  *) echo "usage: $0 [--help] [--release R]" >&2; exit 2 ;;
esac
case "$release" in
  bookworm) vmc=$LAB_CACHE/vm-system ;;
  trixie) vmc=$LAB_CACHE/vm-system-$release ;;
  *) echo "build.sh: unknown release '$release' (bookworm, trixie)" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "build.sh: needs root (mmdebstrap, chroot, setcap)" >&2; exit 2; }
log() { printf '[vm-system %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
. "$here/../progress.sh"
mkdir -p "$vmc"
exec 9>"$vmc/lock"
flock -w 900 9 || { echo "build.sh: $vmc/lock still held after 900 s" >&2; exit 1; }

# --- stage 1: Debian base --------------------------------------------------------------------
base_key=$( { echo "$release"; cat "$here/base.sh"; } | sha256sum | cut -c1-16)
base=$vmc/base-$base_key
if [ -d "$base" ]; then
  log "base: cached ($base)"
else
  log "base: bootstrapping Debian $release with systemd, openssh-server, auditd, man-db (about 1.5 min: 87 s measured on the 2-core machine at load 8; longer on a busier machine; log: $vmc/base.log)"
  rm -rf "$base.tmp"
  with_progress "mmdebstrap" "$vmc/base.log" "$here/base.sh" --release "$release" "$base.tmp" || { tail -n 30 "$vmc/base.log" >&2; exit 1; }
  mv "$base.tmp" "$base"
  find "$vmc" -maxdepth 1 -name 'base-*' ! -name "base-$base_key" -exec rm -rf {} +
  log "base: done ($(du -sh "$base" | cut -f1))"
fi

# iputils-ping's .deb for the guest's reinstall test (tests/system/run.sh): base.sh keeps the one
# apt downloaded for the base in /var/cache/apt/archives.
pingdeb=$(echo "$base"/var/cache/apt/archives/iputils-ping_*.deb)
[ -f "$pingdeb" ] || { echo "build.sh: no iputils-ping .deb in $base/var/cache/apt/archives" >&2; exit 1; }

# --- stage 2: the packages -------------------------------------------------------------------
debs_out=$("$here/debs.sh" --release "$release") || { echo "build.sh: the packages did not build" >&2; exit 1; }
mapfile -t debs <<<"$debs_out"

# --- stage 3: the image ----------------------------------------------------------------------
image_key=$( { echo "$release $base_key"; sha256sum "${debs[@]}" "$pingdeb" | cut -d' ' -f1
  cat "$0" "$here"/overlay.sh "$here"/files/* "$LAB_ROOT/config/capdelegate.conf" \
    "$LAB_ROOT/tests/system/probe" "$LAB_ROOT/tests/system/pam_ambient_stub.c"; } | sha256sum | cut -c1-16)
image=$vmc/image-$image_key.ext4
if [ -f "$image" ]; then log "image: cached ($image)"; echo "$image"; exit 0; fi

stage=$vmc/stage
# A failure anywhere below leaves neither a half-built root nor a half-written image behind.
trap 'rm -rf "$stage" "$image.tmp"' EXIT
rm -rf "$stage"
cp -a "$base" "$stage"
log "image: apt-get install the .debs, pam-auth-update --enable capdelegate, users, policy"
with_progress "overlay" "$vmc/overlay.log" "$here/overlay.sh" --release "$release" "$stage" "${debs[@]}" || { tail -n 30 "$vmc/overlay.log" >&2; exit 1; }

log "image: mke2fs -d"
rm -f "$image.tmp"
mke2fs -q -t ext4 -L capdelegate-sys -d "$stage" -F "$image.tmp" 2G >"$vmc/mke2fs.log" 2>&1 || { cat "$vmc/mke2fs.log" >&2; exit 1; }
mv "$image.tmp" "$image"
rm -rf "$stage"
ls -1t "$vmc"/image-*.ext4 | tail -n +3 | xargs -r rm -f
log "image: done ($image)"
echo "$image"
