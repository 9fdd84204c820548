# parse-console.awk: turn a guest console log into "STATUS<TAB>name[<TAB>reason]" lines.
#   KUnit (suite commoncap):  "kunit commoncap.CASE"
#   selftests between "@@ BEGIN who prog" / "@@ END who prog rc=N": "selftest who prog.CASE"
# Cases absent from the log are added as FAIL by lab-kernel.sh, which knows the expected list.
{ sub(/\r$/, ""); sub(/^\[ *[0-9.]+\] /, "") }

/^ *# Subtest: commoncap$/ { kunit = 1; next }
kunit && /^(not )?ok [0-9]+ (- )?commoncap$/ { kunit = 0; next }
kunit && /^ +(not )?ok [0-9]+ / {
  line = $0; sub(/^ +/, "", line)
  st = (line ~ /^not /) ? "FAIL" : "PASS"
  sub(/^(not )?ok [0-9]+ (- )?/, "", line); name = line; reason = ""
  if (name ~ / # SKIP/) { reason = name; sub(/.* # SKIP */, "", reason); sub(/ # SKIP.*/, "", name); st = "SKIP" }
  print st "\tkunit commoncap." name (st == "SKIP" ? "\t" reason : "")
  next
}

/^@@ BEGIN / { tag = substr($0, 10); cur = ""; stream = 0; run = ""; next }
# ksft (non-harness) programs such as test_execve: name cases by TAP stream, number and the
# last "# [RUN]" description, since their own texts repeat ("ok 6 Passed").
tag != "" && /^TAP version/ { stream++; next }
tag != "" && /^# \[RUN\]/ { run = $0; sub(/^# \[RUN\][ \t]*/, "", run); next }
/^@@ END / { print "END\t" substr($0, 8); tag = ""; next }
tag != "" && /^#  RUN +[^ ]+\.[^ ]+ \.\.\.$/ { cur = $3; sub(/^[^.]*\./, "", cur); next }
tag != "" && /^(not )?ok [0-9]+/ {
  line = $0; st = (line ~ /^not /) ? "FAIL" : "PASS"; reason = ""
  if (line ~ / # SKIP/) { st = "SKIP"; reason = line; sub(/.* # SKIP */, "", reason) }
  sub(/^(not )?ok /, "", line); sub(/ # SKIP.*/, "", line)
  if (cur != "") name = cur
  else {
    split(line, f, " "); text = substr(line, length(f[1]) + 2)
    name = stream "." f[1] " " (text == "Passed" && run != "" ? run : text)
  }
  print st "\tselftest " tag "." name (st == "SKIP" ? "\t" reason : "")
  cur = ""
}
