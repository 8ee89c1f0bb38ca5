//! The one server a command talks to, and the one place it is opened.
//!
//! A server is either launched here, in a jail made from its [`JailSpec`],
//! or already running behind a Streamable HTTP endpoint, its stores then
//! observed in place. Every command (audit, plan, guidance, manifest pins,
//! the proxy) holds a [`Target`] and calls [`Target::open`]: that decides,
//! once, which jail there is (the copies, or the in-place view) and how a
//! fresh [`Connection`] is had ([`OpenTarget::connect`]: a launch in the
//! jail, or a new connection to the endpoint).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use witness_wire::clock::Clock;
use witness_wire::connection::Connection;
use witness_wire::http::Endpoint;

use crate::{Isolation, Jail, JailError, JailSpec, LaunchError, StoreKind, StoreSpec, connect};

/// Which one server a command talks to.
#[derive(Clone, Debug)]
pub enum Target {
    /// Launched here, in a jail made from `spec`.
    Launched {
        spec: JailSpec,
        /// Run on the stores themselves instead of copies (`proxy --live`):
        /// they are observed in place, `{NAME}` is a store's real path, and
        /// the sandbox lets the server write beneath their directories.
        live: bool,
    },
    /// Already running behind `endpoint`; it is not jailed, and `stores`
    /// are observed in place (read-only, never copied) while it writes them.
    Remote {
        endpoint: Endpoint,
        stores: Vec<StoreSpec>,
    },
}

impl Target {
    /// A server launched in a jail on copies of its stores.
    pub fn launched(spec: JailSpec) -> Self {
        Target::Launched { spec, live: false }
    }

    /// A server behind `endpoint`, its `stores` observed in place.
    pub fn remote(endpoint: Endpoint, stores: Vec<StoreSpec>) -> Self {
        Target::Remote { endpoint, stores }
    }

    /// The command that is launched; empty for a remote server.
    pub fn command(&self) -> &[String] {
        match self {
            Target::Launched { spec, .. } => &spec.command,
            Target::Remote { .. } => &[],
        }
    }

    /// The stores observed.
    pub fn stores(&self) -> &[StoreSpec] {
        match self {
            Target::Launched { spec, .. } => &spec.stores,
            Target::Remote { stores, .. } => stores,
        }
    }

    /// The variables a launched server gets (none for a remote one).
    pub fn env(&self) -> &[(String, String)] {
        match self {
            Target::Launched { spec, .. } => &spec.env,
            Target::Remote { .. } => &[],
        }
    }

    pub fn is_remote(&self) -> bool {
        matches!(self, Target::Remote { .. })
    }

    /// Whether a launched server runs on the real stores.
    pub fn is_live(&self) -> bool {
        matches!(self, Target::Launched { live: true, .. })
    }

    /// How the server is spoken to: `stdio` (launched) or `http`.
    pub fn transport(&self) -> &'static str {
        match self {
            Target::Launched { .. } => "stdio",
            Target::Remote { .. } => "http",
        }
    }

    /// The same server without its stores: for a command that only reads
    /// the catalog, where there is nothing to copy or observe.
    pub fn without_stores(&self) -> Self {
        let mut target = self.clone();
        match &mut target {
            Target::Launched { spec, .. } => spec.stores.clear(),
            Target::Remote { stores, .. } => stores.clear(),
        }
        target
    }

    /// Makes the jail: copies of the stores for a launched server, the
    /// stores in place for a live or remote one. Nothing is started yet.
    /// `timeout` bounds every exchange with a remote server (a launched
    /// server's requests are timed by the session).
    pub fn open(&self, timeout: Duration) -> Result<OpenTarget, JailError> {
        match self {
            Target::Launched { spec, live: false } => Ok(OpenTarget {
                reach: Reach::InJail,
                jail: Jail::create(spec.clone())?,
            }),
            Target::Launched { spec, live: true } => {
                let view = Jail::in_place(spec.stores.clone())?;
                let launch = JailSpec {
                    command: spec
                        .command
                        .iter()
                        .map(|arg| live_paths(arg, &spec.stores))
                        .collect(),
                    stores: Vec::new(),
                    ..spec.clone()
                };
                let mut beside = Jail::create(launch)?;
                beside
                    .also_writable(&live_dirs(&spec.stores))
                    .map_err(JailError::Writable)?;
                Ok(OpenTarget {
                    reach: Reach::Beside(Box::new(beside)),
                    jail: view,
                })
            }
            Target::Remote { endpoint, stores } => Ok(OpenTarget {
                reach: Reach::Endpoint(endpoint.clone(), timeout),
                jail: Jail::in_place(stores.clone())?,
            }),
        }
    }
}

/// How an opened target's server is reached.
enum Reach {
    /// Launched in the jail whose stores are observed.
    InJail,
    /// Launched in a jail of its own, beside the in-place view (live).
    // Boxed: a jail is large, and the target lives as long as the command.
    Beside(Box<Jail>),
    /// Connected to, afresh each time.
    Endpoint(Endpoint, Duration),
}

/// An opened target: the jail its stores are observed in, and a way to a
/// fresh connection to its server. Dropping it removes what was made.
pub struct OpenTarget {
    // Declared first, so a live server's jail goes before the view.
    reach: Reach,
    jail: Jail,
}

impl OpenTarget {
    /// The jail the stores are observed in: the copies, or the stores in place.
    pub fn jail(&self) -> &Jail {
        &self.jail
    }

    pub fn jail_mut(&mut self) -> &mut Jail {
        &mut self.jail
    }

    /// The jail whose stores were observed, for what outlives the server
    /// (a kept jail's path, the `{jail}` placeholder); anything else goes.
    pub fn into_jail(self) -> Jail {
        self.jail
    }

    pub fn is_remote(&self) -> bool {
        matches!(self.reach, Reach::Endpoint(..))
    }

    /// A fresh connection: a new server process in its jail, or a new
    /// connection to the endpoint.
    pub fn connect(&mut self, clock: Arc<dyn Clock>) -> Result<Connection, LaunchError> {
        match &mut self.reach {
            Reach::InJail => self.jail.launch(clock),
            Reach::Beside(jail) => jail.launch(clock),
            Reach::Endpoint(endpoint, timeout) => Ok(connect(endpoint, clock, *timeout)),
        }
    }

    /// The isolation the last launch achieved (a remote server's is stated
    /// from the start: none).
    pub fn isolation(&self) -> Option<&Isolation> {
        match &self.reach {
            Reach::Beside(jail) => jail.isolation(),
            Reach::InJail | Reach::Endpoint(..) => self.jail.isolation(),
        }
    }
}

/// Where a live server writes: a tree (a git repository too, `.git` inside)
/// itself; beside a file, its directory (SQLite's journal and WAL, a
/// JSON-lines file's replacement, are made there). A PostgreSQL store has
/// none: it cannot be observed in place, and the in-place view refuses it
/// first.
fn live_dirs(stores: &[StoreSpec]) -> Vec<PathBuf> {
    stores
        .iter()
        .filter_map(|store| match store.kind {
            StoreKind::Fs | StoreKind::Git => Some(store.source.clone()),
            StoreKind::Sqlite | StoreKind::Jsonl => match store.source.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => Some(parent.to_path_buf()),
                _ => Some(PathBuf::from(".")),
            },
            StoreKind::Postgres => None,
        })
        .collect()
}

/// `{NAME}` as the live path of store NAME (`{jail}` is left to the jail).
fn live_paths(arg: &str, stores: &[StoreSpec]) -> String {
    let mut out = arg.to_owned();
    for store in stores {
        out = out.replace(
            &format!("{{{}}}", store.name),
            &store.source.to_string_lossy(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str, kind: StoreKind, source: &std::path::Path) -> StoreSpec {
        StoreSpec {
            name: name.into(),
            kind,
            source: source.to_path_buf(),
            shown: None,
            clock_columns: Vec::new(),
        }
    }

    fn spec(command: &[&str], stores: Vec<StoreSpec>) -> JailSpec {
        JailSpec {
            command: command.iter().map(|s| s.to_string()).collect(),
            stores,
            env: vec![("K".into(), "v".into())],
            keep: false,
            isolate_network: false,
        }
    }

    #[test]
    fn a_launched_target_observes_copies_and_a_remote_one_the_stores_themselves() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let tree = dir.path().join("tree");
        assert!(std::fs::create_dir_all(&tree).is_ok());
        let stores = vec![store("files", StoreKind::Fs, &tree)];

        let launched = Target::launched(spec(&["server"], stores.clone()));
        assert_eq!(launched.transport(), "stdio");
        assert_eq!(launched.env().len(), 1);
        let Ok(opened) = launched.open(Duration::from_secs(1)) else {
            panic!("a jail is made");
        };
        assert!(!opened.is_remote());
        assert!(
            opened.jail().stores[0]
                .path
                .starts_with(opened.jail().root())
        );
        assert!(opened.isolation().is_none(), "nothing launched yet");

        let Ok(endpoint) = Endpoint::parse("http://127.0.0.1:9/mcp", false) else {
            panic!("a loopback endpoint parses");
        };
        let remote = Target::remote(endpoint, stores);
        assert!(remote.command().is_empty() && remote.env().is_empty());
        assert_eq!(remote.transport(), "http");
        let Ok(opened) = remote.open(Duration::from_secs(1)) else {
            panic!("an in-place view is made");
        };
        assert!(opened.is_remote());
        assert_eq!(opened.jail().stores[0].path, tree);
        assert_eq!(
            opened.isolation().map(|i| i.detail.as_str()),
            Some(crate::REMOTE_ISOLATION)
        );
        assert!(remote.without_stores().stores().is_empty());
    }

    #[test]
    fn a_live_target_observes_the_stores_in_place_and_names_their_real_paths() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let db = dir.path().join("notes.db");
        let stores = vec![store("db", StoreKind::Sqlite, &db)];
        assert_eq!(
            live_paths("--store={db}", &stores),
            format!("--store={}", db.display())
        );
        assert_eq!(live_dirs(&stores), [dir.path().to_path_buf()]);
        let live = Target::Launched {
            spec: spec(&["server", "{db}"], stores),
            live: true,
        };
        assert!(live.is_live() && !live.is_remote());
        let Ok(opened) = live.open(Duration::from_secs(1)) else {
            panic!("a live target opens");
        };
        assert_eq!(opened.jail().stores[0].path, db);
        assert!(!opened.is_remote());
    }

    #[test]
    fn a_live_store_whose_directory_is_missing_is_refused_in_one_line() {
        let missing = std::path::Path::new("/nonexistent/mcp-witness/notes.db");
        let live = Target::Launched {
            spec: spec(&["server"], vec![store("db", StoreKind::Sqlite, missing)]),
            live: true,
        };
        let Err(error) = live.open(Duration::from_secs(1)) else {
            panic!("a missing directory cannot be made writable");
        };
        let text = error.to_string();
        assert!(
            text.starts_with("a store's directory cannot be made writable: /nonexistent"),
            "{text}"
        );
        assert!(!text.contains('\n'));
    }
}
