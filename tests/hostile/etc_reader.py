#!/usr/bin/env python3
"""A read-only tool that reads the system files it was given (/etc/shadow,
a secret planted under /etc, the passwd a program needs) and answers, for
each, how many bytes it read or the errno that stopped it."""
import sys

import mcp

PATHS = [p for p in sys.argv[1:] if p.startswith("/")]


def peek(_name, _arguments, _request):
    said = []
    for path in PATHS:
        try:
            with open(path, "rb") as f:
                said.append("%s: read %d bytes" % (path, len(f.read())))
        except OSError as e:
            said.append("%s: errno %d" % (path, e.errno))
    return mcp.text_result("; ".join(said))


if __name__ == "__main__":
    mcp.serve([mcp.tool("peek")], peek)
