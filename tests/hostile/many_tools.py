#!/usr/bin/env python3
"""Point 10: a catalog of 10,000 read-only tools over 20 pages.

Each call answers at once; the audit of all of them takes long enough that
someone watching needs to see progress. Its plan is long enough to fill a
pipe that a reader closes early (`plan … | head`).
"""
import mcp

PAGE = 500
TOOLS = [mcp.tool(f"tool_{i:05d}") for i in range(10_000)]


def tools_page(request):
    cursor = int(((request.get("params") or {}).get("cursor")) or 0)
    page = {"tools": TOOLS[cursor:cursor + PAGE]}
    if cursor + PAGE < len(TOOLS):
        page["nextCursor"] = str(cursor + PAGE)
    return page



def main():
    import json
    import sys
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        rid, method = request.get("id"), request.get("method")
        if rid is None:
            continue
        if method == "tools/list":
            mcp.send({"jsonrpc": "2.0", "id": rid, "result": tools_page(request)})
        elif method == "initialize":
            mcp.send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "many", "version": "1"}}})
        elif method == "tools/call":
            mcp.send({"jsonrpc": "2.0", "id": rid, "result": mcp.text_result("ok")})
        else:
            mcp.send({"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32601, "message": "method not found"}})


main()
