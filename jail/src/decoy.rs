//! Decoys in the place of the stores' originals: how a write the sandbox
//! keeps from the user's data becomes evidence.
//!
//! The sandbox hides each store's original (the file or directory the user
//! named with `--store`, which a server may read off its command line). A
//! write there used to fail quietly: refused, and so not seen. Inside
//! bubblewrap's mount namespace the original's path instead holds a decoy:
//! an empty file or directory, bound writable from `{jail}/decoys` (a
//! directory the server does not see and the jail-wide observer does not
//! watch). The write succeeds into the decoy, the original is untouched,
//! and after each call the decoys are compared with their state before it:
//! whatever changed is a write the server attempted on the original.
//!
//! Where a whole directory can stand in (the original's directory is
//! nothing the server would otherwise see), the decoy is that directory,
//! so that a database's journal beside the file lands there too and the
//! write goes through; where it cannot (the directory is part of the
//! system's runtime, the server's install, an `--ro-bind` path, or holds
//! the jail), only the files are replaced, and a writer that needs to
//! create a file beside them is refused unseen. A decoy is empty, so a
//! server that reads the original sees no data, as behind `/dev/null`.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::jail::{WITH_COMPANIONS, with_suffix};
use crate::{JailedStore, StoreKind};

/// The jail's directory that holds the decoys, outside what the jail-wide
/// observer watches (`home`, `tmp`, `work`, `stores`).
pub(crate) const DIR: &str = "decoys";

/// At most this many entries of one decoy are compared; a server that
/// fills a decoy past it has made its point, and the rest is not walked.
const MAX_ENTRIES: usize = 10_000;

/// At most this many paths are reported for one window; the rest are
/// counted in one line.
const MAX_REPORTED: usize = 20;

/// One decoy: where the server sees it, where it lives, and its state.
#[derive(Debug)]
pub(crate) struct Decoy {
    /// The original's path (or its directory) in the sandbox.
    pub(crate) at: PathBuf,
    /// The decoy on the host, bound at `at`.
    pub(crate) source: PathBuf,
    /// How the report names `at`: the store's source as the report shows it
    /// (or its directory), so no machine-specific temporary path enters it.
    shown: PathBuf,
    /// The state after the last comparison.
    state: State,
}

/// Every entry of a decoy, by its path relative to the decoy.
type State = BTreeMap<PathBuf, Stamp>;

/// What says an entry changed: its type, and for a file its identity,
/// size and modification and change times (a read changes none of them;
/// any write, truncate or chmod changes one); for a link its target.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stamp {
    Dir,
    File {
        ino: u64,
        len: u64,
        mtime: (i64, i64),
        ctime: (i64, i64),
    },
    Link(PathBuf),
    Other,
}

/// The decoys of one jail: made once, at its first sandboxed launch, and
/// kept across restarts (a restarted server's writes are compared with what
/// the last one left).
#[derive(Debug, Default)]
pub(crate) struct Decoys {
    pub(crate) decoys: Vec<Decoy>,
}

/// A store's original as the decoys need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Original {
    /// The original's real path (its directory made canonical).
    pub(crate) path: PathBuf,
    /// A directory store (a tree or a repository), else a file.
    pub(crate) tree: bool,
    /// Whether it exists on the host.
    pub(crate) exists: bool,
    /// How the report names it.
    pub(crate) shown: PathBuf,
}

impl Original {
    /// The originals of `stores` a server could try to write: the file of
    /// a SQLite or JSONL store with the companions SQLite keeps beside it,
    /// and the directory of a tree or repository. A PostgreSQL store's
    /// source is a dump restored into the jail's own cluster, not a store
    /// the server is pointed at.
    pub(crate) fn of_stores(stores: &[JailedStore]) -> Vec<Original> {
        let mut originals = Vec::new();
        for store in stores {
            let source = &store.spec.source;
            let shown = PathBuf::from(
                store
                    .spec
                    .shown
                    .clone()
                    .unwrap_or_else(|| source.to_string_lossy().into_owned()),
            );
            let tree = match store.spec.kind {
                StoreKind::Fs | StoreKind::Git => true,
                StoreKind::Sqlite | StoreKind::Jsonl => false,
                StoreKind::Postgres => continue,
            };
            let Some(path) = real_path(source) else {
                continue;
            };
            if tree {
                originals.push(Original {
                    exists: path.is_dir(),
                    path,
                    tree,
                    shown,
                });
                continue;
            }
            for suffix in WITH_COMPANIONS {
                let companion = with_suffix(&path, suffix);
                let exists = std::fs::metadata(&companion).is_ok_and(|m| m.is_file());
                if suffix.is_empty() || exists {
                    originals.push(Original {
                        path: companion,
                        tree,
                        exists,
                        shown: with_suffix(&shown, suffix),
                    });
                }
            }
        }
        originals
    }
}

/// `path` with its directory made canonical (the file itself need not
/// exist: a store the server is to create), or `None` when the directory
/// does not exist either.
fn real_path(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty())?;
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

/// Where each decoy goes, before anything is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// The path in the sandbox.
    pub(crate) at: PathBuf,
    /// A directory, seeded with these entries (relative; `true` for a
    /// directory), or a lone empty file when `None`.
    pub(crate) seed: Option<Vec<(PathBuf, bool)>>,
    pub(crate) shown: PathBuf,
}

/// Where the decoys for `originals` go, given what the sandbox binds
/// anyway: `views`, what it shows of the host or binds from it (the
/// system's runtime, the server's install, `--ro-bind` paths, `/proc`, the
/// jail, the helper), and `mounts`, its own tmpfs mounts (`/tmp`, `/dev`).
/// A directory decoy is never beneath a view (it would hide the server's
/// own files, or land in the jail) nor above a view or a mount (it would
/// hide them all); beneath a mount it is placed on the sandbox's tmpfs. A
/// file decoy goes anywhere an original file exists.
pub(crate) fn place(
    originals: &[Original],
    views: &[PathBuf],
    mounts: &[PathBuf],
) -> Vec<Placement> {
    let free = |dir: &Path| {
        dir.components().count() > 1
            && !views
                .iter()
                .any(|v| dir.starts_with(v) || v.starts_with(dir))
            && !mounts.iter().any(|m| m.starts_with(dir))
    };
    // The directory each original would want as its decoy.
    let mut dirs: Vec<(PathBuf, PathBuf)> = Vec::new();
    for original in originals {
        let (dir, shown) = if original.tree {
            (Some(original.path.as_path()), Some(original.shown.clone()))
        } else {
            (
                original.path.parent(),
                original.shown.parent().map(Path::to_path_buf),
            )
        };
        if let (Some(dir), Some(shown)) = (dir, shown)
            && free(dir)
            && (dir.is_dir() || original.tree)
            && !dirs.iter().any(|(d, _)| d == dir)
        {
            dirs.push((dir.to_path_buf(), shown));
        }
    }
    // The outermost of nested ones holds the others' entries.
    let outer: Vec<(PathBuf, PathBuf)> = dirs
        .iter()
        .filter(|(d, _)| !dirs.iter().any(|(o, _)| o != d && d.starts_with(o)))
        .cloned()
        .collect();
    let mut placements: Vec<Placement> = outer
        .iter()
        .map(|(dir, shown)| Placement {
            at: dir.clone(),
            seed: Some(Vec::new()),
            shown: shown.clone(),
        })
        .collect();
    for original in originals {
        let holder = placements
            .iter_mut()
            .find(|p| p.seed.is_some() && original.path.starts_with(&p.at));
        match holder {
            Some(holder) => {
                if let (Some(seed), Ok(rel)) =
                    (&mut holder.seed, original.path.strip_prefix(&holder.at))
                    && !rel.as_os_str().is_empty()
                {
                    // Only what exists: a decoy shows no file the original
                    // directory does not have.
                    if original.exists {
                        seed.push((rel.to_path_buf(), original.tree));
                    }
                }
            }
            None if original.exists && !original.tree => placements.push(Placement {
                at: original.path.clone(),
                seed: None,
                shown: original.shown.clone(),
            }),
            // A tree beneath something the server sees is left as it is
            // shown (read-only), and one that does not exist has no place.
            None => {}
        }
    }
    placements.sort_by(|a, b| a.at.cmp(&b.at));
    placements
}

/// A jail's decoys, shared by the jail (which places them at the first
/// launch) and the observed set made from it (which is built before): one
/// comparison of the decoys, whoever asks. What one asker took is not
/// given to another, so a command asks through one of them only.
#[derive(Clone, Debug, Default)]
pub struct OriginalWrites(std::sync::Arc<std::sync::Mutex<Option<Decoys>>>);

impl OriginalWrites {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Decoys>> {
        // Every change is one assignment or one comparison's update.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The paths of the stores' originals written since this was last
    /// asked (see [`Decoys::written`]); none before the decoys are placed.
    pub fn take(&self) -> Vec<String> {
        self.lock()
            .as_mut()
            .map(Decoys::written)
            .unwrap_or_default()
    }

    pub(crate) fn placed(&self) -> bool {
        self.lock().is_some()
    }

    pub(crate) fn place(&self, decoys: Decoys) {
        *self.lock() = Some(decoys);
    }

    /// Each decoy as (the original's path, the decoy on the host).
    pub(crate) fn paths(&self) -> Vec<(PathBuf, PathBuf)> {
        self.lock()
            .iter()
            .flat_map(|d| &d.decoys)
            .map(|d| (d.at.clone(), d.source.clone()))
            .collect()
    }
}

impl Decoys {
    /// Makes the decoys of `placements` beneath `{jail}/decoys` and takes
    /// their state. A decoy that cannot be made is left out (its original
    /// stays hidden behind `/dev/null`, refused unseen).
    pub(crate) fn make(jail: &Path, placements: Vec<Placement>) -> std::io::Result<Self> {
        let root = jail.join(DIR);
        std::fs::create_dir_all(&root)?;
        let mut decoys = Vec::new();
        for (n, placement) in placements.into_iter().enumerate() {
            let source = root.join(n.to_string());
            let made = match &placement.seed {
                None => std::fs::write(&source, b""),
                Some(seed) => make_tree(&source, seed),
            };
            if made.is_err() {
                continue;
            }
            let state = state_of(&source);
            decoys.push(Decoy {
                at: placement.at,
                source,
                shown: placement.shown,
                state,
            });
        }
        Ok(Self { decoys })
    }

    /// The paths written in the decoys since the last time this was asked,
    /// as the report names them, sorted; past [`MAX_REPORTED`], one line
    /// counts the rest.
    pub(crate) fn written(&mut self) -> Vec<String> {
        let mut paths = Vec::new();
        for decoy in &mut self.decoys {
            let now = state_of(&decoy.source);
            let changed = now
                .iter()
                .filter(|(rel, stamp)| decoy.state.get(*rel) != Some(*stamp))
                .map(|(rel, _)| rel)
                .chain(decoy.state.keys().filter(|rel| !now.contains_key(*rel)));
            for rel in changed {
                let shown = if rel.as_os_str().is_empty() {
                    decoy.shown.clone()
                } else {
                    decoy.shown.join(rel)
                };
                paths.push(shown.to_string_lossy().into_owned());
            }
            decoy.state = now;
        }
        paths.sort();
        paths.dedup();
        if paths.len() > MAX_REPORTED {
            let more = paths.len() - MAX_REPORTED;
            paths.truncate(MAX_REPORTED);
            paths.push(format!("and {more} more path(s)"));
        }
        paths
    }
}

fn make_tree(root: &Path, seed: &[(PathBuf, bool)]) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    for (rel, dir) in seed {
        let path = root.join(rel);
        if *dir {
            std::fs::create_dir_all(&path)?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, b"")?;
        }
    }
    Ok(())
}

/// The state of the decoy at `source`, links not followed, at most
/// [`MAX_ENTRIES`] entries. A directory's own times are left out: an entry
/// made or removed in it is reported as that entry.
fn state_of(source: &Path) -> State {
    let mut state = State::new();
    let mut pending = vec![source.to_path_buf()];
    while let Some(path) = pending.pop() {
        if state.len() >= MAX_ENTRIES {
            break;
        }
        let Ok(rel) = path.strip_prefix(source) else {
            continue;
        };
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        let kind = meta.file_type();
        let stamp = if kind.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                pending.extend(entries.flatten().map(|e| e.path()));
            }
            Stamp::Dir
        } else if kind.is_file() {
            Stamp::File {
                ino: meta.ino(),
                len: meta.len(),
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
            }
        } else if kind.is_symlink() {
            Stamp::Link(std::fs::read_link(&path).unwrap_or_default())
        } else {
            Stamp::Other
        };
        state.insert(rel.to_path_buf(), stamp);
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, exists: bool, shown: &str) -> Original {
        Original {
            path: path.into(),
            tree: false,
            exists,
            shown: shown.into(),
        }
    }

    #[test]
    fn a_free_directory_stands_in_whole_and_a_shown_one_gets_file_decoys() {
        let host = tempfile::tempdir().expect("tempdir");
        let data = host.path().join("data");
        let install = host.path().join("srv");
        for dir in [&data, &install] {
            std::fs::create_dir_all(dir).expect("dir");
        }
        let db = data.join("app.db");
        let beside = install.join("notes.jsonl");
        let originals = [
            file(&db.to_string_lossy(), true, "/home/u/data/app.db"),
            file(
                &data.join("app.db-wal").to_string_lossy(),
                true,
                "/home/u/data/app.db-wal",
            ),
            file(&beside.to_string_lossy(), true, "notes.jsonl"),
            file(
                &install.join("gone.jsonl").to_string_lossy(),
                false,
                "gone.jsonl",
            ),
        ];
        let jail = host.path().join("tmp/jail");
        let placed = place(&originals, &[install.clone(), jail], &[]);
        assert_eq!(
            placed,
            [
                Placement {
                    at: data.clone(),
                    seed: Some(vec![("app.db".into(), false), ("app.db-wal".into(), false)]),
                    shown: "/home/u/data".into(),
                },
                Placement {
                    at: beside,
                    seed: None,
                    shown: "notes.jsonl".into(),
                },
            ]
        );
        // A directory that holds what the sandbox binds is never a decoy.
        let above = place(&originals[..1], &[], &[data.join("x")]);
        assert_eq!(above[0].seed, None);
        assert_eq!(above[0].at, db);
        // Beneath the sandbox's own tmpfs it is.
        let beneath = place(&originals[..1], &[], &[host.path().to_path_buf()]);
        assert_eq!(beneath[0].at, data);
    }

    #[test]
    fn only_what_changed_is_reported_once_and_as_the_report_names_it() {
        let host = tempfile::tempdir().expect("tempdir");
        let jail = host.path().join("jail");
        let placements = vec![
            Placement {
                at: "/data".into(),
                seed: Some(vec![("app.db".into(), false), ("tree".into(), true)]),
                shown: "/home/u/data".into(),
            },
            Placement {
                at: "/srv/notes.jsonl".into(),
                seed: None,
                shown: "notes.jsonl".into(),
            },
        ];
        let mut decoys = Decoys::make(&jail, placements).expect("decoys");
        assert!(decoys.written().is_empty(), "nothing before a write");
        let first = decoys.decoys[0].source.clone();
        let second = decoys.decoys[1].source.clone();
        // A read changes nothing.
        std::fs::read(first.join("app.db")).expect("read");
        assert!(decoys.written().is_empty());
        std::fs::write(first.join("app.db"), b"SQLite format 3\0").expect("write");
        std::fs::write(first.join("app.db-journal"), b"j").expect("journal");
        std::fs::write(first.join("tree/new.txt"), b"n").expect("tree");
        std::fs::write(&second, b"{}\n").expect("jsonl");
        assert_eq!(
            decoys.written(),
            [
                "/home/u/data/app.db",
                "/home/u/data/app.db-journal",
                "/home/u/data/tree/new.txt",
                "notes.jsonl"
            ]
        );
        assert!(decoys.written().is_empty(), "each write is reported once");
        std::fs::remove_file(first.join("app.db-journal")).expect("remove");
        assert_eq!(decoys.written(), ["/home/u/data/app.db-journal"]);
        for n in 0..(MAX_REPORTED + 3) {
            std::fs::write(first.join(format!("f{n:02}")), b"x").expect("many");
        }
        let many = decoys.written();
        assert_eq!(many.len(), MAX_REPORTED + 1);
        assert_eq!(many.last().map(String::as_str), Some("and 3 more path(s)"));
    }
}
