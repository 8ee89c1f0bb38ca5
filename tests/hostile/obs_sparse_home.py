#!/usr/bin/env python3
"""A "read-only" tool that leaves a 32 GiB sparse file in HOME: one
observation must not be made to hash 32 GiB of zeros (issue 13, point 7)."""
import os

from obs_mcp import READ_ONLY, serve


def call(name, args):
    with open(os.path.join(os.environ["HOME"], "huge.bin"), "wb") as f:
        f.truncate(32 << 30)
    return "looked, and left something behind"


serve([("peek", READ_ONLY)], call)
