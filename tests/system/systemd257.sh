# tests/system/systemd257.sh: sourced by tests/system/run.sh on trixie, in its boot, after the
# login checks (its functions, $work, $port): what systemd 257 gives sessions beside the policy.
# (a) user services of the user's systemd --user manager (systemd-run --user): their pI and pA;
# (b) a userdb drop-in record (/etc/userdb/NAME.user) with capabilityAmbientSet or
#     capabilityBoundingSet: what the login shell and the user services get, what the console
#     login gets, and (once the CLI knows it) capdelegate audit's ambient-grant finding.
# The findings are written up in pam_capdelegate(8), "systemd 254 and later".
# shellcheck shell=bash disable=SC2154 # work, port and the functions: run.sh's

WAKE_ALARM=$((1 << 35))
# The user manager starts with the first session (pam_systemd waits for it only so long): wait
# until it has started up, then run the probe as a transient user service.
svc_probe='lab-probe; timeout 120 systemctl --user is-system-running --wait >/dev/null 2>&1
systemd-run --user --wait --pipe --quiet /usr/local/bin/lab-probe; lab-probe --manager'

# service FILE N USER NAME WANT_PI WANT_PA: session N of FILE is a user service (or the manager's
# child) of USER: exact pI and pA, pA's bits effective, ping as pI allows.
service() {
  local f=$1 n=$2 u=$3 c=$4 wi=$5 wa=$6 inh amb eff rc out
  check "$c/ran" "no probe output from the user service (see $work/$f.txt)" [ "$(fact "$f" "$n" user)" = "$u" ] || return 0
  inh=$(fact "$f" "$n" self.CapInh) amb=$(fact "$f" "$n" self.CapAmb) eff=$(fact "$f" "$n" self.CapEff)
  log "$c: CapInh=$inh CapAmb=$amb CapEff=$eff; manager CapInh=$(fact "$f" "$n" manager.CapInh) CapAmb=$(fact "$f" "$n" manager.CapAmb)"
  check "$c/CapInh" "CapInh=$inh, want $(printf %016x "$wi")" hex_eq "$inh" "$wi"
  check "$c/CapAmb" "CapAmb=$amb, want $(printf %016x "$wa")" hex_eq "$amb" "$wa"
  check "$c/CapEff-is-CapAmb" "CapEff=$eff, CapAmb=$amb" eval 'is_hex "$eff" && hex_eq "$amb" $(( 16#$eff ))'
  rc=$(fact "$f" "$n" ping.rc) out=$(fact "$f" "$n" ping.out)
  if [ "$(( (wi | wa) & NET_RAW ))" -ne 0 ]; then check "$c/ping-works" "rc=$rc: $out" [ "$rc" = 0 ]
  else check "$c/ping-eperm" "rc=$rc: $out" eval '[ "$rc" != 0 ] && [[ $out == *"Operation not permitted"* ]]'; fi
}

# --- (a) user services: the manager runs the systemd-user PAM stack, pam_systemd after our line --
# Measured on trixie: our line sets the manager's pI to the grant (lab-probe --pam shows it), then
# pam_systemd's default for systemd-user (CAP_WAKE_ALARM, "also inherit") replaces pI with
# {cap_wake_alarm}; the manager keeps no ambient set, so its services get pI {cap_wake_alarm},
# pA, pP and pE empty: never the policy's grant (a limit), and no more than it either.
for u in alice bob; do
  login "user-service-$u" "$u" "$u" "$svc_probe" || true
  session "user-service-$u" 1 "$u" "systemd257/ssh-$u"
  service "user-service-$u" 2 "$u" "systemd257/user-service-$u" $WAKE_ALARM 0
done

# --- (b) userdb drop-in records ---------------------------------------------------------------
# bob: capabilityAmbientSet CAP_NET_RAW (the policy gives him nothing); alice: a
# capabilityBoundingSet without CAP_NET_RAW (the policy gives it to her). Both users' managers
# are stopped first, so that the next login starts them from the records.
read -r -d '' userdb_on <<'EOF' || true
exec 2>&1; install -d -m 755 /etc/userdb
for u in alice bob; do
  uid=$(id -u $u)
  case $u in
    bob) set='"capabilityAmbientSet":["CAP_NET_RAW"]' ;;
    alice) set='"capabilityBoundingSet":["CAP_CHOWN","CAP_SETUID","CAP_SETGID","CAP_WAKE_ALARM"]' ;;
  esac
  printf '{"userName":"%s","uid":%s,"gid":%s,%s}\n' $u $uid "$(id -g $u)" "$set" >/etc/userdb/$u.user
  ln -sf $u.user /etc/userdb/$uid.user
  loginctl terminate-user $u 2>/dev/null; systemctl stop user@$uid.service
done
echo "@@ records=$(ls /etc/userdb | paste -sd' ')"
echo "@@ audit_userdb=$(capdelegate audit --help 2>&1 | grep -c -e '--userdb')"
EOF
root userdb-on "$userdb_on" || true
check systemd257/userdb/records "$(fact userdb-on 0 records)" \
  eval '[[ "$(fact userdb-on 0 records)" == *alice.user*bob.user* ]]'
login userdb-bob bob bob "$svc_probe" || true
# The login shell: pam_systemd applied the record before our session line, which set pI to bob's
# grant (nothing) and emptied pA; the uid change from root would have emptied pA anyway.
session userdb-bob 1 bob systemd257/userdb/ssh-bob
# The user services: pam_systemd runs after our line in the systemd-user stack and replaces pI
# with the record's set. Measured: the manager holds cap_net_raw in pI, pP and pE (pA empty), its
# services cap_net_raw in pI, so every file marked cap_net_raw=i (ping) runs privileged for bob
# as a user service: a capability outside the policy. The policy cannot see a user record;
# capdelegate audit reports it (ambient-grant).
service userdb-bob 2 bob systemd257/userdb/user-service-bob $(( NET_RAW )) 0
check systemd257/userdb/manager-bob-holds-net_raw "manager CapPrm=$(fact userdb-bob 2 manager.CapPrm) CapEff=$(fact userdb-bob 2 manager.CapEff)" \
  eval 'hex_and "$(fact userdb-bob 2 manager.CapPrm)" $NET_RAW && hex_and "$(fact userdb-bob 2 manager.CapEff)" $NET_RAW'
login userdb-alice alice alice lab-probe || true
# capabilityBoundingSet without cap_net_raw: pam_systemd drops it from the bounding set before our
# line; the kernel then refuses the bit in pI, so the module drops it (LOG_WARNING) and alice's grant
# is gone.
session userdb-alice 1 alice systemd257/userdb/bounding-set-ssh-alice 0
timeout 300 expect "$here/console.exp" "$sock" "bob" >"$work/userdb-console.txt" 2>&1 \
  || log "userdb: console.exp failed (see $work/userdb-console.txt)"
session userdb-console 1 bob systemd257/userdb/console-bob

# The order, with the real pam_systemd (what the stand-in pam_ambient_stub.so shows on bookworm):
# su - bob with pam_systemd's line where pam-auth-update puts it (before ours), then after ours.
read -r -d '' userdb_audit <<'EOF' || true
exec 2>&1
journalctl -q -o cat --no-pager -p warning | grep -E "pam_capdelegate\(sshd:[a-z]+\): user=alice: .*bounding" | tail -n 1 | sed 's/^/@@ err=/'
if capdelegate audit --help 2>&1 | grep -q -e '--userdb'; then
  capdelegate audit --tsv /usr/bin >/root/lab/audit-userdb.out 2>&1; echo "@@ audit.rc=$?"
  grep -m1 ambient-grant /root/lab/audit-userdb.out | tr '\t' ' ' | sed 's/^/@@ audit=/'
  echo "@@ audit.ambient=$(grep -c ambient-grant /root/lab/audit-userdb.out)"
else echo "@@ audit.rc=unsupported"; fi
su - bob -c lab-probe
cp /etc/pam.d/common-session /root/lab/common-session.orig
sed -i '/pam_systemd.so/d' /etc/pam.d/common-session; echo 'session optional pam_systemd.so' >>/etc/pam.d/common-session
# su's own sets just after pam_systemd's line (root's, before su changes to bob's uid)
echo 'session optional pam_exec.so quiet log=/run/lab-pam-last.log /usr/local/bin/lab-probe --pam' >>/etc/pam.d/common-session
su - bob -c lab-probe
sed -n 's/^pam service=/@@ su_after_pam_systemd=&/p' /run/lab-pam-last.log; rm -f /run/lab-pam-last.log
cp /root/lab/common-session.orig /etc/pam.d/common-session
rm -f /etc/userdb/*.user
for u in alice bob; do loginctl terminate-user $u 2>/dev/null; systemctl stop user@$(id -u $u).service; done
EOF
root userdb-off "$userdb_audit" || true
session userdb-off 1 bob systemd257/userdb/order/pam_systemd-before-module/su-bob
# pam_systemd after our line: the record's set lands in pI after our module set it, and bob's
# shell runs ping through its fI with a capability the policy never gave him.
check systemd257/userdb/order/pam_systemd-after-module-gives-record-set "CapInh=$(fact userdb-off 2 self.CapInh) ping.rc=$(fact userdb-off 2 ping.rc)" \
  eval 'hex_and "$(fact userdb-off 2 self.CapInh)" $NET_RAW && [ "$(fact userdb-off 2 ping.rc)" = 0 ]'
# The ambient set a PAM module raises does not reach the shell: pam_systemd raised the record's
# cap_net_raw in su's pA (and pI) as root; su then changed to bob's uid, and the kernel empties pA
# when a process's uids all leave 0 (security/commoncap.c, cap_emulate_setxuid; PR_SET_KEEPCAPS
# keeps pP only). pam_cap's ^cap reaches a login, sshd or su session no more (capdelegate.conf(5)).
su_amb=$(fact userdb-off 2 su_after_pam_systemd | sed -n 's/.* CapAmb=\([0-9a-f]*\).*/\1/p')
check systemd257/userdb/order/pam_systemd-after-module-raises-su-ambient "su's sets after pam_systemd: $(fact userdb-off 2 su_after_pam_systemd)" \
  eval '[[ $(fact userdb-off 2 su_after_pam_systemd) == "pam service=su-l user=bob "* ]] && hex_and "$su_amb" $NET_RAW'
check systemd257/userdb/order/ambient-emptied-at-uid-change "bob's shell CapAmb=$(fact userdb-off 2 self.CapAmb), su's CapAmb=$su_amb" \
  eval 'hex_eq "$(fact userdb-off 2 self.CapAmb)" 0 && hex_eq "$(fact userdb-off 2 self.CapPrm)" 0'
check systemd257/userdb/bounding-set-drop-logged "$(fact userdb-off 0 err)" \
  eval '[[ "$(fact userdb-off 0 err)" == *"cap_net_raw not granted: outside the bounding set"* ]]'
if [ "$(fact userdb-off 0 audit.rc)" = unsupported ]; then
  skip systemd257/userdb/audit-ambient-grant "capdelegate audit --help lists no --userdb yet (the CLI's userdb audit)"
else
  # bob's record has two names (bob.user, and UID.user linking to it, as systemd wants for
  # lookups by uid): one record, one finding, at bob.user (capdelegate(8), USER RECORDS)
  check systemd257/userdb/audit-ambient-grant "rc=$(fact userdb-off 0 audit.rc), $(fact userdb-off 0 audit.ambient) finding(s): $(fact userdb-off 0 audit)" \
    eval '[[ "$(fact userdb-off 0 audit)" == *ambient-grant*/etc/userdb/bob.user*cap_net_raw*"user record of bob"* ]] && [ "$(fact userdb-off 0 audit.rc)" = 2 ] && [ "$(fact userdb-off 0 audit.ambient)" = 1 ]'
fi
