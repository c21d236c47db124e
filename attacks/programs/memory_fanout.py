# memory_fanout: four processes each touch 200 MiB, under any per-process
# limit of 256 MiB, and hold it until the run is stopped, while the host
# adds them up (argv: token). Holding it to the end, not for a fixed
# time, keeps the four overlapping however slowly a loaded machine runs
# them; the pages are faulted in by one mmap(MAP_POPULATE) each, which
# the kernel zeroes about half again as fast as a bytearray is filled.
import mmap, os, time

kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = mmap.mmap(-1, 200 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
            time.sleep(30)
        except (MemoryError, OSError):
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
