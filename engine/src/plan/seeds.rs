//! Store-seeded values: what the declared stores held before the first
//! call, offered to the planner as real values with provenance `store`.
//!
//! The baseline snapshot already names every object: a directory store's
//! files and directories, a SQLite store's tables and row keys, a JSON-lines
//! store's entities and relations. Those names are read from the object ids
//! alone — the same ids every report already shows — never from the
//! objects' contents: a column's value may be a credential, and whatever a
//! planner sends is written into the report as an argument.

use std::path::{Path, PathBuf};

use serde_json::Value;
use witness_model::audit::StoreObject;

use super::cues::PathKind;
use super::harvest::Harvested;
use witness_jail::{JailedStore, StoreKind};

/// The values a store's baseline names, and the directory stores' roots.
/// `present` is every `(store, object id)` of the baseline snapshot.
pub fn seeds(stores: &[JailedStore], present: &[(&str, &str)]) -> (Vec<Harvested>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut roots = Vec::new();
    for store in stores {
        let name = store.spec.name.as_str();
        let at = |object: &str| StoreObject {
            store: name.to_owned(),
            object: object.to_owned(),
        };
        let root = store.path.to_string_lossy().into_owned();
        match store.spec.kind {
            // A repository's working directory is a tree too: what a git
            // server is told to work in (`repo_path`), and where a fresh
            // file is made.
            StoreKind::Fs | StoreKind::Git => {
                out.push(Harvested::seeded_path(root, PathKind::Root, at("")));
                roots.push(store.path.clone());
            }
            // The store's own file: what a server was told to open.
            StoreKind::Sqlite | StoreKind::Jsonl => {
                out.push(Harvested::seeded_path(root, PathKind::File, at("")));
            }
            // A cluster's directory is nothing a tool is told about.
            StoreKind::Postgres => {}
        }
        for (_, object) in present.iter().filter(|(s, _)| *s == name) {
            out.extend(object_seeds(
                store.spec.kind,
                &store.path,
                object,
                at(object),
            ));
        }
        if store.spec.kind == StoreKind::Fs {
            let objects = present.iter().filter(|(s, _)| *s == name).map(|(_, o)| *o);
            out.extend(used_ranges(objects, &at));
        }
    }
    // The branch checked out is offered last among revisions (first in
    // the pool, which takes the newest): a checkout, merge or branch
    // delete handed it changes nothing, or is refused.
    let heads: Vec<(String, String)> = stores
        .iter()
        .filter(|s| s.spec.kind == StoreKind::Git)
        .filter_map(|s| Some((s.spec.name.clone(), checked_out(&s.path)?)))
        .collect();
    out.sort_by_key(|h| {
        let store = match &h.source {
            crate::plan::harvest::Source::Store(o) => o.store.as_str(),
            _ => "",
        };
        !(h.key == "revision"
            && heads
                .iter()
                .any(|(s, b)| s == store && h.value.as_str() == Some(b.as_str())))
    });
    // A sheet is named by each of its cells: offered once, from its first.
    let mut seen = std::collections::HashSet::new();
    out.retain(|h| {
        let file = match &h.source {
            crate::plan::harvest::Source::Store(o) => content_file(&o.object).map(|(f, _)| f),
            _ => None,
        };
        file.is_none()
            || seen.insert((
                h.key.clone(),
                h.value.to_string(),
                file,
                h.collection.clone(),
            ))
    });
    (out, roots)
}

/// The key under which a sheet's used range is offered: a name with a
/// space, which parameters seldom have, so that in practice only a rule
/// that asks for it by this key gets it (a lookup by the value alone, as
/// `Pool::holding`, can still meet it).
pub const USED_RANGE: &str = "used range";

/// Each sheet's used range (`A1:C6`, the smallest box holding every
/// filled cell), read from the ids of the cells the baseline
/// holds (`xlsx/budget.xlsx#Q1!C6`), under [`USED_RANGE`], its object
/// one of the sheet's cells (near its top left: the first cell met that
/// lies above, or level with and left of, every cell met before it).
/// Only a cell's place is read, never its value.
fn used_ranges<'a>(
    objects: impl Iterator<Item = &'a str>,
    at: &dyn Fn(&str) -> StoreObject,
) -> Vec<Harvested> {
    // Per sheet (`xlsx/budget.xlsx#Q1`): its first cell's id, and the
    // columns and rows its cells span.
    let mut boxes: Vec<(String, String, CellBox)> = Vec::new();
    for id in objects {
        if !matches!(id.split_once('/'), Some(("xlsx" | "ods", _))) {
            continue;
        }
        let Some((_, inner)) = content_file(id) else {
            continue;
        };
        let Some((sheet, cell)) = inner.rsplit_once('!') else {
            continue;
        };
        let Some((column, row)) = cell_place(cell) else {
            continue;
        };
        let file_sheet = id.rsplit_once('!').map_or(id, |(fs, _)| fs);
        match boxes.iter_mut().find(|(fs, _, _)| fs == file_sheet) {
            Some((_, first, (c0, r0, c1, r1))) => {
                if (row, column) < (*r0, *c0) {
                    *first = id.to_owned();
                }
                *c0 = (*c0).min(column);
                *r0 = (*r0).min(row);
                *c1 = (*c1).max(column);
                *r1 = (*r1).max(row);
            }
            None if !sheet.is_empty() => boxes.push((
                file_sheet.to_owned(),
                id.to_owned(),
                (column, row, column, row),
            )),
            None => {}
        }
    }
    boxes
        .into_iter()
        .filter(|(_, _, (c0, r0, c1, r1))| c1 > c0 || r1 > r0)
        .map(|(_, first, (c0, r0, c1, r1))| {
            let range = format!("{}{r0}:{}{r1}", column_letters(c0), column_letters(c1));
            Harvested::seeded(USED_RANGE, Value::String(range), at(&first), None)
        })
        .collect()
}

/// First column, first row, last column, last row.
type CellBox = (u32, u32, u32, u32);

/// `C6` → (3, 6); `None` for anything but one cell (a merged range, a
/// sheet's own id).
fn cell_place(cell: &str) -> Option<(u32, u32)> {
    let split = cell.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = cell.split_at(split);
    if letters.is_empty() || !letters.chars().all(|c| c.is_ascii_uppercase()) {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let column = letters.chars().try_fold(0u32, |n, c| {
        n.checked_mul(26)?.checked_add(c as u32 - 'A' as u32 + 1)
    })?;
    Some((column, digits.parse().ok()?))
}

/// 3 → `C`, 28 → `AB`.
fn column_letters(mut column: u32) -> String {
    let mut out = Vec::new();
    while column > 0 {
        let digit = (column - 1) % 26;
        out.push(char::from(b'A' + digit as u8));
        column = (column - 1) / 26;
    }
    out.iter().rev().collect()
}

/// The branch a repository's working tree has checked out, read from its
/// `.git/HEAD` (`ref: refs/heads/main`); `None` when HEAD is detached or
/// unreadable.
fn checked_out(root: &Path) -> Option<String> {
    let head = std::fs::read_to_string(root.join(".git/HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .filter(|b| !b.is_empty())
        .map(str::to_owned)
}

/// What one object id names, in the terms a tool's parameters use.
fn object_seeds(kind: StoreKind, root: &Path, id: &str, at: StoreObject) -> Vec<Harvested> {
    match kind {
        StoreKind::Fs if content_file(id).is_some() => content_seeds(id, at),
        StoreKind::Fs => fs_seed(root, id, at).into_iter().collect(),
        StoreKind::Sqlite => sqlite_seeds(id, at),
        StoreKind::Jsonl => jsonl_seeds(id, at),
        // Rows are named like SQLite's (`schema.table/key`); a table is
        // its catalog entry (`catalog/table:public.orders`).
        StoreKind::Postgres => match id.strip_prefix("catalog/table:") {
            Some(table) => postgres_table_seeds(table, at),
            None if id.starts_with("catalog/") => Vec::new(),
            None => sqlite_seeds(id, at),
        },
        StoreKind::Git => git_seeds(root, id, at),
    }
}

/// `worktree/src/app.py` → the file's jailed path (untracked files too, not
/// ignored ones); `ref/refs/heads/drafts` → the branch name `drafts` among
/// `branches` and as a `revision`, git's word for anything that names a
/// commit. Tags, remotes, the index and commit ids are not offered.
fn git_seeds(root: &Path, id: &str, at: StoreObject) -> Vec<Harvested> {
    if let Some(relative) = id.strip_prefix("worktree/") {
        return fs_seed(root, &format!("file/{relative}"), at)
            .into_iter()
            .collect();
    }
    match id.strip_prefix("ref/refs/heads/") {
        Some(branch) if !branch.is_empty() => {
            let name = Value::String(branch.to_owned());
            vec![
                Harvested::seeded("name", name.clone(), at.clone(), Some("branches")),
                Harvested::seeded("revision", name, at, None),
            ]
        }
        _ => Vec::new(),
    }
}

/// A PostgreSQL table's names, as a statement or a tool names it: bare in
/// `public` (`orders`), qualified elsewhere (`audit.log`). Names that needed
/// quoting are not offered.
fn postgres_table_seeds(qualified: &str, at: StoreObject) -> Vec<Harvested> {
    if qualified.contains('"') {
        return Vec::new();
    }
    let name = qualified.strip_prefix("public.").unwrap_or(qualified);
    let name = Value::String(name.to_owned());
    ["table_name", "table"]
        .into_iter()
        .map(|k| Harvested::seeded(k, name.clone(), at.clone(), Some("tables")))
        .collect()
}

/// The file a content object of a directory store sits in, relative to the
/// store's root, and the object's id inside it: `xlsx/books/a.xlsx#Q1!B2`
/// → (`books/a.xlsx`, `Q1!B2`). The observer writes a `#` of the path as
/// `\x23`, so the first `#` ends it.
pub fn content_file(id: &str) -> Option<(String, &str)> {
    let (view, rest) = id.split_once('/')?;
    if !["sqlite", "xlsx", "ods", "csv", "json", "jsonl", "md"].contains(&view) {
        return None;
    }
    let (path, inner) = rest.split_once('#')?;
    Some((path.replace("\\x23", "#"), inner))
}

/// What a content object of a directory store names: a SQLite file's
/// tables and row keys (as a SQLite store's, `projects/3` → the id 3 among
/// `projects`), a workbook's sheet names (`Q1!B2` → the sheet `Q1`). Cells,
/// JSON pointers and markdown headings are not offered.
fn content_seeds(id: &str, at: StoreObject) -> Vec<Harvested> {
    let Some((_, inner)) = content_file(id) else {
        return Vec::new();
    };
    match id.split_once('/').map(|(view, _)| view) {
        Some("sqlite") => sqlite_seeds(inner, at),
        Some("xlsx" | "ods") => match inner.rsplit_once('!') {
            Some((sheet, _)) if !sheet.is_empty() => {
                let sheet = Value::String(sheet.to_owned());
                vec![
                    Harvested::seeded("sheet", sheet.clone(), at.clone(), Some("sheets")),
                    Harvested::seeded("name", sheet, at, Some("sheets")),
                ]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `file/docs/a.txt` → the file's jailed path. Names the observer had to
/// escape (a backslash, a control character, bytes that are not UTF-8) do not
/// spell the real name, so they are not offered; links and special nodes
/// neither.
fn fs_seed(root: &Path, id: &str, at: StoreObject) -> Option<Harvested> {
    let (shape, relative) = match id.split_once('/')? {
        ("file", relative) => (PathKind::File, relative),
        ("dir", relative) => (PathKind::Dir, relative),
        _ => return None,
    };
    if relative.is_empty() || relative.contains('\\') {
        return None;
    }
    let path = root.join(relative).to_string_lossy().into_owned();
    Some(Harvested::seeded_path(path, shape, at))
}

/// `sqlite_master/table:customers` → the table's name; `customers/7` → the
/// row key `7` (and the number 7) in the collection `customers`. SQLite's
/// own tables, composite keys and keys the observer had to suffix are not
/// offered.
fn sqlite_seeds(id: &str, at: StoreObject) -> Vec<Harvested> {
    let Some((table, key)) = id.split_once('/') else {
        return Vec::new();
    };
    if table == "sqlite_master" {
        let Some(name) = key.strip_prefix("table:") else {
            return Vec::new();
        };
        if name.starts_with("sqlite_") {
            return Vec::new();
        }
        let name = Value::String(name.to_owned());
        return ["table_name", "table"]
            .into_iter()
            .map(|k| Harvested::seeded(k, name.clone(), at.clone(), Some("tables")))
            .collect();
    }
    if table.starts_with("sqlite_") || key.contains(',') || key.contains('#') {
        return Vec::new();
    }
    let mut out = vec![Harvested::seeded(
        "id",
        Value::String(key.to_owned()),
        at.clone(),
        Some(table),
    )];
    if let Ok(number) = key.parse::<i64>() {
        out.push(Harvested::seeded(
            "id",
            Value::from(number),
            at,
            Some(table),
        ));
    }
    out
}

/// `entity/Ada` → the name `Ada` among `entities`; `relation/Ada->Bob:knows`
/// → its `from`, `to` and `relationType` among `relations`; `record/42` →
/// the id `42` among `records`.
fn jsonl_seeds(id: &str, at: StoreObject) -> Vec<Harvested> {
    let text = |s: &str| Value::String(s.to_owned());
    match id.split_once('/') {
        Some(("entity", name)) if !name.is_empty() => {
            vec![Harvested::seeded("name", text(name), at, Some("entities"))]
        }
        Some(("relation", rest)) => {
            let Some((from, to_type)) = rest.split_once("->") else {
                return Vec::new();
            };
            let Some((to, relation)) = to_type.rsplit_once(':') else {
                return Vec::new();
            };
            [("from", from), ("to", to), ("relationType", relation)]
                .into_iter()
                .map(|(k, v)| Harvested::seeded(k, text(v), at.clone(), Some("relations")))
                .collect()
        }
        Some((prefix, key)) if prefix != "line" && !key.is_empty() => {
            let collection = format!("{prefix}s");
            vec![Harvested::seeded("id", text(key), at, Some(&collection))]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use witness_jail::StoreSpec;

    fn store(name: &str, kind: StoreKind, path: &str) -> JailedStore {
        JailedStore {
            spec: StoreSpec {
                name: name.into(),
                kind,
                source: "/src".into(),
                shown: None,
                clock_columns: Vec::new(),
            },
            path: path.into(),
            existed: true,
        }
    }

    fn shown(seeds: &[Harvested]) -> Vec<(String, Value, Option<PathKind>, String)> {
        seeds
            .iter()
            .map(|h| {
                let object = match &h.source {
                    super::super::harvest::Source::Store(o) => format!("{}:{}", o.store, o.object),
                    other => format!("{other:?}"),
                };
                (h.key.clone(), h.value.clone(), h.shape, object)
            })
            .collect()
    }

    #[test]
    fn a_directory_store_offers_its_root_files_and_directories_as_jailed_paths() {
        let stores = [store("fs", StoreKind::Fs, "/jail/stores/fs/tree")];
        let present = [
            ("fs", "dir/docs"),
            ("fs", "file/docs/a.txt"),
            ("fs", "file/odd\\xff"),
            ("fs", "link/alias"),
            ("other", "file/x"),
        ];
        let (seeds, roots) = seeds(&stores, &present);
        assert_eq!(roots, [PathBuf::from("/jail/stores/fs/tree")]);
        assert_eq!(
            shown(&seeds),
            [
                (
                    "path".into(),
                    json!("/jail/stores/fs/tree"),
                    Some(PathKind::Root),
                    "fs:".into()
                ),
                (
                    "path".into(),
                    json!("/jail/stores/fs/tree/docs"),
                    Some(PathKind::Dir),
                    "fs:dir/docs".into()
                ),
                (
                    "path".into(),
                    json!("/jail/stores/fs/tree/docs/a.txt"),
                    Some(PathKind::File),
                    "fs:file/docs/a.txt".into()
                ),
            ]
        );
    }

    #[test]
    fn sqlite_and_jsonl_stores_offer_tables_keys_and_entities() {
        let stores = [
            store("db", StoreKind::Sqlite, "/jail/stores/db/app.db"),
            store("mem", StoreKind::Jsonl, "/jail/stores/mem/m.jsonl"),
        ];
        let present = [
            ("db", "sqlite_master/table:customers"),
            ("db", "sqlite_master/index:idx"),
            ("db", "sqlite_master/table:sqlite_sequence"),
            ("db", "customers/7"),
            ("db", "pairs/1,2"),
            ("db", "sqlite_sequence/customers"),
            ("mem", "entity/Ada"),
            ("mem", "relation/Ada->Charles Babbage:works with"),
            ("mem", "line/3"),
        ];
        let (seeds, roots) = seeds(&stores, &present);
        assert!(roots.is_empty());
        let keys: Vec<(String, Value, Option<String>)> = seeds
            .iter()
            .map(|h| (h.key.clone(), h.value.clone(), h.collection.clone()))
            .collect();
        let c = |s: &str| Some(s.to_owned());
        assert_eq!(
            keys,
            [
                ("path".into(), json!("/jail/stores/db/app.db"), None),
                ("table_name".into(), json!("customers"), c("tables")),
                ("table".into(), json!("customers"), c("tables")),
                ("id".into(), json!("7"), c("customers")),
                ("id".into(), json!(7), c("customers")),
                ("path".into(), json!("/jail/stores/mem/m.jsonl"), None),
                ("name".into(), json!("Ada"), c("entities")),
                ("from".into(), json!("Ada"), c("relations")),
                ("to".into(), json!("Charles Babbage"), c("relations")),
                ("relationType".into(), json!("works with"), c("relations")),
            ]
        );
    }

    #[test]
    fn a_postgres_store_offers_its_tables_by_the_names_statements_use_and_its_rows() {
        let stores = [store("pg", StoreKind::Postgres, "/jail/stores/pg")];
        let present = [
            ("pg", "catalog/schema:public"),
            ("pg", "catalog/table:public.orders"),
            ("pg", "catalog/table:audit.log"),
            ("pg", "catalog/index:public.orders_pkey"),
            ("pg", "public.orders/4"),
        ];
        let (seeds, _) = seeds(&stores, &present);
        let keys: Vec<(String, Value, Option<String>)> = seeds
            .iter()
            .map(|h| (h.key.clone(), h.value.clone(), h.collection.clone()))
            .collect();
        let c = |s: &str| Some(s.to_owned());
        assert_eq!(
            keys,
            [
                ("table_name".into(), json!("orders"), c("tables")),
                ("table".into(), json!("orders"), c("tables")),
                ("table_name".into(), json!("audit.log"), c("tables")),
                ("table".into(), json!("audit.log"), c("tables")),
                ("id".into(), json!("4"), c("public.orders")),
                ("id".into(), json!(4), c("public.orders")),
            ]
        );
    }

    #[test]
    fn the_branch_checked_out_is_the_last_revision_offered_and_a_clone_gets_the_repository() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let git = dir.path().join(".git");
        std::fs::create_dir_all(&git).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_string_lossy().into_owned();
        let stores = [store("repo", StoreKind::Git, &root)];
        let present = [
            ("repo", "ref/refs/heads/drafts"),
            ("repo", "ref/refs/heads/main"),
        ];
        let (seeds, roots) = seeds(&stores, &present);
        let mut pool = crate::plan::harvest::Pool::default();
        pool.seed(seeds, roots);
        // Newest first: `drafts`, which a checkout really moves to.
        let branch = pool
            .candidate("git_checkout", "branch")
            .map(|h| h.value.clone());
        assert_eq!(branch, Some(json!("drafts")));
        // A tool that clones is told to clone the store's repository.
        let cues = crate::plan::cues::ToolCues {
            tool: "clone_repo".into(),
            text: "clone_repo clone a git repository for analysis".into(),
            ..Default::default()
        };
        let url = pool.candidate_like(&cues, "url", &json!("https://example.invalid/witness"));
        assert_eq!(url.map(|h| h.value.clone()), Some(json!(root)));
        // Not a tool that fetches a page.
        let fetch = crate::plan::cues::ToolCues {
            tool: "fetch".into(),
            text: "fetch a web page".into(),
            ..Default::default()
        };
        let page = pool.candidate_like(&fetch, "url", &json!("https://example.invalid/witness"));
        assert_ne!(page.map(|h| h.value.clone()), Some(json!(root)));
    }

    #[test]
    fn a_clone_gets_a_repository_a_folder_store_holds() {
        // Read from the observers' listing: nothing needs to be on disk.
        let stores = [store("repos", StoreKind::Fs, "/jail/stores/repos/tree")];
        let present = [
            ("repos", "dir/clones"),
            ("repos", "dir/clones/app"),
            ("repos", "dir/clones/app/.git"),
            ("repos", "dir/notes"),
        ];
        let (seeds, roots) = seeds(&stores, &present);
        let mut pool = crate::plan::harvest::Pool::default();
        pool.seed(seeds, roots);
        let cues = crate::plan::cues::ToolCues {
            tool: "clone_repo".into(),
            text: "clone_repo clone a git repository for analysis".into(),
            ..Default::default()
        };
        let url = pool.candidate_like(&cues, "url", &json!("https://example.invalid/witness"));
        assert_eq!(
            url.map(|h| h.value.clone()),
            Some(json!("/jail/stores/repos/tree/clones/app"))
        );
    }

    #[test]
    fn a_git_store_offers_its_root_worktree_files_and_branch_names() {
        let stores = [store("repo", StoreKind::Git, "/jail/stores/repo/repo")];
        let present = [
            ("repo", "HEAD"),
            ("repo", "ref/refs/heads/drafts"),
            ("repo", "ref/refs/tags/v1"),
            ("repo", "index/src/app.py"),
            ("repo", "worktree/src/app.py"),
            ("repo", "ignored/trace.log"),
            ("repo", "odb/objects"),
        ];
        let (seeds, roots) = seeds(&stores, &present);
        assert_eq!(roots, [PathBuf::from("/jail/stores/repo/repo")]);
        assert_eq!(
            shown(&seeds),
            [
                (
                    "path".into(),
                    json!("/jail/stores/repo/repo"),
                    Some(PathKind::Root),
                    "repo:".into()
                ),
                (
                    "name".into(),
                    json!("drafts"),
                    None,
                    "repo:ref/refs/heads/drafts".into()
                ),
                (
                    "revision".into(),
                    json!("drafts"),
                    None,
                    "repo:ref/refs/heads/drafts".into()
                ),
                (
                    "path".into(),
                    json!("/jail/stores/repo/repo/src/app.py"),
                    Some(PathKind::File),
                    "repo:worktree/src/app.py".into()
                ),
            ]
        );
    }

    #[test]
    fn a_sheets_used_range_runs_from_its_first_filled_cell_to_its_last() {
        let (seeds, _) = seeds(
            &[store("sheets", StoreKind::Fs, "/jail/stores/sheets/tree")],
            &[
                ("sheets", "file/budget.xlsx"),
                ("sheets", "xlsx/budget.xlsx#Q1!"),
                ("sheets", "xlsx/budget.xlsx#Q1!B2"),
                ("sheets", "xlsx/budget.xlsx#Q1!A1"),
                ("sheets", "xlsx/budget.xlsx#Q1!AB6"),
                ("sheets", "xlsx/budget.xlsx#Q1!A1:C1"),
                ("sheets", "xlsx/budget.xlsx#Q2!A1"),
            ],
        );
        let ranges: Vec<_> = shown(&seeds)
            .into_iter()
            .filter(|(key, ..)| key == USED_RANGE)
            .collect();
        // Q2 has one cell, which is no range; a merge is no cell.
        assert_eq!(
            ranges,
            vec![(
                USED_RANGE.to_owned(),
                json!("A1:AB6"),
                None,
                "sheets:xlsx/budget.xlsx#Q1!A1".to_owned()
            )]
        );
        assert_eq!(column_letters(28), "AB");
        assert_eq!(cell_place("AB6"), Some((28, 6)));
        assert_eq!(cell_place("A1:C1"), None);
    }
}
