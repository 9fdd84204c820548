#!/usr/bin/env python3
"""pam_driver.py: real PAM logins for the model's differential test (run by diff.py, not by hand).

Runs under LD_PRELOAD of nss_fault.so, libpam_wrapper.so and libnss_wrapper.so, with
PAM_WRAPPER_SERVICE_DIR and NSS_WRAPPER_* set by diff.py. Reads one request a line on stdin:
SERVICE then the users' names in hex, separated by blanks; a word env:HEX sets the variable
VAR=VALUE (hex of that text) in the child, for nss_fault.so (an outage, case folding). It
runs, per request, in one forked child (a login process whose pI each transaction replaces) and
user after user, what login(1) runs after authentication (pam_setcred(PAM_ESTABLISH_CRED), then
pam_open_session) through libpam and pam_capdelegate.so, and reads its own CapInh from
/proc/self/status after each: the inheritable set the module really set with capset(2), as the
user's shell would inherit it. Writes one JSON line per request: a list with, per user, the two
PAM return codes, the two pI values and the module's log (pam_wrapper writes pam_syslog to
stderr at PAM_WRAPPER_DEBUGLEVEL=2); or an object with "error".
"""
import ctypes
import json
import os
import sys
import tempfile

PAM_ESTABLISH_CRED = 0x2

CONV_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p)


class PamConv(ctypes.Structure):
    _fields_ = [("conv", CONV_FN), ("appdata_ptr", ctypes.c_void_p)]


def no_conversation(_n, _msg, _resp, _data):
    return 19  # PAM_CONV_ERR: the module must never ask anything


def cap_inh():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapInh:"):
                return int(line.split()[1], 16)
    return -1


def one_login(pam, conv, service, user, log_path):
    """One transaction for @user; its log lines go to @log_path."""
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    handle = ctypes.c_void_p()
    rc = pam.pam_start(service.encode(), user, ctypes.byref(conv), ctypes.byref(handle))
    res = {"start": rc}
    if rc == 0:
        res["setcred"] = pam.pam_setcred(handle, PAM_ESTABLISH_CRED)
        res["pi_setcred"] = cap_inh()
        res["session"] = pam.pam_open_session(handle, 0)
        res["pi_session"] = cap_inh()
        pam.pam_end(handle, 0)
    with open(log_path, "rb") as f:
        res["log"] = f.read().decode("utf-8", "backslashreplace")
    return res


def logins_child(pam, conv, service, users, out_fd, tmpdir):
    """In the forked child: the users' transactions one after the other, as one login process
    would run them (each replaces the pI the previous one left), results as JSON on out_fd."""
    log_path = os.path.join(tmpdir, "log")
    results = [one_login(pam, conv, service, u, log_path) for u in users]
    data = json.dumps(results).encode()
    while data:
        data = data[os.write(out_fd, data):]
    # exit(3), not _exit: pam_wrapper's destructor removes the copy it made in this child.
    ctypes.CDLL(None).exit(0)


def logins(pam, conv, service, users, tmpdir, env):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            for var in env:
                k, v = var.split("=", 1)
                os.environ[k] = v
            logins_child(pam, conv, service, users, w, tmpdir)
        finally:
            os._exit(3)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return {"error": "login child exited with status %d" % status}
    return json.loads(data)


def main():
    if len(sys.argv) > 1:
        print(__doc__.strip())
        return 0
    # The preloaded pam_wrapper's pam_start must win: look the symbols up in the global scope.
    ctypes.CDLL("libpam.so.0", mode=ctypes.RTLD_GLOBAL)
    pam = ctypes.CDLL(None)
    pam.pam_start.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    for fn in (pam.pam_setcred, pam.pam_open_session, pam.pam_end):
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int]
    conv = PamConv(CONV_FN(no_conversation), None)
    # pam_wrapper sets itself up (a copy of the service directory) at the first pam_start:
    # once here, so that the children share it rather than each leaving a copy behind.
    handle = ctypes.c_void_p()
    if pam.pam_start(b"model-init", b"root", ctypes.byref(conv), ctypes.byref(handle)) == 0:
        pam.pam_end(handle, 0)
    with tempfile.TemporaryDirectory() as tmpdir:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            env = [bytes.fromhex(w[4:]).decode() for w in words[1:] if w.startswith("env:")]
            users = [bytes.fromhex(u) for u in words[1:] if not u.startswith("env:")]
            results = logins(pam, conv, words[0], users, tmpdir, env)
            sys.stdout.write(json.dumps(results) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
