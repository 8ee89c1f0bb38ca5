#!/usr/bin/env python3
"""Write the generated sections of README.md: counts, selection table, split, drops.

    python3 report.py

README.md holds hand-written prose and three generated blocks between
`<!-- generated:NAME -->` and `<!-- end:NAME -->` markers; this script
rewrites only the blocks, from counts.json, servers_table.py, probes/,
split.json and dropped.tsv, so the tables are always the committed data.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import Counter
from pathlib import Path

from servers_table import SERVERS

HERE = Path(__file__).resolve().parent
KIND_ORDER = ("notes", "tasks", "memory", "files", "sql", "git", "documents", "calendar")


def counts_block() -> str:
    counts = json.loads((HERE / "counts.json").read_text())
    lines = ["| list | rows read | MCP rows | not a server | no kind | sha256 |", "|---|---|---|---|---|---|"]
    for reg in ("npm", "pypi"):
        lines.append(f"| {reg} | {counts['rows_read'][reg]} | {counts['mcp_rows'][reg]} | {counts['not_a_server'][reg]} "
                     f"| {counts['unclassified'][reg]} | `{counts['inputs'][reg]['sha256'][:16]}…` |")
    lines += ["", "| kind | matched | dropped: remote or key | kept (candidates) | named for the kind |", "|---|---|---|---|---|"]
    for kind, tally in counts["kinds"].items():
        lines.append(f"| {kind} | {tally['matched']} | {tally['dropped_remote']} | {tally['kept']} | {tally['named_for_kind']} |")
    lines.append("")
    lines.append(f"Reserved packages met in the lists and dropped by name: {len(counts['reserved_seen'])}.")
    return "\n".join(lines)


def selection_block() -> str:
    split = json.loads((HERE / "split.json").read_text()) if (HERE / "split.json").exists() else None
    half = {}
    if split:
        for name in ("development", "evaluation"):
            for ident in split[name]:
                half[ident] = name
    lines = ["| id | registry | package@version | kind | tools | annotated | store (witness) | half |",
             "|---|---|---|---|---|---|---|---|"]
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    for server in sorted(SERVERS, key=lambda s: (order[s["kind"]], s["id"])):
        probe_path = HERE / "probes" / f"{server['id']}.json"
        probe = json.loads(probe_path.read_text()) if probe_path.exists() else {"tools": [], "annotatedTools": []}
        stores = ", ".join(f"{s['name']}={s['kind']}" for s in server["stores"])
        extra = " (lab wild)" if server.get("lab_wild") else ""
        lines.append(f"| {server['id']}{extra} | {server['registry']} | `{server['package']}@{server['version']}` | "
                     f"{server['kind']} | {len(probe['tools'])} | {len(probe['annotatedTools'])} | {stores} | "
                     f"{half.get(server['id'], '—')} |")
    by_kind = Counter(s["kind"] for s in SERVERS)
    by_reg = Counter(s["registry"] for s in SERVERS)
    tools = annotated = servers_annotating = 0
    for server in SERVERS:
        probe_path = HERE / "probes" / f"{server['id']}.json"
        if probe_path.exists():
            probe = json.loads(probe_path.read_text())
            tools += len(probe["tools"])
            annotated += len(probe["annotatedTools"])
            servers_annotating += bool(probe["annotatedTools"])
    lines += ["", f"{len(SERVERS)} servers: " + ", ".join(f"{k} {by_kind[k]}" for k in KIND_ORDER if by_kind[k])
              + f"; npm {by_reg['npm']}, PyPI {by_reg['pypi']}. {tools} tools, {annotated} of them annotated, "
              f"on {servers_annotating} servers."]
    return "\n".join(lines)


def split_block() -> str:
    if not (HERE / "split.json").exists():
        return "(not drawn yet)"
    split = json.loads((HERE / "split.json").read_text())
    lines = [f"Seed {split['seed']}. {split['method']}.", "", "| kind | development | evaluation |", "|---|---|---|"]
    for kind in KIND_ORDER:
        if kind in split["kinds"]:
            k = split["kinds"][kind]
            lines.append(f"| {kind} | {', '.join(k['development']) or '—'} | {', '.join(k['evaluation'])} |")
    lines.append(f"| **total** | {len(split['development'])} | {len(split['evaluation'])} |")
    return "\n".join(lines)


def dropped_block() -> str:
    with (HERE / "dropped.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    tally = Counter(r["reason"] for r in rows)
    lines = ["| reason | candidates |", "|---|---|"]
    lines += [f"| {reason} | {n} |" for reason, n in sorted(tally.items(), key=lambda x: (-x[1], x[0]))]
    lines += [f"| **total** | {len(rows)} |", "", "| registry | package@version | kind | reason | why |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['registry']} | `{r['name']}@{r['version']}` | {r['kind']} | {r['reason']} | {r['detail']} |")
    return "\n".join(lines)


def main() -> int:
    readme = HERE / "README.md"
    text = readme.read_text(encoding="utf-8")
    for name, block in (("counts", counts_block), ("selection", selection_block), ("split", split_block),
                        ("dropped", dropped_block)):
        pattern = re.compile(rf"(<!-- generated:{name} -->\n).*?(<!-- end:{name} -->)", re.S)
        if not pattern.search(text):
            print(f"report.py: README.md has no generated:{name} block", file=sys.stderr)
            return 2
        text = pattern.sub(lambda m: m.group(1) + block() + "\n" + m.group(2), text)
    readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
