#!/usr/bin/env bash
# run.sh: boot the systemd guest in QEMU (TCG): serial console on this terminal (or a socket),
# the guest's sshd forwarded to 127.0.0.1:PORT on the host. snapshot=on: nothing is kept.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
export LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
export LAB_T0=${LAB_T0:-$(date +%s)}

usage() {
  cat <<'EOF2'
usage: vm-image/system/run.sh [--release R] [--directory] [--policy FILE] [--ssh-port N]
                              [--console-socket PATH] [--timeout SECONDS] [--image PATH]
                              [--overlay TAR] [--quiet]

  --release R            the Debian release of the guest: bookworm (12, the default) or trixie (13)
  --directory            that release's guest as the directory site: users and groups from slapd
                         through SSSD (erin@corp.example.com, password erin), beside the local ones

  --policy FILE          FILE becomes /etc/security/capdelegate.conf for this boot (root:root 0644)
  --ssh-port N           forward 127.0.0.1:N on the host to the guest's port 22 (default 2222)
  --console-socket PATH  serve the serial console on a unix socket instead of this terminal (tests)
  --timeout SECONDS      hard limit for the whole boot (default 7200; QEMU is killed after it)
  --image PATH           boot this image (from vm-image/system/build.sh) instead of building one
  --overlay TAR          extract TAR (made as root: owners and modes kept) over / at boot, before
                         sshd starts (the directory benchmark's tools and root's ssh key)
  --quiet                no banner

Log in as root/root (also over ssh: a lab image), alice/alice, bob/bob, carol, dave, erin; on the
directory site also as alice, bob, erin and frank @corp.example.com (password: the name before @).
Quit QEMU: Ctrl-a x. Power off from inside, as root: guest-poweroff.
Environment: CAPDELEGATE_KERNEL=PATH boots that bzImage instead of kernel/lab-kernel.sh's.
EOF2
}

policy="" port=2222 sock="" timeout=7200 quiet=0 image="" release=bookworm overlay="" directory=0
while [ $# -gt 0 ]; do
  case "$1" in
    --policy) policy=$2; shift 2 ;;
    --ssh-port) port=$2; shift 2 ;;
    --console-socket) sock=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    --overlay) overlay=$2; shift 2 ;;
    --release) release=$2; shift 2 ;;
    --directory) directory=1; shift ;;
    --quiet) quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || { echo "run.sh: bad --ssh-port $port" >&2; exit 2; }
# shellcheck source=vm-image/foreground.sh
. "$here/../foreground.sh"
[ -n "$sock" ] || need_foreground vm-image/system/run.sh

kernel=${CAPDELEGATE_KERNEL:-$("$LAB_ROOT/kernel/lab-kernel.sh" path bzimage)}
[ -f "$kernel" ] || { echo "run.sh: guest kernel $kernel not found" >&2; exit 2; }
if [ -z "$image" ]; then
  bargs=(--release "$release"); [ "$directory" = 0 ] || bargs+=(--directory)
  image=$("$here/build.sh" "${bargs[@]}")
fi

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
disks=(-drive "file=$image,format=raw,if=virtio,snapshot=on")
# One second disk (/dev/vdb), a tar the guest extracts at boot (capdelegate-lab-overlay.service):
# --overlay's archive, with --policy's file appended.
if [ -n "$overlay" ]; then
  [ -f "$overlay" ] || { echo "run.sh: overlay $overlay not found" >&2; exit 2; }
  cp "$overlay" "$tmp/overlay.tar"
fi
if [ -n "$policy" ]; then
  [ -f "$policy" ] || { echo "run.sh: policy $policy not found" >&2; exit 2; }
  mkdir -p "$tmp/root/etc/security"
  install -m 644 "$policy" "$tmp/root/etc/security/capdelegate.conf"
  tar -C "$tmp/root" --owner=0 --group=0 --numeric-owner -rf "$tmp/overlay.tar" etc/security/capdelegate.conf
fi
[ ! -f "$tmp/overlay.tar" ] || disks+=(-drive "file=$tmp/overlay.tar,format=raw,if=virtio,readonly=on")
if [ -n "$sock" ]; then serial=(-chardev "socket,id=con,path=$sock,server=on,wait=off" -serial chardev:con)
else serial=(-serial mon:stdio); fi

# The release the image holds (an image given by --image may be another than --release names).
os=$(debugfs -R 'cat /usr/lib/os-release' "$image" 2>/dev/null | sed -n 's/^PRETTY_NAME="\(.*\)"$/\1/p')
os=${os:-Debian $release}
# The directory site's users and groups, as tests/system/directory.ldif (loaded into slapd when
# the image is built) has them: "name (members)".
ldif=$LAB_ROOT/tests/system/directory.ldif
dir_users() { awk '/^uid: / { printf "%s%s", n++ ? " " : "", $2 }' "$ldif"; }
dir_groups() {
  awk -v RS= -F'\n' '/objectClass: posixGroup/ { g = ""; m = ""
      for (i = 1; i <= NF; i++) { if ($i ~ /^cn: /) g = substr($i, 5); if ($i ~ /^memberUid: /) m = m (m == "" ? "" : " ") substr($i, 12) }
      if (m != "") printf "%s%s (%s)", n++ ? ", " : "", g, m }' "$ldif"
}
if [ "$quiet" = 0 ] && [ "$directory" = 0 ]; then
  cat >&2 <<EOF2
== capdelegate systemd guest ($os): kernel $kernel
== image $image${policy:+, policy $policy}
== ssh -p $port alice@127.0.0.1   (passwords: user name; root/root)
== Quit QEMU: Ctrl-a x.  Power off from inside: guest-poweroff as root. Hard limit: ${timeout}s.
EOF2
elif [ "$quiet" = 0 ]; then
  cat >&2 <<EOF2
== capdelegate directory site ($os): slapd and SSSD, domain corp.example.com; kernel $kernel
== image $image${policy:+, policy $policy}
== directory users: $(dir_users) @corp.example.com, password = the name before @
==   groups @corp.example.com: $(dir_groups), bigteam (alice and 19,999 more)
== local users: alice bob carol dave erin, password = user name; root/root
== ssh -p $port -l erin@corp.example.com 127.0.0.1   then: grep CapInh /proc/self/status
== policy: /etc/security/capdelegate.conf (vm-image/system/directory/capdelegate.conf); an outage,
==   as root: systemctl stop slapd (SSSD offline, cached logins) or systemctl stop sssd
== Quit QEMU: Ctrl-a x.  Power off from inside: guest-poweroff as root. Hard limit: ${timeout}s.
EOF2
fi

# TCG only (see vm-image/run.sh). The guest's port 22 is reachable from the host's loopback only.
# systemd.default_device_timeout_sec: a loaded host (several guests and builds on 2 cores) made
# trixie's udev take more than systemd's default 90 s to announce ttyS0, and the console's getty
# never started ("Timed out waiting for device dev-ttyS0.device"); the suites wait 300 s for it.
# systemd.default_timeout_start_sec: the same for a service's start (systemd's default 90 s): a
# cold ./lab test found the directory guest's sssd still starting when its checks began
# and never up afterwards; a starved guest's services get 10 minutes.
timeout --foreground -k 5 "$timeout" qemu-system-x86_64 -accel tcg -m 512M -smp 1 \
  -nodefaults -display none -no-reboot "${serial[@]}" \
  -netdev "user,id=n,hostfwd=tcp:127.0.0.1:$port-:22" -device virtio-net-pci,netdev=n \
  -kernel "$kernel" \
  -append "console=ttyS0 root=/dev/vda rw rootfstype=ext4 quiet panic=-1 no_timer_check systemd.default_device_timeout_sec=280 systemd.default_timeout_start_sec=600" \
  "${disks[@]}"
