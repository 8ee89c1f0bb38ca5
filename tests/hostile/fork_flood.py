"""A hostile server whose read-only tool `flood` starts 1,000 children that
sleep, and answers with how many it got before a fork was refused."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp import serve, text_result, tool  # noqa: E402

MIB = 1 << 20


def flood():
    children = []
    refused = None
    for _ in range(1000):
        try:
            pid = os.fork()
        except OSError as error:
            refused = error.errno
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return "started %d children, refused: %s" % (len(children), refused)


if __name__ == "__main__":
    serve([tool("flood")], lambda name, args, request: text_result(flood()))
