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

release=bookworm directory=0
usage() { echo "usage: $0 [--release bookworm|trixie] [--directory]   (as root) build or reuse the systemd"
          echo "  guest's image of that Debian release (default bookworm); --directory: that release's as the"
          echo "  directory site (slapd, SSSD: directory-base.sh, directory-overlay.sh). Prints its path."
          echo "  Progress on stderr."; }
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --release) [ $# -ge 2 ] || { usage >&2; exit 2; }; release=$2; shift 2 ;;
    --directory) directory=1; shift ;;
    *) usage >&2; exit 2 ;;
  esac
done
case "$release" in
  bookworm) vmc=$LAB_CACHE/vm-system ;;
  trixie) vmc=$LAB_CACHE/vm-system-$release ;;
  *) echo "build.sh: unknown release '$release' (bookworm, trixie)" >&2; exit 2 ;;
esac
# The directory site's bases and images live apart (vm-system-directory/ for bookworm,
# vm-system-directory-RELEASE/ for another); its base is a layer on the release's base, which
# stays where it is and is shared with the system suite.
imgc=$vmc
if [ "$directory" = 1 ]; then
  imgc=$LAB_CACHE/vm-system-directory; [ "$release" = bookworm ] || imgc=$imgc-$release
fi
[ "$(id -u)" -eq 0 ] || { echo "build.sh: needs root (mmdebstrap, chroot, setcap)" >&2; exit 2; }
log() { printf '[vm-system %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
. "$here/../progress.sh"
mkdir -p "$vmc"
exec 9>"$vmc/lock"
flock -w 900 9 || { echo "build.sh: $vmc/lock still held after 900 s" >&2; exit 1; }

# cached_base DIR KEY WHAT ABOUT TOOL CMD...: sets base to DIR/base-KEY, made first if absent by
# CMD... DIR/base-KEY.tmp (log: DIR/base.log; TOOL names it in the progress lines); the older
# bases in DIR are removed once it is there.
cached_base() {
  local dir=$1 key=$2 what=$3 about=$4 tool=$5; shift 5
  base=$dir/base-$key
  if [ -d "$base" ]; then log "$what: cached ($base)"; return; fi
  log "$what: $about; log: $dir/base.log)"
  rm -rf "$base.tmp"
  with_progress "$tool" "$dir/base.log" "$@" "$base.tmp" || { tail -n 30 "$dir/base.log" >&2; exit 1; }
  mv "$base.tmp" "$base"
  find "$dir" -maxdepth 1 -name 'base-*' ! -name "base-$key" -exec rm -rf {} +
  log "$what: done ($(du -sh "$base" | cut -f1))"
}

# --- stage 1: Debian base --------------------------------------------------------------------
base_key=$( { echo "$release"; cat "$here/base.sh"; } | sha256sum | cut -c1-16)
cached_base "$vmc" "$base_key" base "bootstrapping Debian $release with systemd, openssh-server, auditd, man-db (about 1.5 min: 87 s measured on the 2-core machine at load 8; longer on a busier machine" \
  mmdebstrap "$here/base.sh" --release "$release"

# --- stage 1b (--directory): the base with slapd and SSSD -------------------------------------
if [ "$directory" = 1 ]; then
  mkdir -p "$imgc"
  exec 8>"$imgc/lock"
  flock -w 900 8 || { echo "build.sh: $imgc/lock still held after 900 s" >&2; exit 1; }
  base_key=$( { echo "$base_key"; cat "$here/directory-base.sh"; } | sha256sum | cut -c1-16)
  cached_base "$imgc" "$base_key" "directory base" "apt-get install slapd, SSSD into a copy of the base (about 2 min: 128 s measured at load 9" \
    apt-get "$here/directory-base.sh" --release "$release" "$base"
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
  cat "$0" "$here"/overlay.sh "$here"/files/* "$LAB_ROOT"/config/capdelegate{,-files}.conf \
    "$LAB_ROOT/tests/system/probe" "$LAB_ROOT/tests/system/pam_ambient_stub.c"
  [ "$directory" = 0 ] || cat "$here/directory-overlay.sh" "$here"/directory/* "$LAB_ROOT"/tests/system/{directory.ldif,pam_setcred.c}
  } | sha256sum | cut -c1-16)
image=$imgc/image-$image_key.ext4
if [ -f "$image" ]; then log "image: cached ($image)"; echo "$image"; exit 0; fi

stage=$imgc/stage
# A failure anywhere below leaves neither a half-built root nor a half-written image behind.
trap 'rm -rf "$stage" "$image.tmp"' EXIT
rm -rf "$stage"
cp -a "$base" "$stage"
log "image: apt-get install the .debs, pam-auth-update --enable capdelegate, users, policy"
with_progress "overlay" "$imgc/overlay.log" "$here/overlay.sh" --release "$release" "$stage" "${debs[@]}" || { tail -n 30 "$imgc/overlay.log" >&2; exit 1; }
if [ "$directory" = 1 ]; then
  log "image: the directory site: CA and certificate, slapd and its data, SSSD, pam-auth-update, policy"
  with_progress "directory overlay" "$imgc/directory-overlay.log" "$here/directory-overlay.sh" --release "$release" "$stage" \
    || { tail -n 30 "$imgc/directory-overlay.log" >&2; exit 1; }
fi

log "image: mke2fs -d"
rm -f "$image.tmp"
mke2fs -q -t ext4 -L capdelegate-sys -d "$stage" -F "$image.tmp" 2G >"$imgc/mke2fs.log" 2>&1 || { cat "$imgc/mke2fs.log" >&2; exit 1; }
mv "$image.tmp" "$image"
rm -rf "$stage"
ls -1t "$imgc"/image-*.ext4 | tail -n +3 | xargs -r rm -f
log "image: done ($image)"
echo "$image"
