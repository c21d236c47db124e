# aio_setup: asks for an asynchronous I/O context of argv[2] events and
# holds it for argv[3] seconds (argv[1]: the host's token).
import ctypes
import os
import sys
import time

IO_SETUP = {"x86_64": 206, "aarch64": 0}[os.uname().machine]
libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
if libc.syscall(IO_SETUP, ctypes.c_uint(int(sys.argv[2])), ctypes.byref(ctx)) == 0:
    print("io_setup ok", flush=True)
    time.sleep(float(sys.argv[3]))
else:
    print("io_setup failed:", os.strerror(ctypes.get_errno()))
