# host_identity: collects what names the machine it runs on, the way a
# program fingerprints its host: the host name, the boot id, the
# kernel's command line, how long it has been up and when it booted, the locks held on the machine and where it sits
# in the machine's control groups, and where its own directory lies on
# the host: its working directory, environment and mount table name it
# (argv: token).
import os
import socket


def slurp(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


print("nodename=" + socket.gethostname())
print("boot_id=" + slurp("/proc/sys/kernel/random/boot_id").strip())
print("cmdline=" + slurp("/proc/cmdline").strip())
print("uptime=" + slurp("/proc/uptime").split(" ")[0])
for line in slurp("/proc/stat").splitlines():
    if line.startswith("btime "):
        print("btime=" + line[6:])
for line in slurp("/proc/locks").splitlines():
    print("lock=" + line)
for line in slurp("/proc/self/cgroup").splitlines():
    print("cgroup=" + line)
print("cwd=" + os.getcwd())
for kv in slurp("/proc/self/environ").split("\0"):
    if kv:
        print("env=" + kv)
for line in slurp("/proc/self/mountinfo").splitlines():
    print("mount=" + line)
