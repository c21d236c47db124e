# leave_host_state: leaves a tagged file in every world-writable directory
# it finds below the roots it is given, and makes System V shared memory,
# a message queue, a semaphore set and a POSIX message queue
# (argv: token, key, roots...).
import ctypes, os, stat, sys

tag, key, roots = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def world_writable(roots, depth=3):
    for root in roots:
        base = root.count("/")
        for dirpath, dirnames, _ in os.walk(root):
            if dirpath.count("/") - base >= depth:
                dirnames[:] = []
                continue
            try:
                if os.lstat(dirpath).st_mode & stat.S_IWOTH:
                    yield dirpath
            except OSError:
                pass

wrote = []
for d in world_writable(roots):
    try:
        with open(os.path.join(d, "left-" + tag), "w") as f:
            f.write(tag)
        wrote.append(d)
    except OSError:
        pass

libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
made = []
if libc.shmget(key, 4096, IPC_CREAT | 0o600) >= 0:
    made.append("shm")
if libc.msgget(key, IPC_CREAT | 0o600) >= 0:
    made.append("msg")
if libc.semget(key, 1, IPC_CREAT | 0o600) >= 0:
    made.append("sem")
if libc.mq_open(("/" + tag).encode(), os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
    made.append("mq")
print("left a file in", len(wrote), "directories:", " ".join(wrote))
print("made:", " ".join(made) or "nothing")
