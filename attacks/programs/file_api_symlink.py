# file_api_symlink: leaves report.txt in the session directory as a link to
# a host file it cannot read itself, for the host's file API to fetch
# (argv: token, session directory, target).
import os
import sys

session, target = sys.argv[2], sys.argv[3]
os.symlink(target, os.path.join(session, "report.txt"))
print("report.txt is ready")
