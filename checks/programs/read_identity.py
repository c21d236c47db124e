# read_identity: prints what the program can read of the machine's
# identity, one "name=value" a line, then "done".
import os


def read(path):
    try:
        with open(path) as f:
            return f.read().strip().replace("\n", " | ")
    except OSError as e:
        return "unreadable: " + e.strerror


print("nodename=" + os.uname().nodename)
print("domainname=" + read("/proc/sys/kernel/domainname"))
print("boot_id=" + read("/proc/sys/kernel/random/boot_id"))
print("cmdline=" + read("/proc/cmdline"))
print("locks=" + read("/proc/locks"))
print("cgroup=" + read("/proc/self/cgroup"))
print("uptime=" + read("/proc/uptime").split(" ")[0])
print("btime=" + "".join(l[6:] for l in read("/proc/stat").split(" | ") if l.startswith("btime ")))
print("done")
