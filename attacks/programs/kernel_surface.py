# kernel_surface: opens the kernel's most attacked interfaces an
# unprivileged program can reach here, io_uring and userfaultfd, and holds
# them while the host looks (argv: token).
import ctypes, os, time

libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
for name, call in (("io_uring_setup", lambda: libc.syscall(425, 4, params)),
                   ("userfaultfd", lambda: libc.syscall(323, 1))):  # UFFD_USER_MODE_ONLY
    fd = call()
    print(name, "->", fd if fd >= 0 else os.strerror(ctypes.get_errno()), flush=True)
time.sleep(0.8)
