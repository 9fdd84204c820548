# progress.sh, sourced by the guest image and package builders: with_progress WHAT LOG CMD...
# runs CMD with its output in LOG and, every 30 s while it runs, logs (through the caller's log
# function) that WHAT is still going, for how long, and LOG's last line, so that a long stage
# (mmdebstrap, dpkg-buildpackage) never leaves the terminal silent. Returns CMD's status.
with_progress() {
  local what=$1 out=$2 t n=0 pid rc=0
  shift 2
  t=$(date +%s)
  "$@" >"$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    n=$((n + 1))
    [ $((n % 30)) -ne 0 ] || log "  $what: $(( $(date +%s) - t )) s so far: $(tail -n 1 "$out" | tr -d '\r' | cut -c1-70)"
  done
  wait "$pid" || rc=$?
  return "$rc"
}
