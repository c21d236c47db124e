# watch_dir: watches argv[2] for opens and accesses through inotify and
# holds the watch for argv[3] seconds (argv[1]: the host's token).
import ctypes
import os
import sys
import time

IN_ACCESS, IN_OPEN = 0x1, 0x20
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0:
    print("inotify_init1 failed:", os.strerror(ctypes.get_errno()))
    sys.exit(0)
if libc.inotify_add_watch(fd, sys.argv[2].encode(), IN_ACCESS | IN_OPEN) < 0:
    print("inotify_add_watch failed:", os.strerror(ctypes.get_errno()))
    sys.exit(0)
print("watching", sys.argv[2], flush=True)
time.sleep(float(sys.argv[3]))
