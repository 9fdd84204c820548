# tests/system/ansible.sh: sourced by tests/system/run.sh in its boot (its functions, $port,
# $work): the role contrib/ansible/roles/capdelegate run by the host's ansible-core against the
# guest over ssh on 127.0.0.1 with a throwaway key. The packages are purged first, so the first
# run installs them: (a) it changes the host and logins then get its grants; (b) a second run
# changes nothing; (c) a broken drop-in fails at validate and the host keeps its policy and
# logins their grants; (d) the audit it brought to the controller is read by `capdelegate
# report`. Each run's log ends with the seconds of each task (callback_plugins/lab_task_times.py).
# shellcheck shell=bash disable=SC2154 # work, port, here and the functions: run.sh's

ans=$work/ansible
ans_t0=$(date +%s)
# A cost measurement only (docs/building-and-testing.md): the same run without the group.
if [ -n "${CD_SYSTEM_SKIP_ANSIBLE:-}" ]; then
  skip ansible "CD_SYSTEM_SKIP_ANSIBLE is set (a run that measures what the group costs)"
  return 0
fi
if ! command -v ansible-playbook >/dev/null; then
  skip ansible "ansible-playbook not installed (./lab deps installs ansible-core)"
  return 0
fi
mkdir -p "$ans"
ssh-keygen -q -t ed25519 -N '' -C capdelegate-lab-throwaway -f "$ans/id"

# Root's key, and the host as before the role: the packages purged (the PAM lines go with them),
# the marks file without the role's dmesg line, no drop-ins, no audit. Restarting from here makes
# the group repeatable on one guest.
root ansible-setup "install -d -m 700 /root/.ssh && echo '$(cat "$ans/id.pub")' >>/root/.ssh/authorized_keys
dpkg --purge libpam-capdelegate capdelegate >/root/lab/ansible-purge.out 2>&1; echo \"@@ purge.rc=\$?\"
rm -rf /etc/security/capdelegate.d /var/lib/capdelegate /var/cache/capdelegate-debs
cp /root/lab/capdelegate.conf /etc/security/capdelegate.conf
sed -i '/dmesg/d' /etc/security/capdelegate-files.conf; setcap -r /usr/bin/dmesg 2>/dev/null
echo \"@@ python3=\$(python3 -c 'import sys; print(sys.version_info[0])' 2>&1)\"
echo \"@@ pam=\$(grep -c pam_capdelegate /etc/pam.d/common-auth)\"" || true
a() { fact ansible-setup 0 "$1"; }
check ansible/setup-purged "purge rc=$(a purge.rc), pam lines=$(a pam)" eval '[ "$(a purge.rc)" = 0 ] && [ "$(a pam)" = 0 ]'
if [ "$(a python3)" != 3 ]; then fail ansible/guest-python3 "python3 in the guest: $(a python3)"; return 0; fi

cat >"$ans/ansible.cfg" <<EOF
[defaults]
roles_path = $LAB_ROOT/contrib/ansible/roles
interpreter_python = /usr/bin/python3
host_key_checking = False
retry_files_enabled = False
forks = 1
timeout = 60
local_tmp = $ans/tmp
callback_plugins = $here/ansible/callback_plugins
callbacks_enabled = lab_task_times
[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=300s -o ControlPath=$ans/cp-%C -o IdentitiesOnly=yes -o PasswordAuthentication=no -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR
EOF
printf '[guests]\nguest ansible_host=127.0.0.1 ansible_port=%s ansible_user=root ansible_ssh_private_key_file=%s\n' \
  "$port" "$ans/id" >"$ans/inventory"
mapfile -t ans_debs < <("$LAB_ROOT/vm-image/system/debs.sh" 2>/dev/null)  # built for the image: cached
ans_extra=$(python3 -c 'import json, sys; print(json.dumps({"capdelegate_debs": sys.argv[2:], "capdelegate_audit_dir": sys.argv[1]}))' \
  "$ans/audits" "${ans_debs[@]}")
# playbook NAME VARFILE...: one ansible-playbook run, output in $ans/NAME.txt; returns its status.
declare -A ans_s=()
playbook() {
  local name=$1 t rc=0 v=(); shift; t=$(date +%s)
  for f in "$@"; do v+=(-e "@$here/ansible/$f"); done
  ANSIBLE_CONFIG=$ans/ansible.cfg ANSIBLE_HOME=$ans/home ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 \
    timeout 900 ansible-playbook -i "$ans/inventory" "$here/ansible/site.yml" "${v[@]}" -e "$ans_extra" \
    >"$ans/$name.txt" 2>&1 || rc=$?
  ans_s[$name]=$(( $(date +%s) - t ))
  log "ansible $name: status $rc, ${ans_s[$name]} s: $(grep -E '^guest +:' "$ans/$name.txt" | tr -s ' ')"
  log "ansible $name: slowest tasks: $(grep '^TASK TIME' "$ans/$name.txt" | grep -v '(the whole run)' | sort -k3,3nr | head -n 4 | sed 's/^TASK TIME *//' | tr -s ' ' | paste -sd';')"
  return "$rc"
}
# recap NAME KEY: a number of the run's PLAY RECAP line (ok, changed, failed, ...).
recap() { grep -E '^guest +:' "$ans/$1.txt" | grep -oE "$2=[0-9]+" | cut -d= -f2; }
# task NAME TASK: the result lines (changed:, ok:, failed:, skipping:) under TASK's header.
task() { awk -v t="$2" '/^(TASK|RUNNING HANDLER) \[/ { on = index($0, "[capdelegate : " t) > 0; next }
  on && /^(changed|ok|failed|fatal|skipping):/' "$ans/$1.txt"; }
changed() { task "$1" "$2" | grep -q '^changed:'; }
# as_root COMMAND: over the playbooks' ssh connection (no new login).
as_root() { ssh -p "$port" -i "$ans/id" -o ControlPath="$ans/cp-%C" -o IdentitiesOnly=yes -o BatchMode=yes \
  -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR root@127.0.0.1 "$1"; }

# --- (a) the first run installs and changes; logins get its grants -----------------------------
rc=0; playbook first good.yml || rc=$?
check ansible/first-run-succeeds "status $rc, failed=$(recap first failed) (see $ans/first.txt)" \
  eval '[ "$rc" = 0 ] && [ "$(recap first failed)" = 0 ]'
for t in "debs-copied:The .debs are on the host" "debs-installed:The packages are installed" \
  "pam-enabled:The PAM profile is enabled" "policy:The policy file" "drop-in:The drop-ins" \
  "marks-file:The marks file" "marks-applied:capdelegate marks apply" "audit:The audit, on the controller"; do
  check "ansible/first-run-changed/${t%%:*}" "task '${t#*:}': $(task first "${t#*:}" | head -n 1)" changed first "${t#*:}"
done
# bob's login after the first run is the one after the broken run, below (a login costs the
# TCG guest about 5 s): his cap_net_raw comes only from the first run's drop-in 10-bob.conf.
login ansible-dave dave dave 'lab-probe; dmesg >/dev/null 2>&1; echo "@@ dmesg.rc=$?"; echo "@@ getcap=$(/usr/sbin/getcap /usr/bin/dmesg)"' || true
session ansible-dave 1 dave ansible/first-run/ssh-dave "$SYSLOG"
check ansible/first-run/dmesg-marked "$(fact ansible-dave 1 getcap)" [ "$(fact ansible-dave 1 getcap)" = "/usr/bin/dmesg cap_syslog=ei" ]
check ansible/first-run/dave-reads-kernel-log "dmesg exit $(fact ansible-dave 1 dmesg.rc)" [ "$(fact ansible-dave 1 dmesg.rc)" = 0 ]

# --- (b) the same playbook again: nothing to do ------------------------------------------------
rc=0; playbook second good.yml || rc=$?
check ansible/second-run-changed-0 "status $rc, changed=$(recap second changed): $(grep -E '^changed:' "$ans/second.txt" | head -n 3 | paste -sd' ')" \
  eval '[ "$rc" = 0 ] && [ "$(recap second changed)" = 0 ] && [ "$(recap second failed)" = 0 ]'

# The role reads each managed file's sha1, owner and mode first and skips a file already as it
# would write it (contrib/ansible/README.md): the copies of the second run are all skipped.
copies=$(for t in 'The policy file' 'The drop-ins' 'The marks file'; do task second "$t"; done | cut -d' ' -f1 | sort -u | paste -sd,)
check ansible/second-run-copies-nothing "the copy tasks' results: $copies" [ "$copies" = "skipping:" ]

# --- (c) a broken drop-in: refused at validate, the host keeps its policy ---------------------
as_root 'cd /etc/security && sha256sum capdelegate.conf capdelegate.d/*' >"$ans/policy-before.txt" 2>&1 || true
rc=0; playbook broken good.yml broken.yml || rc=$?
check ansible/broken-drop-in-fails-at-validate "status $rc, failed=$(recap broken failed): $(task broken 'The drop-ins' | grep -m1 -oE '^failed: [^{]*|"msg": "[^"]*"' | paste -sd' ')" \
  eval '[ "$rc" != 0 ] && [ "$(recap broken failed)" = 1 ] && task broken "The drop-ins" | grep "^failed: .*20-erin.conf" | grep -q "failed to validate"'
as_root 'cd /etc/security && sha256sum capdelegate.conf capdelegate.d/*' >"$ans/policy-after.txt" 2>&1 || true
check ansible/broken-run-policy-files-unchanged "before: $(awk '{ print $2 }' "$ans/policy-before.txt" | paste -sd' '); after: $(awk '{ print $2 }' "$ans/policy-after.txt" | paste -sd' ')" \
  eval '[ "$(wc -l <"$ans/policy-before.txt")" = 2 ] && cmp -s "$ans/policy-before.txt" "$ans/policy-after.txt"'
# One login shows both runs: bob's cap_net_raw comes only from the first run's drop-in (the
# setup removed every drop-in, and the main policy does not name him), and the broken drop-in,
# had it been installed, would have rejected the whole policy: nobody would get anything.
login ansible-bob bob bob lab-probe || true
session ansible-bob 1 bob ansible/first-run-then-broken-run/ssh-bob "$NET_RAW"

# --- (d) the fetched audit, read by capdelegate report ------------------------------------------
rep=${LAB_BUILD:-$LAB_ROOT/_build/host}/capdelegate
rc=0; "$rep" report "$ans"/audits/*.json >"$ans/report.tsv" 2>"$ans/report.err" || rc=$?
check ansible/report-reads-fetched-audit "report exit $rc: $(head -c 300 "$ans/report.err")" \
  eval '[ "$rc" = 0 ] && grep -qxE "host	capdelegate-sys	$ans/audits/guest.json	host-field	([0-9a-f]{32}|-)" "$ans/report.tsv"'
check ansible/report-shows-role-grants "$(grep -E '	(bob|dave)	' "$ans/report.tsv" | paste -sd' ')" \
  eval 'grep -qx "grant	cap_net_raw	user	bob	capdelegate-sys" "$ans/report.tsv" && grep -qx "grant	cap_syslog	user	dave	capdelegate-sys" "$ans/report.tsv"'

# the playbooks' ssh connection (ControlPersist) ends now, not when the guest does
ssh -O exit -o ControlPath="$ans/cp-%C" -p "$port" root@127.0.0.1 2>/dev/null || true
log "ansible: runs ${ans_s[first]:-?} s (first), ${ans_s[second]:-?} s (second), ${ans_s[broken]:-?} s (broken); group $(( $(date +%s) - ans_t0 )) s"
