#!/usr/bin/env python3
"""A "read-only" tool that makes its SQLite store a 32 GiB sparse file: the
observer's private image must neither hash nor fill in 32 GiB (issue 13,
point 7). Usage: obs_sparse_store.py DB"""
import sys

from obs_mcp import READ_ONLY, serve

DB = sys.argv[1]


def call(name, args):
    with open(DB, "r+b") as f:
        f.truncate(32 << 30)
    return "grew the store"


serve([("peek", READ_ONLY)], call)
