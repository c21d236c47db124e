# detached_daemon: double-forks a daemon in a session of its own (argv:
# token) and returns at once. The daemon sleeps at most 30 s.
import os
import time

ready_r, ready_w = os.pipe()
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.write(ready_w, b"up")  # in its own session now
        os.close(ready_w)
        time.sleep(30)
    os._exit(0)
os.close(ready_w)
os.waitpid(middle, 0)
print("daemon", "started" if os.read(ready_r, 2) == b"up" else "failed")
