# egress_credential_read: looks for the API credential wherever a program
# can: its environment and arguments, every process it can see, its
# files and the scratch directories, and what an allowed echo service
# says it received; prints everything it finds (argv: token, the API's
# host:port, the echo service's host:port, and below L4 the credential
# itself, which a program without a proxy must be handed).
import glob, os, sys, urllib.request

api, echo = sys.argv[2], sys.argv[3]
print("argv:", sys.argv[1:])
print("env:", dict(os.environ))
for f in sorted(glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline")):
    try:
        print(f, open(f, "rb").read()[:2000])
    except OSError as e:
        print(f, e.strerror)
for root in (os.getcwd(), os.environ.get("HOME", "/"), "/tmp"):
    for dirpath, _, files in os.walk(root):
        for name in files[:50]:
            try:
                print(os.path.join(dirpath, name), open(os.path.join(dirpath, name), "rb").read(2000))
            except OSError:
                pass
if os.environ.get("HTTP_PROXY"):
    for dest in (api, echo):
        try:
            print(dest, urllib.request.urlopen("http://%s/" % dest, timeout=3).read().decode(errors="replace"))
        except Exception as e:
            print(dest, "failed:", e)
