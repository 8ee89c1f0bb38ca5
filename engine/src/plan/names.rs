//! File *names*: a parameter that asks for a file's name (`fileName`,
//! `file_name`) rather than its path is sent a bare name, and, when another
//! argument of the same call names a directory of the store (a project, a
//! vault, a folder), the name of a file inside that directory.
//!
//! A server that keeps files per project (`projectName` + `fileName`)
//! refuses an absolute path as a name ("invalid path segments"), and a
//! name from another project is not found: either way the tool is never
//! exercised, and a lie in its declaration never shows.

use std::path::Path;

use serde_json::{Map, Value};
use witness_model::audit::{Argument, Provenance};

use super::cues::{PathKind, ToolCues};
use super::harvest::{Harvested, Pool, Source};

/// Whether `key` asks for the name of a file, not its path.
pub fn is_file_name(cues: &ToolCues, key: &str) -> bool {
    let flat: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    flat.contains("file") && flat.ends_with("name") && cues.path_kind(key) == Some(PathKind::File)
}

/// A fresh file name: the invented name itself, with `.txt` when it has no
/// extension.
pub fn fresh_file_name(text: &str) -> String {
    if text.contains('.') {
        text.to_owned()
    } else {
        format!("{text}.txt")
    }
}

/// The store-relative path of a seeded path (`file/a/b.md` → `a/b.md`).
fn relative(h: &Harvested, kind: &str) -> Option<String> {
    let Source::Store(object) = &h.source else {
        return None;
    };
    let (k, rest) = object.object.split_once('/')?;
    (k == kind && !rest.is_empty()).then(|| rest.to_owned())
}

/// Rewrites every store-seeded file-name argument of a resolved call: the
/// name of a file inside the directory a sibling argument names, else the
/// file's bare name.
pub fn name_files(
    cues: &ToolCues,
    object: &mut Map<String, Value>,
    recorded: &mut [Argument],
    pool: &Pool,
) {
    // A sibling names a directory by its name, its path in the store, or
    // its jailed path (the store's root is the empty path).
    let scopes: Vec<String> = recorded
        .iter()
        .filter(|a| !is_file_name(cues, &a.name))
        .filter_map(|a| a.value.as_str())
        .filter_map(|v| {
            pool.items().find_map(|h| {
                if h.value.as_str() == Some(v)
                    && matches!(h.shape, Some(PathKind::Dir | PathKind::Root))
                {
                    return Some(relative(h, "dir").unwrap_or_default());
                }
                let dir = relative(h, "dir")?;
                let base = Path::new(&dir).file_name()?.to_str()?.to_owned();
                (dir == v || base == v).then_some(dir)
            })
        })
        .collect();
    for argument in recorded.iter_mut() {
        if !is_file_name(cues, &argument.name) || argument.source != Provenance::Store {
            continue;
        }
        // A file directly inside the directory first, else one below it.
        let within = |scope: &str, direct: bool| {
            pool.items().find_map(|h| {
                let file = relative(h, "file")?;
                let name = if scope.is_empty() {
                    file.as_str()
                } else {
                    file.strip_prefix(scope)?.strip_prefix('/')?
                };
                let hidden = name.split('/').any(|c| c.starts_with('.'));
                (!hidden && (!direct || !name.contains('/'))).then(|| (name.to_owned(), h))
            })
        };
        let inside = scopes
            .iter()
            .find_map(|scope| within(scope, true).or_else(|| within(scope, false)));
        let chosen = match inside {
            Some((name, h)) => Some((name, h)),
            None => argument.object.as_ref().and_then(|at| {
                let rest = at.object.strip_prefix("file/")?;
                let base = Path::new(rest).file_name()?.to_str()?.to_owned();
                pool.items()
                    .find(|h| relative(h, "file").as_deref() == Some(rest))
                    .map(|h| (base, h))
            }),
        };
        if let Some((name, h)) = chosen {
            argument.value = Value::String(name);
            if let Source::Store(at) = &h.source {
                argument.object = Some(at.clone());
            }
            object.insert(argument.name.clone(), argument.value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;

    fn bank() -> Pool {
        let at = |object: &str| StoreObject {
            store: "bank".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/j/bank".into(), PathKind::Root, at("")),
                Harvested::seeded_path("/j/bank/notes".into(), PathKind::Dir, at("dir/notes")),
                Harvested::seeded_path(
                    "/j/bank/notes/a.md".into(),
                    PathKind::File,
                    at("file/notes/a.md"),
                ),
                Harvested::seeded_path("/j/bank/garden".into(), PathKind::Dir, at("dir/garden")),
                Harvested::seeded_path(
                    "/j/bank/garden/plan.md".into(),
                    PathKind::File,
                    at("file/garden/plan.md"),
                ),
            ],
            vec!["/j/bank".into()],
        );
        pool
    }

    fn argument(name: &str, value: Value, source: Provenance, object: Option<&str>) -> Argument {
        Argument {
            name: name.into(),
            value,
            source,
            from: None,
            object: object.map(|o| StoreObject {
                store: "bank".into(),
                object: o.into(),
            }),
            parts: Vec::new(),
        }
    }

    #[test]
    fn a_file_name_is_bare_and_inside_the_directory_its_sibling_names() {
        let cues = ToolCues {
            tool: "memory_bank_read".into(),
            ..ToolCues::default()
        };
        assert!(is_file_name(&cues, "fileName"));
        assert!(!is_file_name(&cues, "path"));
        assert!(!is_file_name(&cues, "projectName"));
        let pool = bank();
        let mut recorded = vec![
            argument("projectName", json!("garden"), Provenance::Harvested, None),
            argument(
                "fileName",
                json!("/j/bank/notes/a.md"),
                Provenance::Store,
                Some("file/notes/a.md"),
            ),
        ];
        let mut object = Map::new();
        name_files(&cues, &mut object, &mut recorded, &pool);
        assert_eq!(object.get("fileName"), Some(&json!("plan.md")));
        assert_eq!(
            recorded[1].object.as_ref().map(|o| o.object.as_str()),
            Some("file/garden/plan.md")
        );

        // A directory named by its jailed path: a file directly inside it.
        let mut by_path = vec![
            argument("directory", json!("/j/bank"), Provenance::Store, Some("")),
            argument(
                "fileName",
                json!("/j/bank/notes/a.md"),
                Provenance::Store,
                Some("file/notes/a.md"),
            ),
        ];
        let mut object = Map::new();
        name_files(&cues, &mut object, &mut by_path, &pool);
        assert_eq!(object.get("fileName"), Some(&json!("notes/a.md")));

        // With no directory named beside it, the file's own bare name.
        let mut alone = vec![argument(
            "fileName",
            json!("/j/bank/notes/a.md"),
            Provenance::Store,
            Some("file/notes/a.md"),
        )];
        let mut object = Map::new();
        name_files(&cues, &mut object, &mut alone, &pool);
        assert_eq!(object.get("fileName"), Some(&json!("a.md")));
        assert_eq!(fresh_file_name("witness-x"), "witness-x.txt");
    }
}
