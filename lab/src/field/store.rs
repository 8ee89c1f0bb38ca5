//! The fresh store each audit of the field study starts from.
//!
//! Where witness.toml lists `[[seed.calls]]`, the server writes its own
//! store: it is started once in a jail like the audit's (network-isolated)
//! on an empty store of each declared kind, after `[seed] init` where there
//! is one, the calls are made, and the jailed stores are copied out; every
//! audit of the server then starts from a copy of that. Elsewhere the lab
//! makes a small realistic store of the declared kind directly: a notes
//! vault, a folder of office documents ([`super::documents`]) or a project
//! tree (fs), the shop database (sqlite, postgres), a
//! knowledge graph (jsonl), a repository with history (git).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use witness_jail::{Jail, JailSpec, StoreKind, StoreSpec};
use witness_model::vocab::EraChoice;
use witness_wire::clock::MonotonicClock;
use witness_wire::session::{CallOutcome, Session};

use super::entry::{SeedCall, StoreDecl};
use crate::coverage::seed as coverage_seed;
use crate::coverage::table::Seed as CoverageSeed;

/// The shop on the throwaway cluster: customers, and orders with a foreign
/// key to them.
const SHOP_SQL: &str = "\
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, email text);
CREATE TABLE orders (
    id integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers(id),
    total_cents integer NOT NULL,
    status text NOT NULL DEFAULT 'open');
INSERT INTO customers VALUES
    (1, 'Ada Lovelace', 'ada@example.invalid'),
    (2, 'Charles Babbage', 'charles@example.invalid'),
    (3, 'Grace Hopper', 'grace@example.invalid');
INSERT INTO orders VALUES
    (1, 1, 1250, 'open'), (2, 2, 4000, 'shipped'), (3, 1, 990, 'open'), (4, 3, 15000, 'open');
";

/// Notes in folders, for the note, memory and task servers' directories.
const NOTES: [(&str, &str); 5] = [
    (
        "Daily/2026-01-05.md",
        "# 2026-01-05\n\nCalled the vet. See [[Gate]].\n",
    ),
    (
        "Projects/Gate.md",
        "---\nstatus: open\n---\n# Gate\n\nThe hinge is rusted; a new one is ordered.\n\n- [ ] fit the hinge\n- [x] buy the hinge\n",
    ),
    ("Projects/Garden.md", "# Garden\n\nBeans by the fence.\n"),
    ("Ideas.md", "# Ideas\n\n- a rain barrel\n- a bird box\n"),
    ("README.md", "# Notes\n\nThe household's notes.\n"),
];

/// The store kind a `[[stores]]` `kind` names.
pub fn kind(decl: &StoreDecl) -> Result<StoreKind, String> {
    StoreKind::parse(&decl.kind)
        .ok_or_else(|| format!("store {}: unknown kind {:?}", decl.name, decl.kind))
}

/// Where a declared store is made under `dir`: `dir/<name>/` for a
/// directory, `dir/<name>/<file>` for a file.
fn place(decl: &StoreDecl, kind: StoreKind, dir: &Path) -> PathBuf {
    let base = dir.join(&decl.name);
    let default_file = match kind {
        StoreKind::Sqlite => Some("store.db"),
        StoreKind::Jsonl => Some("store.jsonl"),
        StoreKind::Postgres => Some("seed.sql"),
        StoreKind::Fs | StoreKind::Git => None,
    };
    match decl.file.as_deref().or(default_file) {
        Some(file) => base.join(file),
        None => base,
    }
}

fn io(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("cannot make {what}: {e}")
}

/// A store the server fills itself: empty but valid, as the probe made it.
fn make_empty(kind: StoreKind, path: &Path, dir: &Path) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("a store"))?;
    }
    match kind {
        StoreKind::Fs => std::fs::create_dir_all(path).map_err(io("a directory store")),
        StoreKind::Jsonl => std::fs::write(path, "").map_err(io("a JSON-lines store")),
        StoreKind::Sqlite => rusqlite::Connection::open(path)
            .and_then(|c| c.execute_batch("PRAGMA user_version = 0;"))
            .map_err(|e| format!("cannot make a SQLite store: {e}")),
        StoreKind::Postgres => std::fs::write(path, SHOP_SQL).map_err(io("the shop's SQL")),
        StoreKind::Git => {
            let made = coverage_seed::make(CoverageSeed::Repository, dir)?;
            move_to(&made, path)
        }
    }
}

/// A store the lab fills: a small realistic one of the kind. `server_kind`
/// (notes, files, ...) picks a directory's content.
fn make_filled(kind: StoreKind, path: &Path, dir: &Path, server_kind: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("a store"))?;
    }
    match kind {
        StoreKind::Fs => match server_kind {
            "documents" => super::documents::write(path),
            "files" | "git" => {
                let made = coverage_seed::make(CoverageSeed::Project, dir)?;
                move_to(&made, path)
            }
            _ => coverage_seed::write_tree(path, &NOTES),
        },
        StoreKind::Jsonl => {
            let made = coverage_seed::make(CoverageSeed::Graph, dir)?;
            move_to(&made, path)
        }
        StoreKind::Sqlite => coverage_seed::shop(path),
        StoreKind::Postgres => std::fs::write(path, SHOP_SQL).map_err(io("the shop's SQL")),
        StoreKind::Git => {
            let made = coverage_seed::make(CoverageSeed::Repository, dir)?;
            move_to(&made, path)
        }
    }
}

fn move_to(from: &Path, to: &Path) -> Result<(), String> {
    if from == to {
        return Ok(());
    }
    std::fs::rename(from, to).map_err(|e| format!("cannot place a store: {e}"))
}

/// What the seed made: the stores every audit copies.
pub struct Seeded {
    pub stores: Vec<StoreSpec>,
    /// The seed calls that ran (0 where the lab made the store).
    pub calls: usize,
}

/// How a server is launched, for the seed's session.
pub struct Launch<'a> {
    /// The program with its arguments.
    pub command: Vec<String>,
    /// The directory of the package's executables, where an initialiser
    /// named without a path is found.
    pub bin_dir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub init: &'a [String],
    pub timeout: Duration,
}

/// Makes the stores under `dir` (fresh, empty), through the server's seed
/// calls where there are any.
pub fn make(
    decls: &[StoreDecl],
    calls: &[SeedCall],
    server_kind: &str,
    description: &str,
    launch: &Launch<'_>,
    dir: &Path,
) -> Result<Seeded, String> {
    let base = dir.join("base");
    let mut stores = Vec::new();
    // A PostgreSQL store is made from SQL: a cluster cannot be copied out
    // of the seed's jail, so its server's seed calls do not run.
    let through_server = !calls.is_empty() && decls.iter().all(|d| d.kind != "postgres");
    for decl in decls {
        let kind = kind(decl)?;
        let path = place(decl, kind, &base);
        let scratch = dir.join(format!("scratch-{}", decl.name));
        std::fs::create_dir_all(&scratch).map_err(io("a scratch directory"))?;
        if through_server {
            make_empty(kind, &path, &scratch)?;
        } else {
            make_filled(kind, &path, &scratch, server_kind)?;
        }
        stores.push(StoreSpec {
            name: decl.name.clone(),
            kind,
            source: path,
            shown: Some(description.to_owned()),
            clock_columns: Vec::new(),
        });
    }
    if !through_server {
        return Ok(Seeded { stores, calls: 0 });
    }
    let stores = seed_through_server(stores, calls, launch, &dir.join("seeded"))?;
    Ok(Seeded {
        stores,
        calls: calls.len(),
    })
}

/// `{NAME}` in every string of `value` expanded by the jail.
fn expand(value: &Value, jail: &Jail) -> Value {
    match value {
        Value::String(s) => Value::String(jail.expand(s)),
        Value::Array(a) => Value::Array(a.iter().map(|v| expand(v, jail)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), expand(v, jail)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The command the seed's jail runs: the server, after the package's own
/// initialiser where there is one (its output kept off the MCP stream).
fn seed_command(command: &[String], init: &[String], bin_dir: Option<&Path>) -> Vec<String> {
    if init.is_empty() {
        return command.to_vec();
    }
    let quote = |w: &String| crate::cases::shell_word(Path::new(w));
    // The initialiser is the package's, beside the server's program.
    let mut first = init.to_vec();
    if let (Some(dir), Some(name)) = (bin_dir, first.first_mut())
        && !name.contains('/')
    {
        *name = dir.join(&*name).to_string_lossy().into_owned();
    }
    let script = format!(
        "{} >&2 </dev/null && exec \"$@\"",
        first.iter().map(quote).collect::<Vec<_>>().join(" ")
    );
    let mut wrapped = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        script,
        "seed".to_owned(),
    ];
    wrapped.extend(command.iter().cloned());
    wrapped
}

fn seed_through_server(
    stores: Vec<StoreSpec>,
    calls: &[SeedCall],
    launch: &Launch<'_>,
    out: &Path,
) -> Result<Vec<StoreSpec>, String> {
    let mut jail = Jail::create(JailSpec {
        command: seed_command(&launch.command, launch.init, launch.bin_dir.as_deref()),
        stores: stores.clone(),
        env: launch.env.clone(),
        keep: false,
        isolate_network: true,
    })
    .map_err(|e| format!("seed: {e}"))?;
    let clock = Arc::new(MonotonicClock::start());
    let opened = Session::open(
        &mut || jail.launch(clock.clone()).map_err(|e| e.to_string()),
        EraChoice::Legacy,
        launch.timeout,
    );
    let mut session = match opened {
        Ok((session, _)) => session,
        Err((e, mut connections)) => {
            let tail = connections
                .last_mut()
                .and_then(|c| c.stderr_tail(5))
                .unwrap_or_default();
            return Err(format!("seed: the server did not start: {e} {tail}"));
        }
    };
    let mut failed = None;
    for call in calls {
        let arguments = expand(&call.arguments, &jail);
        let why = match session.call_tool(&call.tool, &arguments) {
            CallOutcome::Result(r) if r.get("isError").and_then(Value::as_bool) == Some(true) => {
                Some(format!("answered isError: {}", clip(&r.to_string())))
            }
            CallOutcome::Result(_) => None,
            CallOutcome::RpcError { code, message } => {
                Some(format!("JSON-RPC error {code}: {}", clip(&message)))
            }
            CallOutcome::Transport(e) => Some(e),
            CallOutcome::InputRequired { detail, .. } => Some(format!(
                "asked for input the seeding client does not give: {detail}"
            )),
        };
        if let Some(why) = why {
            failed = Some(format!("seed call {}: {why}", call.tool));
            break;
        }
    }
    session.server.shutdown();
    if let Some(why) = failed {
        return Err(why);
    }
    let mut seeded = Vec::new();
    for store in stores {
        let jailed = PathBuf::from(jail.expand(&format!("{{{}}}", store.name)));
        let name = store
            .source
            .file_name()
            .map_or_else(|| store.name.clone(), |n| n.to_string_lossy().into_owned());
        let target = out.join(&store.name).join(name);
        if jailed.is_dir() {
            witness_jail::copy::copy_tree(&jailed, &target)
                .map_err(|e| format!("cannot copy the seeded store {}: {e}", store.name))?;
        } else {
            std::fs::create_dir_all(out.join(&store.name)).map_err(io("the seeded store"))?;
            witness_jail::copy::copy_store_file(&jailed, &target)
                .map_err(|e| format!("cannot copy the seeded store {}: {e}", store.name))?;
        }
        seeded.push(StoreSpec {
            source: target,
            ..store
        });
    }
    Ok(seeded)
}

fn clip(text: &str) -> String {
    let mut t: String = text.chars().take(200).collect();
    if t.len() < text.len() {
        t.push('…');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_initialiser_runs_beside_the_server_before_it_starts() {
        let command = vec!["/c/venv/bin/tasker".to_owned(), "mcp".to_owned()];
        let bin = Some(Path::new("/c/venv/bin"));
        assert_eq!(seed_command(&command, &[], bin), command);
        let wrapped = seed_command(
            &command,
            &["tasker".to_owned(), "init".to_owned(), "--user".to_owned()],
            bin,
        );
        assert_eq!(wrapped[0], "/bin/sh");
        assert!(
            wrapped[2].starts_with("/c/venv/bin/tasker init --user >&2"),
            "{}",
            wrapped[2]
        );
        assert_eq!(
            wrapped[4..],
            ["/c/venv/bin/tasker", "mcp"],
            "then the server, arguments and all"
        );
    }

    #[test]
    fn lab_made_stores_are_realistic_for_their_kind() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let decls = [
            StoreDecl {
                name: "vault".into(),
                kind: "fs".into(),
                file: None,
            },
            StoreDecl {
                name: "db".into(),
                kind: "sqlite".into(),
                file: Some("tasks.db".into()),
            },
        ];
        let launch = Launch {
            command: Vec::new(),
            bin_dir: None,
            env: Vec::new(),
            init: &[],
            timeout: Duration::from_secs(1),
        };
        let seeded = make(&decls, &[], "notes", "notes", &launch, dir.path())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(seeded.calls, 0);
        assert!(seeded.stores[0].source.join("Projects/Gate.md").is_file());
        assert!(seeded.stores[1].source.ends_with("db/tasks.db"));
        let rows: i64 = rusqlite::Connection::open(&seeded.stores[1].source)
            .and_then(|c| c.query_row("SELECT count(*) FROM orders", [], |r| r.get(0)))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows, 3);
    }
}
