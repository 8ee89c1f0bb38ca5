#!/usr/bin/env python3
"""Pick the field study's candidate MCP servers from the npm and PyPI package lists.

A written, reproducible procedure (issue 39, "Selection"): the same two
lists give the same candidates.tsv and counts.json byte for byte.

    python3 select.py [--npm FILE] [--pypi FILE] [--out DIR]

Steps, in order, each recorded in counts.json:

1. read every row of both lists (tab-separated, first line names columns);
2. keep MCP servers: the name or the summary says `mcp` or
   `model context protocol`; then drop the reserved packages of the common
   brief by exact name (counted in `reserved_seen`);
3. drop what is not a server of its own (an SDK, a framework, a proxy, a
   client library, a plugin of another program, a deprecated or renamed
   package) -- rule `not-a-server`;
4. class each by kind from keywords in name + summary (KINDS, first kind
   in KIND_ORDER whose pattern matches wins); rows of no kind are counted
   as `unclassified` and left;
5. drop a classed row whose name or summary says it is a client of a
   remote service or needs a key, token or cloud account -- rule `remote`,
   the word that matched is kept;
7. rank what is left within each kind, per registry: a package named for its
   kind (NAME_FOCUS: `sqlite-...`, `...-todo-mcp`) before one whose summary
   only mentions the kind in passing; then by popularity: npm by
   `downloads_a_month` (more first); PyPI by `rank_among_15000_most_downloaded`
   (lower first), then, for the PyPI rows outside the 15,000 (which have no
   rank), by latest release month (newer first): the list carries no other
   popularity signal for them. Ties break by name. The two registries'
   rankings are interleaved (npm 1, PyPI 1, npm 2, PyPI 2, ...) so that
   trial installs reach both.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from pathlib import Path

DEFAULT_LISTS = Path("/work/.library/env/packages")

# The common brief reserves these for verification: never installed, run or read.
RESERVED = frozenset(
    """
    desktop-commander @cyanheads/git-mcp-server obsidian-mcp
    @itseasy21/mcp-knowledge-graph mcp-shrimp-task-manager basic-memory
    mcp-server-fetch mcp-git excel-mcp-server office-word-mcp-server
    @kazuph/mcp-taskmanager mcp-memory-keeper @zeeg/dex
    @allpepper/task-orchestrator mcp-memory-libsql claude-memory-layer
    @ai-devkit/memory kiro-memory light-obsidian-mcp todo-txt-mcp
    @stevestomp/ohno-mcp @pollinations/mcp-server-sqlite mcp-postgres-server
    @henkey/postgres-mcp-server github-mcp-server fast-filesystem-mcp
    knowledge-graph-mcp mcp-server-spreadsheet @negokaz/excel-mcp-server
    mcp-server-motherduck postgres-mcp kg-mcp dtxwiki
    """.split()
)

MCP = re.compile(r"mcp|model context protocol", re.I)

# A package that is not itself a server one runs against a local store.
NOT_A_SERVER = re.compile(
    r"\b(sdk|framework|toolkit for building|library for building|build mcp servers"
    r"|proxy|gateway|adapters?|inspector|deprecated|renamed|plugin for|extension for"
    r"|boilerplate|template|starter|scaffold|example|demo|tutorial|test(ing)? (tool|harness)"
    r"|client library|mcp client|evaluat\w+ mcp|registry of|marketplace|aggregat\w+"
    r"|orchestrat\w+ (platform|framework)|wrapper around|binary for)\b",
    re.I,
)

# First match in this order wins: a CRM of contacts, deals and tasks is a
# contacts server (calendar), a "SQLite task manager" is a task manager,
# a "markdown knowledge graph" a memory server, a "git-backed notes" notes.
KIND_ORDER = ("calendar", "tasks", "memory", "notes", "git", "sql", "documents", "files")
KINDS = {
    "tasks": re.compile(
        r"\b(todos?|to-do|todo-?list|tasks?|task-?manag\w*|kanban|backlog|issue tracker"
        r"|project manag\w+|taskwarrior|reminders?)\b",
        re.I,
    ),
    "calendar": re.compile(r"\b(calendars?|contacts?|icalendar|ics|vcard|address book|crm|events? schedul\w+)\b", re.I),
    "memory": re.compile(
        r"\b(memory|memories|knowledge[ -]graph|knowledge[ -]base|remember|long[ -]term context)\b", re.I
    ),
    "notes": re.compile(
        r"\b(notes?|note-?taking|markdown|obsidian|vaults?|wikis?|zettelkasten|logseq|journal)\b", re.I
    ),
    "git": re.compile(r"\bgit\b|\bgit[ -](repo\w*|operations|version control)", re.I),
    "sql": re.compile(r"\b(sqlite3?|duckdb|postgres(ql)?|pg|sql)\b", re.I),
    "documents": re.compile(
        r"\b(spreadsheets?|excel|xlsx|docx|word documents?|csv|pdfs?|powerpoint|pptx|documents?)\b", re.I
    ),
    "files": re.compile(r"\b(file ?system|files?|directory|directories|text editor|editor|editing)\b", re.I),
}

# A remote service or an account, by name; and the words that say a key is needed.
REMOTE = re.compile(
    r"\b(notion|todoist|github|gitlab|bitbucket|gitea|google|gmail|g ?suite|jira|linear|airtable"
    r"|supabase|confluence|atlassian|trello|asana|clickup|slack|discord|telegram|microsoft|outlook"
    r"|office ?365|onedrive|sharepoint|dropbox|box\.com|evernote|aws|amazon|azure|gcp|firebase"
    r"|neon|planetscale|turso|libsql|mongo(db)?|redis|mysql|mariadb|sql server|mssql|oracle"
    r"|snowflake|bigquery|clickhouse|databricks|salesforce|hubspot|monday\.com|basecamp|apple"
    r"|icloud|macos|caldav|carddav|nextcloud|zotero|readwise|roam|mem0|zep|pinecone|qdrant"
    r"|chroma|weaviate|milvus|elasticsearch|opensearch|neo4j|graphiti|letta|openai|anthropic"
    r"|gemini|claude api|vercel|netlify|cloudflare|heroku|stripe|shopify|figma|miro|coda"
    r"|craft\.do|bear app|apple notes|things 3|omnifocus|ticktick|habitica|teamwork|wrike"
    r"|youtrack|azure devops|tfs|redmine|plane\.so|huly|nocodb|baserow|seatable|smartsheet"
    r"|api[ -]?keys?|api[ -]?tokens?|access tokens?|tokens?|oauth2?|credentials?|cloud"
    r"|accounts?|saas|hosted|remote|api)\b",
    re.I,
)

# A package named for its kind: its name (split at - _ / @ .) holds one of these.
NAME_FOCUS = {
    "tasks": re.compile(r"todo|task|kanban|backlog|issues?\b|tracker", re.I),
    "calendar": re.compile(r"calendar|contacts?|ical|vcard|caldav|agenda|crm", re.I),
    "memory": re.compile(r"memory|memories|knowledge|graph|remember|recall|mem\b", re.I),
    "notes": re.compile(r"notes?|markdown|\bmd\b|obsidian|vault|wiki|zettel|logseq|journal", re.I),
    "git": re.compile(r"\bgit\b|^git|git$", re.I),
    "sql": re.compile(r"sqlite|duckdb|postgres|\bpg\b|sql", re.I),
    "documents": re.compile(r"excel|xlsx|docx|word|csv|pdf|pptx|spreadsheet|sheets?|office|docs?\b", re.I),
    "files": re.compile(r"file|\bfs\b|editor", re.I),
}

OUT_COLUMNS = ("registry", "name", "version", "kind", "named_for_kind", "popularity", "order", "summary")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_rows(path: Path):
    """Yield each data row as a dict keyed by the list's own column names."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        for row in reader:
            row = row + [""] * (len(header) - len(row))
            yield dict(zip(header, row))


def summary_of(row: dict) -> str:
    for key, value in row.items():
        if key.startswith("summary"):
            return " ".join(value.split())
    return ""


def classify(text: str):
    for kind in KIND_ORDER:
        if KINDS[kind].search(text):
            return kind
    return None


def popularity_key(registry: str, row: dict, focused: bool):
    """Sort key within one registry and kind: named for the kind first, then the most popular."""
    unfocused = 0 if focused else 1
    if registry == "npm":
        downloads = int(row["downloads_a_month"] or 0)
        return (unfocused, -downloads, row["name"]), f"{downloads} downloads/month"
    rank = row.get("rank_among_15000_most_downloaded", "")
    if rank:
        return (unfocused, 0, int(rank), "", row["name"]), f"rank {rank}"
    month = row.get("month", "")
    # Newer month first: invert the digits so that a plain ascending sort works.
    inverted = "".join(str(9 - int(c)) if c.isdigit() else c for c in month)
    return (unfocused, 1, 0, inverted, row["name"]), f"unranked, released {month or 'unknown'}"


def select(lists: dict[str, Path]):
    counts = {
        "inputs": {},
        "rows_read": {},
        "mcp_rows": {},
        "not_a_server": {},
        "unclassified": {},
        "kinds": {k: {"matched": 0, "dropped_remote": 0, "kept": 0, "named_for_kind": 0} for k in KIND_ORDER},
        "remote_words": {},
        "reserved_seen": [],
    }
    kept: dict[tuple[str, str], list] = {}
    for registry, path in lists.items():
        counts["inputs"][registry] = {"path": str(path), "sha256": sha256_of(path)}
        read = mcp = not_server = unclassified = 0
        for row in read_rows(path):
            read += 1
            name = row["name"]
            summary = summary_of(row)
            text = f"{name} {summary}"
            if not MCP.search(text):
                continue
            mcp += 1
            if name in RESERVED:
                counts["reserved_seen"].append(f"{registry}:{name}")
                continue
            # Name words joined by - or _ are words too.
            words = re.sub(r"[-_/@.]", " ", name) + " " + summary
            if NOT_A_SERVER.search(words):
                not_server += 1
                continue
            kind = classify(words)
            if kind is None:
                unclassified += 1
                continue
            tally = counts["kinds"][kind]
            tally["matched"] += 1
            remote = REMOTE.search(words)
            if remote:
                tally["dropped_remote"] += 1
                word = remote.group(0).lower()
                counts["remote_words"][word] = counts["remote_words"].get(word, 0) + 1
                continue
            tally["kept"] += 1
            focused = bool(NAME_FOCUS[kind].search(re.sub(r"[-_/@.]", " ", name)))
            tally["named_for_kind"] += focused
            key, shown = popularity_key(registry, row, focused)
            kept.setdefault((kind, registry), []).append((key, name, row["version"], 'yes' if focused else 'no', shown, summary))
        counts["rows_read"][registry] = read
        counts["mcp_rows"][registry] = mcp
        counts["not_a_server"][registry] = not_server
        counts["unclassified"][registry] = unclassified
    counts["reserved_seen"].sort()
    counts["remote_words"] = dict(sorted(counts["remote_words"].items()))

    out = []
    for kind in KIND_ORDER:
        ranked = {reg: sorted(kept.get((kind, reg), [])) for reg in lists}
        order = 0
        longest = max((len(v) for v in ranked.values()), default=0)
        for i in range(longest):
            for registry in lists:
                if i < len(ranked[registry]):
                    _, name, version, focus, shown, summary = ranked[registry][i]
                    order += 1
                    out.append((registry, name, version, kind, focus, shown, str(order), summary))
    return out, counts


def main(argv=None) -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npm", type=Path, default=DEFAULT_LISTS / "npm.tsv")
    parser.add_argument("--pypi", type=Path, default=DEFAULT_LISTS / "pypi.tsv")
    parser.add_argument("--out", type=Path, default=here)
    args = parser.parse_args(argv)
    for path in (args.npm, args.pypi):
        if not path.is_file():
            print(f"select.py: no package list at {path}", file=sys.stderr)
            return 2
    rows, counts = select({"npm": args.npm, "pypi": args.pypi})
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "candidates.tsv").open("w", encoding="utf-8", newline="") as handle:
        handle.write("\t".join(OUT_COLUMNS) + "\n")
        for row in rows:
            handle.write("\t".join(cell.replace("\t", " ") for cell in row) + "\n")
    (args.out / "counts.json").write_text(json.dumps(counts, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(rows)} candidates; " + ", ".join(f"{k} {v['kept']}" for k, v in counts["kinds"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
