#!/usr/bin/env bash
# slots-ab.sh REV [ROUNDS]: the mutation run's probes side by side, this
# checkout's ./bin/sandboxlab against a build of REV, alternating, ROUNDS
# runs of each (default 2). Each run is 'mutate --only
# fail_open,no_seccomp': the whole baseline of both suites and two
# defects. Prints each run's wall time, then the sum of the baseline walls
# of the probes that wait on the 1.5 s clock (those over 1.3 s in every
# run) and of all probes, per binary. Run it on a quiet machine: it
# measures scheduling.
set -euo pipefail
rev=${1:?usage: slots-ab.sh REV [ROUNDS]}
rounds=${2:-2}
here=$(pwd)
work=$(mktemp -d)
cleanup() {
	git -C "$here" worktree remove --force "$work/src" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
git worktree add --quiet --detach "$work/src" "$rev"
(cd "$work/src" && CGO_ENABLED=0 go build -o "$work/before" ./cmd/sandboxlab)
cp bin/sandboxlab "$work/after"
for i in $(seq 1 "$rounds"); do
	for v in before after; do
		s=$(date +%s.%N)
		"$work/$v" mutate --only fail_open,no_seccomp --format json --quiet >"$work/$v-$i.json" 2>"$work/$v-$i.err" || true
		e=$(date +%s.%N)
		echo "$v run $i: $(echo "$e - $s" | bc) s, load average $(cut -d' ' -f1 /proc/loadavg)"
	done
done
/usr/bin/python3 - "$work" "$rounds" <<'PY'
import json, sys
work, rounds = sys.argv[1], int(sys.argv[2])
runs = {}
for v in ("before", "after"):
    for i in range(1, rounds + 1):
        m = json.load(open(f"{work}/{v}-{i}.json"))
        if m["baseline"]["problems"]:
            print(f"{v} run {i}: baseline problems: {m['baseline']['problems']}")
        runs[(v, i)] = {c["probe"]: c["wall_ms"] for c in m["run"]["coverage"]}
common = set.intersection(*(set(r) for r in runs.values()))
clock = sorted(p for p in common if all(r[p] >= 1300 for r in runs.values()))
print(f"{len(clock)} probes wait on the clock: {', '.join(clock)}")
for v in ("before", "after"):
    c = [sum(runs[(v, i)][p] for p in clock) for i in range(1, rounds + 1)]
    a = [sum(runs[(v, i)].values()) for i in range(1, rounds + 1)]
    print(f"{v}: clock probes {', '.join(f'{x / 1000:.1f}' for x in c)} s (mean {sum(c) / len(c) / 1000:.1f}); all probes {', '.join(f'{x / 1000:.1f}' for x in a)} s")
PY
