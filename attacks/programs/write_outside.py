# write_outside: appends to a file of its own user's outside its session
# directory, as an agent's program would to a user's notes or dotfiles
# (argv: token, path).
import sys

try:
    with open(sys.argv[2], "a") as f:
        f.write("written from the sandbox " + sys.argv[1] + "\n")
    print("appended to", sys.argv[2])
except OSError as e:
    print("appending to", sys.argv[2], "failed:", e.strerror)
