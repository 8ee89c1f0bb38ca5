#!/usr/bin/env bash
# Observation cost of a directory store that reads a 10 MB JSON document as
# objects, and its shell baseline, measured in the same run on the same file;
# then that of a 10^4-row xlsx workbook read as cells, against reading the
# sheet with calamine itself (`spreadsheet_*`, baseline included):
#
#   bash bench/content.sh
#
# The baseline is `jq . FILE | b3sum` (parse and print the document, hash
# what was printed): what reading the document for its content costs with
# the ordinary tools. The observer's numbers come from the divan benchmarks
# `json_document_*` in observers/benches/observe.rs, given the same file
# through WITNESS_BENCH_JSON. Needs jq and b3sum (Debian: apt-get install jq
# b3sum) and python3. Results go to docs/performance.md by hand, with the
# tools' versions this prints.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
for tool in jq b3sum python3 cargo; do
    if ! command -v "$tool" >/dev/null; then
        echo "content.sh: $tool is needed" >&2
        exit 1
    fi
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
doc="$work/tasks.json"
# A task manager's document: 1 300 requests of 25 tasks, every record with
# an id, pretty-printed as such servers write it (about 10 MB).
python3 - "$doc" <<'PY'
import json, sys
requests = []
for r in range(1300):
    tasks = [{
        "id": "task-%d-%d" % (r, t),
        "title": "Task %d of request %d: %048x" % (t, r, (r * 31 + t) * 0x9e3779b9),
        "description": "Write the code, then the tests, then the docs.",
        "done": t % 3 == 0,
        "approved": False,
        "completedDetails": "",
    } for t in range(25)]
    requests.append({"requestId": "req-%d" % r, "originalRequest": "Request number %d" % r,
                     "splitDetails": "", "tasks": tasks, "completed": False})
with open(sys.argv[1], "w") as f:
    json.dump({"requests": requests}, f, indent=2)
PY
echo "document: $(stat -c %s "$doc") bytes"
echo "tools: $(jq --version), $(b3sum --version), $(python3 --version)"
# Median of 11 runs, warm cache (one run first to warm it).
jq . "$doc" | b3sum >/dev/null
times=()
for _ in $(seq 11); do
    start=$(date +%s%N)
    jq . "$doc" | b3sum >/dev/null
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 6p)
echo "baseline jq . | b3sum: median $((median / 1000)).$(printf '%03d' $((median % 1000))) ms"
cd "$here"
WITNESS_BENCH_JSON="$doc" cargo bench -p witness-observers --bench observe -- json_document
cargo bench -p witness-observers --bench observe -- spreadsheet
