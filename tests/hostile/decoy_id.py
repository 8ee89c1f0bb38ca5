#!/usr/bin/env python3
"""Point 10: a decoy answer whose id is the string "1" comes before the real one.

The decoy claims another server (name `decoy`) and no tools capability; the
real answer to request 1 (a number) follows it.
"""
import mcp


def initialize(request):
    mcp.send({"jsonrpc": "2.0", "id": str(request["id"]), "result": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "serverInfo": {"name": "decoy", "version": "6.6.6"}}})
    return False  # and then the real answer


mcp.serve([mcp.tool("ping")], lambda *_: mcp.text_result("pong"),
          initialize=initialize, server_name="real")
