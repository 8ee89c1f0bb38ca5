#!/usr/bin/env bash
# The witness proxy's added latency per tools/call on a small unchanged
# store, measured twice in one run: `cargo bench --bench proxy` (the wire's
# own client, benches/proxy.rs), then here the same read-only calls to the
# CRM testbed directly and through `mcp-witness proxy` by an independent
# client (Python, a plain pipe), as the shell baseline.
#
#   bash benches/proxy.sh [CALLS]
#
# CALLS defaults to 200. Prints one line per side and the difference in ms.
# Nothing here asserts a time: the number is for docs/proxy.md ("Cost").
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
calls="${1:-200}"
cargo bench --bench proxy
target="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release/mcp-witness"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/crm.db" "$here/experiments/agent/seeds" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for name in ["crm-schema.sql", "crm-tenants.sql", "acme-has-dana.sql"]:
    db.executescript(open(f"{sys.argv[2]}/{name}").read())
db.commit()
PY
cat > "$work/client.py" <<'PY'
import json, statistics, subprocess, sys, time
calls = int(sys.argv[1])
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     env={"CRM_TOKEN": "acme-agent-token", "PATH": "/usr/bin:/bin"})
def ask(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m
ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
times = []
for i in range(1, calls + 1):
    t = time.perf_counter()
    ask(i, "tools/call", {"name": "search_contacts", "arguments": {"query": "Dana"}})
    times.append((time.perf_counter() - t) * 1000)
p.stdin.close(); p.wait()
print(f"{statistics.median(times):.2f} {statistics.quantiles(times, n=10)[-1]:.2f}")
PY
direct=$(python3 "$work/client.py" "$calls" "$bin" testbed crm --store "$work/crm.db")
proxied=$(CRM_TOKEN=acme-agent-token python3 "$work/client.py" "$calls" "$bin" proxy \
  --settle-ms 0 --trace "$work/trace.jsonl" --store "db=sqlite:$work/crm.db" \
  --env CRM_TOKEN=acme-agent-token -- mcp-witness testbed crm --store '{db}')
read -r d50 d90 <<<"$direct"
read -r p50 p90 <<<"$proxied"
echo "shell/direct:  median ${d50} ms, p90 ${d90} ms per call ($calls calls)"
echo "shell/proxied: median ${p50} ms, p90 ${p90} ms per call ($calls calls)"
python3 -c "print(f'shell/added:    {float($p50) - float($d50):.2f} ms median per call')"
