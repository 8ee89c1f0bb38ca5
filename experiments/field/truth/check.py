#!/usr/bin/env python3
"""Check the ground-truth files against the probes and the installed packages.

    python3 check.py [CACHE]        # CACHE: ~/.cache/mcp-witness/field by default

For every truth/<id>.toml: the tools are exactly the ones probes/<id>.json
lists, each property is a boolean and consistent (an overwrite is a write),
every tool names its evidence, and, when the package is installed in the
cache, every evidence file exists under the source root and its line range
lies inside the file. Prints one line per problem; exits 1 if there is any,
so that a hand edit that breaks the oracle is caught before the study reads it.
"""
import json
import os
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIELD = HERE.parent
PROPERTIES = ("writes", "deletes_or_overwrites", "idempotent", "network")
EVIDENCE = re.compile(r"^(?P<path>[^:]+)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$")


def install_dir(cache: Path, package: str) -> Path:
    registry, rest = package.split(":", 1)
    if registry == "npm":
        name, version = rest.rsplit("@", 1)
    elif registry == "pypi":
        name, version = rest.split("==", 1)
    else:
        raise ValueError(f"unknown registry in package {package!r}")
    return cache / f"{registry}-{name.replace('/', '+')}-{version}"


def check(path: Path, cache: Path) -> list[str]:
    problems = []
    truth = tomllib.loads(path.read_text(encoding="utf-8"))
    server = truth.get("id", "")
    if server != path.stem:
        problems.append(f"{path.name}: id {server!r} is not the file's name")
    probe_file = FIELD / "probes" / f"{path.stem}.json"
    if not probe_file.exists():
        return problems + [f"{path.name}: no probe {probe_file.name}"]
    probe = json.loads(probe_file.read_text(encoding="utf-8"))
    listed = [t["name"] for t in probe["tools"]]
    tools = truth.get("tool", [])
    named = [t.get("name") for t in tools]
    if sorted(named) != sorted(listed):
        missing = sorted(set(listed) - set(named))
        extra = sorted(set(named) - set(listed))
        problems.append(f"{path.name}: tools differ from the probe (missing {missing}, not listed {extra})")
    try:
        root = install_dir(cache, truth["package"]) / truth["source_root"]
    except (KeyError, ValueError) as error:
        return problems + [f"{path.name}: {error}"]
    lengths: dict[Path, int] = {}
    for tool in tools:
        where = f"{path.name}: {tool.get('name')}"
        for prop in PROPERTIES:
            if not isinstance(tool.get(prop), bool):
                problems.append(f"{where}: {prop} is not a boolean")
        if tool.get("deletes_or_overwrites") and not tool.get("writes"):
            problems.append(f"{where}: deletes_or_overwrites without writes")
        evidence = tool.get("evidence") or []
        if not evidence:
            problems.append(f"{where}: no evidence")
        if not root.is_dir():
            continue  # not installed here: the format is still checked
        for item in evidence:
            match = EVIDENCE.match(item)
            if match is None:
                problems.append(f"{where}: evidence {item!r} is not FILE[:START[-END]]")
                continue
            file = root / match["path"]
            if not file.is_file():
                problems.append(f"{where}: evidence {item!r}: no such file under {truth['source_root']}")
                continue
            if match["start"]:
                if file not in lengths:
                    with open(file, "rb") as handle:
                        lengths[file] = sum(1 for _ in handle)
                start, end = int(match["start"]), int(match["end"] or match["start"])
                if not 1 <= start <= end <= lengths[file]:
                    problems.append(f"{where}: evidence {item!r} is outside the file's {lengths[file]} lines")
    return problems


def main() -> int:
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(
        os.environ.get("MCP_WITNESS_FIELD_DIR", Path.home() / ".cache/mcp-witness/field"))
    problems = []
    files = sorted(HERE.glob("*.toml"))
    for path in files:
        problems += check(path, cache)
    for problem in problems:
        print(problem)
    print(f"{len(files)} servers, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
