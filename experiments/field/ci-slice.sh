#!/usr/bin/env bash
# Regenerates the CI slice's committed results, experiments/field/results/ci-slice/
# (field.json, field.jsonl, field.csv), by running the servers of
# experiments/field/ci-slice.txt on this machine:
#
#   bash experiments/field/ci-slice.sh [OUT]
#
# It is `mcp-witness lab field --server ID ...` over the slice, installing
# each server on first use into the field cache ($MCP_WITNESS_FIELD_DIR,
# else ~/.cache/mcp-witness/field) with its lock, and then copying the three
# files over the committed ones (or into OUT). CI reruns the slice as Slurm
# shards and holds their merge to these bytes
# (experiments/sweeps/cluster/slurm-roundtrip.sh), so run this after any
# change that moves a verdict of the slice (the planner, a check, a ground
# truth), read the diff, and commit it with the change. About four minutes on
# this project's 2-core machine once installed. The audits are not kept
# (they are in a temporary directory, removed at the end).
#
# Needs the built binary (MCP_WITNESS, default target/debug/mcp-witness),
# python3 and node/npm (the installs), PostgreSQL (the two SQL servers).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
witness="${MCP_WITNESS:-$repo/target/debug/mcp-witness}"
out="${1:-$repo/experiments/field/results/ci-slice}"
[ -x "$witness" ] || { echo "ci-slice.sh: $witness is not built (cargo build)" >&2; exit 2; }
args=()
while read -r id; do args+=(--server "$id"); done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/experiments/field/ci-slice.txt")
work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-witness-ci-slice.XXXXXX")"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
status=0
"$witness" lab field "${args[@]}" --out "$work" || status=$?
# 1 (a lie escaped) and 3 (an audit did not finish) are results the slice
# may hold; 2 is a bad invocation, and a server that did not run at all
# (an install that failed) is not a result to commit.
case $status in 0 | 1 | 3) ;; *) echo "ci-slice.sh: lab field exited $status" >&2; exit "$status" ;; esac
not_run="$(python3 -c '
import json, sys
print(" ".join(s["id"] for s in json.load(open(sys.argv[1]))["servers"] if s.get("error")))' "$work/field.json")"
[ -z "$not_run" ] || { echo "ci-slice.sh: not run, so nothing written: $not_run (see $work/field.json)" >&2; trap - EXIT; exit 3; }
mkdir -p "$out"
cp "$work/field.json" "$work/field.jsonl" "$work/field.csv" "$out/"
echo "ci-slice.sh: $((${#args[@]} / 2)) servers (lab field exit $status) written to $out in $(($(date +%s) - started))s"
