#!/usr/bin/env python3
"""Write servers/<id>/server.json and servers/<id>/witness.toml for every selected server.

    python3 entries.py

The table SERVERS below is the one place a server's launch is written down:
how its README says to point it at its store (an argument or a variable),
the store(s) the witness declares, and the realistic store the lab seeds.
A store's location is written as the placeholder `{NAME}` of a store the
witness declares: `mcp-witness audit --server-json` resolves it to the
store's jailed path, as `{NAME}` does in an audit command line.

server.json follows the official MCP registry format (schema 2025-12-11):
name, description, version, packages[] with registryType, identifier,
version, runtimeHint, transport, packageArguments, environmentVariables.
Everything the registry format has no field for (the store, the seed, the
executable of a package with several) is in witness.toml.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from servers_table import SERVERS

HERE = Path(__file__).resolve().parent
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def description(server: dict) -> str:
    text = " ".join(server["description"].split())
    if len(text) <= 100:
        return text
    cut = text[:99].rsplit(" ", 1)[0].rstrip(",;:-")
    return cut + "…"


def argument(spec: tuple) -> dict:
    kind = spec[0]
    if kind == "named":
        _, name, value, hint = (*spec, None)[:4]
        arg = {"type": "named", "name": name, "isRequired": True}
        if value is not None:
            arg["value"] = value
        if hint:
            arg["description"] = hint
        return arg
    _, value, hint = spec
    return {"type": "positional", "value": value, "valueHint": hint, "isRequired": True}


def variable(spec: tuple) -> dict:
    name, value = spec[0], spec[1]
    return {"name": name, "value": value, "isRequired": True, "isSecret": False}


def server_json(server: dict) -> dict:
    package = {
        "registryType": server["registry"],
        "identifier": server["package"],
        "version": server["version"],
        "runtimeHint": "npx" if server["registry"] == "npm" else "uvx",
        "transport": {"type": "stdio"},
    }
    if server.get("args"):
        package["packageArguments"] = [argument(a) for a in server["args"]]
    if server.get("env"):
        package["environmentVariables"] = [variable(v) for v in server["env"]]
    return {
        "$schema": SCHEMA,
        "name": f"io.github.mcp-witness/field-{server['id']}",
        "description": description(server),
        "version": server["version"],
        "packages": [package],
    }


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def witness_toml(server: dict) -> str:
    lines = [
        f"# The witness's side of servers/{server['id']}/server.json: what the registry format has no field for.",
        f"id = {toml_string(server['id'])}",
        f"kind = {toml_string(server['kind'])}",
        "",
    ]
    if server.get("command"):
        lines += ["[run]", "# The package's executable (it ships several, or none named after it).",
                  f"command = {toml_string(server['command'])}", ""]
    if server.get("constraints"):
        lines += ["[install]", "# Requirements pip installs beside the package: `mcp<2` for a server written for the mcp 1.x API",
                  "# whose metadata does not exclude mcp 2; the package's own extra where its README runs the MCP server from it.",
                  f"constraints = {toml_value(server['constraints'])}", ""]
    for store in server["stores"]:
        lines += ["[[stores]]", f"name = {toml_string(store['name'])}",
                  "# as `--store NAME=KIND:PATH` takes it", f"kind = {toml_string(store['kind'])}"]
        if store.get("file"):
            lines.append(f"file = {toml_string(store['file'])}")
        lines.append("")
    lines += ["[seed]", f"description = {toml_string(server['seed'])}"]
    if server.get("init"):
        lines += ["# Run before the server starts, with the same environment: the package's own command that",
                  "# makes an empty store of its format (the server refuses to start without one).",
                  f"init = {toml_value(server['init'])}"]
    lines.append("")
    for call in server.get("calls", []):
        lines += ["[[seed.calls]]", f"tool = {toml_string(call[0])}", f"arguments = {toml_value(call[1])}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    seen = set()
    root = HERE / "servers"
    for server in SERVERS:
        if server["id"] in seen:
            print(f"entries.py: duplicate id {server['id']}", file=sys.stderr)
            return 2
        seen.add(server["id"])
        out = root / server["id"]
        out.mkdir(parents=True, exist_ok=True)
        (out / "server.json").write_text(json.dumps(server_json(server), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (out / "witness.toml").write_text(witness_toml(server), encoding="utf-8")
    print(f"{len(SERVERS)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
