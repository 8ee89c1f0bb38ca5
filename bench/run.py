#!/usr/bin/env python3
"""Observation cost through whole audits, against shell baselines measured
in the same run. Writes bench.json (see docs/performance.md).

Usage: python3 bench/run.py [--out bench/bench.json] [--work DIR]
                            [--main-bin PATH] [--quick] [--only WORKLOAD]

Needs a release build (`cargo build --release --workspace --bins --examples`),
looked for where cargo puts it (`$CARGO_TARGET_DIR`, else `target/`),
`sqlite3`, `b3sum`, `find`/`xargs` and GNU `time` (/usr/bin/time).

The cold jail (issue 42): a jail of a 10^5-file tree and of a 1 GiB SQLite
database made, one object changed in it, the jail removed (the `cold_jail`
example of witness-jail), as a copy-on-write view and as the copy it falls
back to (`MCP_WITNESS_JAIL_COPY=1`), against `b3sum` of the store, with the
disk the jail's stores take. Run as root, as the audit is: elsewhere both
sides are the copy.

Workloads, as issue 14 names them:
  sqlite-1e5  10^5 rows, WAL mode        sqlite-1e6  10^6 rows, rollback journal
  tree-1e5    10^5 files in 100 directories, 0-8 KiB each

For each: the baseline (`sqlite3 DB .dump | b3sum`, or
`find DIR -type f -print0 | xargs -0 b3sum`), a cold observation (the
`observe` example: what an audit's first snapshot costs), and the cost of
one call through a whole audit (bench/server.py over stdio, a plan of K calls,
`--settle-ms 0` as in the issue's measurements): per call = the median gap
between one tools/call request and the next in the session transcript's
monotonic clock (the call, its settle, its post-call snapshot and the next
call's pre-call snapshot), so jail setup, startup and shutdown are left out. A
"no-change" call is the read-only tool; a "one-row"/"one-file" call changes
one object. The audit's fixed cost (jail setup with its copy of the store,
startup, shutdown) is its total less its calls, beside a plain `cp` of the
store. Every time is the median of REPEATS runs. `--main-bin` also
times the testbed audit of `honest` with default options on that binary and
on this one, alternating.
"""
import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where cargo builds: $CARGO_TARGET_DIR when set (relative to where cargo
# runs, as cargo reads it), else the workspace's target/.
TARGET = os.path.abspath(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"))
BIN = os.path.join(TARGET, "release", "mcp-witness")
OBSERVE = os.path.join(TARGET, "release", "examples", "observe")
COLD_JAIL = os.path.join(TARGET, "release", "examples", "cold_jail")
SERVER = os.path.join(ROOT, "bench", "server.py")

TARGETS = {
    ("sqlite-1e6", "cold"): 0.5,
    ("sqlite-1e6", "no_change_call"): 0.02,
    ("sqlite-1e6", "one_change_call"): 0.1,
    ("sqlite-1e5", "no_change_call"): 0.1,
    ("sqlite-1e5", "one_change_call"): 0.2,
    ("tree-1e5", "cold"): 1.0,
    ("tree-1e5", "no_change_call"): 0.05,
    ("tree-1e5", "one_change_call"): 0.1,
}


def timed(cmd, shell=False, env=None):
    start = time.perf_counter()
    subprocess.run(cmd, shell=shell, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def median(f, repeats):
    return statistics.median(f() for _ in range(repeats))


def make_sqlite(path, rows, wal):
    if os.path.exists(path):
        return
    db = sqlite3.connect(path, isolation_level=None)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER)")
    rng = random.Random(14)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO items(id, body, n) VALUES (?, ?, ?)",
        ((i, "%056x" % rng.getrandbits(224), rng.randrange(1 << 30)) for i in range(1, rows + 1)),
    )
    db.execute("COMMIT")
    if wal:
        # Leave a WAL behind, as a live server's database has.
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute("UPDATE items SET n = n + 1 WHERE id <= 100")
    db.close()


def make_sqlite_bytes(path, size):
    """A rollback-journal database of about `size` bytes: the items table of
    make_sqlite with 4 KiB bodies."""
    if os.path.exists(path):
        return
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER)")
    rng = random.Random(14)
    rows = size // 4200
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO items(id, body, n) VALUES (?, ?, ?)",
        ((i, rng.randbytes(2048).hex(), rng.randrange(1 << 30)) for i in range(1, rows + 1)),
    )
    db.execute("COMMIT")
    db.close()


def make_tree(path, files):
    if os.path.exists(path):
        return
    rng = random.Random(14)
    for n in range(files):
        d = os.path.join(path, f"d{n % 100:03}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{n // 100:03}.txt"), "wb") as f:
            f.write(rng.randbytes(rng.randrange(8192)))


def plan(path, tool, calls):
    with open(path, "w") as f:
        for i in range(calls):
            f.write(f'[[call]]\ntool = "{tool}"\n')
            if tool.startswith("touch"):
                f.write(f"args = {{ n = {i * 37 + 1} }}\n")
            f.write("\n")


def server_cmd(kind, store):
    return [sys.executable, SERVER, "sqlite" if kind == "sqlite" else "tree", store]


def audit_cmd(kind, store, plan_path, settle_ms="0"):
    spec = f"s=sqlite:{store}" if kind == "sqlite" else f"s=fs:{store}"
    return [BIN, "audit", "--format", "json", "--settle-ms", settle_ms, "--plan", plan_path,
            "--store", spec, "--"] + server_cmd(kind, "{s}")


def run_audit(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if not done.stdout.strip():
        raise RuntimeError(f"no report (exit {done.returncode}): {done.stderr[-2000:]!r}")
    report = json.loads(done.stdout)
    if not report.get("complete"):
        raise RuntimeError(f"incomplete audit: {report.get('incomplete_reason')}")
    return took, report


def call_gaps(report):
    """Seconds between one tools/call request and the next, from the
    session transcript's monotonic clock: each gap is one call, its settle,
    its post-call snapshot and the next call's pre-call snapshot."""
    frames = next(t for t in report["transcripts"] if t["role"] == "session")["frames"]
    sends = [f["t_us"] for f in frames
             if f["dir"] == "out" and '"method":"tools/call"' in f.get("text", "")]
    return [(b - a) / 1e6 for a, b in zip(sends, sends[1:])]


def per_call(kind, store, tool, work, k, repeats):
    path = os.path.join(work, f"{tool}-{k}.toml")
    plan(path, tool, k)
    gaps, totals, changed = [], [], 0
    for _ in range(repeats):
        took, report = run_audit(audit_cmd(kind, store, path))
        gaps.extend(call_gaps(report))
        totals.append(took)
        changed = sum(len(c["effects"]) for c in report["calls"])
    return statistics.median(gaps), statistics.median(totals), changed


def server_read_s(kind, store, k):
    out = subprocess.run(server_cmd(kind, store) + ["--time-read", str(k)],
                         check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def peak_rss_mib(cmd):
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def cold(kind, store, repeats):
    runs = []
    for _ in range(repeats):
        out = subprocess.run([OBSERVE, kind, store, "3"], check=True, capture_output=True, text=True)
        runs.append(json.loads(out.stdout))
    return (statistics.median(r["cold_s"] for r in runs),
            statistics.median(r["no_change_s"] for r in runs))


def disk_kib(path):
    out = subprocess.run(["du", "-sk", path], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[0])


def cold_jail(name, kind, store, baseline_cmd, repeats):
    """A jail of the store made, one object changed in it as a server would,
    and the jail removed (the cold_jail example), as a copy-on-write view
    and as the byte copy it falls back to, against b3sum of the store."""
    print(f"== cold jail: {name}", file=sys.stderr)
    timed(baseline_cmd, shell=True)  # warm the page cache for both sides
    baseline = median(lambda: timed(baseline_cmd, shell=True), repeats)

    def run(copy):
        env = dict(os.environ)
        env.pop("MCP_WITNESS_JAIL_COPY", None)
        if copy:
            env["MCP_WITNESS_JAIL_COPY"] = "1"
        out = subprocess.run([COLD_JAIL, kind, store, str(repeats)], check=True,
                             capture_output=True, text=True, env=env)
        return json.loads(out.stdout)

    view, copy = run(False), run(True)
    store_kib = disk_kib(store)
    return {
        "store_bytes_on_disk": store_kib * 1024,
        "baseline": baseline_cmd.replace(os.path.dirname(store), "$WORK"),
        "baseline_s": baseline,
        "view": view,
        "copy": copy,
        "ratios": {
            "view_create": view["create_s"] / baseline,
            "copy_create": copy["create_s"] / baseline,
            # The disk the jail's stores take after one change, over the store's.
            "view_disk_after_one_change": view["disk_bytes_after_one_change"] / (store_kib * 1024),
            "copy_disk_after_one_change": copy["disk_bytes_after_one_change"] / (store_kib * 1024),
        },
        "target": {"at_most": 0.05, "met": view["create_s"] / baseline <= 0.05},
    }


def tool_version(tool):
    out = subprocess.run([tool, "--version"], capture_output=True, text=True)
    return " ".join(out.stdout.split()[:2])


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpus": os.cpu_count(), "cpu": model, "memory_gib": round(mem, 1),
            "kernel": platform.release(), "python": platform.python_version()}


def workload(name, kind, store, size_bytes, baseline_cmd, work, args):
    k, repeats = (6, 1) if args.quick else (21, 3)
    print(f"== {name}", file=sys.stderr)
    timed(baseline_cmd, shell=True)  # warm the page cache for both sides
    baseline = median(lambda: timed(baseline_cmd, shell=True), repeats)
    cold_s, idle_s = cold("sqlite" if kind == "sqlite" else "fs", store, repeats)
    read_tool, write_tool = ("count_rows", "touch_row") if kind == "sqlite" else ("count_files", "touch_file")
    no_change, audit_s, changed_read = per_call(kind, store, read_tool, work, k, repeats)
    server_read = server_read_s(kind, store, k)
    one_change, _, changed_write = per_call(kind, store, write_tool, work, k, repeats)
    if changed_read != 0 or changed_write == 0:
        raise RuntimeError(f"{name}: unexpected effects ({changed_read} read, {changed_write} write)")
    peak = peak_rss_mib(audit_cmd(kind, store, os.path.join(work, f"{write_tool}-{k}.toml")))
    # What the jail's copy of the store costs, as a plain copy does it
    # (std::fs::copy is copy_file_range on Linux, file by file like cp -r).
    copy_to = os.path.join(work, "copy")

    def copy_once():
        shutil.rmtree(copy_to, ignore_errors=True)
        if os.path.isdir(store):
            took = timed(["cp", "-r", store, copy_to])
        else:
            took = timed(["cp", store, copy_to])
        shutil.rmtree(copy_to, ignore_errors=True) if os.path.isdir(copy_to) else os.remove(copy_to)
        return took

    copy_s = median(copy_once, repeats)
    result = {
        "store_bytes": size_bytes,
        "baseline_s": baseline,
        "baseline": baseline_cmd.replace(work, "$WORK"),
        "cold_s": cold_s,
        "idle_observation_s": idle_s,
        "no_change_call_s": no_change,
        # The read tool's own work, timed inside the server without an
        # audit: the rest of a "nothing changed" call is the wire, the
        # settle and the two observations.
        "server_read_s": server_read,
        "no_change_call_less_server_s": no_change - server_read,
        "one_change_call_s": one_change,
        "audit_with_k_read_calls_s": audit_s,
        "audit_fixed_s": audit_s - k * no_change,
        "calls_per_audit": k,
        "store_copy_s": copy_s,
        "audit_peak_rss_mib": round(peak, 1),
        "ratios": {
            "cold": cold_s / baseline,
            "no_change_call": no_change / baseline,
            "no_change_call_less_server": (no_change - server_read) / baseline,
            "one_change_call": one_change / baseline,
        },
    }
    result["targets"] = {
        key: {"at_most": limit, "met": result["ratios"][key] <= limit}
        for (wl, key), limit in TARGETS.items() if wl == name
    }
    return result


def honest(main_bin, repeats):
    seed_dir = tempfile.mkdtemp(prefix="witness-honest-")
    seed = os.path.join(seed_dir, "seed.db")
    subprocess.run([BIN, "testbed", "seed", "--store", seed], check=True)

    def cmd(binary):
        return [binary, "audit", "--store", f"db=sqlite:{seed}", "--", "mcp-witness", "testbed",
                "serve", "--variant", "honest", "--store", "{db}"]

    new, old = [], []
    for _ in range(repeats):
        new.append(timed(cmd(BIN)))
        if main_bin:
            old.append(timed(cmd(main_bin)))
    shutil.rmtree(seed_dir, ignore_errors=True)
    out = {"this_branch_s": statistics.median(new)}
    if old:
        out["main_s"] = statistics.median(old)
        out["speedup"] = out["main_s"] / out["this_branch_s"]
        out["target"] = {"at_least": 3.0, "met": out["speedup"] >= 3.0}
    return out


def stale_build(binaries):
    """The first source file newer than the release `binaries` this run
    uses, if any: a bench of an old build would time code that is no
    longer there."""
    built = min(os.path.getmtime(p) if os.path.exists(p) else 0 for p in binaries)
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in ("target", ".git", "node_modules")
                   and os.path.join(top, d) != TARGET]
        for name in files:
            path = os.path.join(top, name)
            if name.endswith(".rs") or name == "Cargo.toml":
                if os.path.getmtime(path) > built:
                    return path
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "bench.json"))
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "witness-bench"))
    parser.add_argument("--main-bin")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run")
    parser.add_argument("--only", help="one workload (sqlite-1e5, sqlite-1e6, tree-1e5, cold-jail)")
    args = parser.parse_args()
    for tool in ("sqlite3", "b3sum", "find", "xargs"):
        if shutil.which(tool) is None:
            sys.exit(f"bench: {tool} is needed")
    # Only the binaries this run uses: `--only cold-jail` needs the
    # cold_jail example alone.
    used = {COLD_JAIL} if args.only == "cold-jail" else {BIN, OBSERVE}
    if args.only is None:
        used.add(COLD_JAIL)
    newer = stale_build(sorted(used))
    if newer:
        sys.exit(f"bench: {newer} is newer than the release build; "
                 "run cargo build --release --workspace --bins --examples")
    os.makedirs(args.work, exist_ok=True)
    load_before = os.getloadavg()
    started = time.time()
    db5 = os.path.join(args.work, "items-1e5.db")
    db6 = os.path.join(args.work, "items-1e6.db")
    tree = os.path.join(args.work, "tree-1e5")
    make_sqlite(db5, 100_000, wal=True)
    make_sqlite(db6, 1_000_000, wal=False)
    make_tree(tree, 100_000)
    tree_bytes = sum(e.stat().st_size for d in os.scandir(tree) for e in os.scandir(d))
    plans = {
        "sqlite-1e5": ("sqlite", db5, os.path.getsize(db5), f"sqlite3 {db5} .dump | b3sum > /dev/null"),
        "sqlite-1e6": ("sqlite", db6, os.path.getsize(db6), f"sqlite3 {db6} .dump | b3sum > /dev/null"),
        "tree-1e5": ("tree", tree, tree_bytes, f"find {tree} -type f -print0 | xargs -0 b3sum > /dev/null"),
    }
    results = {
        name: workload(name, kind, store, size, baseline, args.work, args)
        for name, (kind, store, size, baseline) in plans.items()
        if args.only in (None, name)
    }
    jails = None
    if args.only in (None, "cold-jail"):
        db_gib = os.path.join(args.work, "items-1gib.db")
        make_sqlite_bytes(db_gib, 1 << 30)
        repeats = 1 if args.quick else 3
        jails = {
            "tree-1e5": cold_jail("tree-1e5", "fs", tree,
                                  f"find {tree} -type f -print0 | xargs -0 b3sum > /dev/null", repeats),
            "sqlite-1gib": cold_jail("sqlite-1gib", "sqlite", db_gib, f"b3sum {db_gib} > /dev/null",
                                     repeats),
        }
    if "sqlite-1e6" in results:
        limit_mib = 2 * os.path.getsize(db6) / 2**20 + 64
        results["sqlite-1e6"]["memory_target"] = {
            "at_most_mib": round(limit_mib, 1),
            "met": results["sqlite-1e6"]["audit_peak_rss_mib"] <= limit_mib,
        }
    doc = {
        "schema": "mcp-witness.bench/v1",
        "note": "one run on one machine; times in seconds (medians); ratios are this tool over the baseline",
        "machine": machine(),
        # The baselines' speed depends on these builds (b3sum's threading,
        # sqlite3's dump), so the ratios do too.
        "baseline_tools": {tool: tool_version(tool) for tool in ("sqlite3", "b3sum")},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "duration_s": round(time.time() - started, 1),
        "workloads": results,
        "cold_jail": jails,
        "honest_audit": honest(args.main_bin, 3 if args.quick else 10) if args.only is None else None,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(doc, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
