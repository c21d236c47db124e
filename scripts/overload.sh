#!/usr/bin/env bash
# overload.sh LEVEL [BIN]: issue 30's load test. Starts 100 'sandboxlab run
# --json' processes at once at LEVEL, as separate processes compete in
# real use: 25 busy loops, 25 fork bombs, 25 short programs and 25
# programs printing 10 MB. Prints, per kind, the reasons the runs ended
# with (starved timeouts apart), and the distribution of queued_ms, the
# total wall time and the load average. Innocent runs (the short programs
# and the prints) must end exited, busy or starved, never a plain timeout:
# the script exits 1 when one did.
set -euo pipefail
level=${1:?usage: overload.sh LEVEL [BIN]}
bin=${2:-./bin/sandboxlab}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A src=(
	[loop]='while True: pass'
	[bomb]='import os, time
for _ in range(64):
    try:
        if os.fork() == 0:
            time.sleep(30)
    except OSError:
        pass
time.sleep(30)'
	[short]='print(sum(range(1000)))'
	[print10mb]='import sys
for _ in range(10):
    sys.stdout.write("x" * (1 << 20))
print("THE END")'
)
start=$(date +%s.%N)
for i in $(seq 0 24); do
	for kind in loop bomb short print10mb; do
		"$bin" run --level "$level" --json -- /usr/bin/python3 -c "${src[$kind]}" >"$out/$kind.$i.json" 2>/dev/null &
	done
done
wait || true
end=$(date +%s.%N)
/usr/bin/python3 - "$out" "$level" "$start" "$end" <<'PY'
import glob, json, os, sys
out, level, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
kinds, queued, innocent_timeouts = {}, [], 0
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    kind = os.path.basename(path).split(".")[0]
    try:
        r = json.load(open(path))
    except ValueError:
        kinds.setdefault(kind, {}).setdefault("no JSON", 0)
        kinds[kind]["no JSON"] += 1
        continue
    reason = r["reason"] + (" (starved)" if r.get("starved") else "")
    kinds.setdefault(kind, {}).setdefault(reason, 0)
    kinds[kind][reason] += 1
    queued.append(r.get("queued_ms", 0))
    if kind in ("short", "print10mb") and r["reason"] not in ("exited", "busy") and not r.get("starved"):
        innocent_timeouts += 1
    if kind in ("short", "print10mb") and r["reason"] == "exited" and r["exit_code"] != 0:
        innocent_timeouts += 1
queued.sort()
def pct(p):
    return queued[min(len(queued) - 1, int(p * len(queued)))] if queued else 0
print(f"L{level}: 100 runs as separate processes in {end - start:.1f} s (load average {open('/proc/loadavg').read().split()[0]})")
for kind in ("loop", "bomb", "short", "print10mb"):
    print(f"  {kind:10} {dict(sorted(kinds.get(kind, {}).items()))}")
print(f"  queued_ms: min {pct(0)}, median {pct(0.5)}, p90 {pct(0.9)}, p99 {pct(0.99)}, max {queued[-1] if queued else 0}")
print(f"  innocent runs not exited 0, busy or starved: {innocent_timeouts}")
sys.exit(1 if innocent_timeouts else 0)
PY
