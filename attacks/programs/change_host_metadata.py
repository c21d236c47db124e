# change_host_metadata: changes the mode, the times and the extended
# attributes of a file of its own host user's outside its session, and
# the mode of its directory: what an owner may do whatever may be
# written (argv: token, path).
import os, sys, time

tag, path = sys.argv[1], sys.argv[2]
for what, f in (("chmod", lambda: os.chmod(path, 0o777)), ("utime", lambda: os.utime(path, (0, 0))),
                ("setxattr", lambda: os.setxattr(path, "user.sandboxlab", tag.encode())),
                ("chmod dir", lambda: os.chmod(os.path.dirname(path), 0o777))):
    try:
        f()
        print(what, "done")
    except OSError as e:
        print(what, "failed:", e.strerror)
time.sleep(0.2)  # long enough for the host to look at its root
