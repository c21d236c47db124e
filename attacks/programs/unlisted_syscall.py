# unlisted_syscall: makes system calls that no list of an allowlist
# filter names and that work unprivileged without one: a NUMA memory
# policy (set_mempolicy), which the host sees in /proc/PID/numa_maps, and
# a secret-memory descriptor (memfd_secret), which it sees in
# /proc/PID/fd; it holds both a moment (argv: token).
import ctypes, os, time

libc = ctypes.CDLL(None, use_errno=True)


def show(what, r):
    print(what, "->", r if r >= 0 else os.strerror(ctypes.get_errno()), flush=True)


mask = ctypes.c_ulong(1)
show("set_mempolicy(MPOL_PREFERRED)", libc.syscall(238, 1, ctypes.byref(mask), 64))
show("memfd_secret", libc.syscall(447, 0))
time.sleep(0.5)
