# session_view: prints everything a program reads that could name where
# its session directory lies on the host: its working directory (as
# getcwd and /proc/self/cwd give it), its environment, its mount table;
# then writes a file where it starts (argv: token).
import os
import sys


def slurp(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return "error: %s" % e


print("cwd=" + os.getcwd())
print("cwd_link=" + os.readlink("/proc/self/cwd"))
for kv in slurp("/proc/self/environ").split("\0"):
    if kv:
        print("env=" + kv)
for line in slurp("/proc/self/mountinfo").splitlines():
    print("mount=" + line)
with open("written-" + sys.argv[1], "w") as f:
    f.write(sys.argv[1])
print("done")
