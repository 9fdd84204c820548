#!/usr/bin/env bash
# own-tmp.sh [--keep PATH]... [--] CMD [ARG...]: run CMD with a /tmp of its own (as root: a
# private mount namespace, an empty tmpfs on /tmp), the current directory and each PATH still
# reachable at their own paths when they lie below the real /tmp. Not root, or no mount
# namespace: CMD runs as it is, in the shared /tmp.
#
# Why: pam_wrapper copies the service files into /tmp/pam.X, X a letter chosen from the pid. The
# path is compiled into its copy of libpam (it takes the place of "/etc/pam.d", of the same
# length): no variable moves it. Two processes that pick the same letter at once share the
# directory, and the later copy rewrites the other's service file (a login ran another test's
# stack). Each run gets its own /tmp instead. That tmpfs hides everything below the real /tmp, a
# checkout or build there too, so the top directory below /tmp of each path CMD needs is bound
# back from the real /tmp, reached through a descriptor opened before the tmpfs hides it. The
# rest of the real /tmp, pam_wrapper's directories of other runs included, stays out of sight.
set -euo pipefail
die() { printf 'own-tmp.sh: %s\n' "$*" >&2; exit 2; }
case "${1:-}" in -h|--help) sed -n '2,5p' "$0"; exit 0 ;; esac
keep=()
while [ "${1:-}" = --keep ]; do
  [ $# -ge 2 ] || die "--keep needs a path"; keep+=("$2"); shift 2
done
[ "${1:-}" != -- ] || shift
[ $# -gt 0 ] || die "no command (usage: own-tmp.sh [--keep PATH]... [--] CMD [ARG...])"
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null ||
   ! unshare -m --propagation private true 2>/dev/null; then
  exec "$@"
fi
tmp=$(realpath -e /tmp)
# the current directory too, unless it is /tmp itself: CMD still starts in it (a working
# directory outlives a mount over it), only its path then leads into the tmpfs
[ "$(realpath -e .)" = "$tmp" ] || keep+=("$PWD")
names=()
declare -A seen=()
for p in "${keep[@]}"; do
  r=$(realpath -e -- "$p" 2>/dev/null) || die "--keep $p: no such file or directory"
  case "$r" in
    "$tmp") die "$p is $tmp itself, which the private /tmp hides: put the checkout and its build in a directory of their own (below $tmp is fine)" ;;
    "$tmp"/*) n=${r#"$tmp"/}; n=${n%%/*}
      [ -n "${seen[$n]:-}" ] || { seen[$n]=1; names+=("$n"); } ;;
  esac
done
# shellcheck disable=SC2016
exec unshare -m --propagation private bash -c '
  set -e; tmp=$1 n=$2; shift 2
  exec {real}<"$tmp"
  mount -t tmpfs -o mode=1777 cd-own-tmp "$tmp"
  for name in "${@:1:n}"; do
    # not canonicalized: mount(8) would make /proc/self/fd/N of it the path /tmp, the tmpfs now
    if [ -d "/proc/self/fd/$real/$name" ]; then mkdir "$tmp/$name"; else : >"$tmp/$name"; fi
    mount --no-canonicalize --rbind "/proc/self/fd/$real/$name" "$tmp/$name"
  done
  shift "$n"; exec {real}<&-
  exec "$@"' own-tmp "$tmp" "${#names[@]}" ${names[@]+"${names[@]}"} "$@"
