#!/usr/bin/env bash
# debs.sh: build the Debian packages (dpkg-buildpackage -b, out of tree) and print their paths.
# The tree built is this checkout (tracked and untracked files, not ignored ones) plus debian/,
# copied to _build/deb/; the .debs are reused while a hash of those files is unchanged.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
src=${CAPDELEGATE_SRC:-$LAB_ROOT}
out=$LAB_ROOT/_build/deb
T0=${LAB_T0:-$(date +%s)}

case "${1:-}" in
  -h|--help) echo "usage: $0   build (or reuse) libpam-capdelegate and capdelegate .debs into _build/deb/;"
             echo "prints the .deb paths. Environment: CAPDELEGATE_SRC=DIR packages DIR instead."; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--help]" >&2; exit 2 ;;
esac
log() { printf '[deb %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
. "$here/../progress.sh"

mkdir -p "$out"
# Both guests' builders call this at once (./lab test starts them side by side): one builds, the
# other waits and reuses the packages.
exec 9>"$out/.lock"; flock -w 1800 9 || { echo "debs.sh: $out/.lock still held after 1800 s" >&2; exit 1; }

# The working tree as git sees it (tracked and untracked, minus ignored build outputs): what
# `make` there would build, as vm-image/build.sh does for the first guest.
files=$( { git -C "$src" ls-files -co --exclude-standard; find "$src/debian" -type f -printf 'debian/%P\n'; } \
  | sort -u | while read -r f; do [ -f "$src/$f" ] && printf '%s\n' "$f"; done)
key=$( (cd "$src" && tr '\n' '\0' <<<"$files" | xargs -0 sha256sum) | sha256sum | cut -c1-16)
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
debs=("$out/libpam-capdelegate_${version}_amd64.deb" "$out/capdelegate_${version}_amd64.deb")

if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$key" ] && [ -f "${debs[0]}" ] && [ -f "${debs[1]}" ]; then
  log "packages cached ($key)"
else
  t=$(date +%s)
  tree=$out/capdelegate-$version
  rm -rf "$out"/capdelegate-* "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/*.ddeb "$out/.stamp"
  mkdir -p "$tree"
  (cd "$src" && tr '\n' '\0' <<<"$files" | xargs -0 cp --parents -t "$tree")
  # The host suite runs the tests; the package build only builds (nocheck).
  log "dpkg-buildpackage -b -us -uc in $tree (about 25 s: 23 s measured on the 2-core machine at load 8; longer on a busier machine; log: $out/build.log)"
  with_progress "dpkg-buildpackage" "$out/build.log" \
    env -C "$tree" DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -b -us -uc \
    || { tail -n 30 "$out/build.log" >&2; exit 1; }
  rm -rf "$tree"
  echo "$key" >"$out/.stamp"
  log "packages built in $(( $(date +%s) - t )) s"
fi
printf '%s\n' "${debs[@]}"
