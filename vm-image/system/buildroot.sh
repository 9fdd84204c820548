#!/usr/bin/env bash
# buildroot.sh: the build root of a Debian release (an mmdebstrap'd buildd chroot with the
# project's build dependencies and that release's lintian), built once and cached under
# $LAB_CACHE/buildroot/RELEASE-<hash of this file and the Build-Depends>/; prints its path.
# debs.sh builds the packages of a release other than the host's in it, as Debian's buildds do:
# their Depends then come from that release's libraries (shlibs), not from the host's.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
src=${CAPDELEGATE_SRC:-$LAB_ROOT}
T0=${LAB_T0:-$(date +%s)}

if [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  echo "usage: $0 RELEASE   (as root) build or reuse RELEASE's build root (bookworm, trixie); prints its path"
  [ "${1:-}" = --help ]; exit
fi
release=$1
case "$release" in bookworm|trixie) ;; *) echo "buildroot.sh: unknown release '$release' (bookworm, trixie)" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "buildroot.sh: needs root (mmdebstrap)" >&2; exit 2; }
log() { printf '[buildroot %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
. "$here/../progress.sh"

dir=$LAB_CACHE/buildroot
mkdir -p "$dir"
# The key: the release, this file and the Build-Depends field (a change elsewhere in
# debian/control, a description, needs no new root).
build_deps() { awk '/^Build-Depends:/ { on = 1; print; next } on && /^[ \t]/ { print; next } { on = 0 }' "$src/debian/control"; }
key=$( { echo "$release"; cat "$0"; build_deps; } | sha256sum | cut -c1-16)
root=$dir/$release-$key
exec 9>"$dir/$release.lock"
flock -w 1800 9 || { echo "buildroot.sh: $dir/$release.lock still held after 1800 s" >&2; exit 1; }
if [ -d "$root" ]; then log "$release: cached ($root)"; echo "$root"; exit 0; fi

mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
log "$release: mmdebstrap --variant=buildd + build dependencies + lintian (about 2-4 min at load 8; log: $dir/$release.log)"
rm -rf "$root.tmp"
mkdir -p "$root.tmp.ctl/debian"
cp "$src/debian/control" "$root.tmp.ctl/debian/"
# apt-get build-dep reads Build-Depends from debian/control as a buildd does (debhelper-compat is
# a virtual package: apt resolves it, a hand-made --include list could not).
with_progress "mmdebstrap $release" "$dir/$release.log" \
  mmdebstrap --variant=buildd --include=lintian \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/{doc,locale,info,man}/*' \
    --customize-hook="mkdir -p \"\$1/tmp/bd\" && cp -a $root.tmp.ctl/debian \"\$1/tmp/bd/\"" \
    --customize-hook='chroot "$1" apt-get build-dep -y -q --no-install-recommends /tmp/bd' \
    --customize-hook='rm -rf "$1/tmp/bd"' \
    "$release" "$root.tmp" "$mirror" \
  || { rm -rf "$root.tmp" "$root.tmp.ctl"; tail -n 30 "$dir/$release.log" >&2; exit 1; }
rm -rf "$root.tmp.ctl"
if mountpoint -q "$root.tmp/proc"; then umount "$root.tmp/proc" || umount -l "$root.tmp/proc"; fi
# The builds run in it by plain chroot, without mounts: the device nodes they write to must exist.
for n in null:1:3 zero:1:5 urandom:1:9; do
  IFS=: read -r d ma mi <<<"$n"
  [ -c "$root.tmp/dev/$d" ] || mknod -m 666 "$root.tmp/dev/$d" c "$ma" "$mi"
done
mv "$root.tmp" "$root"
find "$dir" -maxdepth 1 -name "$release-*" ! -name "$release-$key" ! -name '*.log' ! -name '*.lock' -exec rm -rf {} +
log "$release: done ($(du -sh "$root" | cut -f1))"
echo "$root"
