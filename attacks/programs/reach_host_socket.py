# reach_host_socket: connects to a host service's Unix socket in a
# world-writable host directory that is no scratch directory (a shared
# directory where a service listens for anyone), and sends its token
# (argv: token, socket path).
import socket, sys, time

tag, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(path)
    s.sendall(("hello from " + tag).encode())
    print("sent to", path)
except OSError as e:
    print("connecting to", path, "failed:", e.strerror)
finally:
    s.close()
time.sleep(0.2)  # long enough for the host to look at its root
