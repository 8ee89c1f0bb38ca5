//! The stores a server is handed: as declared (`--store NAME=KIND:PATH`)
//! and as copied into the jail.

use std::path::{Path, PathBuf};

use serde::Serialize;

use witness_observers::sqlite::ClockColumn;
use witness_text::clip;

/// The kind of store, which decides the observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Sqlite,
    Fs,
    Jsonl,
    /// A git repository (its working directory, `.git` inside), observed as
    /// git sees it: refs, index, worktree, stash, object counts.
    Git,
    /// A throwaway PostgreSQL cluster restored from a SQL file or a
    /// `pg_dump` archive (see `witness_postgres`).
    Postgres,
}

impl StoreKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sqlite" => Some(Self::Sqlite),
            "fs" | "dir" => Some(Self::Fs),
            "jsonl" => Some(Self::Jsonl),
            "git" => Some(Self::Git),
            "postgres" | "postgresql" => Some(Self::Postgres),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Fs => "fs",
            Self::Jsonl => "jsonl",
            Self::Git => "git",
            Self::Postgres => "postgres",
        }
    }
}

/// A store as the user declared it: `--store NAME=KIND:PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreSpec {
    pub name: String,
    pub kind: StoreKind,
    pub source: PathBuf,
    /// How the report names the source, when its real path is incidental
    /// (the lab's temporary seed files); `None` shows the path.
    pub shown: Option<String>,
    /// Columns the server fills from the clock (SQLite stores only): the
    /// observer digests a clock value there as one stand-in, so digests do
    /// not depend on when the audit ran (see `witness_observers::sqlite`).
    pub clock_columns: Vec<ClockColumn>,
}

impl StoreSpec {
    /// Parses `NAME=KIND:PATH`. Errors are one line, for exit code 2.
    pub fn parse(text: &str) -> Result<Self, String> {
        // A connection string may carry a password: errors show a
        // placeholder in its place, never the text.
        let shown = match text.find("://") {
            Some(at) => {
                let cut = text[..at].rfind(':').map_or(0, |i| i + 1);
                format!("{}<connection string>", &text[..cut])
            }
            None => text.to_owned(),
        };
        let (name, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("--store {shown:?}: expected NAME=KIND:PATH"))?;
        let (kind, path) = rest
            .split_once(':')
            .ok_or_else(|| format!("--store {shown:?}: expected NAME=KIND:PATH"))?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "--store {shown:?}: the name must be letters, digits, '_' or '-'"
            ));
        }
        if name == witness_model::audit::JAIL_STORE {
            return Err(format!(
                "--store {shown:?}: the name {name:?} is reserved for the jail-wide observer"
            ));
        }
        let kind = StoreKind::parse(kind).ok_or_else(|| {
            format!(
                "--store {shown:?}: unknown kind {kind:?} (expected sqlite, fs, jsonl, git or postgres)"
            )
        })?;
        if path.is_empty() {
            return Err(format!("--store {shown:?}: empty path"));
        }
        if kind == StoreKind::Postgres && witness_postgres::Source::is_live(path) {
            // Never echo the text: it would show the password.
            witness_postgres::Source::live(path).map_err(|e| format!("--store {name}: {e}"))?;
        }
        Ok(Self {
            name: name.into(),
            kind,
            source: PathBuf::from(path),
            shown: None,
            clock_columns: Vec::new(),
        })
    }
}

/// Parses `K=V` pairs given with `flag` (`--env`, `--server-env`). Errors
/// are one line for exit code 2 and never echo a value: it may be a secret.
pub fn parse_env_pairs(flag: &str, pairs: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut env = Vec::new();
    for pair in pairs {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(format!("{flag} {:?}: expected K=V", clip(pair, 60)));
        };
        if k.is_empty() || k.contains('\0') || v.contains('\0') {
            return Err(format!("{flag} {:?}: invalid name or value", clip(k, 60)));
        }
        env.push((k.to_owned(), v.to_owned()));
    }
    Ok(env)
}

/// A store's copy inside the jail.
#[derive(Clone, Debug)]
pub struct JailedStore {
    pub spec: StoreSpec,
    /// Where the copy is: the file or tree the server is handed, or a
    /// PostgreSQL store's cluster directory.
    pub path: PathBuf,
    /// Whether the source existed and was copied (else the store starts empty).
    pub existed: bool,
}

impl JailedStore {
    /// What `{NAME}` expands to: the copy's path, or for a PostgreSQL store
    /// a connection string to its cluster's socket.
    pub fn handle(&self) -> String {
        match self.spec.kind {
            StoreKind::Postgres => {
                witness_postgres::cluster::connection_string(&postgres_socket_dir(&self.path))
            }
            _ => self.path.to_string_lossy().into_owned(),
        }
    }
}

/// Where a PostgreSQL store's cluster (in `dir`) keeps its socket.
pub fn postgres_socket_dir(dir: &Path) -> PathBuf {
    witness_postgres::cluster::socket_dir_of(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_specs_parse_and_reject_with_one_line() {
        let spec = StoreSpec::parse("db=sqlite:/tmp/x.db").map_err(|e| e.to_string());
        assert_eq!(
            spec,
            Ok(StoreSpec {
                name: "db".into(),
                kind: StoreKind::Sqlite,
                source: "/tmp/x.db".into(),
                shown: None,
                clock_columns: Vec::new(),
            })
        );
        assert!(StoreSpec::parse("db").is_err());
        assert!(StoreSpec::parse("db=oracle:/x").is_err());
        assert!(StoreSpec::parse("d b=sqlite:/x").is_err());
        assert!(StoreSpec::parse("db=sqlite:").is_err());
        assert!(StoreSpec::parse("jail=fs:/x").is_err());
        // A live PostgreSQL source is taken without a password, and refused
        // with one, without echoing it.
        assert!(StoreSpec::parse("db=postgres:postgresql://reader@db.example/app").is_ok());
        let error = StoreSpec::parse("db=postgres:postgresql://reader:hunter2@db.example/app")
            .err()
            .unwrap_or_default();
        assert!(error.contains("must not carry a password"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        let error = StoreSpec::parse("db=postgress:postgresql://reader:hunter2@db.example/app")
            .err()
            .unwrap_or_default();
        assert!(error.contains("<connection string>"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[test]
    fn env_pairs_parse_and_errors_never_echo_a_value() {
        let pairs = vec!["A=1".to_string(), "B=x=y".to_string()];
        assert_eq!(
            parse_env_pairs("--env", &pairs),
            Ok(vec![("A".into(), "1".into()), ("B".into(), "x=y".into())])
        );
        assert!(parse_env_pairs("--env", &["NOEQUALS".into()]).is_err());
        let error = parse_env_pairs("--env", &["=hunter2-secret".into()]).unwrap_err();
        assert!(!error.contains("hunter2"), "{error}");
    }
}
