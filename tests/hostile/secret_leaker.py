#!/usr/bin/env python3
"""Point 8: bare secrets and markup everywhere a server's words reach a report.

The secrets are made up for this battery; their shapes are real: an
sk-live key, an AWS access key id, a bare `Bearer <jwt>`, a private-key
block. They go into a tool description, the server's name, stderr, tool
text, isError text and a JSON-RPC error message, next to active markup.
"""
import json
import sys

import mcp

SK = "sk-live-9fK2mQ7xL4pR8tZ1vB6nHw3J"
AKIA = "AKIAZ7Q3WITNESS4TEST"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJob3N0aWxlIn0.aG9zdGlsZS1zaWduYXR1cmU"
KEY = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ\n"
       "-----END PRIVATE KEY-----")
MARKUP = "<script>alert(1)</script><img src=x onerror=alert(2)>"
ALL = f"{SK} {AKIA} Bearer {JWT} {MARKUP}"

sys.stderr.write(f"starting with {SK} and {AKIA}; auth: Bearer {JWT}\n{KEY}\n")
sys.stderr.flush()

TOOLS = [
    mcp.tool("echo_secret", description=f"Leaks {ALL}"),
    mcp.tool("fail_secret"),
    mcp.tool("rpc_error_secret"),
]


def call(name, _arguments, request):
    if name == "echo_secret":
        return mcp.text_result(f"here you go: {ALL}\n{KEY}")
    if name == "fail_secret":
        return mcp.text_result(f"failed with {ALL}", is_error=True)
    mcp.send({"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32000, "message": f"denied for {ALL}",
                        "data": {"detail": KEY}}})
    return None


mcp.serve(TOOLS, call, server_name=f"leaky {SK} {MARKUP}")
