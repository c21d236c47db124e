# read_other_session: looks for other sessions' directories next to its
# own, prints what it can read in them and hard-links their files into its
# working directory (argv: token, the directory holding the sessions).
import os, sys

root = sys.argv[2]
mine = os.path.realpath(os.environ.get("HOME", "/nonexistent"))
try:
    names = os.listdir(root)
except OSError as e:
    print("listing", root, "failed:", e)
    sys.exit()
others = 0
for name in names:
    d = os.path.join(root, name)
    if not name.startswith("sandboxlab-session-") or os.path.realpath(d) == mine or not os.path.isdir(d):
        continue
    others += 1
    try:
        files = os.listdir(d)
    except OSError as e:
        print("listing", d, "failed:", e)
        continue
    for f in files:
        p = os.path.join(d, f)
        try:
            print(f, "holds:", open(p).read())
        except OSError as e:
            print("reading", p, "failed:", e)
        try:
            os.link(p, "stolen-" + f)
            print("linked", p)
        except OSError as e:
            print("linking", p, "failed:", e)
print("found", others, "other sessions in", root)
