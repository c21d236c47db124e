# lingering_child: leaves a child running in its own session (argv:
# token). The child sleeps at most 30 s.
import os
import time

pid = os.fork()
if pid == 0:
    # Let go of the run's output pipes, as a background job would.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    time.sleep(30)
    os._exit(0)
print("left child", pid, "running")
