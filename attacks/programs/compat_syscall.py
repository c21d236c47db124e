# compat_syscall: makes a directory through the 32-bit entry point (int
# 0x80), where the numbers mean other calls than on x86-64: i386's mkdir
# is x86-64's getpid (argv: token, name of the directory to make in the
# working directory).
import ctypes, mmap, os, struct, sys

def compat_mkdir(path):
    # A page below 4 GiB (MAP_32BIT), since the 32-bit entry takes 32-bit
    # pointers, holding the path and a function calling mkdir (39).
    m = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40,
                  prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    name = path.encode() + b"\0"
    m[256:256 + len(name)] = name
    code = (b"\x53" + b"\xb8" + struct.pack("<I", 39) + b"\xbb" + struct.pack("<I", base + 256)
            + b"\xb9" + struct.pack("<I", 0o755) + b"\xcd\x80" + b"\x5b\xc3")
    m[0:len(code)] = code
    return ctypes.CFUNCTYPE(ctypes.c_int)(base)()

path = os.path.abspath(sys.argv[2])
pid = os.fork()
if pid == 0:
    print("int 0x80 mkdir returned", compat_mkdir(path), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("the child was killed by signal", os.WTERMSIG(status) if os.WIFSIGNALED(status) else "none")
