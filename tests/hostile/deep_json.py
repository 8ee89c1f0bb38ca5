#!/usr/bin/env python3
"""Point 10: valid JSON nested deeper than serde_json's 128 levels.

`deep` answers with 300 levels of arrays (valid, within the bound);
`deeper` with 200,000 levels (past any bound). Neither must cost the
auditor its timeout.
"""
import mcp


def nested(depth):
    return "[" * depth + "1" + "]" * depth


def call(name, _arguments, request):
    depth = 300 if name == "deep" else 200_000
    mcp.send_raw('{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"deep"}],'
                  '"structuredContent":{"v":%s}}}' % (request["id"], nested(depth)))
    return None


mcp.serve([mcp.tool("deep"), mcp.tool("deeper")], call)
