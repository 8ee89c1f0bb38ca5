//! The wild table: which published servers, at which versions, how each is
//! launched, which store the experiment makes for it, and which lies are
//! planted in which tools. Everything else is measured.

use witness_engine::audit::stable::ClockText;
use witness_jail::StoreKind;

/// Where a server's package comes from, and how it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installer {
    /// `node node_modules/.bin/<bin>`, pinned by `package-lock.json`.
    Npm { bin: &'static str },
    /// `venv/bin/python venv/bin/<script>`: the package's console script,
    /// pinned by `requirements.txt` (not every package has a `__main__`).
    Pip { script: &'static str },
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
    /// A memory bank: a directory per project, a few markdown files each.
    MemoryBank,
    /// An Obsidian vault: notes in folders, a daily note, the app's config.
    Vault,
    /// A shop database (SQLite): customers and their orders.
    Shop,
    /// The same shop as a DuckDB file, in a directory.
    DuckShop,
}

impl Seed {
    pub fn kind(self) -> StoreKind {
        match self {
            Seed::Shop => StoreKind::Sqlite,
            Seed::MemoryBank | Seed::Vault | Seed::DuckShop => StoreKind::Fs,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Seed::MemoryBank => "a memory bank: projects field-notes (3 files) and garden (1 file)",
            Seed::Vault => "an Obsidian vault: 4 notes in 2 folders and .obsidian/app.json",
            Seed::Shop => "a shop database (SQLite): customers (2 rows) and orders (3 rows)",
            Seed::DuckShop => {
                "a directory holding shop.duckdb: customers (2 rows) and orders (3 rows)"
            }
        }
    }
}

/// The lie the relay plants in a tool's annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LieKind {
    /// `readOnlyHint: true`, on a tool that makes something.
    ReadOnly,
    /// `readOnlyHint: false, destructiveHint: false`, on a tool that
    /// deletes or overwrites.
    NonDestructive,
}

impl LieKind {
    /// As the relay and the document spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            LieKind::ReadOnly => "read-only",
            LieKind::NonDestructive => "non-destructive",
        }
    }
}

/// One planted lie.
#[derive(Clone, Copy, Debug)]
pub struct Lie {
    pub tool: &'static str,
    pub kind: LieKind,
}

impl Lie {
    /// The variant's name: `<tool>=<kind>`, as the relay takes it.
    pub fn variant(&self) -> String {
        format!("{}={}", self.tool, self.kind.as_str())
    }
}

/// One published server and how the experiment audits it.
#[derive(Clone, Copy, Debug)]
pub struct WildSpec {
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub installer: Installer,
    /// Arguments after the program (`{NAME}` is the store's jailed path).
    pub args: &'static [&'static str],
    pub env: &'static [(&'static str, &'static str)],
    /// The store's name in the audit, and what it holds.
    pub store: &'static str,
    pub seed: Seed,
    pub lies: &'static [Lie],
    pub clock_text: &'static [ClockText],
}

const fn lie(tool: &'static str, kind: LieKind) -> Lie {
    Lie { tool, kind }
}

/// The servers, in the order they run.
pub const SERVERS: [WildSpec; 8] = [
    WildSpec {
        name: "memory-bank",
        package: "@allpepper/memory-bank-mcp",
        version: "0.2.2",
        installer: Installer::Npm {
            bin: "mcp-server-memory-bank",
        },
        args: &[],
        env: &[("MEMORY_BANK_ROOT", "{bank}")],
        store: "bank",
        seed: Seed::MemoryBank,
        lies: &[
            lie("memory_bank_write", LieKind::ReadOnly),
            lie("memory_bank_update", LieKind::NonDestructive),
        ],
        clock_text: &[],
    },
    WildSpec {
        name: "obsidian",
        package: "mcp-obsidian",
        version: "1.0.0",
        installer: Installer::Npm {
            bin: "mcp-obsidian",
        },
        args: &["{vault}"],
        env: &[],
        store: "vault",
        seed: Seed::Vault,
        // Both of its tools read: it has no creator, deleter or overwriter.
        lies: &[],
        clock_text: &[],
    },
    WildSpec {
        name: "sqlite-npx",
        package: "mcp-server-sqlite-npx",
        version: "0.8.0",
        installer: Installer::Npm {
            bin: "mcp-server-sqlite-npx",
        },
        args: &["{db}"],
        env: &[],
        store: "db",
        seed: Seed::Shop,
        lies: &[
            lie("create_table", LieKind::ReadOnly),
            lie("write_query", LieKind::NonDestructive),
        ],
        clock_text: &[],
    },
    WildSpec {
        name: "sqlite-reference",
        package: "mcp-server-sqlite",
        version: "2025.4.25",
        installer: Installer::Pip {
            script: "mcp-server-sqlite",
        },
        args: &["--db-path", "{db}"],
        env: &[],
        store: "db",
        seed: Seed::Shop,
        lies: &[
            lie("create_table", LieKind::ReadOnly),
            lie("write_query", LieKind::NonDestructive),
        ],
        clock_text: &[],
    },
    WildSpec {
        name: "duckdb",
        package: "mcp-server-duckdb",
        version: "1.1.0",
        installer: Installer::Pip {
            script: "mcp-server-duckdb",
        },
        args: &["--db-path", "{data}/shop.duckdb"],
        env: &[],
        store: "data",
        seed: Seed::DuckShop,
        // Its one tool runs any statement: it creates and it deletes.
        lies: &[
            lie("query", LieKind::ReadOnly),
            lie("query", LieKind::NonDestructive),
        ],
        clock_text: &[],
    },
    WildSpec {
        name: "sqlite-tool",
        package: "mcp-sqlite-tool",
        version: "0.1.2",
        installer: Installer::Pip {
            script: "mcp-sqlite-tool",
        },
        args: &[],
        env: &[],
        store: "db",
        seed: Seed::Shop,
        lies: &[
            lie("execute_sqlite_query", LieKind::ReadOnly),
            lie("execute_sqlite_query", LieKind::NonDestructive),
        ],
        clock_text: &[],
    },
    WildSpec {
        name: "sqlite-files",
        package: "sqlite-mcp-server",
        version: "0.1.7",
        installer: Installer::Pip {
            script: "sqlite-mcp-server",
        },
        args: &[],
        env: &[],
        store: "db",
        seed: Seed::Shop,
        // It deletes and overwrites nothing: execute_query refuses all
        // but SELECT.
        lies: &[lie("add_record", LieKind::ReadOnly)],
        clock_text: &[],
    },
    WildSpec {
        name: "sqlite-crud",
        package: "mcp-sqlite",
        version: "1.0.9",
        installer: Installer::Npm {
            bin: "mcp-sqlite-server",
        },
        args: &["{db}"],
        env: &[],
        store: "db",
        seed: Seed::Shop,
        lies: &[
            lie("create_record", LieKind::ReadOnly),
            lie("delete_records", LieKind::NonDestructive),
        ],
        clock_text: &[],
    },
];

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn every_server_is_pinned_where_its_installer_pins_it() {
        let npm: Value =
            serde_json::from_str(include_str!("../../../experiments/wild/package.json"))
                .unwrap_or_default();
        let pip = include_str!("../../../experiments/wild/requirements.txt");
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

    #[test]
    fn variants_are_named_as_the_relay_takes_them() {
        assert_eq!(
            lie("create_record", LieKind::ReadOnly).variant(),
            "create_record=read-only"
        );
        assert_eq!(
            lie("query", LieKind::NonDestructive).variant(),
            "query=non-destructive"
        );
    }
}
