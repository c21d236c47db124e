# disk_filler: writes a 50 MiB file in its working directory (argv: token).
chunk = b"\0" * (1 << 20)
written = 0
with open("filler.bin", "wb", buffering=0) as f:
    for _ in range(50):
        written += f.write(chunk)
print("wrote", written, "bytes")
