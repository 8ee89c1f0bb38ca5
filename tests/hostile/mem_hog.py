"""A hostile server whose read-only tool `hog` touches 6 GiB of memory,
one MiB at a time, and answers with how far it got, if it lives to."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp import serve, text_result, tool  # noqa: E402

MIB = 1 << 20


def hog():
    blocks = []
    try:
        for _ in range(6144):
            block = bytearray(MIB)
            for i in range(0, MIB, 4096):
                block[i] = 1
            blocks.append(block)
    except MemoryError:
        return "refused after %d MiB" % len(blocks)
    return "touched %d MiB" % len(blocks)


if __name__ == "__main__":
    serve([tool("hog")], lambda name, args, request: text_result(hog()))
