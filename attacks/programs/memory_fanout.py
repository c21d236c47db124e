# memory_fanout: four processes each touch 200 MiB, under any per-process
# limit of 256 MiB, and hold it while the host adds them up (argv:
# token). The parent holds them until every one has its memory or has
# ended (refused it, or killed by the kernel), and a second more, so the
# four overlap however slowly a loaded machine runs them; the pages are
# faulted in by one mmap(MAP_POPULATE) each, which the kernel zeroes
# about half again as fast as a bytearray is filled.
import mmap, os, select, signal, time

r, w = os.pipe()
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            block = mmap.mmap(-1, 200 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
            os.write(w, b"+")
            time.sleep(30)
        except (MemoryError, OSError):
            pass
        os._exit(0)
    kids.append(pid)
os.close(w)

holding, ended, since = 0, set(), None
while since is None or time.monotonic() - since < 1:
    if select.select([r], [], [], 0.05)[0]:
        holding += len(os.read(r, 4))
    for pid in kids:
        if pid not in ended and os.waitpid(pid, os.WNOHANG)[0] == pid:
            ended.add(pid)
    if since is None and holding + len(ended) >= len(kids):
        since = time.monotonic()
for pid in kids:
    if pid not in ended:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
