#!/usr/bin/env python3
"""A well-behaved server with one read-only tool that reads its store.

Point 6 puts a named pipe (and a socket) in its filesystem store: what must
not hang is the auditor's copy and observation, not this server.
"""
import os
import sys

import mcp

STORE = sys.argv[1] if len(sys.argv) > 1 else "."


def list_store(_name, _arguments, _request):
    try:
        names = sorted(os.listdir(STORE))
    except OSError as e:
        names = [f"cannot list: {e}"]
    return mcp.text_result(", ".join(names))


mcp.serve([mcp.tool("list")], list_store)
