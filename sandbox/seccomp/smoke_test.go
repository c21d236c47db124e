package seccomp

import (
	"os"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/skip"
)

// python is Debian's interpreter: a pyenv one under /root is out of reach
// of the helper's unprivileged uid.
const python = "/usr/bin/python3"

// smokeScript exercises the parts of the standard library an agent's code
// uses, each of which meets a rule of the filter: threads (clone3 →
// ENOSYS, then clone with CLONE_THREAD), fork and subprocess (clone,
// vfork), multiprocessing (fork, semaphores in /dev/shm, pipes), sockets
// (AF_INET, AF_UNIX, socketpair), asyncio (epoll and its self-pipe
// socketpair), terminals' ioctls through os.isatty, and clone3's ENOSYS
// seen from ctypes. Every check prints its
// name; the last line is "ok".
const smokeScript = `
import asyncio, ctypes, hashlib, json, multiprocessing, os, socket, sqlite3
import subprocess, sys, tempfile, threading, time

def check(name, cond=True):
    if not cond:
        raise SystemExit("failed: " + name)
    print(name, flush=True)

# glibc 2.36 makes its threads with clone3 (strace shows it bare): here
# clone3 answers ENOSYS, and the threads below exist only if glibc fell
# back to clone.
libc = ctypes.CDLL(None, use_errno=True)
check("clone3 ENOSYS", libc.syscall(435, None, 0) == -1 and ctypes.get_errno() == 38)

results = []
threads = [threading.Thread(target=results.append, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
check("threading", sorted(results) == [0, 1, 2, 3])

pid = os.fork()
if pid == 0:
    os._exit(7)
_, status = os.waitpid(pid, 0)
check("fork", os.waitstatus_to_exitcode(status) == 7)

check("subprocess", subprocess.run(["/bin/true"]).returncode == 0)
check("subprocess output", subprocess.run(["/bin/echo", "hi"], capture_output=True, text=True).stdout == "hi\n")

def square(x):
    return x * x

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        check("multiprocessing", pool.map(square, range(10)) == [x * x for x in range(10)])

srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
cli = socket.create_connection(srv.getsockname())
conn, _ = srv.accept()
cli.sendall(b"ping")
check("AF_INET", conn.recv(4) == b"ping")
for s in (cli, conn, srv): s.close()

u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.close()
check("AF_INET6")

a, b = socket.socketpair()
a.sendall(b"pong")
check("socketpair", b.recv(4) == b"pong")
a.close(); b.close()

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "s")
    us = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    us.bind(path)
    us.close()
    check("AF_UNIX")

async def echo():
    async def handle(reader, writer):
        writer.write(await reader.read(5))
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"hello")
    data = await reader.read(5)
    writer.close()
    server.close()
    await server.wait_closed()
    await asyncio.sleep(0.01)
    return data
check("asyncio", asyncio.run(echo()) == b"hello")

try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    check("AF_NETLINK refused", False)
except OSError as e:
    check("AF_NETLINK refused", e.errno == 97)  # EAFNOSUPPORT

with tempfile.NamedTemporaryFile("w+") as f:
    json.dump({"a": [1, 2]}, f)
    f.flush()
    f.seek(0)
    check("tempfile+json", json.load(f) == {"a": [1, 2]})

check("hashlib", hashlib.sha256(b"abc").hexdigest().startswith("ba7816bf"))

db = sqlite3.connect(":memory:")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(5)])
check("sqlite3", db.execute("select sum(x) from t").fetchone()[0] == 10)

t0 = time.monotonic()
time.sleep(0.01)
check("time.sleep", time.monotonic() - t0 >= 0.01)

os.isatty(0)
check("ok")
`

func TestPythonUnderTheFilter(t *testing.T) {
	build(t)
	_, err := os.Stat(python)
	skip.If(t, err != nil, "%s: %v", python, err)
	out, stderr, st := runHelper(t, "exec", python, "-c", smokeScript)
	assert.Check(t, st.Success(), "%v\nstdout:\n%s\nstderr:\n%s", st, out, stderr)
	assert.Check(t, strings.HasSuffix(out, "ok\n"), "stdout:\n%s\nstderr:\n%s", out, stderr)
	t.Logf("checks passed: %s", strings.Join(strings.Split(strings.TrimSpace(out), "\n"), ", "))
}

func TestShellUnderTheFilter(t *testing.T) {
	build(t)
	out, stderr, st := runHelper(t, "exec", "/bin/sh", "-c", "true && echo ok")
	assert.Check(t, st.Success(), "%v\nstdout:\n%s\nstderr:\n%s", st, out, stderr)
	assert.Check(t, is.Equal(out, "ok\n"))
}
