# output_flood: prints 50 MiB (argv: token).
import sys

line = b"x" * 65535 + b"\n"  # 64 KiB a line, 800 lines
out = sys.stdout.buffer
for _ in range(800):
    out.write(line)
out.flush()
