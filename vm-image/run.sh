#!/usr/bin/env bash
# run.sh: boot the capdelegate guest in QEMU (TCG) with its serial console on this terminal.
# Builds what is missing first (kernel and image are cached). The image is opened with
# snapshot=on: nothing a boot does is kept, so every boot starts from the built image.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LAB_ROOT=${LAB_ROOT:-$(dirname "$here")}
export LAB_CACHE=${LAB_CACHE:-$LAB_ROOT/.cache}
export LAB_T0=${LAB_T0:-$(date +%s)}

usage() {
  cat <<'EOF'
usage: vm-image/run.sh [--policy FILE] [--overlay TAR] [--fixtures IMG] [--timeout SECONDS] [--quiet]

  --policy FILE      install FILE as /etc/security/capdelegate.conf for this boot (root:root 0644);
                     the image is not rebuilt
  --overlay TAR      a tar archive PID 1 extracts over / before login starts (used by the VM tests;
                     owners and modes are kept, so a test can install a world-writable policy)
  --fixtures IMG     attach IMG read-only as /dev/vdc (the kernel series' fixture disk)
  --timeout SECONDS  hard limit for the whole boot (default 7200; QEMU is killed after it)
  --quiet            do not print the banner (for scripts driving the console)

Quit QEMU: Ctrl-a x. Power off from inside: log in as root (password root) and run guest-poweroff.
Environment: CAPDELEGATE_KERNEL=PATH boots that bzImage instead of kernel/lab-kernel.sh's.
EOF
}

policy="" overlay="" fixtures="" timeout=7200 quiet=0
while [ $# -gt 0 ]; do
  case "$1" in
    --policy|--overlay|--fixtures|--timeout)
      [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; usage >&2; exit 2; }
      case "$1" in
        --policy) policy=$2 ;; --overlay) overlay=$2 ;; --fixtures) fixtures=$2 ;; --timeout) timeout=$2 ;;
      esac
      shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[ -z "$policy" ] || [ -z "$overlay" ] || { echo "run.sh: --policy and --overlay exclude each other" >&2; exit 2; }
# shellcheck source=vm-image/foreground.sh
. "$here/foreground.sh"
need_foreground vm-image/run.sh

kernel=${CAPDELEGATE_KERNEL:-}
if [ -z "$kernel" ]; then
  [ -x "$LAB_ROOT/kernel/lab-kernel.sh" ] || { echo "run.sh: kernel/lab-kernel.sh missing: no guest kernel" >&2; exit 2; }
  kernel=$("$LAB_ROOT/kernel/lab-kernel.sh" path bzimage)
fi
[ -f "$kernel" ] || { echo "run.sh: guest kernel $kernel not found" >&2; exit 2; }
image=$("$here/build.sh")

# The per-boot overlay is a tar archive used as a raw disk (/dev/vdb): no filesystem to build, and
# tar keeps owners and modes. The guest's PID 1 extracts it before starting login.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -n "$policy" ]; then
  [ -f "$policy" ] || { echo "run.sh: policy $policy not found" >&2; exit 2; }
  mkdir -p "$tmp/root/etc/security"
  install -m 644 "$policy" "$tmp/root/etc/security/capdelegate.conf"
  tar -C "$tmp/root" --owner=0 --group=0 -cf "$tmp/overlay.tar" etc/security/capdelegate.conf
  overlay=$tmp/overlay.tar
fi
disks=(-drive "file=$image,format=raw,if=virtio,snapshot=on")
# An empty overlay keeps the fixture disk at /dev/vdc whatever the options.
[ -n "$overlay" ] || { tar -cf "$tmp/empty.tar" -T /dev/null; overlay=$tmp/empty.tar; }
disks+=(-drive "file=$overlay,format=raw,if=virtio,readonly=on")
[ -z "$fixtures" ] || disks+=(-drive "file=$fixtures,format=raw,if=virtio,readonly=on")

if [ "$quiet" = 0 ]; then
  cat >&2 <<EOF
== capdelegate guest: kernel $kernel
== image $image${policy:+, policy $policy}
== Log in as alice/alice, bob/bob, carol/carol, dave/dave, erin/erin or root/root.
== Quit QEMU: Ctrl-a x.  Power off from inside: log in as root, run guest-poweroff.
== Changes inside the guest are discarded at exit (snapshot=on). Hard limit: ${timeout}s.
EOF
fi

# TCG only: /dev/kvm here is nested and paravirtual, a KVM guest runs ~1000x too slow. No ACPI in the
# guest kernel, so PID 1 ends the guest with reboot, which -no-reboot turns into QEMU's exit.
timeout --foreground -k 5 "$timeout" qemu-system-x86_64 -accel tcg -m 256M -smp 1 \
  -nodefaults -display none -serial mon:stdio -no-reboot \
  -kernel "$kernel" \
  -append "console=ttyS0 root=/dev/vda rw rootfstype=ext4 init=/sbin/capdelegate-init quiet panic=-1 no_timer_check" \
  "${disks[@]}"
