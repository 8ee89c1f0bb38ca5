#!/usr/bin/env python3
"""The benchmark's minimal stdio MCP server (legacy handshake).

Usage: server.py sqlite DB | server.py tree DIR
       server.py sqlite DB --time-read K | server.py tree DIR --time-read K

SQLite: `count_rows` (read-only) counts the rows of `items`; `touch_row`
(declared destructive: it changes a row in place) updates one row. Tree:
`count_files` (read-only) stats one file; `touch_file` appends to one file.
Each write tool takes `n` and changes row/file `n`, so a plan can change a
different object in every call.

`--time-read K` serves nothing: it runs the read-only tool K times in this
process and prints the median seconds, so the benchmark can say how much of
a "nothing changed" call is the server's own work.
"""
import json
import os
import sqlite3
import sys

KIND, TARGET = sys.argv[1], sys.argv[2]
READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}
N_ARG = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
NONE = {"type": "object", "properties": {}}
TOOLS = {
    "sqlite": [("count_rows", READ, NONE), ("touch_row", WRITE, N_ARG)],
    "tree": [("count_files", READ, NONE), ("touch_file", WRITE, N_ARG)],
}[KIND]

db = sqlite3.connect(TARGET, isolation_level=None) if KIND == "sqlite" else None


def call(name, args):
    if name == "count_rows":
        return str(db.execute("SELECT count(*) FROM items").fetchone()[0])
    if name == "touch_row":
        n = int(args.get("n", 1))
        db.execute("UPDATE items SET body = body || 'x' WHERE id = ?", (n,))
        return f"touched {n}"
    if name == "count_files":
        return str(os.stat(os.path.join(TARGET, "d000", "f000.txt")).st_size)
    if name == "touch_file":
        n = int(args.get("n", 1))
        path = os.path.join(TARGET, f"d{n % 100:03}", f"f{n // 100 % 1000:03}.txt")
        with open(path, "ab") as f:
            f.write(b"x")
        return f"touched {path}"
    raise ValueError(name)


if sys.argv[3:4] == ["--time-read"]:
    import statistics
    import time

    def once():
        start = time.perf_counter()
        call(TOOLS[0][0], {})
        return time.perf_counter() - start

    print(statistics.median(once() for _ in range(int(sys.argv[4]))))
    sys.exit(0)

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"},
        }
    elif method == "tools/list":
        result = {
            "tools": [
                {"name": n, "description": n, "inputSchema": s, "annotations": a}
                for n, a, s in TOOLS
            ]
        }
    elif method == "tools/call":
        p = msg.get("params") or {}
        text = call(p.get("name"), p.get("arguments") or {})
        result = {"content": [{"type": "text", "text": text}]}
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
