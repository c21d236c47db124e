# host_socket: connects to a host service's Unix socket by its path and
# sends its token (argv: token, socket path).
import socket, sys

tag, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(path)
    s.sendall(("hello from " + tag).encode())
    print("sent to", path)
except OSError as e:
    print("connecting to", path, "failed:", e)
finally:
    s.close()
