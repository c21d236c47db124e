package seccomp

import (
	"os"
	"os/exec"
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
// uses (issue 24's compatibility suite), each of which meets a rule of the
// filter or its allowlist: threads (clone3 → ENOSYS, then clone with
// CLONE_THREAD), fork and subprocess (clone, vfork), multiprocessing by
// fork, spawn and forkserver (semaphores in /dev/shm, pipes, Unix
// sockets), sockets (AF_INET, AF_UNIX, socketpair), asyncio (epoll, its
// self-pipe socketpair, a subprocess), terminals' ioctls through
// os.isatty, the ENOSYS of clone3 and of a future call seen from ctypes,
// ctypes loading libc by name, signals and timers, time and locale,
// archives, and 50 MB written and read in a work directory whose entries
// os.scandir lists. Every check prints its name; the last line is "ok".
const smokeScript = `
import asyncio, csv, ctypes, ctypes.util, gzip, hashlib, json, locale, multiprocessing, os
import signal, socket, sqlite3, subprocess, sys, tarfile, tempfile, threading, time, zipfile

def check(name, cond=True):
    if not cond:
        raise SystemExit("failed: " + name)
    print(name, flush=True)

work = tempfile.TemporaryDirectory()
os.chdir(work.name)

# glibc 2.36 makes its threads with clone3 (strace shows it bare): here
# clone3 answers ENOSYS, and the threads below exist only if glibc fell
# back to clone.
libc = ctypes.CDLL(None, use_errno=True)
check("clone3 ENOSYS", libc.syscall(435, None, 0) == -1 and ctypes.get_errno() == 38)
check("future call ENOSYS", libc.syscall(1000) == -1 and ctypes.get_errno() == 38)

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
check("subprocess shell pipeline", subprocess.run("printf 'b\\na\\n' | sort", shell=True,
      capture_output=True, text=True).stdout == "a\nb\n")

if __name__ == "__main__":
    for method in ("fork", "spawn", "forkserver"):
        ctx = multiprocessing.get_context(method)
        with ctx.Pool(2) as pool:
            check("multiprocessing " + method, pool.map(abs, range(-5, 0)) == [5, 4, 3, 2, 1])
        q = ctx.Queue()
        pr = ctx.Process(target=q.put, args=(method,))
        pr.start()
        check("multiprocessing Process " + method, q.get(timeout=30) == method)
        pr.join()

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

us = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
us.bind(os.path.join(work.name, "s"))
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
    proc = await asyncio.create_subprocess_exec("/bin/echo", "sub", stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    await asyncio.gather(*(asyncio.sleep(0.001) for _ in range(3)))
    return data + out
check("asyncio", asyncio.run(echo()) == b"hellosub\n")

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

with open("t.csv", "w", newline="") as f:
    csv.writer(f).writerows([["x", 1], ["y", 2]])
with open("t.csv", newline="") as f:
    check("csv", list(csv.reader(f)) == [["x", "1"], ["y", "2"]])

check("hashlib", hashlib.sha256(b"abc").hexdigest().startswith("ba7816bf"))

db = sqlite3.connect("t.db")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(5)])
db.commit()
check("sqlite3", db.execute("select sum(x) from t").fetchone()[0] == 10)
db.close()

with zipfile.ZipFile("t.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.txt", "zip" * 100)
with zipfile.ZipFile("t.zip") as z:
    check("zipfile", z.read("a.txt") == b"zip" * 100)
with tarfile.open("t.tar.gz", "w:gz") as t:
    t.add("t.csv")
os.mkdir("x")
with tarfile.open("t.tar.gz") as t:
    t.extractall("x")
with open("x/t.csv") as f:
    check("tarfile", f.read().startswith("x,1"))
with gzip.open("t.gz", "wb") as f:
    f.write(b"g" * 1000)
with gzip.open("t.gz") as f:
    check("gzip", f.read() == b"g" * 1000)

check("ctypes libc", ctypes.CDLL("libc.so.6").getpid() == os.getpid())
check("ctypes find_library", ctypes.CDLL(ctypes.util.find_library("c")).strlen(b"abc") == 3)

fired = []
signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
signal.setitimer(signal.ITIMER_REAL, 0.01)
time.sleep(0.5)
check("signal setitimer", fired == [1])
signal.alarm(5)
signal.alarm(0)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
os.kill(os.getpid(), signal.SIGUSR1)
check("signal sigtimedwait", signal.sigtimedwait([signal.SIGUSR1], 1).si_signo == signal.SIGUSR1)

t0 = time.monotonic()
time.sleep(0.01)
check("time.sleep", time.monotonic() - t0 >= 0.01)
time.process_time(); time.perf_counter(); time.thread_time()
check("time.strftime", len(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())) == 19)

locale.setlocale(locale.LC_ALL, "")
check("locale", locale.getpreferredencoding(False) != "")

with open("/etc/os-release") as f:
    check("/etc/os-release", "ID=" in f.read())

chunk = os.urandom(1 << 20)
want = hashlib.sha256()
with open("big.bin", "wb") as f:
    for _ in range(50):
        f.write(chunk)
        want.update(chunk)
got = hashlib.sha256()
with open("big.bin", "rb") as f:
    while (b := f.read(1 << 20)):
        got.update(b)
check("50 MB written and read", os.path.getsize("big.bin") == 50 << 20 and got.digest() == want.digest())
os.remove("big.bin")

names = sorted(e.name for e in os.scandir(work.name))
check("os.scandir", "t.csv" in names and "x" in names and all(e.stat().st_size >= 0 for e in os.scandir(".")))

os.isatty(0)
os.chdir("/")
work.cleanup()
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

// shellScript runs the shell pipelines of the compatibility suite in a
// directory of its own: sort, uniq, grep, sed, awk, tar and gzip.
const shellScript = `set -e
d=$(mktemp -d)
trap 'cd /; rm -rf "$d"' EXIT
cd "$d"
printf 'pear\napple\nfig\napple\n' > fruit
test "$(sort fruit | uniq -c | sort -rn | head -1 | awk '{print $2}')" = apple
test "$(grep -v fig fruit | sed 's/p/P/g' | awk '{n += length($0)} END {print n}')" = 14
mkdir src && cp fruit src/ && tar cf - src | gzip -9 > src.tar.gz
rm -r src && gzip -dc src.tar.gz | tar xf - && cmp fruit src/fruit
test "$(find . -name fruit | wc -l)" -eq 2
echo ok
`

func TestShellUnderTheFilter(t *testing.T) {
	build(t)
	out, stderr, st := runHelper(t, "exec", "/bin/sh", "-c", shellScript)
	assert.Check(t, st.Success(), "%v\nstdout:\n%s\nstderr:\n%s", st, out, stderr)
	assert.Check(t, is.Equal(out, "ok\n"), "stderr:\n%s", stderr)
}

// compileScript compiles a C program with threads and libm, then runs it,
// in a directory of its own.
const compileScript = `set -e
d=$(mktemp -d)
trap 'cd /; rm -rf "$d"' EXIT
cd "$d"
cat > hello.c <<'END'
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
static void *work(void *arg) { return arg; }
int main(void) {
	pthread_t t;
	void *r;
	if (pthread_create(&t, NULL, work, (void *)42) != 0 || pthread_join(t, &r) != 0) return 1;
	pid_t c = fork();
	if (c == 0) _exit(3);
	int st;
	waitpid(c, &st, 0);
	printf("%ld %d %.3f\n", (long)r, WEXITSTATUS(st), sqrt(2.0));
	return 0;
}
END
gcc -O2 -Wall -pthread -o hello hello.c -lm
./hello
`

func TestCompilerUnderTheFilter(t *testing.T) {
	build(t)
	gcc, err := exec.LookPath("gcc")
	skip.If(t, err != nil, "gcc is not installed: %v", err)
	out, stderr, st := runHelper(t, "exec", "/bin/sh", "-c", compileScript)
	assert.Check(t, st.Success(), "%s: %v\nstdout:\n%s\nstderr:\n%s", gcc, st, out, stderr)
	assert.Check(t, is.Equal(out, "42 3 1.414\n"), "stderr:\n%s", stderr)
}
