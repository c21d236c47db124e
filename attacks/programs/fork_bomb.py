# fork_bomb: grows to 40 processes (argv: token). Each child sleeps 2 s
# and exits; forking without exec keeps the token on their command lines.
import os
import sys
import time

children = []
for _ in range(39):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed:", e, file=sys.stderr)
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    children.append(pid)
print(len(children) + 1, "processes", flush=True)
for pid in children:
    os.waitpid(pid, 0)
