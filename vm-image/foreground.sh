# foreground.sh, sourced by ./lab run and the guests' run.sh: need_foreground WHO exits 2, saying
# what to do instead, when the serial console would be this terminal but this process group is
# not the terminal's foreground group. timeout(1) without --foreground puts its command in a group
# of its own: under `timeout N ./lab run`, QEMU's first change to the terminal's settings stopped
# it with SIGTTOU, and the guest hung without a word until the timeout killed it.
need_foreground() {
  [ -t 0 ] || return 0
  local stat f
  read -r stat </proc/$$/stat
  # the fields after "PID (COMM) ": state, ppid, pgrp, session, tty_nr, tpgid (-1: no terminal)
  read -r -a f <<<"${stat##*) }"
  if [ "${f[5]}" -gt 0 ] && [ "${f[5]}" != "${f[2]}" ]; then
    echo "$1: the console would be this terminal, but this process is not in its foreground" >&2
    echo "  (timeout(1) without --foreground?): QEMU would stop at once (SIGTTOU). For a time limit:" >&2
    echo "  $1 --timeout SECONDS (QEMU is killed after it), or timeout --foreground N." >&2
    exit 2
  fi
}
