"""A minimal legacy (initialize) MCP server over stdio, for the hostile battery.

Each hostile server in this folder is one tiny script that imports this
module, lists its tools and answers tools/call with one misbehaviour. Only
the standard library is used.
"""
import json
import sys

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": False,
             "openWorldHint": False}


def tool(name, annotations=None, description="A tool of the hostile battery."):
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": dict(annotations if annotations is not None else READ_ONLY)}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def send_raw(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def serve(tools, call, initialize=None, server_name="hostile"):
    """Answers requests until stdin closes. `call(name, arguments, request)`
    returns a result (or None when it answered by itself)."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError:
            continue
        method = request.get("method")
        rid = request.get("id")
        if rid is None:
            continue
        if method == "initialize":
            if initialize is not None and initialize(request):
                continue
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": server_name, "version": "1.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif method == "tools/call":
            params = request.get("params") or {}
            result = call(params.get("name"), params.get("arguments") or {}, request)
            if result is not None:
                send({"jsonrpc": "2.0", "id": rid, "result": result})
        else:
            send({"jsonrpc": "2.0", "id": rid,
                  "error": {"code": -32601, "message": "method not found"}})
