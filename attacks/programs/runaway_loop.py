# runaway_loop: a mistake that never ends (argv: token). Bounded at 10 s
# in case nothing stops it; the host looks for it past the wall limit.
import time

end = time.monotonic() + 10
while time.monotonic() < end:
    pass
