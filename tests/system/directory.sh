# tests/system/directory.sh: the directory site's checks, sourced by
# tests/system/run.sh --directory once the guest built by vm-image/system/build.sh --directory has
# booted (run.sh's login, root, fact, session and check). The guest runs slapd with
# dc=corp,dc=example,dc=com (tests/system/directory.ldif), StartTLS with a CA made at image build,
# and SSSD with fully qualified names and cached credentials; the policy names its users and groups
# as SSSD returns them (vm-image/system/directory/capdelegate.conf). Checks: the site is what it
# claims to be; ssh logins of the directory users get exactly the policy's grant; explain and check
# agree; with slapd stopped (SSSD offline) and with SSSD stopped, nobody gets more than the policy
# gives; a change in the directory reaches the next login.
# shellcheck shell=bash disable=SC2154 # work, port, here: run.sh's

NET_BIND_SERVICE=$((1 << 10))
D=corp.example.com
# What the policy gives: the user line (alice), a group line (erin: netops; frank: "linux admins"),
# a group's none that wins over `*` (bob: contractors), a local user's line (carol). Local bob is
# in no group of the policy, but `*` gives more than the directory's groups, whose entries list no
# members here (SSSD's ignore_group_members): nobody can be shown outside them, so he gets
# nothing, not `*` (pam_capdelegate(8), GROUPS).
declare -A DGRANT=([alice@$D]=$NET_RAW [bob@$D]=0 [erin@$D]=$NET_RAW [frank@$D]=$SYSLOG
  [carol]=$NET_RAW [bob]=0)

# dlogin NAME USER: an ssh password login of USER (password: its short name) running lab-probe.
dlogin() { login "$1" "$2" "${2%@*}" lab-probe; }

# bounded FILE USER CASE WANT JOURNAL: a login during an outage: the session holds WANT, or
# nothing and the module's error lines of the outage (JOURNAL, from journal_since) give the reason;
# never a bit outside WANT. ping agrees with the set the session holds.
bounded() {
  # shellcheck disable=SC2034 # want and j are read in the eval'd checks
  local f=$1 u=$2 c=$3 want=$4 j=$work/$5-journal.txt inh
  check "$c/logged-in" "no probe output for $u (see $work/$f.txt)" [ "$(fact "$f" 1 user)" = "$u" ] || return 0
  inh=$(fact "$f" 1 self.CapInh)
  check "$c/never-more-than-policy" "CapInh=$inh, policy gives $(printf %016x "$want")" \
    eval 'is_hex "$inh" && [ $(( 16#$inh & ~want )) -eq 0 ]'
  if hex_eq "$inh" "$want"; then pass "$c/grant-or-nothing-with-reason"
  else check "$c/grant-or-nothing-with-reason" "CapInh=$inh and no 'no capabilities granted' line for $u" \
         eval 'hex_eq "$inh" 0 && grep -q "user=$u[: ].*no capabilities granted" "$j"'; fi
  if hex_and "$inh" $NET_RAW; then check "$c/ping-works" "rc=$(fact "$f" 1 ping.rc)" [ "$(fact "$f" 1 ping.rc)" = 0 ]
  else check "$c/ping-eperm" "rc=$(fact "$f" 1 ping.rc)" [ "$(fact "$f" 1 ping.rc)" != 0 ]; fi
}
# journal_since NAME [COMMANDS]: the module's error lines since the last call, into
# $work/NAME-journal.txt, then COMMANDS in the same root login (their facts: fact NAME-journal 0).
journal_since() {
  root "$1-journal" 'journalctl -q -o cat --no-pager -p err --cursor-file=/root/lab/dcursor | grep "pam_capdelegate(" || true'"${2:+
$2}" || true
}

# --- what an administrator is told: lab's banner and the console's login screen ----------------
# (users and groups as directory.ldif has them, the password of each, how to log in as one)
check boot/banner-names-directory-users "$(grep -m2 -A1 '^== directory users' "$work/qemu.log" | paste -sd' ' || echo none)" \
  eval 'grep -qF "== directory users: alice bob erin frank @$D, password = the name before @" "$work/qemu.log" &&
    grep -qF "groups @$D: netops (erin), linux admins (frank), contractors (bob), bigteam" "$work/qemu.log" &&
    grep -qF "ssh -p $port -l erin@$D 127.0.0.1" "$work/qemu.log"'
check boot/issue-names-directory-users "$(grep -m1 'Directory' "$work/console-boot.txt" || echo 'no Directory line')" \
  grep -q "erin@$D with" "$work/console-boot.txt"

# --- the site: slapd over StartTLS, SSSD online, the names, bigteam ------------------------------
read -r -d '' site <<'EOF' || true
exec 2>&1
# The console's prompt and sshd come before the rest of the boot: on a loaded host (a cold
# ./lab test) sssd can still be starting when this runs. Wait for the boot to end (bounded),
# then for SSSD to reach its directory, as an administrator would before judging the site.
# (both waits together stay inside ssh.exp's 180 s for a session)
t=$(date +%s); timeout 80 systemctl is-system-running --wait >/dev/null
echo "@@ boot_wait=$(( $(date +%s) - t )) s: $(systemctl is-system-running)"
end=$(( $(date +%s) + 45 ))
while [ "$(date +%s)" -lt "$end" ]; do
  timeout 10 sssctl domain-status corp.example.com 2>/dev/null | grep -q '^Online status: Online' && break; sleep 2
done
echo "@@ active=$(systemctl is-active slapd sssd | paste -sd, -)"
echo "@@ failed_units=$(systemctl --failed --no-legend --plain | awk '{ print $1 }' | paste -sd, -)"
echo "@@ online=$(timeout 60 sssctl domain-status corp.example.com 2>&1 | sed -n 's/^Online status: //p')"
# (for the transcript when SSSD is not up: what its unit logged)
systemctl is-active -q sssd || journalctl -b -u sssd -o short-monotonic --no-pager | tail -n 20 | sed 's/^/sssd-journal: /'
echo "@@ alice=$(getent passwd alice@corp.example.com)"
echo "@@ local_names=$(grep -cE '^(alice|bob|erin|frank)@' /etc/passwd)"
echo "@@ alice_groups=$(id -Gn alice@corp.example.com | tr ' ' ,)"
echo "@@ frank_gids=$(id -G frank@corp.example.com | tr ' ' ,)"
echo "@@ admins=$(getent group 'linux admins@corp.example.com')"
# bigteam's 20,000 members are in the directory; SSSD answers the group without them
# (ignore_group_members, as a site with groups that big sets it)
echo "@@ bigteam_members=$(ldapsearch -LLL -Q -Y EXTERNAL -H ldapi:/// -b cn=bigteam,ou=groups,dc=corp,dc=example,dc=com memberUid | grep -c '^memberUid: ')"
echo "@@ bigteam_nss=$(getent group bigteam@corp.example.com)"
# TLS as the site has it: the directory answers over StartTLS verified with the site's CA, refuses
# a password bind without TLS, and a client that does not trust the CA gets nowhere.
ldapsearch -x -ZZ -H ldap://localhost -b dc=corp,dc=example,dc=com -LLL uid=erin uid >/dev/null; echo "@@ starttls.rc=$?"
ldapwhoami -x -H ldap://localhost -D uid=erin,ou=people,dc=corp,dc=example,dc=com -w erin >/dev/null; echo "@@ cleartext_bind.rc=$?"
LDAPTLS_CACERT=/etc/ssl/certs/ca-certificates.crt ldapsearch -x -ZZ -H ldap://localhost -b dc=corp,dc=example,dc=com uid=erin >/dev/null; echo "@@ other_ca.rc=$?"
grep -E '^(ldap_tls_cacert|ldap_id_use_start_tls|ldap_tls_reqcert|use_fully_qualified_names|cache_credentials) ' /etc/sssd/sssd.conf | sed 's/^/@@ sssd: /'
echo "@@ auth_stack=$(grep -oE 'pam_(unix|sss|capdelegate)\.so' /etc/pam.d/common-auth | paste -sd' ')"
journalctl -q -o cat --no-pager --cursor-file=/root/lab/dcursor >/dev/null
EOF
root site "$site" || true
log "site: the boot ended after $(fact site 0 boot_wait)"
s() { fact site 0 "$1"; }
check site/slapd-sssd-active "$(s active)" [ "$(s active)" = active,active ]
check site/no-failed-units "failed: $(s failed_units)" [ -z "$(s failed_units)" ]
check site/sssd-online "sssctl: $(s online)" [ "$(s online)" = Online ]
check site/alice-from-directory "$(s alice)" [ "$(s alice)" = "alice@$D:*:10001:20000:Alice:/home/corp/alice:/bin/bash" ]
check site/directory-users-not-in-passwd "$(s local_names) lines in /etc/passwd" [ "$(s local_names)" = 0 ]
check site/alice-in-bigteam "groups: $(s alice_groups)" eval '[[ ,$(s alice_groups), == *",bigteam@$D,"* ]]'
# (id -Gn would split the name at its space: frank's gids, and the group's name by its gid)
check site/group-name-with-space "$(s admins); frank's gids: $(s frank_gids)" \
  eval '[ "$(s admins)" = "linux admins@$D:*:20002:" ] && [[ ,$(s frank_gids), == *,20002,* ]]'
check site/bigteam-20000-members "$(s bigteam_members) in the directory" [ "$(s bigteam_members)" = 20000 ]
check site/group-lookups-carry-no-members "$(s bigteam_nss)" [ "$(s bigteam_nss)" = "bigteam@$D:*:20004:" ]
check site/starttls-verified "ldapsearch -ZZ status $(s starttls.rc)" [ "$(s starttls.rc)" = 0 ]
check site/cleartext-bind-refused "ldapwhoami without TLS: status $(s cleartext_bind.rc) (13: confidentiality required)" \
  [ "$(s cleartext_bind.rc)" = 13 ]
check site/untrusted-ca-refused "ldapsearch -ZZ with the system CAs: status $(s other_ca.rc)" eval '[ "$(s other_ca.rc)" != 0 ]'
sssd_conf=$(facts site | awk -F'\t' '$2 ~ /^sssd: / { print substr($2, 7) }' | tr -s ' ' | paste -sd, -)
check site/sssd-tls-fq-cached "sssd.conf: $sssd_conf" [ "$sssd_conf" = \
  "ldap_id_use_start_tls = True,ldap_tls_reqcert = demand,ldap_tls_cacert = /etc/ldap/tls/ca.crt,use_fully_qualified_names = True,cache_credentials = True" ]
check site/pam_sss-beside-capdelegate "common-auth: $(s auth_stack)" [ "$(s auth_stack)" = "pam_unix.so pam_sss.so pam_capdelegate.so" ]

# --- 1. ssh logins over the directory, and local users beside them -------------------------------
for u in alice@$D bob@$D erin@$D frank@$D carol bob; do
  dlogin "dir-ssh-$u" "$u" || true
  session "dir-ssh-$u" 1 "$u" "ssh/$u" "${DGRANT[$u]}"
done
# bob@corp is in contractors (none): the `*` line's cap_net_bind_service must not reach him.
check ssh/bob@$D/not-star-grant "CapInh=$(fact "dir-ssh-bob@$D" 1 self.CapInh)" \
  eval '! hex_and "$(fact "dir-ssh-bob@$D" 1 self.CapInh)" $NET_BIND_SERVICE'

# --- 2. explain and check in the guest ------------------------------------------------------------
read -r -d '' cli <<'EOF' || true
capdelegate explain --tsv erin@corp.example.com 2>&1 | sed 's/^/@@ explain: /'
capdelegate check >/root/lab/check.out 2>&1; echo "@@ check.rc=$?"
grep -c unknown /root/lab/check.out | sed 's/^/@@ check.unknown=/'
grep -c 'NSS answers it with no members' /root/lab/check.out | sed 's/^/@@ check.memberless=/'
{ cat /etc/security/capdelegate.conf; echo '@ghosts@corp.example.com cap_syslog'; } >/root/lab/staged.conf
capdelegate check --staged /root/lab/staged.conf >/root/lab/staged.out 2>&1; echo "@@ staged.rc=$?"
grep warning /root/lab/staged.out | sed 's/^/@@ staged: /'
journalctl -q -o cat --no-pager | grep -E "pam_capdelegate\(sshd:[a-z]+\): user=[a-z]+@corp" | sed 's/^/@@ journal: /'
EOF
root cli "$cli" || true
# (the value after "explain: " holds tabs: all of the line after the session number)
ex=$(facts cli | awk -F'\t' '$2 ~ /^explain: / { print substr($0, length($1) + 11) }')
check explain/erin-rule "explain: $(paste -sd'|' <<<"$ex")" \
  eval 'grep -qP "^match\t/etc/security/capdelegate.conf:[0-9]+\tgroup\t@netops\@$D\tcap_net_raw$" <<<"$ex"'
check explain/erin-pI-is-login-grant "explain pI: $(grep '^pI' <<<"$ex"); login CapInh=$(fact "dir-ssh-erin@$D" 1 self.CapInh)" \
  eval 'grep -qP "^pI\tcap_net_raw\t" <<<"$ex" && hex_eq "$(fact "dir-ssh-erin@$D" 1 self.CapInh)" $NET_RAW'
check check/knows-every-directory-name "status $(fact cli 0 check.rc), $(fact cli 0 check.unknown) unknown" \
  eval '[ "$(fact cli 0 check.unknown)" = 0 ]'
# its warnings are the three narrowing groups SSSD answers without members (capdelegate(8), check)
check check/warns-memberless-narrowing "status $(fact cli 0 check.rc), $(fact cli 0 check.memberless) memberless" \
  eval '[ "$(fact cli 0 check.rc)" = 1 ] && [ "$(fact cli 0 check.memberless)" = 3 ]'
staged=$(facts cli | awk -F'\t' '$2 ~ /^staged: / { print substr($2, 9) }')
check check/staged-warns-naming-missing-group "status $(fact cli 0 staged.rc): $staged" \
  eval '[ "$(fact cli 0 staged.rc)" = 1 ] && grep -q "staged.conf:[0-9]*: group .ghosts@$D. unknown" <<<"$staged"'
for u in alice bob erin frank; do
  n=$(facts cli | grep -c "journal: pam_capdelegate(sshd:[a-z]*): user=$u@$D granted=" || true)
  check "journal/$u@$D-one-notice" "$n sshd notice lines" [ "$n" = 1 ]
done
check journal/frank-via-group-with-space "$(facts cli | grep -m1 "user=frank@" || echo none)" \
  eval 'facts cli | grep -q "user=frank@$D granted=cap_syslog via=group"'

# --- 2b. side by side with Debian's pam_cap: the same users through two scratch services that
# differ only in the capability module (lab-pamcap: pam_cap.so with lab-capability.conf, the
# policy as pam_cap can say it; lab-capdelegate: our auth line), each from an empty pI. The table
# goes to the log and to $work/pam_cap-table.tsv; the checks: both stacks ran, capdelegate's
# column is the policy's grant (what the logins above got).
CMP_USERS=("alice@$D" "bob@$D" "erin@$D" "frank@$D" carol bob)
root pam-cap-cmp "lab-pam-setcred lab-capdelegate ${CMP_USERS[*]}; lab-pam-setcred lab-pamcap ${CMP_USERS[*]}" || true
cmp_fact() { tr -d '\r' <"$work/pam-cap-cmp.txt" | awk -v s="$1" -v u="$2" -v f="$3" '$1 == "@@" && $2 == "cmp" && $3 == s && $4 == u { print $f }'; }
capnames() { is_hex "$1" && /usr/sbin/capsh --decode="$1" | sed 's/.*=//; s/^$/none/' || echo "?"; }
printf 'USER\tpam_cap\tcapdelegate\tpolicy\n' >"$work/pam_cap-table.tsv"
for u in "${CMP_USERS[@]}"; do
  pc=$(cmp_fact lab-pamcap "$u" 6) cd=$(cmp_fact lab-capdelegate "$u" 6)
  printf '%s\t%s\t%s\t%s\n' "$u" "$(capnames "$pc")" "$(capnames "$cd")" "$(capnames "$(printf %x "${DGRANT[$u]}")")" >>"$work/pam_cap-table.tsv"
  check "pam_cap-side-by-side/$u/stacks-ran" "pam rc: pam_cap $(cmp_fact lab-pamcap "$u" 5), capdelegate $(cmp_fact lab-capdelegate "$u" 5)" \
    eval '[ "$(cmp_fact lab-pamcap "$u" 5)" = 0 ] && [ "$(cmp_fact lab-capdelegate "$u" 5)" = 0 ]'
  check "pam_cap-side-by-side/$u/capdelegate-is-policy" "CapInh=$cd" hex_eq "$cd" "${DGRANT[$u]}"
done
while read -r l; do log "pam_cap side by side: $l"; done <"$work/pam_cap-table.tsv"

# --- 3. outage, cached: slapd stopped, SSSD offline; users who logged in before ----------------
root slapd-down 'systemctl stop slapd; echo "@@ slapd=$(systemctl is-active slapd)"' || true
check outage-cached/slapd-stopped "slapd: $(fact slapd-down 0 slapd)" [ "$(fact slapd-down 0 slapd)" = inactive ]
for u in erin@$D bob@$D alice@$D; do dlogin "cached-$u" "$u" || true; done
journal_since cached 'echo "@@ online=$(timeout 60 sssctl domain-status corp.example.com 2>&1 | sed -n "s/^Online status: //p")"'
check outage-cached/sssd-offline "sssctl: $(fact cached-journal 0 online)" [ "$(fact cached-journal 0 online)" = Offline ]
for u in erin@$D bob@$D alice@$D; do bounded "cached-$u" "$u" "outage-cached/$u" "${DGRANT[$u]}" cached; done
check outage-cached/bob-never-star-grant "CapInh=$(fact "cached-bob@$D" 1 self.CapInh)" \
  eval '! hex_and "$(fact "cached-bob@$D" 1 self.CapInh)" $NET_BIND_SERVICE'

# --- 4. outage, no SSSD: directory users cannot log in, local users get the policy or nothing ---
root sssd-down 'systemctl start slapd; systemctl stop sssd; echo "@@ sssd=$(systemctl is-active sssd)"' || true
check outage-nosssd/sssd-stopped "sssd: $(fact sssd-down 0 sssd)" [ "$(fact sssd-down 0 sssd)" = inactive ]
rc=0; dlogin "nosssd-erin@$D" "erin@$D" || rc=$?
check "outage-nosssd/erin@$D-refused" "ssh.exp status $rc (3 = refused)" [ "$rc" = 3 ]
for u in carol bob; do dlogin "nosssd-$u" "$u" || true; done
journal_since nosssd 'rm -f /var/lib/sss/mc/*; getent group netops@corp.example.com >/dev/null; echo "@@ getent.rc=$?"'
for u in carol bob; do bounded "nosssd-$u" "$u" "outage-nosssd/$u" "${DGRANT[$u]}" nosssd; done
# nss_sss's memory cache outlives sssd for memcache_timeout (300 s) and answers the groups it
# holds, but never the module's probe (pam_capdelegate(8), GROUPS): local bob already got nothing
# above, "cannot look up group netops@corp.example.com: Connection refused". Without the cache
# (removed here rather than waited for) the directory's groups fail too (ECONNREFUSED): the module
# must not read that as "not a member".
check outage-nosssd/no-memory-cache "getent group netops@$D: status $(fact nosssd-journal 0 getent.rc) (2: not found)" \
  [ "$(fact nosssd-journal 0 getent.rc)" = 2 ]
for u in carol bob; do dlogin "nosssd-nomc-$u" "$u" || true; done
journal_since nosssd-nomc 'systemctl start sssd; echo "@@ sssd=$(systemctl is-active sssd)"'
for u in carol bob; do bounded "nosssd-nomc-$u" "$u" "outage-nosssd-nocache/$u" "${DGRANT[$u]}" nosssd-nomc; done
check outage-nosssd/sssd-back "sssd: $(fact nosssd-nomc-journal 0 sssd)" [ "$(fact nosssd-nomc-journal 0 sssd)" = active ]

# --- 4b. an outage another source hides: "group: sss files", SSSD stopped -----------------------
# glibc reports the last source's status, so the files source's "not found" hides nss_sss's
# outage (nss-systemd would not do: it errs too while the lookup is one it cannot answer):
# the user's group list lacks contractors and the probe sees no error. nss_sss's memory cache
# still answers bob@corp's account and the group entries it holds (its initgroups cache is
# removed: the membership search fails while lookups by name work). bob@corp is in contractors,
# whose "none" gives less than "*": pam_capdelegate(8), GROUPS, grants him nothing here, never
# "*". The login runs the scratch service lab-capdelegate (lab-pam-setcred: pam_permit, then the
# module), since sshd cannot authenticate a directory user while SSSD is down. check warns about
# the order (capdelegate(8), FINDINGS: nss-order).
root order "cp /etc/nsswitch.conf /root/lab/nsswitch.site
sed -i 's/^group:.*/group: sss files/' /etc/nsswitch.conf
capdelegate check >/root/lab/order-check.out 2>&1; echo \"@@ check.rc=\$?\"
echo \"@@ check.order=\$(grep -c 'warning: /etc/nsswitch.conf: group: a source after sss' /root/lab/order-check.out)\"
getent passwd bob@$D >/dev/null; getent group contractors@$D >/dev/null; id bob@$D >/dev/null
systemctl stop sssd; rm -f /var/lib/sss/mc/initgroups; since=\$(date +%s)
echo \"@@ sssd=\$(systemctl is-active sssd)\"
getent group capdelegate:probe >/dev/null; echo \"@@ probe.rc=\$?\"
echo \"@@ groups=\$(id -Gn bob@$D 2>&1 | tr ' ' ,)\"
lab-pam-setcred lab-capdelegate bob@$D
journalctl -q -o cat --no-pager --since=@\$since | grep 'pam_capdelegate(lab-capdelegate:.*user=bob@' | sed 's/^/@@ journal: /'
cp /root/lab/nsswitch.site /etc/nsswitch.conf; systemctl start sssd; echo \"@@ sssd.back=\$(systemctl is-active sssd)\"" || true
check order/check-warns "check status $(fact order 0 check.rc), $(fact order 0 check.order) nss-order warnings" \
  eval '[ "$(fact order 0 check.rc)" = 1 ] && [ "$(fact order 0 check.order)" = 1 ]'
check order/sssd-stopped "sssd: $(fact order 0 sssd)" [ "$(fact order 0 sssd)" = inactive ]
check order/probe-hidden "probe: status $(fact order 0 probe.rc) (2: not found or an error; the journal: no probe failure)" \
  eval '[ "$(fact order 0 probe.rc)" = 2 ] && ! facts order | grep -q "journal: .*the probe lookup"'

order_inh=$(tr -d '\r' <"$work/order.txt" | awk -v u="bob@$D" '$1 == "@@" && $2 == "cmp" && $4 == u { print $6 }')
check "order/bob@$D-never-star-grant" "CapInh=$order_inh (groups: $(fact order 0 groups))" hex_eq "$order_inh" 0
check "order/bob@$D-reason-logged" "$(facts order | grep -m1 'journal: ' || echo 'no line')" \
  eval 'facts order | grep -q "journal: .*user=bob@$D: group [^ ]* (.*no capabilities granted"'
check order/sssd-back "sssd: $(fact order 0 sssd.back)" [ "$(fact order 0 sssd.back)" = active ]

# --- 4c. nscd in front of SSSD, SSSD stopped ----------------------------------------------------
# nscd (the image holds Debian's, off at boot) caches the group database: during the outage it
# answers "not found" to the probe, and computes bob@corp's group list without the directory's
# groups, so the list lacks contractors with no error anywhere. Its passwd cache still knows
# bob@corp (looked up while SSSD ran). pam_capdelegate(8), GROUPS: bob@corp gets nothing, never
# "*"; check warns that nscd caches the group database.
root nscd "systemctl start nscd; echo \"@@ nscd=\$(systemctl is-active nscd)\"
getent passwd bob@$D >/dev/null
capdelegate check >/root/lab/nscd-check.out 2>&1; echo \"@@ check.rc=\$?\"
echo \"@@ check.nscd=\$(grep -c 'warning: nscd caches the group database' /root/lab/nscd-check.out)\"
systemctl stop sssd; rm -f /var/lib/sss/mc/*; since=\$(date +%s)
getent group capdelegate:probe >/dev/null; echo \"@@ probe.rc=\$?\"
echo \"@@ groups=\$(id -Gn bob@$D 2>&1 | tr ' ' ,)\"
lab-pam-setcred lab-capdelegate bob@$D
journalctl -q -o cat --no-pager --since=@\$since | grep 'pam_capdelegate(lab-capdelegate:.*user=bob@' | sed 's/^/@@ journal: /'
systemctl stop nscd; systemctl start sssd; echo \"@@ sssd.back=\$(systemctl is-active sssd)\"" || true
check nscd/running "nscd: $(fact nscd 0 nscd)" [ "$(fact nscd 0 nscd)" = active ]
check nscd/check-warns "check status $(fact nscd 0 check.rc), $(fact nscd 0 check.nscd) nscd warnings" \
  eval '[ "$(fact nscd 0 check.rc)" = 1 ] && [ "$(fact nscd 0 check.nscd)" = 1 ]'
check nscd/probe-hidden "probe: status $(fact nscd 0 probe.rc) (2: not found or an error; the journal: no probe failure)" \
  eval '[ "$(fact nscd 0 probe.rc)" = 2 ] && ! facts nscd | grep -q "journal: .*the probe lookup"'
nscd_inh=$(tr -d '\r' <"$work/nscd.txt" | awk -v u="bob@$D" '$1 == "@@" && $2 == "cmp" && $4 == u { print $6 }')
check "nscd/bob@$D-never-star-grant" "CapInh=$nscd_inh (groups: $(fact nscd 0 groups))" hex_eq "$nscd_inh" 0
check "nscd/bob@$D-reason-logged" "$(facts nscd | grep -m1 'journal: ' || echo 'no line')" \
  eval 'facts nscd | grep -q "journal: .*user=bob@$D: .*no capabilities granted"'
check nscd/sssd-back "sssd: $(fact nscd 0 sssd.back)" [ "$(fact nscd 0 sssd.back)" = active ]

# --- 5. a change in the directory: erin out of netops, then back --------------------------------
memberuid() {
  # shellcheck disable=SC2034 # read in the eval'd check
  local step=$1
  root "$1" "printf 'dn: cn=netops,ou=groups,dc=corp,dc=example,dc=com\nchangetype: modify\n$2: memberUid\nmemberUid: erin\n' \
    | ldapmodify -Q -Y EXTERNAL -H ldapi:/// >/dev/null; echo \"@@ ldapmodify.rc=\$?\"; sss_cache -E; echo \"@@ sss_cache.rc=\$?\"" || true
  check "change/$1" "ldapmodify $(fact "$1" 0 ldapmodify.rc), sss_cache $(fact "$1" 0 sss_cache.rc)" \
    eval '[ "$(fact "$step" 0 ldapmodify.rc)" = 0 ] && [ "$(fact "$step" 0 sss_cache.rc)" = 0 ]'
}
memberuid erin-removed delete
dlogin "change-out-erin@$D" "erin@$D" || true
# out of netops, erin is in no group of the policy: `*`, past groups listed without members,
# gives her nothing (as local bob above)
session "change-out-erin@$D" 1 "erin@$D" "change/out/erin@$D" 0
memberuid erin-added add
dlogin "change-back-erin@$D" "erin@$D" || true
session "change-back-erin@$D" 1 "erin@$D" "change/back/erin@$D" "$NET_RAW"
