# signal_pid1 (init_ignores_signals): signal PID 1 every way a process
# may (kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo with forged
# si_codes, pidfd_send_signal with and without info), then try to trace
# it, and print how many of each the kernel accepted. argv: seconds to
# wait after, for a crash of the init to take the run down.
import ctypes, os, signal, sys, time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS = dict(rt_sigqueueinfo=129, rt_tgsigqueueinfo=297, tgkill=234, pidfd_open=434, pidfd_send_signal=424, ptrace=101)

class Siginfo(ctypes.Structure):
    _fields_ = [("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int), ("pad", ctypes.c_int),
                ("pid", ctypes.c_int), ("uid", ctypes.c_uint), ("rest", ctypes.c_byte * 104)]

# Only the run's own init is signalled: where PID 1 is anyone else's
# (without a PID namespace, the host's), the program stops here.
with open("/proc/1/cmdline", "rb") as f:
    init = f.read().split(b"\0")[0]
if init != b"sandboxlab-init":
    print("PID 1 is not the run's init: %r" % init)
    sys.exit(3)

for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGWINCH):
    signal.signal(s, signal.SIG_IGN)  # the init forwards these to us
codes = (0, -6, -1, -2, -3, -4, -5, -7, -60, -100)  # SI_USER, SI_TKILL, SI_QUEUE, ... and made-up ones
tids = [int(t) for t in os.listdir("/proc/1/task")]
pidfd = libc.syscall(SYS["pidfd_open"], 1, 0)
ok = {}
def count(name, r):
    ok[name] = ok.get(name, 0) + (r == 0)
for sig in range(1, 65):
    try:
        os.kill(1, sig); count("kill", 0)
    except OSError:
        count("kill", -1)
    for tid in tids:
        count("tgkill", libc.syscall(SYS["tgkill"], 1, tid, sig))
    for code in codes:
        si = Siginfo(signo=sig, code=code, pid=os.getpid(), uid=os.getuid())
        count("rt_sigqueueinfo", libc.syscall(SYS["rt_sigqueueinfo"], 1, sig, ctypes.byref(si)))
        for tid in tids:
            count("rt_tgsigqueueinfo", libc.syscall(SYS["rt_tgsigqueueinfo"], 1, tid, sig, ctypes.byref(si)))
        if pidfd >= 0:
            count("pidfd_send_signal+info", libc.syscall(SYS["pidfd_send_signal"], pidfd, sig, ctypes.byref(si), 0))
    if pidfd >= 0:
        count("pidfd_send_signal", libc.syscall(SYS["pidfd_send_signal"], pidfd, sig, None, 0))
for req in (16, 0x4206):  # PTRACE_ATTACH, PTRACE_SEIZE
    count("ptrace", libc.syscall(SYS["ptrace"], req, 1, 0, 0))
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.3)
print("delivered", " ".join("%s=%d" % kv for kv in sorted(ok.items())), flush=True)
