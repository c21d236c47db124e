# memory_hog: asks for 1 GiB (argv: token). It maps the whole GiB but
# touches only a few pages (touching all of it takes seconds), and holds
# the mapping 300 ms so the host can see its VmPeak.
import mmap
import time

SIZE = 1 << 30
buf = mmap.mmap(-1, SIZE)
for offset in range(0, SIZE, SIZE // 8):
    buf[offset] = 1
print("holding", SIZE, "bytes", flush=True)
time.sleep(0.3)
buf.close()
