//! The coverage table: which published servers, at which versions, how each
//! is launched, which store the experiment makes for it, the target,
//! and which failing checks are the server's real behaviour (with where
//! `docs/coverage.md` shows it). Everything else is measured.

use witness_jail::StoreKind;

use witness_engine::audit::stable::ClockText;

/// Where a server's package comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installer {
    /// `node_modules/.bin/<bin>`, pinned by `package-lock.json`.
    Npm { bin: &'static str },
    /// `venv/bin/python -m <module>`, pinned by `requirements.txt`.
    Pip { module: &'static str },
}

impl Installer {
    pub fn name(self) -> &'static str {
        match self {
            Installer::Npm { .. } => "npm",
            Installer::Pip { .. } => "pip",
        }
    }
}

/// The store the experiment makes for a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seed {
    /// A small project tree: docs, notes, code, a config file.
    Project,
    /// A knowledge graph of three entities and two relations.
    Graph,
    /// A shop: customers and their orders.
    Shop,
    /// A git repository with history, a second branch, and a staged, an
    /// unstaged and an untracked change.
    Repository,
}

impl Seed {
    pub fn kind(self) -> StoreKind {
        match self {
            Seed::Project => StoreKind::Fs,
            Seed::Repository => StoreKind::Git,
            Seed::Graph => StoreKind::Jsonl,
            Seed::Shop => StoreKind::Sqlite,
        }
    }

    /// What it holds, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Seed::Project => {
                "a project tree: README.md, docs/guide.md, notes/todo.txt, src/app.py, data/config.json"
            }
            Seed::Graph => {
                "a knowledge graph: three entities (two people, a machine) and two relations"
            }
            Seed::Shop => "a shop database: customers (2 rows) and orders (3 rows)",
            Seed::Repository => {
                "a git repository: two commits on main, a branch, a staged, an unstaged and an untracked change"
            }
        }
    }
}

/// The target for one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// At least this many tools exercised.
    AtLeast(usize),
    /// At least this share of the listed tools, in percent.
    Percent(usize),
}

impl Target {
    /// The least number of exercised tools out of `tools` that meets it.
    pub fn exercised(self, tools: usize) -> usize {
        match self {
            Target::AtLeast(n) => n,
            Target::Percent(p) => (tools * p).div_ceil(100),
        }
    }

    pub fn describe(self, tools: usize) -> String {
        match self {
            Target::AtLeast(n) if n == tools => format!("{n}/{tools}"),
            Target::AtLeast(n) => format!(">= {n}/{tools}"),
            Target::Percent(p) => format!(">= {p}% of {tools}"),
        }
    }
}

/// A failing check that is the server's real behaviour: which check on
/// which tool, the objects its evidence may name (prefixes), and why.
#[derive(Clone, Copy, Debug)]
pub struct Real {
    pub check: &'static str,
    pub tool: &'static str,
    pub objects: &'static [&'static str],
    pub why: &'static str,
}

/// One published server and how the experiment audits it.
#[derive(Clone, Copy, Debug)]
pub struct ServerSpec {
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub installer: Installer,
    /// Arguments after the program (`{NAME}` is the store's jailed path).
    pub args: &'static [&'static str],
    pub env: &'static [(&'static str, &'static str)],
    /// The store and its name in the audit; `None` for a server that keeps
    /// nothing an observer can read.
    pub seed: Option<(&'static str, Seed)>,
    pub target: Target,
    pub real: &'static [Real],
    /// Kinds of clock value the server answers with, replaced by a token in
    /// the written audit (as the case studies do).
    pub clock_text: &'static [ClockText],
    pub clock_columns: &'static [&'static str],
}

/// The servers, in the order they run.
pub const SERVERS: [ServerSpec; 6] = [
    ServerSpec {
        name: "filesystem",
        package: "@modelcontextprotocol/server-filesystem",
        version: "2026.8.31",
        installer: Installer::Npm {
            bin: "mcp-server-filesystem",
        },
        args: &["{fs}"],
        env: &[],
        seed: Some(("fs", Seed::Project)),
        target: Target::AtLeast(12),
        real: &[],
        clock_text: &[ClockText::JsDate],
        clock_columns: &[],
    },
    ServerSpec {
        name: "memory",
        package: "@modelcontextprotocol/server-memory",
        version: "2026.8.31",
        installer: Installer::Npm {
            bin: "mcp-server-memory",
        },
        args: &[],
        env: &[("MEMORY_FILE_PATH", "{mem}")],
        seed: Some(("mem", Seed::Graph)),
        target: Target::AtLeast(9),
        real: &[],
        clock_text: &[],
        clock_columns: &[],
    },
    ServerSpec {
        name: "database",
        package: "@executeautomation/database-server",
        version: "1.1.0",
        installer: Installer::Npm {
            bin: "ea-database-server",
        },
        args: &["{db}"],
        env: &[],
        seed: Some(("db", Seed::Shop)),
        target: Target::AtLeast(8),
        real: &[],
        clock_text: &[ClockText::SqlDateTime],
        clock_columns: &["mcp_insights.created_at"],
    },
    ServerSpec {
        name: "everything",
        package: "@modelcontextprotocol/server-everything",
        version: "2026.8.31",
        installer: Installer::Npm {
            bin: "mcp-server-everything",
        },
        args: &["stdio"],
        env: &[],
        seed: None,
        target: Target::Percent(80),
        real: &[],
        clock_text: &[],
        clock_columns: &[],
    },
    ServerSpec {
        name: "time",
        package: "mcp-server-time",
        version: "2026.10.19",
        installer: Installer::Pip {
            module: "mcp_server_time",
        },
        args: &[],
        env: &[],
        seed: None,
        target: Target::AtLeast(2),
        real: &[],
        clock_text: &[ClockText::SqlDateTime],
        clock_columns: &[],
    },
    ServerSpec {
        name: "git",
        package: "mcp-server-git",
        version: "2026.10.19",
        installer: Installer::Pip {
            module: "mcp_server_git",
        },
        args: &["--repository", "{repo}"],
        env: &[],
        seed: Some(("repo", Seed::Repository)),
        target: Target::AtLeast(10),
        // Observed as git sees it (a `git` store), staging, switching
        // branches and committing destroy nothing: no failure needs
        // explaining. Seen as a plain directory they failed EFF-02 on
        // .git/index, .git/HEAD and the branch's ref file.
        real: &[],
        clock_text: &[ClockText::SqlDateTime],
        clock_columns: &[],
    },
];

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn targets_round_up_to_whole_tools() {
        assert_eq!(Target::Percent(80).exercised(13), 11);
        assert_eq!(Target::Percent(80).exercised(10), 8);
        assert_eq!(Target::AtLeast(12).exercised(14), 12);
        assert_eq!(Target::AtLeast(9).describe(9), "9/9");
        assert_eq!(Target::AtLeast(12).describe(14), ">= 12/14");
        assert_eq!(Target::Percent(80).describe(13), ">= 80% of 13");
    }

    #[test]
    fn every_server_is_pinned_where_its_installer_pins_it() {
        let npm: Value =
            serde_json::from_str(include_str!("../../../experiments/cases/package.json"))
                .unwrap_or_default();
        let pip = include_str!("../../../experiments/cases/requirements.txt");
        for server in SERVERS {
            match server.installer {
                Installer::Npm { .. } => assert_eq!(
                    npm["dependencies"][server.package].as_str(),
                    Some(server.version),
                    "{}",
                    server.package
                ),
                Installer::Pip { .. } => assert!(
                    pip.lines()
                        .any(|l| l == format!("{}=={}", server.package, server.version)),
                    "{} is pinned in requirements.txt",
                    server.package
                ),
            }
        }
    }
}
