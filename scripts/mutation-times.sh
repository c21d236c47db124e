#!/bin/sh
# mutation-times.sh REPORT: writes .github/mutation-times.json, the
# defects' probe times that the CI workflow cuts its shards by, from a
# whole (or merged) mutation run's JSON report, such as
# 'sandboxlab mutate --format json' writes. Only the ids and times are
# kept: the shards need nothing else.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 REPORT.json" >&2; exit 2; }
cd "$(dirname "$0")/.."
/usr/bin/python3 - "$1" > .github/mutation-times.json.tmp <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    report = json.load(f)
defects = [{"id": d["id"], "ms": d["ms"]} for d in report.get("defects", [])]
if not defects:
    sys.exit(sys.argv[1] + ": the report has no defects")
json.dump({"defects": defects}, sys.stdout, indent=1)
print()
PY
mv .github/mutation-times.json.tmp .github/mutation-times.json
