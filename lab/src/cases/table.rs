//! The case table: which published servers, at which versions, with which
//! store, seed and plan. Everything else in the case studies reads this.

use witness_jail::StoreKind;

use witness_engine::audit::stable::ClockText;

/// How a case's server is installed and started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// `node <cases>/node_modules/.bin/<bin>`, pinned by `package.json` and
    /// `package-lock.json`.
    Node,
    /// `<cases>/venv/bin/python -m <bin>`, pinned by the `pip install` line
    /// of `install.sh` (PyPI).
    Python,
}

/// One published server and how it is audited.
#[derive(Clone, Copy, Debug)]
pub struct CaseSpec {
    /// `memory`, `filesystem`, `sqlite`: names the output files.
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub runtime: Runtime,
    /// The executable under `node_modules/.bin` (Node), or the module run
    /// with `python -m` (Python).
    pub bin: &'static str,
    pub publisher: &'static str,
    pub store_kind: StoreKind,
    /// The store's name in the audit (`{NAME}` in arguments and the plan).
    pub store_name: &'static str,
    /// The store's file name inside the jail (directory trees have none).
    pub store_file: &'static str,
    /// How the server is told where its store is.
    pub store_how: &'static str,
    /// Arguments after the executable.
    pub args: &'static [&'static str],
    /// Environment for the server.
    pub env: &'static [(&'static str, &'static str)],
    pub plan: &'static str,
    /// Columns (`table.column`) the server fills from the clock; its store's
    /// observer digests a time there as one stand-in.
    pub clock_columns: &'static [&'static str],
    /// Kinds of clock value the server writes into its answers; the written
    /// audit holds `{clock}` in their place (see [`super::clock`]).
    pub clock_text: &'static [ClockText],
}

/// The four case studies, in the order they run.
pub const CASES: [CaseSpec; 4] = [
    CaseSpec {
        name: "memory",
        package: "@modelcontextprotocol/server-memory",
        version: "2026.8.31",
        runtime: Runtime::Node,
        bin: "mcp-server-memory",
        publisher: "modelcontextprotocol (official reference server)",
        store_kind: StoreKind::Jsonl,
        store_name: "mem",
        store_file: "memory.jsonl",
        store_how: "MEMORY_FILE_PATH, an absolute path inside the jail",
        args: &[],
        env: &[("MEMORY_FILE_PATH", "{mem}")],
        plan: include_str!("../../../experiments/cases/plans/memory.toml"),
        clock_columns: &[],
        clock_text: &[],
    },
    CaseSpec {
        name: "filesystem",
        package: "@modelcontextprotocol/server-filesystem",
        version: "2026.8.31",
        runtime: Runtime::Node,
        bin: "mcp-server-filesystem",
        publisher: "modelcontextprotocol (official reference server)",
        store_kind: StoreKind::Fs,
        store_name: "fs",
        store_file: "",
        store_how: "the jailed tree, as the server's only allowed directory (argument)",
        args: &["{fs}"],
        env: &[],
        plan: include_str!("../../../experiments/cases/plans/filesystem.toml"),
        // get_file_info: created, modified and accessed times of a file.
        clock_columns: &[],
        clock_text: &[ClockText::JsDate],
    },
    CaseSpec {
        name: "sqlite",
        package: "@executeautomation/database-server",
        version: "1.1.0",
        runtime: Runtime::Node,
        bin: "ea-database-server",
        publisher: "ExecuteAutomation (community)",
        store_kind: StoreKind::Sqlite,
        store_name: "db",
        store_file: "database.db",
        store_how: "the jailed database file (argument)",
        args: &["{db}"],
        env: &[],
        plan: include_str!("../../../experiments/cases/plans/sqlite.toml"),
        // mcp_insights is created with `created_at DEFAULT CURRENT_TIMESTAMP`,
        // and list_insights answers with it.
        clock_columns: &["mcp_insights.created_at"],
        clock_text: &[ClockText::SqlDateTime],
    },
    CaseSpec {
        name: "git",
        package: "mcp-server-git",
        version: "2026.10.19",
        runtime: Runtime::Python,
        bin: "mcp_server_git",
        publisher: "modelcontextprotocol (official reference server)",
        store_kind: StoreKind::Git,
        store_name: "repo",
        store_file: "",
        store_how: "the jailed repository, as --repository and as every tool's repo_path",
        args: &["--repository", "{repo}"],
        // Commits the server makes carry these names and times, so their
        // ids (and every ref move) are the same on every run.
        env: &[
            ("GIT_AUTHOR_NAME", SEED_IDENTITY.0),
            ("GIT_AUTHOR_EMAIL", SEED_IDENTITY.1),
            ("GIT_COMMITTER_NAME", SEED_IDENTITY.0),
            ("GIT_COMMITTER_EMAIL", SEED_IDENTITY.1),
            ("GIT_AUTHOR_DATE", SEED_DATE),
            ("GIT_COMMITTER_DATE", SEED_DATE),
            ("GIT_CONFIG_NOSYSTEM", "1"),
        ],
        plan: include_str!("../../../experiments/cases/plans/git.toml"),
        clock_columns: &[],
        clock_text: &[],
    },
];

/// Who makes the git case's commits, the seed's and the server's.
pub(crate) const SEED_IDENTITY: (&str, &str) = ("Case Study", "case@example.org");
/// When they are made: fixed, so commit ids do not depend on the clock.
pub(crate) const SEED_DATE: &str = "2026-01-01T00:00:00+0000";

/// The git case's repository: each commit's files, then what is left in
/// the worktree (a modified tracked file, an untracked one).
pub(crate) const SEED_COMMITS: [(&str, &[(&str, &str)]); 2] = [
    (
        "Start the field notes",
        &[
            (
                "README.md",
                "# Field notes\n\nThe lab keeps its notes here.\n",
            ),
            ("notes.txt", "monday: calibrated the gate\n"),
        ],
    ),
    (
        "Ignore scratch output",
        &[
            (".gitignore", "*.log\n"),
            ("src/app.py", "print('notes')\n"),
        ],
    ),
];
pub(crate) const SEED_WORKTREE: [(&str, &str); 3] = [
    (
        "notes.txt",
        "monday: calibrated the gate\ntuesday: the gate held\n",
    ),
    ("todo.txt", "buy milk\n"),
    ("run.log", "scratch\n"),
];

/// The tree the filesystem case starts from.
pub(crate) const SEED_TREE: [(&str, &str); 2] = [
    (
        "docs/readme.md",
        "# Field notes\n\nThe lab keeps its notes here.\n",
    ),
    ("notes/todo.txt", "buy milk\nfix the gate\n"),
];

/// What the store held before the server started, as the documents say it.
pub(crate) fn initial_state(case: &CaseSpec) -> &'static str {
    match case.store_kind {
        StoreKind::Fs => "seed tree: docs/readme.md, notes/todo.txt",
        StoreKind::Jsonl => "empty (no file; the server creates it on its first change)",
        StoreKind::Sqlite => "empty (no file; the server creates it at start)",
        StoreKind::Git => {
            "seed repository: main with 2 commits; notes.txt modified, todo.txt untracked, run.log ignored"
        }
        StoreKind::Postgres => "restored from the case's seed SQL into a throwaway cluster",
    }
}

/// The observer that reads a store of this kind, and its object ids.
pub(crate) fn observer_description(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Jsonl => {
            "jsonl: one object per line, entity/<name> and relation/<from>-><to>:<type>, canonical JSON digests"
        }
        StoreKind::Fs => {
            "fs: file/<path> (blake3 of content), dir/<path>, link/<path> (never followed)"
        }
        StoreKind::Sqlite => {
            "sqlite: <table>/<key> per row and sqlite_master/<type>:<name> per schema entry, read from a private copy"
        }
        StoreKind::Git => {
            "git: HEAD, ref/<name>, stash/<commit>, index/<path> (mode, blob), worktree/<path> and ignored/<path> (mode, blob of the bytes), odb/objects (counts), commit/<id> when one becomes unreachable; read with libgit2, never refreshing the index"
        }
        StoreKind::Postgres => {
            "postgres: <schema>.<table>/<key> per changed row from a logical replication slot, catalog/<kind>:<name> from the catalogs"
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use witness_engine::plan::Plan;

    use super::*;

    #[test]
    fn every_clock_column_names_a_table_and_a_column_of_a_sqlite_store() {
        for case in CASES {
            for column in case.clock_columns {
                assert_eq!(case.store_kind, StoreKind::Sqlite, "{}", case.name);
                assert!(
                    witness_observers::sqlite::ClockColumn::parse(column).is_some(),
                    "{}: {column}",
                    case.name
                );
            }
        }
    }

    #[test]
    fn every_case_plan_parses_and_names_a_pinned_version() {
        for case in CASES {
            let plan = Plan::parse(case.plan);
            assert!(plan.is_ok(), "{}: {:?}", case.name, plan.err());
            assert!(!case.version.is_empty());
        }
        let pins = include_str!("../../../experiments/cases/package.json");
        let pins: Value = serde_json::from_str(pins).unwrap_or_default();
        let requirements = include_str!("../../../experiments/cases/requirements.txt");
        for case in CASES.iter().filter(|c| c.runtime == Runtime::Python) {
            let pin = format!("{}=={}", case.package, case.version);
            assert!(
                requirements.lines().any(|l| l.trim() == pin),
                "{pin} is pinned in experiments/cases/requirements.txt"
            );
        }
        for case in CASES.iter().filter(|c| c.runtime == Runtime::Node) {
            assert_eq!(
                pins["dependencies"][case.package].as_str(),
                Some(case.version),
                "{} is pinned in experiments/cases/package.json",
                case.package
            );
        }
    }
}
