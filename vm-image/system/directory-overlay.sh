#!/usr/bin/env bash
# directory-overlay.sh [--release R] STAGE: make STAGE (the system guest after overlay.sh, on
# the directory base of directory-base.sh) the directory site, users and groups from slapd
# through SSSD: a CA and slapd's server certificate, slapd's configuration and data
# (tests/system/directory.ldif plus bigteam's 20,000 generated members), SSSD reading it over
# StartTLS with that CA, pam_sss and pam_mkhomedir enabled with pam-auth-update next to
# capdelegate, and the policy written in the names SSSD returns.
# Called by build.sh --directory; everything it makes is cached with the image.
set -euo pipefail

release=bookworm
if [ "${1:-}" = --release ] && [ $# -ge 2 ]; then release=$2; shift 2; fi
if [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  echo "usage: $0 [--release bookworm|trixie] STAGE   (as root; called by vm-image/system/build.sh --directory)"
  [ "${1:-}" = --help ]; exit
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_ROOT=${LAB_ROOT:-$(cd "$here/../.." && pwd)}
stage=$1
files=$here/directory
inroot() { chroot "$stage" "$@"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# --- TLS: the site's CA and the server's certificate (for localhost, where SSSD connects) -------
# Made at every image build: the image key holds this script, so a cached image keeps its pair.
tls=$stage/etc/ldap/tls
mkdir -p "$tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/O=corp.example.com/CN=corp.example.com lab CA" \
  -keyout "$tmp/ca.key" -out "$tls/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/O=corp.example.com/CN=localhost" \
  -keyout "$tls/server.key" -out "$tmp/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:capdelegate-sys\nextendedKeyUsage=serverAuth\n' >"$tmp/ext"
openssl x509 -req -in "$tmp/server.csr" -CA "$tls/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
  -days 3650 -extfile "$tmp/ext" -out "$tls/server.crt" 2>/dev/null
openssl verify -CAfile "$tls/ca.crt" "$tls/server.crt" >/dev/null
# The CA's key is not kept: nothing in the guest signs anything.
chmod 644 "$tls/ca.crt" "$tls/server.crt"
inroot chown root:openldap /etc/ldap/tls/server.key; chmod 640 "$tls/server.key"
# ldapsearch/ldapmodify as root in the guest verify the server with the same CA.
echo 'TLS_CACERT /etc/ldap/tls/ca.crt' >>"$stage/etc/ldap/ldap.conf"

# --- slapd: configuration and data, loaded offline --------------------------------------------
# bigteam: alice and 19,999 generated accounts (u00001...), each a real posixAccount.
{ cat "$LAB_ROOT/tests/system/directory.ldif"
  awk 'BEGIN { for (i = 1; i < 20000; i++) {
      u = sprintf("u%05d", i)
      printf "\ndn: uid=%s,ou=people,dc=corp,dc=example,dc=com\nobjectClass: account\nobjectClass: posixAccount\n", u
      printf "uid: %s\ncn: %s\nuidNumber: %d\ngidNumber: 20000\nhomeDirectory: /home/corp/%s\nloginShell: /bin/bash\n", u, u, 100000 + i, u }
    printf "\ndn: cn=bigteam,ou=groups,dc=corp,dc=example,dc=com\nobjectClass: posixGroup\ncn: bigteam\ngidNumber: 20004\nmemberUid: alice\n"
    for (i = 1; i < 20000; i++) printf "memberUid: u%05d\n", i }'; } >"$tmp/data.ldif"
cp "$files/slapd-config.ldif" "$tmp/data.ldif" "$stage/tmp/"
rm -rf "$stage"/etc/ldap/slapd.d "$stage"/var/lib/ldap/*
mkdir -p "$stage/etc/ldap/slapd.d"
inroot slapadd -n0 -F /etc/ldap/slapd.d -l /tmp/slapd-config.ldif
inroot slapadd -q -n1 -F /etc/ldap/slapd.d -l /tmp/data.ldif
rm -f "$stage/tmp/slapd-config.ldif" "$stage/tmp/data.ldif"
inroot chown -R openldap:openldap /etc/ldap/slapd.d /var/lib/ldap
# slapd on ldap:/// (StartTLS, required for binds by olcSecurity) and ldapi:/// (root's
# ldapmodify), started at boot by systemd through the package's init script.
sed -i 's|^SLAPD_SERVICES=.*|SLAPD_SERVICES="ldap:/// ldapi:///"|' "$stage/etc/default/slapd"
inroot systemctl enable slapd.service sssd.service >/dev/null 2>&1 || inroot update-rc.d slapd enable

# --- SSSD ---------------------------------------------------------------------------------------
install -m 600 "$files/sssd.conf" "$stage/etc/sssd/sssd.conf"
# The responders run as sssd.service's children (services = in sssd.conf); the package's
# socket-activation units refuse to start beside them (failed units at boot), and would start a
# responder again while the outage check holds SSSD stopped.
inroot systemctl mask sssd-nss.socket sssd-pam.socket sssd-pam-priv.socket sssd-autofs.socket \
  sssd-pac.socket sssd-ssh.socket sssd-sudo.socket >/dev/null
# nscd answers only in the directory suite's check of a cache in front of SSSD: off at boot, so
# that every other check sees SSSD's own answers.
inroot systemctl disable nscd.service >/dev/null 2>&1 || inroot update-rc.d nscd disable
# libnss-sss's postinst added sss to passwd, group and shadow; the check says so at build time.
grep -qE '^group:.*\bsss\b' "$stage/etc/nsswitch.conf" || { echo "directory-overlay.sh: no sss in nsswitch.conf" >&2; exit 1; }

# --- PAM: pam_sss (libpam-sss's profile, on by default) and pam_mkhomedir (directory users have
# no home until their first login) beside capdelegate, all by pam-auth-update.
# libpam-cap's profile is on by default: taken out (pam_cap runs only in the scratch service below).
inroot pam-auth-update --disable capability
inroot pam-auth-update --enable sss mkhomedir capdelegate
! grep -l pam_cap.so "$stage"/etc/pam.d/common-* || { echo "directory-overlay.sh: pam_cap in common-*" >&2; exit 1; }
# The directory is in the auth stack, and our lines are still where pam_capdelegate(8) wants them.
order=$(grep -h -o -E 'pam_(unix|sss|systemd|capdelegate|mkhomedir)\.so' "$stage/etc/pam.d/common-auth" "$stage/etc/pam.d/common-session" | paste -sd' ')
[ "$order" = "pam_unix.so pam_sss.so pam_capdelegate.so pam_unix.so pam_sss.so pam_systemd.so pam_mkhomedir.so pam_capdelegate.so" ] \
  || { echo "directory-overlay.sh: unexpected module order in common-auth/common-session: $order" >&2; exit 1; }

# (logind keeps a user's manager after the session ends: overlay.sh, for every system guest)

# --- the policy, in SSSD's names (not checked here: no SSSD runs at build time; the suite runs
# capdelegate check in the guest). The tests restore it from /root/lab.
install -m 644 "$files/capdelegate.conf" "$stage/etc/security/capdelegate.conf"
install -m 644 "$files/capdelegate.conf" "$stage/root/lab/capdelegate.conf"
mkdir -p "$stage/home/corp"
# The console's login screen names the directory's users, groups and passwords too.
install -m 644 "$files/issue" "$stage/etc/issue"

# --- pam_cap side by side: two scratch services that differ only in the capability module, and
# the driver that runs their auth stack (pam_setcred) for a user and prints the pI it leaves.
install -m 644 "$files/capability.conf" "$stage/etc/security/lab-capability.conf"
printf 'auth required pam_permit.so\nauth optional pam_cap.so config=/etc/security/lab-capability.conf\n' >"$stage/etc/pam.d/lab-pamcap"
printf 'auth required pam_permit.so\nauth optional pam_capdelegate.so\n' >"$stage/etc/pam.d/lab-capdelegate"
gcc -std=gnu11 -O2 -Wall -Wextra -o "$stage/usr/local/sbin/lab-pam-setcred" "$LAB_ROOT/tests/system/pam_setcred.c" -lpam -lcap
echo "directory-overlay.sh: the $release guest is now the directory site"
