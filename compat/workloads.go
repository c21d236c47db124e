package compat

// The workloads: ordinary work an agent's program does, each a short
// program that checks its own results (Python's assert, the shell's
// set -e and test) and prints "ok" last. Each runs in a session of its
// own, with the session's directory as its working directory.

// pythonWorkloads run as /usr/bin/python3 -c SOURCE.
var pythonWorkloads = []Workload{
	{Name: "py-json", What: "Python json: a nested document to text and back, and to a file", Python: `
import json
doc = {"a": [1, 2.5, None, True], "b": {"c": "é ü 中"}, "n": 10**20}
text = json.dumps(doc, indent=2, sort_keys=True)
assert json.loads(text) == doc
with open("doc.json", "w") as f:
    json.dump(doc, f)
assert json.load(open("doc.json")) == doc
print("ok")
`},
	{Name: "py-csv", What: "Python csv: write rows to a file, read them back as dicts", Python: `
import csv
rows = [{"name": "a,b", "n": "1"}, {"name": 'say "hi"', "n": "2"}]
with open("t.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["name", "n"])
    w.writeheader()
    w.writerows(rows)
assert list(csv.DictReader(open("t.csv", newline=""))) == rows
print("ok")
`},
	{Name: "py-sqlite3", What: "Python sqlite3: a database file in the work directory, a transaction, a query", Python: `
import sqlite3
db = sqlite3.connect("t.db")
db.execute("create table t (k integer primary key, v text)")
with db:
    db.executemany("insert into t (v) values (?)", [("x%d" % i,) for i in range(1000)])
assert db.execute("select count(*), max(k) from t").fetchone() == (1000, 1000)
db.close()
assert sqlite3.connect("t.db").execute("select v from t where k = 7").fetchone() == ("x6",)
print("ok")
`},
	{Name: "py-hashlib", What: "Python hashlib and hmac: SHA-256, SHA-1, MD5, BLAKE2, an HMAC", Python: `
import hashlib, hmac
assert hashlib.sha256(b"abc").hexdigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
assert hashlib.sha1(b"abc").hexdigest() == "a9993e364706816aba3e25717850c26c9cd0d89d"
assert hashlib.md5(b"abc").hexdigest() == "900150983cd24fb0d6963f7d28e17f72"
assert len(hashlib.blake2b(b"abc").digest()) == 64
assert hmac.new(b"k", b"m", "sha256").hexdigest() == hmac.new(b"k", b"m", hashlib.sha256).hexdigest()
print("ok")
`},
	{Name: "py-zipfile", What: "Python zipfile: a deflated archive written, listed and read", Python: `
import zipfile
with zipfile.ZipFile("a.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("dir/one.txt", "one\n" * 1000)
    z.writestr("two.txt", b"\x00\x01" * 100)
with zipfile.ZipFile("a.zip") as z:
    assert z.namelist() == ["dir/one.txt", "two.txt"]
    assert z.read("dir/one.txt") == b"one\n" * 1000
    assert z.testzip() is None
print("ok")
`},
	{Name: "py-tarfile", What: "Python tarfile: a gzipped archive of a directory, extracted elsewhere", Python: `
import os, tarfile
os.makedirs("src/sub")
open("src/sub/f.txt", "w").write("data")
os.symlink("sub/f.txt", "src/link")
with tarfile.open("a.tgz", "w:gz") as t:
    t.add("src")
with tarfile.open("a.tgz") as t:
    t.extractall("out")
assert open("out/src/sub/f.txt").read() == "data"
assert os.readlink("out/src/link") == "sub/f.txt"
print("ok")
`},
	{Name: "py-tempfile", What: "Python tempfile: named files, a temporary directory, mkstemp", Python: `
import os, tempfile
with tempfile.NamedTemporaryFile("w+") as f:
    f.write("x"); f.flush(); f.seek(0)
    assert f.read() == "x"
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "f"), "w").write("y")
fd, path = tempfile.mkstemp(suffix=".txt", dir="/tmp")
os.write(fd, b"z"); os.close(fd); os.remove(path)
assert tempfile.gettempdir() == os.getcwd()
print("ok")
`},
	{Name: "py-threading", What: "Python threading: threads with a lock, a thread pool, a condition", Python: `
import threading
from concurrent.futures import ThreadPoolExecutor
n = 0
lock = threading.Lock()
def add():
    global n
    for _ in range(10000):
        with lock:
            n += 1
ts = [threading.Thread(target=add) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
assert n == 40000
with ThreadPoolExecutor(4) as ex:
    assert list(ex.map(lambda x: x * x, range(10))) == [x * x for x in range(10)]
ev = threading.Event()
threading.Timer(0.01, ev.set).start()
assert ev.wait(5)
print("ok")
`},
	{Name: "py-mp-fork", What: "Python multiprocessing (fork): a pool, a queue, shared values", Python: `
import math, multiprocessing as mp
ctx = mp.get_context("fork")
with ctx.Pool(2) as pool:
    assert pool.map(math.factorial, range(8)) == [math.factorial(i) for i in range(8)]
q = ctx.Queue()
v = ctx.Value("i", 0)
def work(q, v):
    with v.get_lock():
        v.value += 1
    q.put("from the child")
p = ctx.Process(target=work, args=(q, v))
p.start()
assert q.get(timeout=5) == "from the child"
p.join()
assert p.exitcode == 0 and v.value == 1
print("ok")
`},
	{Name: "py-mp-spawn", What: "Python multiprocessing (spawn): a pool of fresh interpreters", Python: `
import math, multiprocessing as mp
ctx = mp.get_context("spawn")
with ctx.Pool(2) as pool:
    assert pool.map(math.sqrt, [4, 9, 16]) == [2.0, 3.0, 4.0]
lock = ctx.Lock()
with lock:
    pass
print("ok")
`},
	{Name: "py-subprocess", What: "Python subprocess: run, check_output, a pipe between two children", Python: `
import subprocess, sys
r = subprocess.run(["sh", "-c", "echo hello | tr a-z A-Z"], capture_output=True, text=True, check=True)
assert r.stdout == "HELLO\n"
assert subprocess.check_output([sys.executable, "-c", "print(6 * 7)"], text=True) == "42\n"
p1 = subprocess.Popen(["seq", "1", "100"], stdout=subprocess.PIPE)
p2 = subprocess.Popen(["wc", "-l"], stdin=p1.stdout, stdout=subprocess.PIPE, text=True)
p1.stdout.close()
assert p2.communicate()[0].strip() == "100"
assert subprocess.run(["false"]).returncode == 1
print("ok")
`},
	{Name: "py-asyncio", What: "Python asyncio: tasks, a queue, a timeout, a subprocess, a stream pair", Python: `
import asyncio, socket
async def main():
    q = asyncio.Queue()
    async def produce():
        for i in range(5):
            await q.put(i)
            await asyncio.sleep(0.001)
    await asyncio.gather(produce(), asyncio.sleep(0.01))
    assert [q.get_nowait() for _ in range(5)] == list(range(5))
    try:
        await asyncio.wait_for(asyncio.sleep(10), 0.01)
    except asyncio.TimeoutError:
        pass
    p = await asyncio.create_subprocess_exec("echo", "hi", stdout=asyncio.subprocess.PIPE)
    out, _ = await p.communicate()
    assert out == b"hi\n"
    a, b = socket.socketpair()
    r, w = await asyncio.open_connection(sock=a)
    b.sendall(b"line\n")
    assert await r.readline() == b"line\n"
    w.close()
    b.close()
asyncio.run(main())
print("ok")
`},
	{Name: "py-ctypes", What: "Python ctypes: find and load libc, call into it", Python: `
import ctypes, ctypes.util, os
name = ctypes.util.find_library("c")
assert name, "find_library found no libc"
libc = ctypes.CDLL(name, use_errno=True)
assert libc.strlen(b"hello") == 5
assert libc.getpid() == os.getpid()
buf = ctypes.create_string_buffer(16)
libc.snprintf(buf, 16, b"%d-%s", 42, b"x")
assert buf.value == b"42-x"
assert ctypes.CDLL("libm.so.6").cos  # another library by its soname
print("ok")
`},
	{Name: "py-signal", What: "Python signal: a handler, a signal to itself, an alarm and an interval timer", Python: `
import os, signal, time
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
os.kill(os.getpid(), signal.SIGUSR1)
signal.signal(signal.SIGALRM, lambda s, f: got.append(s))
signal.setitimer(signal.ITIMER_REAL, 0.01)
t = time.monotonic()
while signal.SIGALRM not in got and time.monotonic() - t < 5:
    time.sleep(0.001)
assert got == [signal.SIGUSR1, signal.SIGALRM], got
print("ok")
`},
	{Name: "py-time", What: "Python time and zoneinfo: clocks, sleep, local time, time zones", Python: `
import datetime, time, zoneinfo
t0, m0 = time.time(), time.monotonic()
time.sleep(0.02)
assert time.monotonic() - m0 >= 0.019 and time.time() > t0
assert time.strftime("%Y", time.localtime()) >= "2024"
paris = datetime.datetime(2024, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
assert paris.utcoffset() == datetime.timedelta(hours=2)
assert time.process_time() >= 0 and time.perf_counter_ns() > 0
print("ok")
`},
	{Name: "py-locale", What: "Python locale and text: the C.UTF-8 locale, UTF-8 output, collation", Python: `
import locale, sys
assert locale.setlocale(locale.LC_ALL, "C.UTF-8")
assert locale.getpreferredencoding(False).lower().replace("-", "") == "utf8"
assert sys.stdout.encoding.lower().replace("-", "") == "utf8"
assert sorted(["b", "a", "C"], key=locale.strxfrm) == ["C", "a", "b"]
assert "{:n}".format(1234567) == "1234567"
print("ü ✓")
print("ok")
`},
	{Name: "py-scandir", What: "Python os.scandir, os.walk and pathlib over the work directory", Python: `
import os, pathlib
os.makedirs("d/e")
for p in ["a.txt", "d/b.txt", "d/e/c.py"]:
    open(p, "w").write(p)
os.symlink("a.txt", "link")
entries = {e.name: (e.is_dir(), e.is_symlink()) for e in os.scandir(".")}
assert entries == {"a.txt": (False, False), "d": (True, False), "link": (False, True)}, entries
assert sum(len(f) for _, _, f in os.walk(".")) == 4
assert sorted(str(p) for p in pathlib.Path(".").rglob("*.txt")) == ["a.txt", "d/b.txt"]
assert os.stat("d/b.txt").st_size == 7
print("ok")
`},
	{Name: "py-os-release", What: "reading /etc/os-release, platform and resource information", Python: `
import os, platform, resource
info = platform.freedesktop_os_release()
assert info["ID"] and info["NAME"], info
assert open("/etc/os-release").read().strip()
assert platform.uname().system == "Linux"
assert os.cpu_count() >= 1 and len(os.sched_getaffinity(0)) >= 1
assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] > 0
assert len(os.getloadavg()) == 3
print(info["PRETTY_NAME"])
print("ok")
`},
	{Name: "py-50mb", What: "writing and reading back 50 MB in the work directory (five 10 MB files)", Python: `
import hashlib, os
block = os.urandom(1 << 20)
digest = hashlib.sha256()
for i in range(5):
    with open("big%d" % i, "wb") as f:
        for _ in range(10):
            f.write(block[:1000000])
            digest.update(block[:1000000])
back = hashlib.sha256()
for i in range(5):
    with open("big%d" % i, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            back.update(chunk)
assert back.digest() == digest.digest()
assert sum(os.path.getsize("big%d" % i) for i in range(5)) == 50000000
for i in range(5):
    os.remove("big%d" % i)
print("ok")
`},
	{Name: "py-compress", What: "Python gzip, bz2 and lzma: compress and decompress", Python: `
import bz2, gzip, lzma
data = b"compress me " * 10000
for mod in (gzip, bz2, lzma):
    assert mod.decompress(mod.compress(data)) == data
with gzip.open("f.gz", "wt") as f:
    f.write("text\n")
assert gzip.open("f.gz", "rt").read() == "text\n"
print("ok")
`},
	{Name: "py-shutil", What: "Python shutil: copy a tree, move, archive, remove, disk usage", Python: `
import os, shutil
os.makedirs("t/a")
open("t/a/f", "w").write("x")
shutil.copytree("t", "u")
shutil.move("u", "v")
shutil.make_archive("arch", "gztar", "v")
assert os.path.exists("arch.tar.gz") and open("v/a/f").read() == "x"
shutil.rmtree("t"); shutil.rmtree("v")
total, used, free = shutil.disk_usage(".")
assert total > 0
print("ok")
`},
	{Name: "py-import-local", What: "Python: a module written to the work directory and imported (with its bytecode cache)", Python: `
import importlib, os, sys
open("helper.py", "w").write("def double(x):\n    return 2 * x\n")
sys.path.insert(0, os.getcwd())
importlib.invalidate_caches()
import helper
assert helper.double(21) == 42
assert os.path.isdir("__pycache__")
print("ok")
`},
	{Name: "py-unittest", What: "Python unittest: a test file in the work directory run with python -m unittest", Python: `
import subprocess, sys
open("test_sample.py", "w").write('''
import unittest
class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)
    def test_raises(self):
        with self.assertRaises(ZeroDivisionError):
            1 / 0
''')
r = subprocess.run([sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True)
assert r.returncode == 0 and "Ran 2 tests" in r.stderr, r.stderr
print("ok")
`},
	{Name: "py-random-secrets", What: "Python os.urandom, secrets, random and uuid4", Python: `
import os, random, secrets, uuid
assert len(os.urandom(32)) == 32 and len(secrets.token_hex(16)) == 32
assert 0 <= random.SystemRandom().random() < 1
assert uuid.uuid4().version == 4
print("ok")
`},
	{Name: "py-users", What: "Python pwd, grp and getpass: who the program is", Python: `
import getpass, grp, os, pwd
u = pwd.getpwuid(os.getuid())
assert u.pw_name, u
assert grp.getgrgid(os.getgid()).gr_name
assert getpass.getuser()
assert os.path.expanduser("~") == os.environ["HOME"]
print(u.pw_name)
print("ok")
`},
	{Name: "py-unix-socket", What: "Python sockets: a Unix socket server and client in the work directory, a socket pair, select", Python: `
import os, select, socket, threading
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("s.sock"); srv.listen(1)
def serve():
    c, _ = srv.accept()
    c.sendall(c.recv(100).upper()); c.close()
threading.Thread(target=serve).start()
cl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
cl.connect("s.sock"); cl.sendall(b"ping")
assert cl.recv(100) == b"PING"
a, b = socket.socketpair()
a.sendall(b"x")
assert select.select([b], [], [], 5)[0] == [b] and b.recv(1) == b"x"
r, w = os.pipe()
os.write(w, b"y")
assert select.poll is not None and os.read(r, 1) == b"y"
print("ok")
`},
	{Name: "py-mmap", What: "Python mmap: a file in the work directory mapped, changed and read back", Python: `
import mmap
open("m.bin", "wb").write(b"\0" * 4096)
with open("m.bin", "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:5] = b"hello"
    m.flush(); m.close()
assert open("m.bin", "rb").read(5) == b"hello"
anon = mmap.mmap(-1, 1 << 20)
anon[-1] = 1
print("ok")
`},
	{Name: "py-logging", What: "Python logging to a file and to stderr", Python: `
import logging, sys
logging.basicConfig(filename="app.log", level=logging.INFO)
log = logging.getLogger("app")
log.addHandler(logging.StreamHandler(sys.stderr))
log.info("started")
log.warning("careful")
logging.shutdown()
assert "careful" in open("app.log").read()
print("ok")
`},
	{Name: "py-shared-memory", What: "Python multiprocessing.shared_memory: a block in /dev/shm shared with a child", Python: `
import multiprocessing as mp
from multiprocessing import shared_memory
def child(name):
    s = shared_memory.SharedMemory(name=name)
    s.buf[0] = 42
    s.close()
shm = shared_memory.SharedMemory(create=True, size=1 << 16)
p = mp.get_context("fork").Process(target=child, args=(shm.name,))
p.start(); p.join()
assert shm.buf[0] == 42
shm.close(); shm.unlink()
print("ok")
`},
	{Name: "py-venv", What: "Python venv: a virtual environment in the work directory, its interpreter run", Python: `
import subprocess, sys, venv
venv.create("env", with_pip=False, symlinks=True)
out = subprocess.check_output(["env/bin/python", "-c", "import sys; print(sys.prefix != sys.base_prefix)"], text=True)
assert out == "True\n", out
print("ok")
`},
	{Name: "py-ssl-defaults", What: "Python ssl: the system's CA certificates load into a default context", Python: `
import ssl
ctx = ssl.create_default_context()
assert ctx.cert_store_stats()["x509_ca"] > 50, ctx.cert_store_stats()
assert ssl.get_default_verify_paths().cafile or ssl.get_default_verify_paths().capath
print("ok")
`},
}

// shellWorkloads run as /bin/sh -c SCRIPT (set -e first).
var shellWorkloads = []Workload{
	{Name: "sh-sort-uniq", What: "sh pipeline: seq, sort, uniq, head", Shell: `
seq 1 1000 | sort -rn | head -3 | tr '\n' ' ' > top.txt
test "$(cat top.txt)" = "1000 999 998 "
printf 'b\na\nb\nc\nb\n' | sort | uniq -c | sort -rn | head -1 | grep -q '3 b'
`},
	{Name: "sh-grep-sed", What: "sh pipeline: grep, sed, wc over a file", Shell: `
printf 'alpha 1\nbeta 2\ngamma 3\nalphabet 4\n' > in.txt
test "$(grep -c '^alpha' in.txt)" = 2
sed -e 's/^\([a-z]*\) \([0-9]\)$/\2:\1/' in.txt > out.txt
test "$(head -1 out.txt)" = "1:alpha"
test "$(grep -E 'beta|gamma' in.txt | wc -l)" = 2
sed -i 's/alpha/ALPHA/g' in.txt && grep -q ALPHAbet in.txt
`},
	{Name: "sh-awk", What: "sh pipeline: awk sums and fields", Shell: `
seq 1 100 | awk '{s += $1} END {print s}' > sum.txt
test "$(cat sum.txt)" = 5050
echo 'a:b:c' | awk -F: '{print $3 $1}' | grep -qx ca
`},
	{Name: "sh-tar-gzip", What: "sh: tar and gzip an archive, unpack it, compare", Shell: `
mkdir -p d/sub && echo one > d/sub/one.txt && echo two > d/two.txt
tar czf a.tgz d
sum1=$(cat d/sub/one.txt d/two.txt | md5sum)
rm -r d
tar xzf a.tgz
test "$(cat d/sub/one.txt d/two.txt | md5sum)" = "$sum1"
gzip -9 d/two.txt && test -f d/two.txt.gz && gunzip d/two.txt.gz && test "$(cat d/two.txt)" = two
`},
	{Name: "sh-find-xargs", What: "sh: find, xargs, wc, sort over the work directory", Shell: `
mkdir -p x/y && for i in 1 2 3; do seq 1 $i > x/y/f$i.txt; done
test "$(find . -name '*.txt' | sort | xargs cat | wc -l)" = 6
test "$(find . -type d | wc -l)" = 3
`},
	{Name: "sh-coreutils", What: "sh: cp, mv, ln, chmod, ls, date, id, uname, env, mktemp", Shell: `
echo data > f && cp f g && mv g h && ln -s h l && chmod 600 h
test "$(cat l)" = data
ls -la > /dev/null
date +%s > /dev/null && id -u > /dev/null && uname -a > /dev/null && env > /dev/null
t=$(mktemp) && echo x > "$t" && rm "$t"
test -w . && test "$HOME" = "$(pwd)"
`},
	{Name: "sh-script", What: "sh: a script with a #!/usr/bin/env shebang, made executable in the work directory and run", Shell: `
printf '#!/usr/bin/env python3\nimport sys\nprint(sys.argv[1] * 2)\n' > twice.py
chmod +x twice.py
test "$(./twice.py ab)" = abab
printf '#!/bin/sh\necho "$1-$1"\n' > twice.sh && chmod +x twice.sh && test "$(./twice.sh x)" = x-x
`},
	{Name: "sh-ps", What: "sh: ps and /proc show the run's own processes", Needs: "/usr/bin/ps", Shell: `
sleep 5 & pid=$!
# The child is the shell until it has execed sleep: on a busy machine ps
# can come first.
i=0; while [ "$(cat /proc/$pid/comm)" != sleep ] && [ $i -lt 500 ]; do i=$((i+1)); sleep 0.01; done
ps -e -o pid,comm | grep -q "^ *$pid sleep$"
test "$(cat /proc/$pid/comm)" = sleep
kill $pid
`},
	{Name: "perl", What: "perl: a one-liner over a file, with a core module", Needs: "/usr/bin/perl", Shell: `
printf 'a 1\nb 2\n' > in.txt
test "$(perl -MList::Util=sum -lane 'push @n, $F[1]; END { print sum(@n) }' in.txt)" = 3
`},
	{Name: "sh-bash", What: "bash: arrays, process substitution (/dev/fd), here-strings", Needs: "/bin/bash", Shell: `
/bin/bash -c '
set -e
a=(one two three)
test "${#a[@]}" = 3
diff <(printf "x\n") <(echo x)
read -r w <<< "here"
test "$w" = here
'
`},
	{Name: "sqlite3-cli", What: "the sqlite3 shell: a database file made and queried from sh", Needs: "/usr/bin/sqlite3", Shell: `
sqlite3 t.db 'create table t(x); insert into t values (1), (2), (3);'
test "$(sqlite3 t.db 'select sum(x) from t')" = 6
`},
	{Name: "git", What: "git: a repository in the work directory, a commit, a log", Needs: "/usr/bin/git", Shell: `
export GIT_CONFIG_NOSYSTEM=1
git init -q repo && cd repo
echo hello > f && git add f
git -c user.name=a -c user.email=a@b commit -q -m first
test "$(git log --format=%s)" = first
`},
}

// cWorkloads need a C compiler; each compiles in the work directory and
// runs what it built.
var cWorkloads = []Workload{
	{Name: "c-compile-run", What: "C: compile a program using stdio, math and fork with gcc, run it", Needs: "/usr/bin/gcc", Shell: `
cat > hello.c <<'EOF'
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
	pid_t pid = fork();
	if (pid == 0) _exit(7);
	int st;
	waitpid(pid, &st, 0);
	printf("%d %.0f\n", WEXITSTATUS(st), sqrt(1764.0));
	return 0;
}
EOF
gcc -O2 -Wall -o hello hello.c -lm
test "$(./hello)" = "7 42"
`},
	{Name: "c-shared-lib", What: "C: build a shared library with gcc and load it from Python ctypes", Needs: "/usr/bin/gcc", Shell: `
printf 'int triple(int x) { return 3 * x; }\n' > lib.c
gcc -shared -fPIC -o libtriple.so lib.c
test "$(python3 -c 'import ctypes; print(ctypes.CDLL("./libtriple.so").triple(14))')" = 42
`},
	{Name: "make", What: "make: a Makefile with a rule built from the work directory", Needs: "/usr/bin/make", Shell: `
printf 'out.txt: in.txt\n\tsort -r in.txt > out.txt\n' > Makefile
printf '1\n2\n' > in.txt
make -s
test "$(head -1 out.txt)" = 2
`},
}
