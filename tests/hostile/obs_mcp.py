"""The stdio MCP loop the obs_* hostile servers share: legacy handshake,
one page of tools, tools/call answered by a function. Not a server itself."""
import json
import sys


def serve(tools, call):
    """tools: [(name, annotations)]; call(name, arguments) -> text."""
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "hostile-observation", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "description": n, "annotations": a,
                                 "inputSchema": {"type": "object", "properties": {}}}
                                for n, a in tools]}
        elif method == "tools/call":
            params = msg.get("params") or {}
            text = call(params.get("name"), params.get("arguments") or {})
            result = {"content": [{"type": "text", "text": text}]}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"],
                     "error": {"code": -32601, "message": "method not found"}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": False,
             "openWorldHint": False}
