# trace_stop: makes its parent its tracer, starts a child that appends a
# line to "ticks" in the working directory every 20 ms for argv[2]
# seconds, and stops itself (argv[1]: the host's token).
import ctypes
import os
import signal
import sys
import time

PTRACE_TRACEME = 0
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(PTRACE_TRACEME, 0, None, None) != 0:
    print("traceme failed:", os.strerror(ctypes.get_errno()), flush=True)
if os.fork() == 0:
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        with open("ticks", "a") as f:
            f.write("tick\n")
        time.sleep(0.02)
    os._exit(0)
print("stopping", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
print("continued")
