//! One full read of a repository into a snapshot.
//!
//! Everything is read, nothing written: libgit2 opens the repository without
//! searching upwards or reading `GIT_DIR` from the environment, loads the
//! index without refreshing it, and hashes worktree files as blobs without
//! storing them. Files git itself would not show a library (the object
//! database's pack indexes, pseudo-refs, hooks) are read directly.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, ObjectType, Oid, Repository, RepositoryOpenFlags};
use witness_observers::{ObjectState, ObserveError, Snapshot};

use crate::unusable;
use crate::watch::Watch;

/// Pseudo-refs and operation state a tool may leave behind or clear.
/// `AUTO_MERGE` is not among them: git rewrites that scratch tree of a
/// conflicted merge at will, and it holds nothing the index does not.
const STATE_FILES: [&str; 7] = [
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "ORIG_HEAD",
    "MERGE_AUTOSTASH",
    "BISECT_LOG",
];
/// Operations in progress that keep their state in a directory.
const STATE_DIRS: [&str; 3] = ["rebase-merge", "rebase-apply", "sequencer"];
/// Files of the git directory whose change is a change to the repository's
/// behaviour (configuration, hooks, local ignore rules).
const GITDIR_FILES: [&str; 3] = ["config", "description", "shallow"];
const GITDIR_TREES: [&str; 2] = ["hooks", "info"];

/// Reads the repository at `path` (its working directory or git directory).
pub fn read_repository(path: &Path) -> Result<Snapshot, ObserveError> {
    read_watched(path, None)
}

/// Collects objects and what the read could not see.
#[derive(Default)]
struct Reader {
    objects: BTreeMap<String, ObjectState>,
    warnings: BTreeSet<String>,
}

impl Reader {
    fn put(&mut self, id: String, state: ObjectState) {
        self.objects.insert(id, state);
    }
}

/// The full read; every directory is watched before it is listed.
pub(crate) fn read_watched(
    path: &Path,
    mut watch: Option<&mut Watch>,
) -> Result<Snapshot, ObserveError> {
    if let Some(w) = watch.as_deref_mut() {
        w.begin();
        w.directory(path);
    }
    let repo = match open(path) {
        Ok(repo) => repo,
        Err(e) if e.code() == ErrorCode::NotFound && path.is_dir() => {
            // A store that starts empty: the server may still `git init` it.
            let mut snapshot = Snapshot::default();
            snapshot
                .warnings
                .push("no git repository here (yet): nothing to observe".into());
            return Ok(snapshot);
        }
        Err(e) => return Err(unusable(path, e.message())),
    };
    let gitdir = repo.path().to_path_buf();
    if let Some(w) = watch.as_deref_mut() {
        watch_tree(w, &gitdir);
    }
    let mut reader = Reader::default();
    read_head(&repo, &mut reader).map_err(|e| unusable(path, e.message()))?;
    read_refs(&repo, &mut reader).map_err(|e| unusable(path, e.message()))?;
    read_stash(&repo, &mut reader).map_err(|e| unusable(path, e.message()))?;
    read_state(&gitdir, &mut reader).map_err(|e| io_error(&gitdir, e))?;
    read_gitdir_files(&gitdir, &mut reader).map_err(|e| io_error(&gitdir, e))?;
    read_odb_counts(&gitdir, &mut reader).map_err(|e| io_error(&gitdir, e))?;
    read_hooks_note(&repo, &gitdir, &mut reader);
    let tracked = read_index(&repo, &mut reader).map_err(|e| unusable(path, e.message()))?;
    if let Some(workdir) = repo.workdir() {
        let worktree = Worktree {
            repo: &repo,
            root: workdir.to_path_buf(),
            gitdir: &gitdir,
            tracked: &tracked,
        };
        worktree.read_dir(Path::new(""), &mut reader, &mut watch)?;
    }
    Ok(Snapshot {
        objects: reader.objects,
        warnings: reader.warnings.into_iter().collect(),
    })
}

fn open(path: &Path) -> Result<Repository, git2::Error> {
    // NO_SEARCH: this path or nothing, never a repository above it; without
    // FROM_ENV, GIT_DIR and friends in our environment are not consulted.
    Repository::open_ext(path, RepositoryOpenFlags::NO_SEARCH, [] as [&OsStr; 0])
}

fn io_error(path: &Path, source: std::io::Error) -> ObserveError {
    ObserveError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Watches `dir` and every directory below it.
fn watch_tree(watch: &mut Watch, dir: &Path) {
    watch.directory(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            watch_tree(watch, &entry.path());
        }
    }
}

/// A state whose digest is a git object id: what a ref points to reads as
/// the commit itself in a report.
fn pointer(id: Oid, commit: Option<Oid>) -> ObjectState {
    let mut fields = BTreeMap::new();
    if let Some(commit) = commit {
        fields.insert("commit".to_owned(), commit.to_string());
    }
    ObjectState {
        digest: id.to_string(),
        size: id.as_bytes().len() as u64,
        fields,
        head: None,
    }
}

/// A symbolic ref: its digest is that of the name it points to.
fn symbolic(target: &str) -> ObjectState {
    let text = format!("ref: {target}");
    let mut state = ObjectState::whole(text.as_bytes());
    state
        .fields
        .insert("symbolic".to_owned(), target.to_owned());
    state
}

fn read_head(repo: &Repository, reader: &mut Reader) -> Result<(), git2::Error> {
    let head = match repo.find_reference("HEAD") {
        Ok(head) => head,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let state = match (head.symbolic_target()?, head.target()) {
        (Some(target), _) => symbolic(target),
        (None, Some(id)) => pointer(id, peel_commit(repo, id)),
        (None, None) => return Ok(()),
    };
    reader.put("HEAD".into(), state);
    Ok(())
}

/// The commit an object id leads to (a tag peeled), if any.
fn peel_commit(repo: &Repository, id: Oid) -> Option<Oid> {
    let object = repo.find_object(id, None).ok()?;
    object.peel(ObjectType::Commit).ok().map(|c| c.id())
}

fn read_refs(repo: &Repository, reader: &mut Reader) -> Result<(), git2::Error> {
    for reference in repo.references()? {
        let reference = reference?;
        let Ok(name) = reference.name().map(str::to_owned) else {
            reader
                .warnings
                .insert("a ref whose name is not UTF-8 is not observed".into());
            continue;
        };
        // The stash is observed entry by entry (below): as one ref it would
        // move "backwards" on every push.
        if name == "refs/stash" {
            continue;
        }
        let Ok(symbolic_target) = reference.symbolic_target() else {
            reader.warnings.insert(format!(
                "ref {name} points to a name that is not UTF-8; not observed"
            ));
            continue;
        };
        let state = match (symbolic_target, reference.target()) {
            (Some(target), _) => symbolic(target),
            (None, Some(id)) => pointer(id, peel_commit(repo, id)),
            (None, None) => continue,
        };
        reader.put(format!("ref/{name}"), state);
    }
    Ok(())
}

fn read_stash(repo: &Repository, reader: &mut Reader) -> Result<(), git2::Error> {
    if repo.find_reference("refs/stash").is_err() {
        return Ok(());
    }
    let log = repo.reflog("refs/stash")?;
    for entry in log.iter() {
        let id = entry.id_new();
        reader.put(format!("stash/{id}"), pointer(id, Some(id)));
    }
    Ok(())
}

/// Pseudo-refs and in-progress operations. A state file's fields name the
/// commits it holds, so a merge concluded into a commit can be told from a
/// merge thrown away.
fn read_state(gitdir: &Path, reader: &mut Reader) -> std::io::Result<()> {
    for name in STATE_FILES {
        let Some(bytes) = read_optional(&gitdir.join(name))? else {
            continue;
        };
        let mut state = ObjectState::whole(&bytes);
        for token in String::from_utf8_lossy(&bytes).split_whitespace() {
            if Oid::from_str(token).is_ok() && token.len() >= 40 {
                state
                    .fields
                    .insert(format!("commit:{token}"), String::new());
            }
        }
        reader.put(format!("state/{name}"), state);
    }
    for name in STATE_DIRS {
        let dir = gitdir.join(name);
        if dir.is_dir() {
            let mut files = BTreeMap::new();
            collect_files(&dir, Path::new(""), &mut files)?;
            let listing: String = files
                .iter()
                .map(|(path, state)| format!("{path} {}\n", state.digest))
                .collect();
            reader.put(
                format!("state/{name}"),
                ObjectState::whole(listing.as_bytes()),
            );
        }
    }
    Ok(())
}

fn read_optional(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every file below `dir` as a whole-file state, keyed by its path under
/// `rel`. A symbolic link is its target, never followed.
fn collect_files(
    dir: &Path,
    rel: &Path,
    out: &mut BTreeMap<String, ObjectState>,
) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        let rel = rel.join(entry.file_name());
        if kind.is_dir() {
            collect_files(&entry.path(), &rel, out)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(entry.path())?;
            let text = format!("link {}", target.to_string_lossy());
            out.insert(
                rel.to_string_lossy().into_owned(),
                ObjectState::whole(text.as_bytes()),
            );
        } else if let Some(bytes) = read_optional(&entry.path())? {
            let mut state = ObjectState::whole(&bytes);
            let mode = entry.metadata()?.permissions().mode() & 0o777;
            state.digest =
                witness_observers::digest_hex(format!("{mode:o} {}", state.digest).as_bytes());
            out.insert(rel.to_string_lossy().into_owned(), state);
        }
    }
    Ok(())
}

/// Configuration, description, hooks and local ignore rules.
fn read_gitdir_files(gitdir: &Path, reader: &mut Reader) -> std::io::Result<()> {
    for name in GITDIR_FILES {
        if let Some(bytes) = read_optional(&gitdir.join(name))? {
            reader.put(format!("gitdir/{name}"), ObjectState::whole(&bytes));
        }
    }
    for tree in GITDIR_TREES {
        let mut files = BTreeMap::new();
        collect_files(&gitdir.join(tree), Path::new(tree), &mut files)?;
        for (path, state) in files {
            reader.put(format!("gitdir/{path}"), state);
        }
    }
    Ok(())
}

/// The object database as counts only: loose objects by directory entry,
/// packed objects by each pack index's own count. No object is opened.
fn read_odb_counts(gitdir: &Path, reader: &mut Reader) -> std::io::Result<()> {
    let objects = gitdir.join("objects");
    let mut loose = 0u64;
    let mut packed = 0u64;
    for entry in std::fs::read_dir(&objects)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.len() == 2 && name.chars().all(|c| c.is_ascii_hexdigit()) {
            loose += std::fs::read_dir(entry.path())?
                .filter_map(Result::ok)
                .filter(|e| e.file_name().len() >= 38)
                .count() as u64;
        }
    }
    if let Ok(packs) = std::fs::read_dir(objects.join("pack")) {
        for entry in packs.flatten() {
            if entry.path().extension() == Some(OsStr::new("idx")) {
                packed += pack_index_count(&entry.path())?;
            }
        }
    }
    let text = format!("loose {loose} packed {packed}");
    let mut state = ObjectState::whole(text.as_bytes());
    state.fields.insert("loose".into(), loose.to_string());
    state.fields.insert("packed".into(), packed.to_string());
    reader.put("odb/objects".into(), state);
    Ok(())
}

/// The number of objects a pack index lists: the last entry of its fan-out
/// table (after an 8-byte header in version 2, at the start in version 1).
fn pack_index_count(path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    let mut head = [0u8; 8 + 256 * 4];
    let mut file = std::fs::File::open(path)?;
    file.read_exact(&mut head)?;
    let offset = if head[..4] == [0xff, b't', b'O', b'c'] {
        8
    } else {
        0
    };
    let last = offset + 255 * 4;
    let mut count = [0u8; 4];
    count.copy_from_slice(&head[last..last + 4]);
    Ok(u64::from(u32::from_be_bytes(count)))
}

/// Hooks run programs the observer cannot follow: say which are active.
fn read_hooks_note(repo: &Repository, gitdir: &Path, reader: &mut Reader) {
    let mut active = Vec::new();
    if let Ok(entries) = std::fs::read_dir(gitdir.join("hooks")) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let executable = entry
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if executable && !name.ends_with(".sample") {
                active.push(name);
            }
        }
    }
    active.sort();
    if !active.is_empty() {
        reader.warnings.insert(format!(
            "active hooks ({}): what they do outside the repository is not observed",
            active.join(", ")
        ));
    }
    let hooks_path = repo
        .config()
        .and_then(|c| c.get_string("core.hooksPath"))
        .ok();
    if let Some(hooks_path) = hooks_path {
        reader.warnings.insert(format!(
            "core.hooksPath is {hooks_path:?}: hooks there, and what they do, are not observed"
        ));
    }
}

/// Index entries by path and stage: mode and blob id, never the stat cache
/// or the extensions (`git status` rewrites those with no change to content).
/// Returns every path the index holds, at any stage.
fn read_index(repo: &Repository, reader: &mut Reader) -> Result<BTreeSet<Vec<u8>>, git2::Error> {
    let index = match repo.index() {
        Ok(index) => index,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(e),
    };
    let mut tracked = BTreeSet::new();
    for entry in index.iter() {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        let stage = (entry.flags >> 12) & 0x3;
        let id = if stage == 0 {
            format!("index/{path}")
        } else {
            format!("index/{path}#{stage}")
        };
        if entry.mode == 0o160000 {
            reader.warnings.insert(format!(
                "submodule {path} is not followed: changes inside it are not observed"
            ));
        }
        reader.put(id, blob_state(entry.mode, entry.id));
        tracked.insert(entry.path);
    }
    Ok(tracked)
}

/// Mode and blob id, as an index entry or a worktree file has them. The
/// digest is git's own: the blob id, then the mode (`<blob> 100644`), so a
/// report shows the abbreviated id git would. No field map: a snapshot of
/// ten thousand files is copied whole when nothing changed, and one string
/// per file keeps that copy cheap.
pub(crate) fn blob_state(mode: u32, blob: Oid) -> ObjectState {
    let digest = format!("{blob} {mode:o}");
    ObjectState {
        size: digest.len() as u64,
        digest,
        fields: BTreeMap::new(),
        head: None,
    }
}

/// The working directory, walked beside the index and the ignore rules.
struct Worktree<'a> {
    repo: &'a Repository,
    root: PathBuf,
    gitdir: &'a Path,
    tracked: &'a BTreeSet<Vec<u8>>,
}

impl Worktree<'_> {
    /// Reads one directory (`rel` under the root) and everything below it.
    fn read_dir(
        &self,
        rel: &Path,
        reader: &mut Reader,
        watch: &mut Option<&mut Watch>,
    ) -> Result<(), ObserveError> {
        let dir = self.root.join(rel);
        if let Some(w) = watch.as_deref_mut() {
            w.directory(&dir);
        }
        let mut entries: Vec<_> =
            match std::fs::read_dir(&dir).and_then(|it| it.collect::<Result<Vec<_>, _>>()) {
                Ok(entries) => entries,
                // Removed since its parent was listed: as for a file, below.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(io_error(&dir, e)),
            };
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let rel = rel.join(entry.file_name());
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
            if kind.is_dir() {
                if path == self.gitdir || entry.file_name() == ".git" {
                    continue;
                }
                if path.join(".git").exists() {
                    reader.warnings.insert(format!(
                        "nested repository {} is not followed: changes inside it are not observed",
                        rel.display()
                    ));
                    continue;
                }
                self.read_dir(&rel, reader, watch)?;
            } else if kind.is_file() || kind.is_symlink() {
                self.read_file(&rel, &path, kind.is_symlink(), reader)?;
            }
        }
        Ok(())
    }

    fn read_file(
        &self,
        rel: &Path,
        path: &Path,
        link: bool,
        reader: &mut Reader,
    ) -> Result<(), ObserveError> {
        let (mode, blob) = match file_blob(path, link) {
            Ok(found) => found,
            // Removed between the listing and the read (a server still at
            // work): not there now, and its removal raised an event, so the
            // next snapshot reads again.
            Err(_) if std::fs::symlink_metadata(path).is_err() => return Ok(()),
            Err(e) => return Err(e),
        };
        let key = rel.as_os_str().as_encoded_bytes();
        let name = rel.to_string_lossy();
        let class = if self.tracked.contains(key) {
            "worktree"
        } else if self.repo.is_path_ignored(rel).unwrap_or(false) {
            "ignored"
        } else {
            "worktree"
        };
        reader.put(format!("{class}/{name}"), blob_state(mode, blob));
        Ok(())
    }
}

/// Mode and blob id of one worktree file: a symbolic link is its target's
/// bytes (never followed), a file its raw bytes, executable or not.
fn file_blob(path: &Path, link: bool) -> Result<(u32, Oid), ObserveError> {
    if link {
        let target = std::fs::read_link(path).map_err(|e| io_error(path, e))?;
        let bytes = target.as_os_str().as_encoded_bytes();
        let blob =
            Oid::hash_object(ObjectType::Blob, bytes).map_err(|e| unusable(path, e.message()))?;
        return Ok((0o120000, blob));
    }
    let meta = std::fs::symlink_metadata(path).map_err(|e| io_error(path, e))?;
    let mode = if meta.permissions().mode() & 0o100 != 0 {
        0o100755
    } else {
        0o100644
    };
    let blob = Oid::hash_file(ObjectType::Blob, path).map_err(|e| unusable(path, e.message()))?;
    Ok((mode, blob))
}
