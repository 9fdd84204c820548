# tests/system/stale.sh: sourced by tests/system/run.sh (both releases, in its boot, after the
# purge and reinstall; its functions, $work, $port): a session that outlives its grant.
# alice's line gets an end a minute ahead (capdelegate.conf(5), WINDOWS); alice opens an ssh
# session that leaves a process running; once the end has passed, her next login gets nothing
# and says which line ended (window_ended= in the NOTICE line), while `capdelegate audit
# --processes` reports the process still running with the old grant (stale-grant, its pid,
# audit session and unit). The remedy capdelegate(8) gives, stopping the units the findings
# name, leaves no stale grant. The policy is put back as it was.
# shellcheck shell=bash disable=SC2154,SC2016,SC2034 # run.sh's work, port and functions; eval'd checks

# alice's line ends 60 s from now (the guest's clock); written as an administrator installs a
# policy: a new file renamed over the old one.
read -r -d '' stale_set <<'EOF' || true
exec 2>&1; p=/etc/security/capdelegate.conf
cp -p $p /root/lab/stale-saved.conf
until=$(( $(date +%s) + 60 ))
sed "s/^alice .*/alice    cap_net_raw until $(date -u -d @$until +%Y-%m-%dT%H:%M:%SZ)/" $p >$p.new
chmod 644 $p.new; mv $p.new $p
echo "@@ until=$until"; echo "@@ line=$(grep -n '^alice ' $p | cut -d: -f1)"
echo "@@ check=$(capdelegate check >/dev/null 2>&1; echo $?)"; echo "@@ uid=$(id -u alice)"
EOF
root stale-set "$stale_set" || true
s() { fact stale-set 0 "$1"; }
check stale/policy-line-with-end "alice's line $(s line), until $(s until), check exit $(s check)" \
  eval '[ -n "$(s line)" ] && [ -n "$(s until)" ] && [ "$(s check)" != 2 ]'
stale_until=$(s until) stale_line=$(s line) stale_uid=$(s uid)

# While the line is in force: a login that leaves a process behind in its session (nothing of it
# holds ssh's channel open, so the login itself ends).
login stale-open alice alice 'lab-probe; sleep 900 </dev/null >/dev/null 2>&1 &
echo "@@ sleep.pid=$!"; echo "@@ session=$XDG_SESSION_ID"; echo "@@ sessionid=$(cat /proc/self/sessionid)"
echo "@@ sleep.CapInh=$(awk "\$1 == \"CapInh:\" { print \$2 }" /proc/$!/status)"' || true
session stale-open 1 alice stale/before-end/ssh-alice
o() { fact stale-open 1 "$1"; }
stale_pid=$(o sleep.pid)
check stale/before-end/process-holds-grant "sleep pid $stale_pid CapInh=$(o sleep.CapInh)" \
  eval '[ -n "$stale_pid" ] && hex_eq "$(o sleep.CapInh)" $NET_RAW'

# The end passes (waited for by the guest's own clock), then alice logs in again.
root stale-wait "while [ \$(date +%s) -lt $stale_until ]; do sleep 1; done; echo \"@@ now=\$(date +%s)\"" || true
check stale/end-passed "guest now $(fact stale-wait 0 now), until $stale_until" \
  eval '[ "$(fact stale-wait 0 now)" -ge "$stale_until" ]'
login stale-after alice alice lab-probe || true
session stale-after 1 alice stale/after-end/ssh-alice 0

# What the system says: the NOTICE line of that login, and audit --processes (a short walk:
# the processes are what is checked).
read -r -d '' stale_audit <<EOF || true
exec 2>&1
echo "@@ notice=\$(journalctl -q -o cat --no-pager | grep 'pam_capdelegate(sshd' | grep ' user=alice ' | tail -n 1)"
capdelegate audit --processes /usr/bin/ping >/root/lab/stale-audit.out 2>&1; echo "@@ audit.rc=\$?"
echo "@@ finding=\$(grep -P '^finding\tstale-grant\t/proc/$stale_pid\t' /root/lab/stale-audit.out | tr '\t' ' ')"
echo "@@ stale.uids=\$(grep -P '^finding\tstale-grant\t' /root/lab/stale-audit.out | grep -o '(uid [0-9]*)' | sort -u | paste -sd, -)"
echo "@@ unknown=\$(grep -cP '^finding\tgrant-unknown\t' /root/lab/stale-audit.out)"
echo "@@ sleep.sessionid=\$(cat /proc/$stale_pid/sessionid)"
echo "@@ sleep.unit=\$(grep -o 'session-[0-9]*\.scope' /proc/$stale_pid/cgroup | head -n 1)"
capdelegate audit --json --processes /usr/bin/ping >/root/lab/stale-audit.json 2>/dev/null
echo "@@ json=\$(grep -o '{"pid":$stale_pid,[^}]*}' /root/lab/stale-audit.json)"
grep -P '^(finding\t(stale-grant|grant-unknown)|process)\t' /root/lab/stale-audit.out
EOF
root stale-audit "$stale_audit" || true
a() { fact stale-audit 0 "$1"; }
check stale/notice-names-ended-line "$(a notice)" \
  eval '[[ $(a notice) == *"user=alice granted=none "*" window_ended=/etc/security/capdelegate.conf:$stale_line"* ]]'
check stale/audit-exit-findings "exit $(a audit.rc), want 1" [ "$(a audit.rc)" = 1 ]
stale_want="finding stale-grant /proc/$stale_pid cap_net_raw alice (uid $stale_uid), audit session $(a sleep.sessionid), unit $(a sleep.unit): "
check stale/audit-reports-open-session "$(a finding)" eval '[ -n "$(a sleep.unit)" ] && [[ $(a finding) == "$stale_want"* ]]'
# alice's threads alone: the system services holding pI (systemd-networkd's) are not judged
check stale/audit-only-alice "stale grants of $(a stale.uids); grant-unknown: $(a unknown)" \
  eval '[ "$(a stale.uids)" = "(uid $stale_uid)" ] && [ "$(a unknown)" = 0 ]'
check stale/audit-json-state "$(a json)" \
  eval '[[ $(a json) == *"\"state\":\"stale\",\"grant\":[],\"beyond\":[\"cap_net_raw\"],\"sessionid\":$(a sleep.sessionid),\"unit\":\"$(a sleep.unit)\""* ]]'

# The remedy capdelegate(8) gives: stop the units the findings name (the session's scope, which
# logind may no longer list once the ssh connection is gone, and alice's user manager); then
# nothing of hers holds the grant. loginctl's view of the session, and whether terminate-session
# alone ended it, are logged. Then the policy as it was.
read -r -d '' stale_end <<EOS || true
exec 2>&1; sid=$(a sleep.sessionid)
echo "@@ logind.state=\$(loginctl show-session \$sid -p State --value 2>&1 | tr '\n' ' ')"
loginctl terminate-session \$sid; echo "@@ terminate.rc=\$?"
for _ in \$(seq 20); do kill -0 $stale_pid 2>/dev/null || break; sleep 0.5; done
echo "@@ after_terminate=\$(kill -0 $stale_pid 2>/dev/null && echo running || echo gone)"
units=\$(grep -P '^finding\tstale-grant\t' /root/lab/stale-audit.out | grep -o ', unit [^ :]*:' | sed 's/^, unit //; s/:\$//' | sort -u)
echo "@@ units=\$(echo \$units)"
systemctl stop \$units; echo "@@ stop.rc=\$?"
for _ in \$(seq 60); do
  capdelegate audit --processes /usr/bin/ping >/root/lab/stale-after.out 2>&1
  grep -qP '^finding\tstale-grant\t' /root/lab/stale-after.out || break; sleep 0.5
done
echo "@@ sleep=\$(kill -0 $stale_pid 2>/dev/null && echo running || echo gone)"
echo "@@ alice=\$(pgrep -u alice -l | tr '\n' ' ')"
echo "@@ stale=\$(grep -cP '^finding\tstale-grant\t' /root/lab/stale-after.out)"
cp -p /root/lab/stale-saved.conf /etc/security/capdelegate.conf.new
mv /etc/security/capdelegate.conf.new /etc/security/capdelegate.conf
echo "@@ restored=\$(cmp -s /root/lab/stale-saved.conf /etc/security/capdelegate.conf && echo yes)"
EOS
root stale-end "$stale_end" || true
e() { fact stale-end 0 "$1"; }
log "stale: logind's session $(a sleep.sessionid): $(e logind.state); terminate-session exit $(e terminate.rc), the process $(e after_terminate)"
# (a user manager holding only pam_systemd's cap_wake_alarm, Debian 13's, is no stale grant
# and may stay)
check stale/stop-units-ends-processes "units $(e units): systemctl stop exit $(e stop.rc), the sleep $(e sleep); alice's processes: $(e alice)" \
  eval '[[ " $(e units) " == *" $(a sleep.unit) "* ]] && [ "$(e stop.rc)" = 0 ] && [ "$(e sleep)" = gone ]'
check stale/no-stale-grant-after-stop "$(e stale) stale-grant findings" [ "$(e stale)" = 0 ]
check stale/policy-restored "$(e restored)" [ "$(e restored)" = yes ]
