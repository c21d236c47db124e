# memory_fanout: four processes each touch 200 MiB, under any per-process
# limit of 256 MiB, and hold it while the host adds them up (argv: token).
import os, time

kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(200 << 20)  # zero-filled: every page touched
            time.sleep(0.8)
        except MemoryError:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
