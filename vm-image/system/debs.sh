#!/usr/bin/env bash
# debs.sh: build the Debian packages (dpkg-buildpackage -b, out of tree) for a release and print
# their paths. The tree built is this checkout (tracked and untracked files, not ignored ones) plus
# debian/, copied to _build/deb/ (the host's release) or _build/deb-RELEASE/ (any other release:
# built inside that release's build root, buildroot.sh); the .debs are reused while a hash of
# those files (and of the build root) is unchanged.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
src=${CAPDELEGATE_SRC:-$LAB_ROOT}
T0=${LAB_T0:-$(date +%s)}

usage() {
  echo "usage: $0 [--release R] [--lintian]   build (or reuse) the libpam-capdelegate and capdelegate"
  echo "  .debs for Debian release R (bookworm, the default, or trixie); prints their paths."
  echo "  The host's release builds on the host into _build/deb/, another release in its build"
  echo "  root (vm-image/system/buildroot.sh) into _build/deb-R/. --lintian: then that release's"
  echo "  lintian on them; exit 3 on any error or warning. Environment: CAPDELEGATE_SRC=DIR packages DIR."
}
release=bookworm lint=0
while [ $# -gt 0 ]; do
  case "$1" in
    --release) [ $# -ge 2 ] || { usage >&2; exit 2; }; release=$2; shift 2 ;;
    --lintian) lint=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
case "$release" in bookworm|trixie) ;; *) echo "debs.sh: unknown release '$release' (bookworm, trixie)" >&2; exit 2 ;; esac
host_release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
log() { printf '[deb %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
. "$here/../progress.sh"
if [ "$release" = "$host_release" ]; then out=$LAB_ROOT/_build/deb broot=""
else out=$LAB_ROOT/_build/deb-$release broot=$("$here/buildroot.sh" "$release"); fi

mkdir -p "$out"
# Both guests' builders call this at once (./lab test starts them side by side): one builds, the
# other waits and reuses the packages.
exec 9>"$out/.lock"; flock -w 1800 9 || { echo "debs.sh: $out/.lock still held after 1800 s" >&2; exit 1; }

# The working tree as git sees it (tracked and untracked, minus ignored build outputs): what
# `make` there would build, as vm-image/build.sh does for the first guest.
files=$( { git -C "$src" ls-files -co --exclude-standard; find "$src/debian" -type f -printf 'debian/%P\n'; } \
  | sort -u | while read -r f; do [ -f "$src/$f" ] && printf '%s\n' "$f"; done)
key=$( { (cd "$src" && tr '\n' '\0' <<<"$files" | xargs -0 sha256sum); echo "${broot##*/}"; } | sha256sum | cut -c1-16)
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
debs=("$out/libpam-capdelegate_${version}_amd64.deb" "$out/capdelegate_${version}_amd64.deb")

if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$key" ] && [ -f "${debs[0]}" ] && [ -f "${debs[1]}" ]; then
  log "packages cached ($key)"
else
  t=$(date +%s)
  rm -rf "$out"/capdelegate-* "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/*.ddeb "$out/.stamp"
  # The host suite runs the tests; the package build only builds (nocheck).
  if [ -z "$broot" ]; then
    tree=$out/capdelegate-$version
    mkdir -p "$tree"
    (cd "$src" && tr '\n' '\0' <<<"$files" | xargs -0 cp --parents -t "$tree")
    log "dpkg-buildpackage -b -us -uc in $tree (about 25 s: 23 s measured on the 2-core machine at load 8; longer on a busier machine; log: $out/build.log)"
    with_progress "dpkg-buildpackage" "$out/build.log" \
      env -C "$tree" DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -b -us -uc \
      || { tail -n 30 "$out/build.log" >&2; exit 1; }
    rm -rf "$tree"
  else
    # In the build root, with a clean environment (nothing of the host's leaks into the build).
    # The shared lock keeps buildroot.sh from replacing the root while it is in use.
    exec 8>"${broot%/*}/$release.lock"; flock -s -w 1800 8
    b=$broot/build; trap 'rm -rf "$b"' EXIT
    rm -rf "$b"; mkdir -p "$b/capdelegate-$version"
    (cd "$src" && tr '\n' '\0' <<<"$files" | xargs -0 cp --parents -t "$b/capdelegate-$version")
    log "dpkg-buildpackage -b -us -uc in $release's build root $broot (log: $out/build.log)"
    with_progress "dpkg-buildpackage ($release)" "$out/build.log" \
      chroot "$broot" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
        DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
        sh -c "cd /build/capdelegate-$version && dpkg-buildpackage -b -us -uc" \
      || { tail -n 30 "$out/build.log" >&2; exit 1; }
    find "$b" -maxdepth 1 -type f -exec mv -t "$out" {} +
    rm -rf "$b"; trap - EXIT; exec 8>&-
  fi
  echo "$key" >"$out/.stamp"
  log "packages built in $(( $(date +%s) - t )) s"
fi

# lintian of the packages' release: the host's, or the one in the build root.
if [ "$lint" = 1 ]; then
  log "lintian ($release; errors and warnings fail)"
  rc=0
  if [ -z "$broot" ]; then
    lout=$(lintian --fail-on error,warning "$out"/*.changes 2>&1) || rc=$?
  else
    exec 8>"${broot%/*}/$release.lock"; flock -s -w 1800 8
    b=$broot/build; trap 'rm -rf "$b"' EXIT
    rm -rf "$b"; mkdir -p "$b"; cp "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$b/"
    lout=$(chroot "$broot" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
      sh -c 'lintian --fail-on error,warning /build/*.changes' 2>&1) || rc=$?
    rm -rf "$b"; trap - EXIT; exec 8>&-
  fi
  grep -v 'running with root privileges' <<<"$lout" >&2 || true
  log "lintian $(dpkg-query --admindir="${broot:-}/var/lib/dpkg" -W -f '${Version}' lintian) ($release): $(grep -c '^E: ' <<<"$lout" || true) errors, $(grep -c '^W: ' <<<"$lout" || true) warnings"
  [ "$rc" -eq 0 ] || exit 3
fi
printf '%s\n' "${debs[@]}"
