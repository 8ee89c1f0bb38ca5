//! **The store's own objects as values, in the forms servers accept, and
//! only while they exist.** The observers know every object of the store;
//! the planner offers them, and keeps offering only those still there.
//!
//! Answers two failures. A server that keeps paths relative to its vault or
//! project refuses the absolute jailed path (`Path must be a portable
//! vault-relative path`, `Source outside home directory is not permitted`):
//! the store's path is offered again relative to its root (`notes/a.md`),
//! or made absolute under the root when a relative one was refused. And a
//! delete was handed a path an earlier `move` had moved away, or a name a
//! `delete` had already removed: every object a call was seen to delete
//! (its effect says so) leaves the pool at once, so a later call is handed
//! the store as it is now, not as the baseline had it.
//!
//! Example: `move_note` moved `/jail/vault/a.md` to
//! `/jail/vault/witness-move_note.md`; `delete_note`, planned after it, is
//! handed `/jail/vault/b.md` (still there) rather than `a.md` (gone), and a
//! retry of `read_note` that was told to use vault-relative paths sends
//! `b.md`.

use std::path::Path;

use serde_json::Value;
use witness_model::audit::{Effect, Op};

use crate::plan::cues::PathKind;
use crate::plan::harvest::{Harvested, Pool, Source};

/// `text`, an absolute path under a directory store's root, made relative
/// to that root (`.` for the root itself); `None` when it is not such a
/// path.
pub fn relative_to_root(pool: &Pool, text: &str) -> Option<String> {
    let path = Path::new(text);
    if !path.is_absolute() {
        return None;
    }
    pool.roots().iter().find_map(|root| {
        let rest = path.strip_prefix(root).ok()?;
        let rest = rest.to_string_lossy();
        Some(if rest.is_empty() {
            ".".to_owned()
        } else {
            rest.into_owned()
        })
    })
}

/// `text`, a relative path, made absolute under the first directory
/// store's root; `None` when it is absolute already, or no root is known.
pub fn absolute_under_root(pool: &Pool, text: &str) -> Option<String> {
    let path = Path::new(text);
    if text.is_empty() || path.is_absolute() || text.contains("://") {
        return None;
    }
    let root = pool.fresh_root()?;
    Some(root.join(path).to_string_lossy().into_owned())
}

/// `text`, an absolute path of some other machine (under no store root:
/// a description's example, `/Users/you/Documents/letter.md`), moved under
/// the first directory store's root by its last part; `None` for a path
/// under a root, a relative one, or when no root is known.
pub fn moved_under_root(pool: &Pool, text: &str) -> Option<String> {
    let path = Path::new(text);
    if !path.is_absolute() || pool.roots().iter().any(|root| path.starts_with(root)) {
        return None;
    }
    let name = path.file_name()?;
    let root = pool.fresh_root()?;
    Some(root.join(name).to_string_lossy().into_owned())
}

/// What a successful rename changed, read from its arguments: the
/// argument that named the thing as it was (`old_name`, `source_sheet`,
/// `from`) and its value, and the new name (`new_name`, `target_name`,
/// `to`). `None` for a tool whose name does not say it renames, or whose
/// arguments do not say both.
pub fn renamed_by(tool: &str, arguments: &Value) -> Option<(String, Value, Value)> {
    if !crate::plan::cues::words(tool).iter().any(|w| w == "rename") {
        return None;
    }
    let object = arguments.as_object()?;
    let old = object.iter().find(|(name, value)| {
        value.is_string()
            && (crate::plan::harvest::existing_one(name).is_some()
                || matches!(crate::plan::cues::flat(name).as_str(), "from" | "source"))
    })?;
    let new = object.iter().find(|(name, value)| {
        value.is_string()
            && crate::plan::cues::words(name).first().is_some_and(|w| {
                ["new", "target", "to", "dest", "destination"].contains(&w.as_str())
            })
    })?;
    (old.1 != new.1).then(|| (new.0.clone(), old.1.clone(), new.1.clone()))
}

/// Extensions of files that are notes: their names are titles.
const NOTE_EXTENSIONS: [&str; 3] = ["md", "markdown", "txt"];

/// The titles of the notes among a directory store's seeded paths: a
/// markdown or text file's name without its extension (`projects/Garden
/// plan.md` → `Garden plan`), offered under `title` and as one of a list of
/// `notes` (so a `note` or `title` parameter that names an existing note
/// gets one), each citing the file it names. Hidden files are not notes.
pub fn note_titles(seeds: &[Harvested]) -> Vec<Harvested> {
    let mut out = Vec::new();
    for seed in seeds {
        let (Source::Store(object), Some(PathKind::File), Some(path)) =
            (&seed.source, seed.shape, seed.value.as_str())
        else {
            continue;
        };
        let path = Path::new(path);
        let is_note = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| NOTE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if !is_note || stem.starts_with('.') || stem.is_empty() {
            continue;
        }
        let title = Value::String(stem.to_owned());
        out.push(Harvested::seeded(
            "title",
            title.clone(),
            object.clone(),
            Some("notes"),
        ));
        out.push(Harvested::seeded(
            "[]",
            title,
            object.clone(),
            Some("notes"),
        ));
    }
    out
}

/// Removes from `pool` every store object the call's `effects` deleted,
/// and everything under a deleted directory, and every value the plan made
/// that names a deleted path: what is gone is offered to no later call.
pub fn forget_deleted(pool: &mut Pool, effects: &[Effect]) {
    let deleted: Vec<(&str, &str)> = effects
        .iter()
        .filter(|e| e.op == Op::Delete)
        .map(|e| (e.store.as_str(), e.object.as_str()))
        .collect();
    if deleted.is_empty() {
        return;
    }
    let mut gone_paths: Vec<String> = pool
        .items()
        .filter_map(|h| match &h.source {
            Source::Store(o) if deleted.contains(&(o.store.as_str(), o.object.as_str())) => {
                h.value.as_str().map(str::to_owned)
            }
            _ => None,
        })
        .collect();
    // A file the plan made, deleted since, is no file to replace: its
    // path under its own store's root, by the deleted object's id.
    let roots: Vec<(String, String)> = pool
        .items()
        .filter(|h| h.shape == Some(PathKind::Root))
        .filter_map(|h| match &h.source {
            Source::Store(o) => Some((o.store.clone(), h.value.as_str()?.to_owned())),
            _ => None,
        })
        .collect();
    for (store, object) in &deleted {
        let Some(rest) = object
            .strip_prefix("file/")
            .or_else(|| object.strip_prefix("dir/"))
        else {
            continue;
        };
        for (_, root) in roots.iter().filter(|(s, _)| s == store) {
            gone_paths.push(Path::new(root).join(rest).to_string_lossy().into_owned());
        }
    }
    pool.retain(|h| match &h.source {
        Source::Store(o) => !deleted.iter().any(|(store, object)| {
            *store == o.store && (o.object == *object || under(&o.object, object))
        }),
        Source::Plan | Source::Answer => !h.value.as_str().is_some_and(|v| {
            gone_paths
                .iter()
                .any(|g| v == g || v.starts_with(&format!("{g}/")))
        }),
    });
}

/// Whether object `id` lies inside deleted directory `dir` (`file/a/b.md`
/// inside `dir/a`).
fn under(id: &str, dir: &str) -> bool {
    let (Some(("dir", dir)), Some((_, path))) = (dir.split_once('/'), id.split_once('/')) else {
        return false;
    };
    !dir.is_empty() && path.starts_with(&format!("{dir}/"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;
    use crate::plan::cues::ToolCues;

    fn pool() -> Pool {
        let at = |o: &str| StoreObject {
            store: "vault".into(),
            object: o.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/j/vault".into(), PathKind::Root, at("")),
                Harvested::seeded_path("/j/vault/a.md".into(), PathKind::File, at("file/a.md")),
                Harvested::seeded_path("/j/vault/d".into(), PathKind::Dir, at("dir/d")),
                Harvested::seeded_path("/j/vault/d/c.md".into(), PathKind::File, at("file/d/c.md")),
                Harvested::seeded_path("/j/vault/b.md".into(), PathKind::File, at("file/b.md")),
            ],
            vec!["/j/vault".into()],
        );
        pool
    }

    #[test]
    fn store_paths_are_offered_relative_to_their_root_and_back() {
        let pool = pool();
        assert_eq!(
            relative_to_root(&pool, "/j/vault/d/c.md").as_deref(),
            Some("d/c.md")
        );
        assert_eq!(relative_to_root(&pool, "/j/vault").as_deref(), Some("."));
        assert_eq!(relative_to_root(&pool, "/elsewhere/x"), None);
        assert_eq!(relative_to_root(&pool, "d/c.md"), None);
        assert_eq!(
            absolute_under_root(&pool, "d/c.md").as_deref(),
            Some("/j/vault/d/c.md")
        );
        assert_eq!(absolute_under_root(&pool, "/j/vault/a.md"), None);
    }

    #[test]
    fn a_notes_title_is_offered_to_a_title_or_note_parameter() {
        let at = |o: &str| StoreObject {
            store: "vault".into(),
            object: o.into(),
        };
        let seeds = vec![
            Harvested::seeded_path(
                "/j/vault/projects/Garden plan.md".into(),
                PathKind::File,
                at("file/projects/Garden plan.md"),
            ),
            Harvested::seeded_path(
                "/j/vault/logo.png".into(),
                PathKind::File,
                at("file/logo.png"),
            ),
            Harvested::seeded_path(
                "/j/vault/.obsidian.md".into(),
                PathKind::File,
                at("file/.obsidian.md"),
            ),
            Harvested::seeded_path(
                "/j/vault/projects".into(),
                PathKind::Dir,
                at("dir/projects"),
            ),
        ];
        let titles = note_titles(&seeds);
        assert_eq!(titles.len(), 2, "one note, offered two ways");
        let mut pool = Pool::default();
        pool.seed(titles, Vec::new());
        let cues = ToolCues {
            tool: "read_note".into(),
            ..Default::default()
        };
        for param in ["title", "note"] {
            let found = pool
                .candidate_like(&cues, param, &json!("witness"))
                .unwrap();
            assert_eq!(found.value, json!("Garden plan"), "{param}");
            assert!(
                matches!(&found.source, Source::Store(o) if o.object == "file/projects/Garden plan.md")
            );
        }
        assert!(
            pool.candidate_like(&cues, "content", &json!("witness"))
                .is_none()
        );
    }

    #[test]
    fn a_deleted_object_and_what_was_inside_it_are_offered_no_more() {
        let mut pool = pool();
        let cues = ToolCues {
            tool: "delete_note".into(),
            ..Default::default()
        };
        let file = |pool: &Pool| {
            pool.candidate_like(&cues, "file_path", &json!("x"))
                .map(|h| h.value.clone())
        };
        assert_eq!(file(&pool), Some(json!("/j/vault/a.md")));
        let effect = |object: &str| Effect {
            store: "vault".into(),
            object: object.into(),
            op: Op::Delete,
            overwrite: Some(true),
            before: None,
            after: None,
        };
        forget_deleted(&mut pool, &[effect("file/a.md")]);
        assert_eq!(file(&pool), Some(json!("/j/vault/d/c.md")));
        forget_deleted(&mut pool, &[effect("dir/d")]);
        assert_eq!(
            file(&pool),
            Some(json!("/j/vault/b.md")),
            "c.md went with its directory"
        );
        // Another store's object of the same name is not this one.
        let mut other = effect("file/b.md");
        other.store = "cache".into();
        forget_deleted(&mut pool, &[other]);
        assert_eq!(file(&pool), Some(json!("/j/vault/b.md")));
        // A file the plan made, deleted since, is offered no more either.
        pool.created(
            "save_note",
            4,
            "path",
            &json!("/j/vault/made.md"),
            Some(PathKind::File),
        );
        let made = |pool: &Pool| pool.items().any(|h| h.value == json!("/j/vault/made.md"));
        assert!(made(&pool));
        let mut elsewhere = effect("file/made.md");
        elsewhere.store = "cache".into();
        forget_deleted(&mut pool, &[elsewhere]);
        assert!(made(&pool), "another store's file of the same name");
        forget_deleted(&mut pool, &[effect("file/made.md")]);
        assert!(!made(&pool));
    }

    #[test]
    fn a_rename_leaves_the_new_name_where_the_old_one_was() {
        let args = json!({"project": "garden", "old_name": "seeds", "new_name": "witness-x"});
        let (key, old, new) = renamed_by("rename_category", &args).expect("a rename");
        assert_eq!(
            (key.as_str(), &old, &new),
            ("new_name", &json!("seeds"), &json!("witness-x"))
        );
        assert_eq!(renamed_by("update_category", &args), None, "not a rename");
        assert_eq!(
            renamed_by("rename_category", &json!({"old_name": "seeds"})),
            None,
            "no new name"
        );
        let mut pool = Pool::default();
        pool.absorb(
            "list_categories",
            1,
            &json!({"structuredContent": {"categories": [{"name": "seeds"}, {"name": "tools"}]}}),
        );
        pool.renamed("rename_category", 2, &key, &old, &new);
        let names: Vec<&Value> = pool.items().map(|h| &h.value).collect();
        assert!(!names.contains(&&json!("seeds")), "{names:?}");
        assert!(names.contains(&&json!("witness-x")), "{names:?}");
        // The kind it was listed as is kept: a delete of a category gets it.
        assert_eq!(
            pool.candidate("delete_category", "category_name")
                .map(|h| h.value.clone()),
            Some(json!("witness-x"))
        );
    }
}
