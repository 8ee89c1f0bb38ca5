"""Every selected field server: how its README says to launch it on a store, and the store.

One dict per server, read by entries.py (server.json, witness.toml) and
split.py. Fields:

- id: the directory name under servers/ (stable: the split and the probes name it)
- registry, package, version: the pinned package
- kind: the selection's kind
- description: the package's own summary (shortened by entries.py)
- command: the package's executable, only where it has several or none named after it
- args: packageArguments: ("positional", value, valueHint) or ("named", flag, value[, description])
- env: environmentVariables: (NAME, value)
- stores: what the audit declares, as `--store NAME=KIND:PATH` takes it; `file`
  is the file name inside the store's directory for a file store (sqlite, jsonl)
- seed: the realistic store the lab makes
- calls: seeding tool calls (tool, arguments) that write the store in the server's own format
- note: what the README says and the probe found, for the README table
"""

PROJECT_TREE = "a small project tree: README.md, docs/guide.md, src/app.py, data/config.json (5 files in 3 folders)"
SHOP_PG = "a shop database on the throwaway cluster: customers (3 rows), orders (4 rows) with a foreign key"
SHOP_SQLITE = "a shop database: customers (3 rows), orders (4 rows) with a foreign key, one index"

SERVERS = [
    {
        "id": "server-memory",
        "registry": "npm", "package": "@modelcontextprotocol/server-memory", "version": "2026.8.31",
        "kind": "memory",
        "description": "MCP server for enabling memory for Claude through a knowledge graph",
        "env": [("MEMORY_FILE_PATH", "{memory}")],
        "stores": [{"name": "memory", "kind": "jsonl", "file": "memory.jsonl"}],
        "seed": "a knowledge graph of 4 entities (2 people, a project, a team) with 3 relations and 6 observations",
        "calls": [
            ("create_entities", {"entities": [
                {"name": "Ada", "entityType": "person", "observations": ["leads the garden project", "prefers email"]},
                {"name": "Grace", "entityType": "person", "observations": ["reviews every release"]},
                {"name": "garden", "entityType": "project", "observations": ["started in March", "uses SQLite"]},
                {"name": "platform-team", "entityType": "team", "observations": ["owns the deploy pipeline"]}]}),
            ("create_relations", {"relations": [
                {"from": "Ada", "to": "garden", "relationType": "leads"},
                {"from": "Grace", "to": "platform-team", "relationType": "member_of"},
                {"from": "platform-team", "to": "garden", "relationType": "supports"}]}),
        ],
    },
    {
        "id": "server-filesystem",
        "registry": "npm", "package": "@modelcontextprotocol/server-filesystem", "version": "2026.8.31",
        "kind": "files",
        "description": "MCP server for filesystem access",
        "args": [("positional", "{root}", "allowed_directory")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "agent-infra-filesystem",
        "registry": "npm", "package": "@agent-infra/mcp-server-filesystem", "version": "1.2.29",
        "kind": "files",
        "description": "MCP server for filesystem access",
        "args": [("named", "--allowed-directories", "{root}")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "server-postgres",
        "registry": "npm", "package": "@modelcontextprotocol/server-postgres", "version": "0.6.2",
        "kind": "sql",
        "description": "MCP server for interacting with PostgreSQL databases",
        "args": [("positional", "{db}", "database_url")],
        "stores": [{"name": "db", "kind": "postgres"}],
        "seed": SHOP_PG,
    },
    {
        "id": "postgres-full-access",
        "registry": "npm", "package": "mcp-postgres-full-access", "version": "0.3.0",
        "kind": "sql",
        "description": "Full-access PostgreSQL server for Model Context Protocol with read/write capabilities",
        "args": [("positional", "{db}", "database_url")],
        "stores": [{"name": "db", "kind": "postgres"}],
        "seed": SHOP_PG,
    },
    {
        "id": "tasks-toolkit",
        "registry": "pypi", "package": "tasks-toolkit", "version": "0.1.7",
        "kind": "tasks", "command": "tasks-mcp",
        "description": "Task tracker toolkit: CLI + MCP server for sprint/task/subtask management, delegation helpers.",
        "env": [("TASKS_ROOT", "{project}")],
        "stores": [{"name": "project", "kind": "fs"}],
        "seed": "a project with one sprint of 4 tasks (2 with subtasks), written by the server's own tools",
    },
    {
        "id": "md-todo-hub",
        "registry": "pypi", "package": "md-todo-hub", "version": "0.3.2",
        "kind": "tasks",
        "description": "Local cross-project todo index over markdown docs, exposed to LLMs via MCP",
        "env": [("MD_TODO_HOME", "{hub}")],
        "stores": [{"name": "hub", "kind": "fs"}],
        "seed": "a hub holding one registered project whose docs/TODO.md lists 5 checkbox items (2 done) under 2 headings",
    },
    {
        "id": "cadence-todo",
        "registry": "pypi", "package": "cadence-todo", "version": "0.2.41",
        "kind": "tasks", "command": "cadence",
        "description": "Agentic-first todo app: local CLI + embedded SQLite store + MCP server for agents.",
        "args": [("positional", "mcp", "subcommand")],
        "env": [("CADENCE_DB_PATH", "{home}/cadence.db"), ("CADENCE_CONFIG_HOME", "{home}/config")],
        "stores": [{"name": "home", "kind": "fs"}],
        "seed": "a todo list of 5 tasks (priorities high/normal/low, one decomposed into 3 subtasks, one done) in cadence.db",
    },
    {
        "id": "taskflow-agent",
        "registry": "pypi", "package": "taskflow-agent", "version": "0.6.2",
        "kind": "tasks", "command": "taskflow",
        "description": "Lightweight project and task manager with MCP tools for Claude Code",
        "env": [("TASKFLOW_DB_PATH", "{home}/taskflow.db")],
        "stores": [{"name": "home", "kind": "fs"}],
        "seed": "2 projects with 2 sections each and 6 tasks (tags, one done), in taskflow.db",
    },
    {
        "id": "server-pdf",
        "registry": "npm", "package": "@modelcontextprotocol/server-pdf", "version": "2.0.4",
        "kind": "documents",
        "description": "MCP server for loading and extracting text from PDF files with chunked pagination and interactive viewer",
        "args": [("positional", "--stdio", "transport_flag"), ("positional", "{papers}", "pdf_directory")],
        "stores": [{"name": "papers", "kind": "fs"}],
        "seed": "a folder of 3 small PDFs (a 2-page report, a 1-page invoice, a 3-page paper with headings)",
    },
    {
        "id": "mcp-server-filesystem",
        "registry": "npm", "package": "mcp-server-filesystem", "version": "0.6.2",
        "kind": "files",
        "description": "MCP server for filesystem access",
        "args": [("positional", "{root}", "allowed_directory")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "code-editor-mcp",
        "registry": "pypi", "package": "code-editor-mcp", "version": "0.2.5",
        "kind": "files", "command": "code-editor",
        "description": "Code editor MCP server with sandboxing, optimistic locking, and path whitelists.",
        "constraints": ["mcp<2"],
    "env": [("CODE_EDIT_ROOT", "{root}"), ("CODE_EDIT_ALLOWED_DIRECTORIES", "{root}")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "filesystem-mcp-py",
        "registry": "pypi", "package": "filesystem-mcp", "version": "1.0.2",
        "kind": "files",
        "description": "An MCP server that can only read and write files inside allowed folders",
        "args": [("positional", "{root}", "allowed_directory")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "mcp-tasker",
        "registry": "pypi", "package": "mcp-tasker", "version": "1.8.1",
        "kind": "tasks", "command": "tasker",
        "description": "Markdown task tracker with MCP server for humans and AI agents, designed to live in git alongside code",
        "args": [("positional", "mcp", "subcommand")],
        "env": [("XDG_DATA_HOME", "{data}")],
        "stores": [{"name": "data", "kind": "fs"}],
        "seed": "a user-level tasker directory (data/tasker, as `tasker init --user` makes it) with 2 stories of 2 subtasks each, one done",
    },
    {
        "id": "memtask",
        "registry": "pypi", "package": "memtask", "version": "0.0.2",
        "kind": "tasks",
        "description": "A local MCP server for durable agent task state and lightweight memory.",
        "args": [("positional", "start", "subcommand"), ("named", "--transport", "stdio")],
        "env": [("MEMTASK_DB_PATH", "{db}")],
        "stores": [{"name": "db", "kind": "sqlite", "file": "tasks.sqlite"}],
        "seed": "a task database of 4 tasks in 2 states with 3 progress notes and one memory entry",
    },
    {
        "id": "kanban-mcp",
        "registry": "pypi", "package": "kanban-mcp", "version": "0.2.0",
        "kind": "tasks",
        "description": "Kanban board MCP server for Claude Code — track issues, features, and todos",
        "env": [("KANBAN_BACKEND", "sqlite"), ("KANBAN_SQLITE_PATH", "{db}"), ("KANBAN_PROJECT_DIR", "{project}")],
        "stores": [{"name": "db", "kind": "sqlite", "file": "kanban.db"}, {"name": "project", "kind": "fs"}],
        "seed": "a board for one project: 2 epics, 3 features and 2 todos in 3 columns, one linked pair, written by the server's own tools",
    },
    {
        "id": "vs-filesystem",
        "registry": "pypi", "package": "vs-filesystem-mcp-server", "version": "0.1.4",
        "kind": "files",
        "description": "MCP server for filesystem access with configurable directory and file type restrictions",
        "args": [("named", "--allowed-dirs", "{root}"), ("named", "--allow-write", "true", "write_file and write_file_binary exist only with it")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "airgap-file-bridge",
        "registry": "pypi", "package": "airgap-file-bridge", "version": "1.1.0",
        "kind": "files",
        "description": "Local MCP server that lets an AI assistant read, search and (optionally) edit files inside one folder",
        "env": [("FILE_BRIDGE_ROOT_PATH", "{root}"), ("FILE_BRIDGE_READ_ONLY", "false")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": PROJECT_TREE,
    },
    {
        "id": "ai-todo",
        "registry": "pypi", "package": "ai-todo", "version": "3.0.2",
        "kind": "tasks",
        "description": "AI-Agent First TODO List Tracker with MCP and CLI interfaces",
        "args": [("positional", "serve", "subcommand"), ("named", "--root", "{root}")],
        "stores": [{"name": "root", "kind": "fs"}],
        "seed": "a project root whose TODO.md holds 6 tasks (2 with subtasks, 1 archived) with tags, written by the server's own tools",
    },
    {
        "id": "apiary-memory",
        "registry": "pypi", "package": "apiary-memory", "version": "0.2.0",
        "kind": "memory",
        "description": "Local-first memory your AI agents share over MCP. Ships a working SQLite memory store",
        "env": [("HIVE_MODE", "local"), ("HIVE_DB", "{db}")],
        "stores": [{"name": "db", "kind": "sqlite", "file": "hive.db"}],
        "seed": "a hive of 5 memory entries from 2 agents, 3 approved and 2 proposed, with tags",
    },
    {
        "id": "benspdf-mcp",
        "registry": "pypi", "package": "benspdf-mcp", "version": "0.3.0",
        "kind": "documents",
        "description": "Local PDF tools for AI agents, exposed over the Model Context Protocol",
        "stores": [{"name": "papers", "kind": "fs"}],
        "seed": "a folder of 3 small PDFs (a 2-page report with text, a 1-page scanned-style page with no text layer, a 3-page paper)",
        "note": "no argument names a root: its tools take file paths, so the store's paths reach it through the calls",
    },
]
