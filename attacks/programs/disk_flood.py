# disk_flood: fills its working directory with files of 9 MiB (each
# below the 10 MiB file-size limit), twelve of them, 108 MiB in all,
# allocating their blocks (fallocate) rather than writing them, so that
# the clock never stops it first; it stops at the first refusal and
# holds what it made a moment (argv: token).
import os, time

made = 0
for i in range(12):
    try:
        fd = os.open("flood-%d" % i, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.posix_fallocate(fd, 0, 9 << 20)
        finally:
            os.close(fd)
        made += 9
    except OSError as e:
        print("file", i, "failed:", e.strerror)
        break
print("allocated", made, "MiB")
time.sleep(0.3)  # long enough for the host to count
