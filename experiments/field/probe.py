#!/usr/bin/env python3
"""Start one field server with no network and list its tools over MCP stdio.

    python3 probe.py servers/<id> [--cache DIR] [--out probes/<id>.json] [--timeout 30]

Reads `servers/<id>/server.json` (the official registry format) and
`servers/<id>/witness.toml` (the stores, and `[run] command` where the
package's executable is not named after it), runs the pinned package from
the field cache (install.sh put it there) as root under `unshare -n`, with
a fresh working directory and HOME, an environment scrubbed to PATH and
HOME, and a throwaway store for every store the witness declares: `{NAME}`
in an argument's or a variable's value becomes that store's path (for a
postgres store, a connection string to a throwaway socket-only cluster).

`[seed] init` (the package's own command that makes an empty store of
its format) runs first, with the same environment.

Then it speaks MCP: initialize (protocol 2025-06-18),
notifications/initialized, tools/list (every page), and writes the tools,
as the server listed them, with sorted keys. Exit 0 when tools/list
answered; 1 with a one-line reason on stderr otherwise.

`--seed` then runs `[[seed.calls]]` through the server's own tools and
`--smoke` calls each argument-free reader once; each prints one line per
call, and an error in either makes the exit status 1. Neither changes the
written record, which is the tools alone.
"""

from __future__ import annotations

import os
import sys

# This directory holds the selection's own select.py, which would shadow the
# standard library's module of that name.
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.dirname(os.path.realpath(__file__))]

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import shutil
import sqlite3
import subprocess
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = Path(os.environ.get("MCP_WITNESS_FIELD_DIR", Path.home() / ".cache/mcp-witness/field"))
PROTOCOL = "2025-06-18"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ProbeError(Exception):
    pass


def cache_dir(cache: Path, registry: str, name: str, version: str) -> Path:
    return cache / f"{registry}-{name.replace('/', '+')}-{version}"


def npm_command(root: Path, name: str, wanted: str | None) -> Path:
    manifest = json.loads((root / "node_modules" / name / "package.json").read_text())
    bins = manifest.get("bin") or {}
    if isinstance(bins, str):
        bins = {name.split("/")[-1]: bins}
    pick = wanted or (name.split("/")[-1] if name.split("/")[-1] in bins else None)
    if pick is None:
        if len(bins) != 1:
            raise ProbeError(f"{name} has {len(bins)} executables ({', '.join(sorted(bins))}); witness.toml must name one")
        pick = next(iter(bins))
    if pick not in bins:
        raise ProbeError(f"{name} has no executable {pick}")
    return (root / "node_modules" / name / bins[pick]).resolve()


def command_of(entry: dict, witness: dict, cache: Path) -> list[str]:
    package = entry["packages"][0]
    registry, name, version = package["registryType"], package["identifier"], package["version"]
    root = cache_dir(cache, registry, name, version)
    if not (root / ".installed").exists():
        raise ProbeError(f"{registry}:{name}@{version} is not installed in {root} (run install.sh)")
    wanted = witness.get("run", {}).get("command")
    if registry == "npm":
        script = npm_command(root, name, wanted)
        return [shutil.which("node") or "node", str(script)]
    if registry == "pypi":
        exe = root / "venv" / "bin" / (wanted or name)
        if not exe.exists():
            raise ProbeError(f"no executable {exe.name} in {root}/venv/bin; witness.toml must name one")
        return [str(exe)]
    raise ProbeError(f"unknown registryType {registry}")


def start_postgres(dir: Path) -> tuple[str, subprocess.Popen]:
    """A socket-only cluster owned by the postgres account, with a `server` role owning `store`."""
    data, sock = dir / "data", dir / "s"
    data.mkdir(parents=True)
    sock.mkdir()
    shutil.chown(dir, "postgres")
    shutil.chown(data, "postgres")
    shutil.chown(sock, "postgres")
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run(as_pg + [str(PG_BIN / "initdb"), "-A", "trust", "-U", "witness", "-D", str(data)],
                   check=True, capture_output=True)
    proc = subprocess.Popen(as_pg + [str(PG_BIN / "postgres"), "-D", str(data), "-k", str(sock), "-c", "listen_addresses="],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if (sock / ".s.PGSQL.5432").exists():
            break
        time.sleep(0.1)
    psql = as_pg + [str(PG_BIN / "psql") if (PG_BIN / "psql").exists() else "psql", "-h", str(sock), "-U", "witness", "-d", "postgres", "-q", "-c"]
    for _ in range(50):
        if subprocess.run(psql + ["select 1"], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    subprocess.run(psql + ["create role server login"], check=True, capture_output=True)
    subprocess.run(psql + ["create database store owner server"], check=True, capture_output=True)
    return f"postgresql://server@localhost/store?host={sock}&port=5432", proc


def make_store(kind: str, path: Path) -> None:
    """An empty but valid store of the kind, so that a server that opens it at start finds one."""
    if kind == "fs":
        path.mkdir(parents=True, exist_ok=True)
    elif kind == "sqlite":
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as db:
            db.execute("create table if not exists notes (id integer primary key, title text not null)")
            db.execute("insert into notes (title) values ('first')")
    elif kind == "jsonl":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    elif kind == "git":
        path.mkdir(parents=True, exist_ok=True)
        env = {"PATH": PATH, "HOME": str(path.parent), "GIT_AUTHOR_NAME": "w", "GIT_AUTHOR_EMAIL": "w@example.invalid",
               "GIT_COMMITTER_NAME": "w", "GIT_COMMITTER_EMAIL": "w@example.invalid"}
        (path / "README.md").write_text("# repo\n")
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "first"]):
            subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    else:
        raise ProbeError(f"unknown store kind {kind}")


def substitute(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\{([A-Za-z0-9_]+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def arguments_of(package: dict, values: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment a client builds from the entry, stores resolved."""
    args: list[str] = []
    for arg in package.get("packageArguments", []):
        value = arg.get("value", arg.get("default"))
        if value is None:
            if arg.get("isRequired"):
                raise ProbeError(f"argument {arg.get('name') or arg.get('valueHint')} has no value")
            continue
        value = substitute(value, values)
        if arg["type"] == "named":
            args += [arg["name"], value] if value != "" else [arg["name"]]
        else:
            args.append(value)
    env: dict[str, str] = {}
    for var in package.get("environmentVariables", []):
        value = var.get("value", var.get("default"))
        if value is None:
            if var.get("isRequired"):
                raise ProbeError(f"variable {var['name']} has no value")
            continue
        env[var["name"]] = substitute(value, values)
    return args, env


class Session:
    def __init__(self, proc: subprocess.Popen, deadline: float):
        self.proc, self.deadline, self.buffer, self.next_id = proc, deadline, b"", 1

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        ident = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self.read()
            if "method" in message and "id" in message:
                # A request from the server (roots, sampling, elicitation): this client declares none.
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not supported"}})
                continue
            if message.get("id") == ident:
                if "error" in message:
                    raise ProbeError(f"{method} answered an error: {json.dumps(message['error'])[:200]}")
                return message.get("result", {})

    def read(self) -> dict:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            if b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    continue  # a log line on stdout: not ours to judge here
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise ProbeError("no answer within the time limit")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise ProbeError(f"the server exited (status {self.proc.poll()}) before it answered")
            self.buffer += chunk


def resolve(value, values: dict[str, str]):
    """`{NAME}` of a declared store, inside any string of a seed call's arguments."""
    if isinstance(value, str):
        return substitute(value, values)
    if isinstance(value, list):
        return [resolve(v, values) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, values) for k, v in value.items()}
    return value


def run_seed_calls(session: "Session", calls: list[dict], values: dict[str, str]) -> list[str]:
    """Makes the seed through the server's own tools; one line per call, `ERROR` where it failed."""
    lines = []
    for call in calls:
        try:
            arguments = resolve(call.get("arguments", {}), values)
            result = session.request("tools/call", {"name": call["tool"], "arguments": arguments})
        except ProbeError as error:
            lines.append(f"ERROR {call['tool']}: {error}")
            continue
        text = " ".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        mark = "ERROR" if result.get("isError") else "ok"
        lines.append(f"{mark} {call['tool']}: {' '.join(text.split())[:160]}")
    return lines


READER = re.compile(r"^(list|get|show|status|stats|overview|read|view|describe|count|info|version|current|topics|tags|board|dashboard)", re.I)
NETWORK_TROUBLE = re.compile(r"network is unreachable|connection refused|econnrefused|enetunreach|name or service not known|"
                             r"getaddrinfo|temporary failure in name resolution|couldn't connect", re.I)


def smoke_calls(session: "Session", tools: list[dict]) -> list[str]:
    """Calls each argument-free reader once: a tool that needs a daemon or the network shows it here."""
    lines = []
    for tool in tools:
        name = tool.get("name", "")
        schema = tool.get("inputSchema") or {}
        if not READER.search(name.split("_", 1)[-1] if name.startswith(("tf_", "tc_", "tasks_")) else name) or schema.get("required"):
            continue
        try:
            result = session.request("tools/call", {"name": name, "arguments": {}})
        except ProbeError as error:
            lines.append(f"ERROR {name}: {error}")
            continue
        text = " ".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        mark = "NETWORK" if NETWORK_TROUBLE.search(text) else ("ERROR" if result.get("isError") else "ok")
        lines.append(f"{mark} {name}: {' '.join(text.split())[:140]}")
    return lines


def probe(server_dir: Path, cache: Path, timeout: float, seed: bool = False, smoke: bool = False) -> tuple[dict, list[str]]:
    entry = json.loads((server_dir / "server.json").read_text())
    witness = tomllib.loads((server_dir / "witness.toml").read_text())
    package = entry["packages"][0]
    command = command_of(entry, witness, cache)
    scratch = Path(tempfile.mkdtemp(prefix="field-probe-"))
    os.chmod(scratch, 0o755)
    postgres = None
    stderr_path = scratch / "stderr"
    try:
        values: dict[str, str] = {}
        for store in witness.get("stores", []):
            name, kind = store["name"], store["kind"]
            if kind == "postgres":
                values[name], postgres = start_postgres(scratch / f"pg-{name}")
                continue
            base = scratch / "stores" / name
            path = base / store["file"] if store.get("file") else base
            make_store(kind, path)
            values[name] = str(path)
        args, extra_env = arguments_of(package, values)
        cwd, home = scratch / "cwd", scratch / "home"
        cwd.mkdir()
        home.mkdir()
        env = {"PATH": PATH, "HOME": str(home), **extra_env}
        init = witness.get("seed", {}).get("init")
        if init:
            # The package's own initialiser, found beside the server's executable.
            exe = Path(command[-1]).parent / init[0] if len(command) == 1 else Path(init[0])
            made = subprocess.run(["unshare", "-n", "--", str(exe), *[substitute(a, values) for a in init[1:]]],
                                  cwd=cwd, env=env, capture_output=True, timeout=timeout)
            if made.returncode != 0:
                raise ProbeError(f"seed init failed: {made.stderr.decode(errors='replace')[-300:]}")
        with stderr_path.open("wb") as err:
            proc = subprocess.Popen(["unshare", "-n", "--", *command, *args], cwd=cwd, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
            try:
                session = Session(proc, time.monotonic() + timeout)
                init = session.request("initialize", {
                    "protocolVersion": PROTOCOL, "capabilities": {},
                    "clientInfo": {"name": "mcp-witness-field-probe", "version": "1"}})
                session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                tools, cursor = [], None
                while True:
                    page = session.request("tools/list", {"cursor": cursor} if cursor else {})
                    tools += page.get("tools", [])
                    cursor = page.get("nextCursor")
                    if not cursor:
                        break
                seeded = run_seed_calls(session, witness.get("seed", {}).get("calls", []), values) if seed else []
                if smoke:
                    seeded += [f"smoke {line}" for line in smoke_calls(session, tools)]
            finally:
                proc.kill()
                proc.wait()
        record = {
            "id": server_dir.name,
            "package": {"registryType": package["registryType"], "identifier": package["identifier"],
                        "version": package["version"]},
            "protocolVersion": init.get("protocolVersion"),
            "serverInfo": init.get("serverInfo"),
            "capabilities": init.get("capabilities"),
            "tools": tools,
            "annotatedTools": sorted(t["name"] for t in tools if t.get("annotations")),
        }
        return record, seeded
    except ProbeError as error:
        tail = stderr_path.read_text(errors="replace")[-600:] if stderr_path.exists() else ""
        raise ProbeError(f"{error} | stderr: {' '.join(tail.split())[-400:]}") from None
    finally:
        if postgres is not None:
            postgres.terminate()
            postgres.wait()
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server_dir", type=Path)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--smoke", action="store_true",
                        help="also call each argument-free reader once and print the outcome (NETWORK where it needed one)")
    parser.add_argument("--seed", action="store_true",
                        help="also make the seed with [[seed.calls]] and print each call's outcome (exit 1 on an error)")
    args = parser.parse_args(argv)
    out = args.out or HERE / "probes" / f"{args.server_dir.name}.json"
    try:
        record, seeded = probe(args.server_dir, args.cache, args.timeout, args.seed, args.smoke)
    except (ProbeError, OSError, KeyError, json.JSONDecodeError, tomllib.TOMLDecodeError, subprocess.CalledProcessError) as error:
        print(f"probe {args.server_dir.name}: {error}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.server_dir.name}: {len(record['tools'])} tools, {len(record['annotatedTools'])} annotated")
    for line in seeded:
        print(f"  seed {line}")
    return 1 if any(line.startswith("ERROR") for line in seeded) else 0


if __name__ == "__main__":
    sys.exit(main())
