# memory_fanout: four processes each touch 200 MiB, under any per-process
# limit of 256 MiB, and hold it until the run is stopped, while the host
# adds them up (argv: token). Holding it to the end, not for a fixed
# time, keeps the four overlapping however slowly a loaded machine
# faults their pages in.
import os, time

kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(200 << 20)  # zero-filled: every page touched
            time.sleep(30)
        except MemoryError:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
