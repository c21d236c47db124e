# privileged_mount: makes a mount namespace and mounts a tmpfs on /tmp
# whose source is the token (argv: token), first as it is, then through a
# new user namespace. A mount it makes is held 400 ms for the host to see.
import ctypes
import os
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

libc = ctypes.CDLL(None, use_errno=True)
token = sys.argv[1].encode()


def fail(how, call):
    e = ctypes.get_errno()
    print(f"{how}: {call}: errno {e} ({os.strerror(e)})", file=sys.stderr)
    return False


def attempt(how, flags):
    if libc.unshare(flags) != 0:
        return fail(how, "unshare")
    # Never let the mount propagate back to the host.
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return fail(how, "making mounts private")
    if libc.mount(token, b"/tmp", b"tmpfs", 0, b"size=1m") != 0:
        return fail(how, "mount")
    print(f"{how}: mounted a tmpfs on /tmp", flush=True)
    time.sleep(0.4)
    return True


if not attempt("mount namespace", CLONE_NEWNS):
    attempt("user and mount namespace", CLONE_NEWUSER | CLONE_NEWNS)
