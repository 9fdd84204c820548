#!/bin/busybox sh
# /init of the test initramfs: run the capability selftests as root and as uid 1000 (with
# pI = {net_raw, syslog}), each between "@@ BEGIN tag" / "@@ END tag rc=N" markers on the
# console, then power off. KUnit has already run during boot.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /tmp
dmesg -n 1        # keep kernel notices (e.g. "Invalid argument reading file caps") off the TAP
mkdir -p /fixtures
mount -t ext4 -o ro /dev/vda /fixtures || echo "@@ fixture disk not mounted"
echo "@@ kernel $(uname -r)"

run() {
  tag=$1; shift
  echo "@@ BEGIN $tag"
  ( cd /tmp && "$@" ) 2>&1
  echo "@@ END $tag rc=$?"
}
for t in test_inheritable test_caps64; do
  run "root $t" /selftests/$t
  run "uid1000 $t" /bin/run-as 1000 13,34 /selftests/$t
done
# upstream's ambient-capability test, as root (as non-root it needs user namespaces)
run "root test_execve" /selftests/test_execve
echo "@@ DONE"
reboot -f
