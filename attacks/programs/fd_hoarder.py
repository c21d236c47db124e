# fd_hoarder: opens 100 files and holds them 300 ms (argv: token).
import os
import sys
import time

fds = []
try:
    for _ in range(100):
        fds.append(os.open(os.devnull, os.O_RDONLY))
finally:
    print("holding", len(fds), "descriptors", flush=True)
    time.sleep(0.3)
