//! Git's effect classes: which changes destroy something.
//!
//! The generic diff says what changed; whether a change destroys anything
//! depends on the repository's history, which only the repository can
//! answer (is the old commit an ancestor of the new one? is the old content
//! still in the object database?). Objects are immutable and stay in the
//! database until a gc, so asking right after the snapshot is sound.
//!
//! - A ref moved **forward** (the old commit is an ancestor of the new) is
//!   additive; moved anywhere else, or a tag moved at all, an overwrite.
//! - Commits reachable before from some ref, HEAD or stash entry, and from
//!   none after, are listed as deletes of `commit/<id>`: they may be lost.
//! - HEAD switching branches destroys nothing by itself (what it loses shows
//!   on the refs, the commits and the worktree).
//! - An index, worktree or ignored file changed or removed is destructive
//!   only when the object database no longer holds its old content: staging
//!   and unstaging never are, a checkout that replaces committed files is
//!   not, a `reset --hard` over unstaged edits is.
//! - The object database counting fewer objects is an overwrite.
//! - A state file (`MERGE_HEAD`, …) removed is destructive unless every
//!   commit it named is reachable afterwards (a merge concluded).

use std::collections::BTreeSet;
use std::path::Path;

use git2::{Oid, Repository, Sort};
use witness_observers::{Change, Delta, ObjectState, Op, Snapshot, diff};

/// At most this many lost commits are listed; the rest are counted.
const LOST_LISTED: usize = 1000;

pub(crate) fn classify(path: &Path, before: &Snapshot, after: &Snapshot) -> Delta {
    let mut delta = diff(before, after);
    if delta.is_empty() {
        return delta;
    }
    // Without the repository (removed, or not one yet) nothing can be shown
    // harmless: every change keeps the generic, cautious class.
    let Ok(repo) = Repository::open_ext(
        path,
        git2::RepositoryOpenFlags::NO_SEARCH,
        [] as [&std::ffi::OsStr; 0],
    ) else {
        return delta;
    };
    let tips_after = tips(after);
    let odb = repo.odb().ok();
    let history = History {
        repo: &repo,
        odb: odb.as_ref(),
        tips_after: &tips_after,
    };
    for change in &mut delta.changes {
        let old = before.objects.get(&change.object);
        let new = after.objects.get(&change.object);
        if let Some(overwrite) = history.class_of(change, old, new) {
            change.overwrite = Some(overwrite);
        }
    }
    delta
        .changes
        .extend(lost_commits(&repo, before, &tips_after));
    delta.changes.sort_by(|a, b| a.object.cmp(&b.object));
    delta
}

/// What the repository says after the call.
struct History<'a> {
    repo: &'a Repository,
    odb: Option<&'a git2::Odb<'a>>,
    tips_after: &'a BTreeSet<Oid>,
}

impl History<'_> {
    /// Whether `change` overwrites (for an update) or destroys (for a delete);
    /// `None` leaves the generic class.
    fn class_of(
        &self,
        change: &Change,
        old: Option<&ObjectState>,
        new: Option<&ObjectState>,
    ) -> Option<bool> {
        let (repo, tips_after) = (self.repo, self.tips_after);
        let (kind, name) = change
            .object
            .split_once('/')
            .unwrap_or((&change.object, ""));
        match (kind, change.op) {
            ("ref", Op::Update) if name.starts_with("refs/tags/") => Some(true),
            ("ref", Op::Update) => Some(!forward(repo, commit_of(old?)?, commit_of(new?)?)),
            ("HEAD", Op::Update) => match (commit_of(old?), commit_of(new?)) {
                (Some(from), Some(to)) => Some(!forward(repo, from, to)),
                _ => Some(false),
            },
            ("index" | "worktree" | "ignored", Op::Update | Op::Delete) => {
                // The digest is `<blob> <mode>` (see read::blob_state).
                let blob = old?.digest.split(' ').next()?;
                let kept =
                    Oid::from_str(blob).is_ok_and(|id| self.odb.is_some_and(|db| db.exists(id)));
                Some(!kept)
            }
            ("odb", Op::Update) => Some(count(old?) > count(new?)),
            ("state", Op::Delete) => {
                let kept = old?
                    .fields
                    .keys()
                    .filter_map(|k| k.strip_prefix("commit:"))
                    .filter_map(|id| Oid::from_str(id).ok())
                    .all(|id| reachable_from(repo, id, tips_after));
                Some(!kept)
            }
            _ => None,
        }
    }
}

fn commit_of(state: &ObjectState) -> Option<Oid> {
    state
        .fields
        .get("commit")
        .and_then(|c| Oid::from_str(c).ok())
}

/// `to` equals `from` or descends from it.
fn forward(repo: &Repository, from: Oid, to: Oid) -> bool {
    from == to || repo.graph_descendant_of(to, from).unwrap_or(false)
}

fn reachable_from(repo: &Repository, id: Oid, tips: &BTreeSet<Oid>) -> bool {
    tips.iter().any(|&tip| forward(repo, id, tip))
}

fn count(state: &ObjectState) -> u64 {
    ["loose", "packed"]
        .iter()
        .filter_map(|k| state.fields.get(*k)?.parse::<u64>().ok())
        .sum()
}

/// The commits HEAD, the refs and the stash entries of a snapshot hold.
fn tips(snapshot: &Snapshot) -> BTreeSet<Oid> {
    snapshot
        .objects
        .iter()
        .filter(|(id, _)| id.starts_with("ref/") || id.starts_with("stash/") || *id == "HEAD")
        .filter_map(|(_, state)| commit_of(state))
        .collect()
}

/// Commits reachable before and from none of the tips after, as deletes of
/// `commit/<id>` (newest first, as git lists them).
fn lost_commits(repo: &Repository, before: &Snapshot, tips_after: &BTreeSet<Oid>) -> Vec<Change> {
    let tips_before = tips(before);
    if tips_before.is_subset(tips_after) {
        return Vec::new();
    }
    let Ok(mut walk) = repo.revwalk() else {
        return Vec::new();
    };
    // A commit already gone from the database cannot be walked; the ref
    // move that dropped it is still an overwrite.
    if walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME).is_err() {
        return Vec::new();
    }
    for tip in tips_before.difference(tips_after) {
        let _ = walk.push(*tip);
    }
    for tip in tips_after {
        let _ = walk.hide(*tip);
    }
    let mut lost = Vec::new();
    let mut more = 0usize;
    for id in walk.flatten() {
        if lost.len() < LOST_LISTED {
            lost.push(Change {
                object: format!("commit/{id}"),
                op: Op::Delete,
                overwrite: None,
                before: Some(id.to_string()),
                after: None,
            });
        } else {
            more += 1;
        }
    }
    if more > 0 {
        lost.push(Change {
            object: format!("commit/(and {more} more)"),
            op: Op::Delete,
            overwrite: None,
            before: None,
            after: None,
        });
    }
    lost
}
