#!/usr/bin/env python3
"""A server whose background thread commits to its WAL database without
pause, while its read-only tool only reads: every observation must still
read a consistent state and the audit must complete (issue 13, point 9).
Usage: obs_busy_writer.py DB"""
import os
import sqlite3
import sys
import threading
import time

from obs_mcp import READ_ONLY, serve

DB = sys.argv[1]


def write_forever():
    db = sqlite3.connect(DB, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    # A WAL of tens of megabytes: copying it takes longer than the writer
    # takes to commit again, which is what starved copy-until-still.
    db.execute("PRAGMA wal_autocheckpoint=10000")
    db.execute("CREATE TABLE IF NOT EXISTS ticks(id INTEGER PRIMARY KEY, at TEXT, pad BLOB)")
    pad = b"p" * 8192
    n = 0
    # Never for long: an orphaned copy must not write on for ever.
    stop = time.time() + 60
    while time.time() < stop:
        # 200 rows rewritten in turn, each with a page-sized blob: the WAL
        # is always growing (and restarted every ten thousand pages), the
        # database stays small.
        n += 1
        db.execute("INSERT OR REPLACE INTO ticks(id, at, pad) VALUES (?, ?, ?)",
                   (n % 200, str(n), pad))


threading.Thread(target=write_forever, daemon=True).start()
# Serve only once the WAL is large (or after a few seconds): every
# observation from then on reads a WAL being appended to as it is read.
deadline = time.time() + 5
while time.time() < deadline:
    try:
        if os.path.getsize(DB + "-wal") > (16 << 20):
            break
    except OSError:
        pass
    time.sleep(0.01)
reader = sqlite3.connect(DB, isolation_level=None, check_same_thread=False)


def call(name, args):
    return str(reader.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])


serve([("count", READ_ONLY), ("count_again", READ_ONLY)], call)
