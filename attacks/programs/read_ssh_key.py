# read_ssh_key: prints a private key by its full path (argv: token, path).
import sys

with open(sys.argv[2]) as f:
    print(f.read())
