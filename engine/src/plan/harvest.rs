//! The harvest: real values taken from a server's own answers, from the
//! plan's own earlier calls, and from the declared stores.
//!
//! A call that fails on an invented id proves nothing; the same failure on an
//! id the server itself returned a moment earlier is a confirmed defect. So
//! before inventing an argument, the planner looks here for an id-shaped value
//! the server already handed out, a name an earlier call of the plan made, or
//! a path, table or entity the store held before the first call, and records
//! where it came from.

use std::path::PathBuf;

use serde_json::Value;
use witness_model::audit::StoreObject;

use super::cues::{PathKind, ToolCues};
use super::result::result_view;

/// Where a value in the pool came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// An earlier answer of the server; `path` is where in its result.
    Answer,
    /// An earlier successful call of this plan that made it; `path` is the
    /// argument that named it (`arguments.path`).
    Plan,
    /// The baseline snapshot of a declared store: the object it named.
    Store(StoreObject),
}

/// One value found in a response, with its origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Harvested {
    /// The key it was found under (`id`, `grant_id`), or `[]` for an element
    /// of a list of plain values.
    pub key: String,
    pub value: Value,
    /// The tool whose answer held it.
    pub tool: String,
    /// The plan step of that call.
    pub step: u32,
    /// Where in the result view (`json.id`, `json[0]`).
    pub path: String,
    /// The key of the collection or object it sat in (`entities` for
    /// `structured.entities[0].name`), when there was one.
    pub collection: Option<String>,
    pub source: Source,
    /// For a path: what it is (a file, a directory, the store's root).
    pub shape: Option<PathKind>,
}

impl Harvested {
    /// A value a declared store's baseline named.
    pub fn seeded(key: &str, value: Value, object: StoreObject, collection: Option<&str>) -> Self {
        Self {
            key: key.to_owned(),
            value,
            tool: String::new(),
            step: 0,
            path: object.object.clone(),
            collection: collection.map(str::to_owned),
            source: Source::Store(object),
            shape: None,
        }
    }

    /// A value an earlier successful call of this plan sent as argument
    /// `key`, and so made or acted on: the plan's own.
    pub fn sent_by(
        tool: &str,
        step: u32,
        key: &str,
        value: Value,
        shape: Option<PathKind>,
    ) -> Self {
        Self {
            key: key.to_owned(),
            value,
            tool: tool.to_owned(),
            step,
            path: format!("arguments.{key}"),
            collection: None,
            source: Source::Plan,
            shape,
        }
    }

    /// A path a declared store's baseline listed, and what it is.
    pub fn seeded_path(value: String, shape: PathKind, object: StoreObject) -> Self {
        Self {
            shape: Some(shape),
            ..Self::seeded("path", Value::String(value), object, None)
        }
    }

    /// For a content object of a directory store (a workbook's sheet, a
    /// SQLite file's row), the file it sits in, relative to the store's
    /// root.
    pub fn content_file(&self) -> Option<String> {
        let Source::Store(object) = &self.source else {
            return None;
        };
        super::seeds::content_file(&object.object).map(|(file, _)| file)
    }

    /// Whether a path names something hidden (a component starting with
    /// `.`, such as `.git/HEAD`): offered only when nothing else is.
    pub(crate) fn hidden(&self) -> bool {
        let Source::Store(object) = &self.source else {
            return false;
        };
        object
            .object
            .split_once('/')
            .is_some_and(|(_, path)| path.split('/').any(|c| c.starts_with('.')))
    }
}

/// Every harvested value, in the order found.
#[derive(Clone, Debug, Default)]
pub struct Pool {
    items: Vec<Harvested>,
    /// Directory stores' jailed roots, in declaration order: where a fresh
    /// path is made.
    roots: Vec<PathBuf>,
    /// The declared columns of the stores' tables at the baseline: what a
    /// row written into one of them must give.
    tables: Vec<witness_observers::TableShape>,
    /// The server refused a store's absolute path and did its job on the
    /// same path relative to the store's root: every later path is sent
    /// in that form, by every tool (a vault server keeps one form).
    relative_paths: bool,
    /// What each answered step was asked, by plan step: the real scalar
    /// arguments of the call (`project: "garden-guide"` for the
    /// `list_chunks` whose answer gave a chunk's id).
    asked: std::collections::BTreeMap<u32, Vec<(String, Value)>>,
    /// The text of each answer absorbed, oldest first (the newest
    /// [`MAX_TEXTS`], each cut at [`MAX_TEXT`] bytes): where a value of
    /// the shape an error shows by example is looked for
    /// ([`super::strategy::example_shape`]).
    texts: Vec<AnswerText>,
}

/// The text of one answer the pool absorbed, and whose it was.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerText {
    pub tool: String,
    pub step: u32,
    pub text: String,
}

/// Whether a parameter's name says it names an object or a place (an id,
/// a name, a key, a title, a path, a file, a folder, an address): what
/// the store or the answers fill, never a value read from prose.
pub(crate) fn names_an_object(param: &str) -> bool {
    const OBJECT_WORDS: [&str; 14] = [
        "id", "ids", "name", "key", "uuid", "slug", "title", "path", "file", "dir", "folder",
        "uri", "url", "filename",
    ];
    crate::plan::cues::words(param)
        .iter()
        .any(|w| OBJECT_WORDS.contains(&w.as_str()))
}

/// Keys whose values are identifiers worth reusing.
fn id_shaped(key: &str) -> bool {
    matches!(key, "id" | "name" | "key" | "uri" | "path")
        || key.ends_with("_id")
        || key.ends_with("Id")
        || key.ends_with("ID")
}

/// `grant_0001`, `wh-12`: a word, a separator, digits.
fn serial_id(token: &str) -> bool {
    let Some(split) = token.rfind(['_', '-']) else {
        return false;
    };
    let (stem, digits) = (&token[..split], &token[split + 1..]);
    token.len() <= 64
        && !stem.is_empty()
        && stem.starts_with(|c: char| c.is_ascii_alphabetic())
        && !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
}

/// Parameter names (flattened) that name a revision of a repository.
const REVISION_NAMES: [&str; 9] = [
    "target",
    "ref",
    "revision",
    "rev",
    "branch",
    "branchname",
    "commit",
    "treeish",
    "committish",
];

const MAX_DEPTH: usize = 6;
const MAX_ITEMS: usize = 50;
/// Answers' texts kept, and the bytes kept of each: enough for the
/// listings a plan sees, bounded against a server that answers megabytes.
const MAX_TEXTS: usize = 64;
const MAX_TEXT: usize = 16 * 1024;

impl Pool {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every value, oldest first.
    pub(super) fn items(&self) -> std::slice::Iter<'_, Harvested> {
        self.items.iter()
    }

    /// The value equal to `value` the pool still holds, the oldest. A
    /// store object a call deleted, and a path under it, are no longer
    /// held; a name or id read from an answer stays held after its thing
    /// is deleted, so holding it is no proof the thing exists.
    pub fn holding(&self, value: &Value) -> Option<&Harvested> {
        self.items.iter().find(|h| h.value == *value)
    }

    /// The texts of the answers absorbed, oldest first.
    pub fn texts(&self) -> &[AnswerText] {
        &self.texts
    }

    /// Adds what the declared stores held before the first call.
    pub fn seed(&mut self, seeds: Vec<Harvested>, roots: Vec<PathBuf>) {
        self.items.extend(seeds);
        self.roots.extend(roots);
    }

    /// Adds the declared shapes of the stores' tables.
    pub fn seed_tables(&mut self, tables: Vec<witness_observers::TableShape>) {
        self.tables.extend(tables);
    }

    /// The declared shape of a store's table (as SQLite compares names).
    pub fn shape_of(&self, table: &str) -> Option<&witness_observers::TableShape> {
        self.tables
            .iter()
            .find(|t| t.table.eq_ignore_ascii_case(table))
    }

    /// Whether `value` names a table a store held.
    pub fn is_table(&self, value: &str) -> bool {
        self.shape_of(value).is_some()
    }

    /// The newest row key a store held of `table` (as it was seeded: text,
    /// or a number when the key is one and `number` asks for it).
    pub fn row_key_of(&self, table: &str, number: bool) -> Option<&Harvested> {
        self.items.iter().rev().find(|h| {
            matches!(h.source, Source::Store(_))
                && h.key == "id"
                && h.collection.as_deref() == Some(table)
                && h.value.is_number() == number
        })
    }

    /// The directory stores' jailed roots, in declaration order.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Keeps only the values `keep` accepts (what still exists).
    pub fn retain(&mut self, keep: impl FnMut(&Harvested) -> bool) {
        self.items.retain(keep);
    }

    /// The first directory store's root, where fresh paths are made.
    /// Whether `path` lies under a directory store's root.
    pub fn under_root(&self, path: &std::path::Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }

    /// Sends every later store path relative to its store's root.
    pub fn prefer_relative(&mut self) {
        self.relative_paths = true;
    }

    /// Whether store paths go relative ([`Self::prefer_relative`]).
    pub fn relative_paths(&self) -> bool {
        self.relative_paths
    }

    pub fn fresh_root(&self) -> Option<&PathBuf> {
        self.roots.first()
    }

    /// Records a value a successful call of step `step` made under argument
    /// `key`: later calls that refer to such a thing use it.
    pub fn created(
        &mut self,
        tool: &str,
        step: u32,
        key: &str,
        value: &Value,
        shape: Option<PathKind>,
    ) {
        self.items
            .push(Harvested::sent_by(tool, step, key, value.clone(), shape));
    }

    /// A rename of step `step` succeeded: every value that was `old` now
    /// names nothing, and `new` names the same thing, under the same keys
    /// and collections, as the plan's own. A later delete or move of that
    /// thing is handed its new name.
    pub fn renamed(&mut self, tool: &str, step: u32, key: &str, old: &Value, new: &Value) {
        let mut moved: Vec<Harvested> = Vec::new();
        self.items.retain(|h| {
            if h.value != *old {
                return true;
            }
            if !moved
                .iter()
                .any(|m| m.key == h.key && m.collection == h.collection)
            {
                moved.push(Harvested {
                    value: new.clone(),
                    tool: tool.to_owned(),
                    step,
                    path: format!("arguments.{key}"),
                    source: Source::Plan,
                    ..h.clone()
                });
            }
            false
        });
        self.items.extend(moved);
    }

    /// Collects the id-shaped values of a successful call's result, minus
    /// the values the audit invented for that call and the server only
    /// handed back (`echoed`): it did not produce them. An echoed name the
    /// call was to make (`made`: `witness-create_entities` as the name of a
    /// new entity) is kept, as the plan's own: it names what the call made.
    pub fn absorb_answer(
        &mut self,
        tool: &str,
        step: u32,
        result: &Value,
        echoed: &[Value],
        made: &[Value],
        asked: &[(String, Value)],
    ) {
        if !asked.is_empty() {
            self.asked.insert(step, asked.to_vec());
        }
        let before = self.items.len();
        self.absorb(tool, step, result);
        let mut i = before;
        while i < self.items.len() {
            let value = &self.items[i].value;
            if made.contains(value) {
                self.items[i].source = Source::Plan;
                i += 1;
            } else if echoed.contains(value) {
                self.items.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Collects the id-shaped values of a successful call's result.
    pub fn absorb(&mut self, tool: &str, step: u32, result: &Value) {
        let view = result_view(result);
        if let Some(text) = view.get("text").and_then(Value::as_str) {
            // The newest are kept: what the server showed last.
            if self.texts.len() >= MAX_TEXTS {
                self.texts.remove(0);
            }
            let mut end = text.len().min(MAX_TEXT);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            self.texts.push(AnswerText {
                tool: tool.to_owned(),
                step,
                text: text[..end].to_owned(),
            });
        }
        // `structured` last, so that where both hold a value it is the one
        // found first (the newest): the typed result is the better citation.
        for root in ["json", "structured"] {
            if let Some(value) = view.get(root) {
                self.walk(tool, step, root.to_owned(), None, value, 0);
            }
        }
        if view.get("json").is_none()
            && let Some(text) = view.get("text").and_then(Value::as_str)
        {
            // A listing answered in plain text (`field-notes,garden`, one
            // name a line) is a list of the things the tool's name lists.
            if let Some((collection, names)) = plain_list(tool, text) {
                for (i, name) in names.into_iter().enumerate() {
                    let name = without_note(name).unwrap_or(name);
                    self.push(
                        "[]",
                        &Value::String(name.to_owned()),
                        tool,
                        step,
                        &format!("text[{i}]"),
                        Some(&collection),
                    );
                }
                return;
            }
            // A listing written for people still shows each item's id
            // (`#3 Plan the garden`, `[12] Fix the gate`, `- Pay rent (id: 7)`):
            // those ids, of the things the tool is named for.
            let collection = listed_kind(tool);
            for (i, id) in written_ids(text).into_iter().enumerate() {
                let path = format!("text.id[{i}]");
                // Digits fit a parameter that takes a number as well as one
                // that takes a string.
                if let Ok(n) = id.parse::<u64>() {
                    self.push(
                        "id",
                        &Value::from(n),
                        tool,
                        step,
                        &path,
                        collection.as_deref(),
                    );
                }
                self.push(
                    "id",
                    &Value::String(id.to_owned()),
                    tool,
                    step,
                    &path,
                    collection.as_deref(),
                );
            }
            // Prose answers still name what they made: `Created grant grant_0001.`
            for token in text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .filter(|t| serial_id(t))
                .take(MAX_ITEMS)
            {
                self.push(
                    "text",
                    &Value::String(token.to_owned()),
                    tool,
                    step,
                    "text",
                    None,
                );
            }
        }
    }

    fn walk(
        &mut self,
        tool: &str,
        step: u32,
        path: String,
        key: Option<&str>,
        value: &Value,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter().take(MAX_ITEMS) {
                    let here = format!("{path}.{k}");
                    if id_shaped(k) && (v.is_string() || v.is_i64() || v.is_u64()) {
                        self.push(k, v, tool, step, &here, key);
                    } else {
                        self.walk(tool, step, here, Some(k), v, depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().take(MAX_ITEMS) {
                    let here = format!("{path}[{i}]");
                    if let Some(text) = item.as_str() {
                        // A list of plain strings is usually a list of ids or names.
                        let k = key.unwrap_or("[]");
                        let k = if id_shaped(k) { k } else { "[]" };
                        // A name written with a note for people (`vegetables
                        // (2 chunks)`, `main (current)`) is offered bare
                        // first: the server knows the thing by its name.
                        // A name written with a note for people (`vegetables
                        // (2 chunks)`, `main (current)`) is the thing's name
                        // without it: the server knows the thing by that.
                        match without_note(text) {
                            Some(bare) => {
                                let bare = Value::String(bare.to_owned());
                                self.push(k, &bare, tool, step, &here, key);
                            }
                            None => self.push(k, item, tool, step, &here, key),
                        }
                    } else {
                        self.walk(tool, step, here, key, item, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn push(
        &mut self,
        key: &str,
        value: &Value,
        tool: &str,
        step: u32,
        path: &str,
        collection: Option<&str>,
    ) {
        if value
            .as_str()
            .is_some_and(|s| s.is_empty() || s.len() > 512)
        {
            return;
        }
        self.items.push(Harvested {
            key: key.to_owned(),
            value: value.clone(),
            tool: tool.to_owned(),
            step,
            path: path.to_owned(),
            collection: collection.map(str::to_owned),
            source: Source::Answer,
            shape: None,
        });
    }

    /// Like [`Self::candidate`], but only a value of the same JSON kind as
    /// `like` (a string for a string, a number for a number) fits, and a
    /// parameter that asks for a path gets one of the kind it asks for.
    pub fn candidate_like(&self, cues: &ToolCues, param: &str, like: &Value) -> Option<&Harvested> {
        let same_kind = |h: &Harvested| same_json_kind(&h.value, like);
        if like.is_string()
            && let Some(found) = self.clone_source(cues, param)
        {
            return Some(found);
        }
        if like.is_string()
            && let Some(kind) = cues.path_kind(param)
            && let Some(found) = self.path(cues, param, kind)
        {
            return Some(found);
        }
        self.find(&cues.tool, param, &same_kind)
    }

    /// What a tool that clones is told to clone (`url`, `repo_url`,
    /// `source`): the store's own repository, by its path, which git clones
    /// as it would a remote. The study has no network, and an invented URL
    /// makes every later call about the clone fail for want of one.
    fn clone_source(&self, cues: &ToolCues, param: &str) -> Option<&Harvested> {
        const SOURCES: [&str; 9] = [
            "url",
            "repourl",
            "repositoryurl",
            "giturl",
            "cloneurl",
            "remoteurl",
            "remote",
            "source",
            "sourceurl",
        ];
        let flat = crate::plan::cues::flat(param);
        if !SOURCES.contains(&flat.as_str()) || !cues.text.contains("clone") {
            return None;
        }
        // Read from what the observers saw, as the rest of the pool is,
        // not from the file system.
        let store_of = |h: &Harvested| match &h.source {
            Source::Store(o) => Some(o.store.clone()),
            _ => None,
        };
        // A store that is a repository (it has branches) ...
        let git_stores: Vec<String> = self
            .items
            .iter()
            .filter(|h| h.key == "revision")
            .filter_map(store_of)
            .collect();
        let repository_root = self.items.iter().find(|h| {
            h.shape == Some(PathKind::Root) && store_of(h).is_some_and(|s| git_stores.contains(&s))
        });
        // ... else a repository a store holds (a folder of clones): the
        // folder beside a `.git` folder, the shallowest first.
        let held = || {
            self.items
                .iter()
                .filter(|h| h.shape == Some(PathKind::Dir))
                .filter_map(|h| h.value.as_str()?.strip_suffix("/.git"))
                .min_by_key(|folder| folder.matches('/').count())
                .and_then(|folder| {
                    self.items.iter().find(|h| {
                        matches!(h.shape, Some(PathKind::Dir | PathKind::Root))
                            && h.value.as_str() == Some(folder)
                    })
                })
        };
        repository_root.or_else(held)
    }

    /// A path of the kind asked for. A tool that may change things gets
    /// what the plan itself made first, so the store's own files stay for
    /// the reads; a read-only tool gets what the store held first. Among
    /// store paths, hidden ones (`.git/...`) come last, and the earliest
    /// in the snapshot's order wins.
    fn path(&self, cues: &ToolCues, param: &str, kind: PathKind) -> Option<&Harvested> {
        // A folder a tool moves, renames or deletes is one below the
        // store's root: servers refuse the root itself (`Invalid folder
        // path: '.'. Pass a folder below the vault root`), and a call that
        // is refused proves nothing about the claim.
        let below_root = kind == PathKind::Dir && cues.relocates() && !cues.new_place(param);
        let fits = |h: &Harvested| {
            matches!(
                (kind, h.shape),
                (PathKind::Root, Some(PathKind::Root))
                    | (PathKind::Dir, Some(PathKind::Dir))
                    | (PathKind::File, Some(PathKind::File))
            ) || (kind == PathKind::Dir && !below_root && h.shape == Some(PathKind::Root))
        };
        // A file of the kind the tool names first (a workbook tool gets
        // the store's `.xlsx`, not the `.csv` beside it), then any.
        let wanted = if kind == PathKind::File {
            cues.file_types_for(param)
        } else {
            Vec::new()
        };
        // How wanted its kind is: the place of its extension among the
        // wanted ones (a PDF tool's `.pdf` before the `.png` its text also
        // mentions), none when it is of no wanted kind.
        let rank = |h: &Harvested| {
            let ext = h
                .value
                .as_str()
                .and_then(|v| std::path::Path::new(v).extension())
                .and_then(|e| e.to_str())?;
            wanted.iter().position(|w| w.eq_ignore_ascii_case(ext))
        };
        let of_kind = |h: &Harvested| rank(h).is_some();
        let made_fit = |h: &&Harvested| h.source == Source::Plan && fits(h);
        let made = || {
            // The newest the plan made of the kind wanted most, else the
            // newest it made.
            self.items
                .iter()
                .rev()
                .filter(made_fit)
                .filter_map(|h| Some((rank(h)?, h)))
                .min_by_key(|(r, _)| *r)
                .map(|(_, h)| h)
                .or_else(|| self.items.iter().rev().find(made_fit))
        };
        let held = || {
            let stored = |hidden: bool| {
                let store_fit = |h: &&Harvested| {
                    matches!(h.source, Source::Store(_)) && fits(h) && h.hidden() == hidden
                };
                self.items
                    .iter()
                    .filter(store_fit)
                    .filter_map(|h| Some((rank(h)?, h)))
                    .min_by_key(|(r, _)| *r)
                    .map(|(_, h)| h)
                    .or_else(|| self.items.iter().find(store_fit))
            };
            // The root first for a directory: it is the one every server
            // that was given the store can reach.
            let root = (kind == PathKind::Dir && !below_root)
                .then(|| self.items.iter().find(|h| h.shape == Some(PathKind::Root)))
                .flatten();
            // A folder moved or deleted is never a hidden one (`.git`):
            // the tools that need it would find it gone.
            root.or_else(|| stored(false))
                .or_else(|| (!below_root).then(|| stored(true)).flatten())
        };
        // A file of the kind asked for, made or held, before any other: a
        // workbook editor is not handed the document the plan just made.
        let typed = |h: Option<&Harvested>| h.is_some_and(|h| wanted.is_empty() || of_kind(h));
        let (first, second) = if cues.store_first {
            (held(), made())
        } else {
            (made(), held())
        };
        // For a tool handed the store's files first, a file the plan made
        // of a kind wanted more (the deck a deck editor edits, where the
        // store has none) wins; a writer keeps the plan's own.
        let better = |a: Option<&Harvested>, b: Option<&Harvested>| {
            cues.store_first
                && matches!((a.and_then(rank), b.and_then(rank)), (Some(x), Some(y)) if y < x)
        };
        if typed(first) && !better(first, second) {
            first
        } else if typed(second) {
            second
        } else {
            first.or(second)
        }
    }

    /// Like [`Self::candidate_like`], but only an object inside one of
    /// `files` (relative to a store's root) fits: the sheet of the
    /// workbook the same call names, not of another.
    pub fn candidate_within(
        &self,
        cues: &ToolCues,
        param: &str,
        like: &Value,
        files: &[String],
    ) -> Option<&Harvested> {
        let fits = |h: &Harvested| {
            same_json_kind(&h.value, like) && h.content_file().is_some_and(|f| files.contains(&f))
        };
        self.find(&cues.tool, param, &fits)
    }

    /// What the call that answered with `h`, or made it, was asked (its
    /// real scalar arguments); empty for a value the store held.
    pub fn asked_for(&self, h: &Harvested) -> &[(String, Value)] {
        if matches!(h.source, Source::Store(_)) {
            return &[];
        }
        self.asked.get(&h.step).map_or(&[], Vec::as_slice)
    }

    /// Whether some collection of the pool holds things named `stem`
    /// (`task` for `tasks`).
    pub fn names_collection(&self, stem: &str) -> bool {
        let stem = stem.to_ascii_lowercase();
        self.items
            .iter()
            .any(|h| h.collection.as_deref().is_some_and(|c| singular(c) == stem))
    }

    /// Another object of the collection `value` was found in (`initiatives`
    /// for the id 1 of `initiatives/1`), none of `taken`: the other end of
    /// a link between two things of one kind.
    pub fn sibling(&self, value: &Value, taken: &[Value]) -> Option<&Harvested> {
        let first = self
            .items
            .iter()
            .find(|h| h.value == *value && h.collection.is_some())?;
        let same_kind = |h: &Harvested| h.value.is_string() == value.is_string();
        self.items.iter().rev().find(|h| {
            h.collection == first.collection
                && h.key == first.key
                && same_kind(h)
                && !taken.contains(&h.value)
        })
    }

    /// The most recent harvested value that fits parameter `param` of `tool`.
    ///
    /// Fits, in order of preference: a value found under the same key; an `id`
    /// from a tool named after the parameter's stem (`grant_id` ← `id` from
    /// `create_grant`) or a value prefixed by that stem (`grant_0001`); for a
    /// bare `id`/`name`, an id from a tool about the same noun (`get_note` ←
    /// `list_notes`).
    /// A parameter named after a thing's name or id (`entityName`,
    /// `table_name`, `noteId`) also fits the `name` or `id` found inside a
    /// collection of such things (`entities[0].name`).
    pub fn candidate(&self, tool: &str, param: &str) -> Option<&Harvested> {
        self.find(tool, param, &|_| true)
    }

    fn find(
        &self,
        tool: &str,
        param: &str,
        kind_fits: &dyn Fn(&Harvested) -> bool,
    ) -> Option<&Harvested> {
        let newest = |pred: &dyn Fn(&Harvested) -> bool| {
            self.items.iter().rev().find(|h| kind_fits(h) && pred(h))
        };
        // Each end of a pair (`id_a`, `note2`) is a thing of the kind the
        // rest of its name says; which other thing the second end takes is
        // the planner's (two ends of one call are two things).
        if let Some(stem) = paired_stem(param)
            && let Some(h) =
                newest(&|h| h.key == param).or_else(|| self.find(tool, &stem, kind_fits))
        {
            return Some(h);
        }
        // The existing one a rename, copy or move starts from
        // (`source_sheet`, `from_branch`, `old_name`) is one of the kind
        // its name says, or, for a bare `old_name`, of the tool's kind.
        if let Some(rest) = existing_one(param) {
            let noun = crate::plan::cues::words(tool).pop().map(|w| singular(&w));
            let generic_rest = matches!(rest.as_str(), "id" | "name" | "key");
            let by_noun = noun
                .filter(|n| generic_rest && n.len() >= 3)
                .and_then(|n| self.find(tool, &n, kind_fits));
            if let Some(h) = by_noun.or_else(|| self.find(tool, &rest, kind_fits)) {
                return Some(h);
            }
        }
        let generic = matches!(param, "id" | "name" | "key" | "uri" | "path");
        // A bare `id` from some other tool's answer is some other thing's id.
        if !generic && let Some(h) = newest(&|h| h.key == param) {
            return Some(h);
        }
        // What a checkout or reset is pointed at (`target`, `ref`,
        // `branch`, `commit`) is a revision: a branch the repository holds.
        let flat_param = crate::plan::cues::flat(param);
        if REVISION_NAMES.contains(&flat_param.as_str())
            && let Some(h) = newest(&|h| h.key == "revision")
        {
            return Some(h);
        }
        // `tableName` is `table_name` in another spelling.
        let spelled = |k: &str| k.replace(['_', '-'], "").to_ascii_lowercase();
        if !generic && let Some(h) = newest(&|h| spelled(&h.key) == spelled(param)) {
            return Some(h);
        }
        if let Some((stem, key)) = named_thing(param)
            && let Some(h) = newest(&|h| {
                (h.key == key || h.key == "[]")
                    && h.collection.as_deref().is_some_and(|c| singular(c) == stem)
            })
        {
            return Some(h);
        }
        // A parameter named for one of a listed kind (`vault`) fits a plain
        // string of a list of them (`{"vaults": ["notes"]}`).
        if !generic
            && let Some(h) = newest(&|h| {
                h.key == "[]"
                    && h.collection
                        .as_deref()
                        .is_some_and(|c| c != param && singular(c) == param.to_ascii_lowercase())
            })
        {
            return Some(h);
        }
        // A parameter named for the thing a creator of the plan made
        // (`project` ← the `name` `create_project` was given): the plan's
        // own object, which exists once that call succeeded.
        if !generic
            && let Some(h) = newest(&|h| {
                h.source == Source::Plan
                    && matches!(h.key.as_str(), "name" | "id" | "title" | "key")
                    && crate::plan::cues::words(&h.tool)
                        .last()
                        .is_some_and(|noun| singular(noun) == singular(&param.to_ascii_lowercase()))
            })
        {
            return Some(h);
        }
        // A parameter named for a kind of thing (`project`) fits the name
        // or id an answer about such things gave (`list_projects` →
        // `[{"name": "garden-guide"}]`).
        if !generic
            && let Some(h) = newest(&|h| {
                h.source == Source::Answer
                    && matches!(h.key.as_str(), "name" | "id" | "slug" | "key")
                    && crate::plan::cues::words(&h.tool)
                        .last()
                        .is_some_and(|noun| singular(noun) == singular(&param.to_ascii_lowercase()))
            })
        {
            return Some(h);
        }
        let stem = param
            .strip_suffix("_id")
            .or_else(|| param.strip_suffix("Id"))
            .or_else(|| param.strip_suffix("ID"))
            .map(str::to_ascii_lowercase);
        if let Some(stem) = stem.filter(|s| !s.is_empty()) {
            let prefix = format!("{stem}_");
            // An id nested among other things (`tasks[0].id` in the answer
            // of `add_project_task`) is one of those, not the project.
            let own_kind = |h: &Harvested| {
                h.collection
                    .as_deref()
                    .is_none_or(|c| singular(c) == stem || !names_a_kind(c))
            };
            return newest(&|h| {
                (matches!(h.key.as_str(), "id" | "[]")
                    && h.tool.to_ascii_lowercase().contains(&stem)
                    && own_kind(h))
                    || h.value.as_str().is_some_and(|v| v.starts_with(&prefix))
            });
        }
        if generic {
            let noun = tool.rsplit('_').next().unwrap_or(tool).to_ascii_lowercase();
            let noun = noun.trim_end_matches('s').to_owned();
            if noun.len() >= 3
                && let Some(h) = newest(&|h| {
                    matches!(h.key.as_str(), "id" | "name" | "key" | "[]")
                        && h.tool.to_ascii_lowercase().contains(&noun)
                })
            {
                return Some(h);
            }
            // A bare `id` of a tool whose last word is what it does to a
            // thing (`memory_link`): an id from a tool about a thing its
            // other words name (`memory_write`), its own kind first.
            if param == "id" {
                let mut words = crate::plan::cues::words(tool);
                words.pop();
                // `delete_memory`'s other word is what it does, not a thing.
                let things = words
                    .iter()
                    .filter(|w| w.len() >= 3 && !crate::plan::cues::is_verb(w));
                for word in things {
                    let word = singular(word);
                    let about = |h: &Harvested| {
                        crate::plan::cues::words(&h.tool)
                            .iter()
                            .any(|w| singular(w) == word)
                    };
                    if let Some(h) = newest(&|h| h.key == "id" && about(h)) {
                        return Some(h);
                    }
                }
            }
            // A bare `name` with no answer about the tool's noun: a name the
            // store held (an entity's), which at least exists.
            if param == "name" {
                return newest(&|h| h.key == "name" && matches!(h.source, Source::Store(_)));
            }
        }
        None
    }
}

/// The names of a listing tool's plain-text answer, and what they are: for
/// `list_projects` answering `field-notes,garden` (or one name a line, `- `
/// bullets allowed), (`projects`, [`field-notes`, `garden`]). Only a tool
/// whose name says it lists, only when every item is one word of a name
/// (no spaces, no sentence), and never prose: a single item must not end a
/// sentence.
fn plain_list<'t>(tool: &str, text: &'t str) -> Option<(String, Vec<&'t str>)> {
    let words = crate::plan::cues::words(tool);
    let at = words.iter().position(|w| w == "list" || w == "ls")?;
    let collection = words.get(at + 1..).and_then(|w| w.last())?.clone();
    let separator = if text.trim().contains('\n') {
        '\n'
    } else {
        ','
    };
    let names: Vec<&str> = text
        .trim()
        .split(separator)
        .map(|item| item.trim().trim_start_matches("- ").trim())
        .filter(|item| !item.is_empty())
        .collect();
    let name_shaped = |item: &&str| {
        item.len() <= 128
            && !item.ends_with('.')
            && item
                .chars()
                .all(|c| c.is_alphanumeric() || "_-./@:+".contains(c))
    };
    (!names.is_empty() && names.len() <= MAX_ITEMS && names.iter().all(name_shaped))
        .then_some((collection, names))
}

/// The kind of thing a tool's answers are about, plural as a collection
/// is named: `list_tasks` → `tasks`, `search_notes` → `notes`.
fn listed_kind(tool: &str) -> Option<String> {
    let noun = crate::plan::cues::words(tool).pop()?;
    (noun.len() >= 3 && !noun.chars().all(|c| c.is_ascii_digit())).then_some(noun)
}

/// The ids a text written for people shows beside its items: a `#` mark
/// (`#3`, `#a1b2`), a bracketed token opening a line (`[12] Fix`, not a
/// check box `[ ]` or `[x]`), or an `id:` / `id=` label (`(id: 7)`,
/// `ID=task-9`). Each holds a digit, so a heading, a word in brackets or a
/// colour name is not taken; at most [`MAX_ITEMS`], first seen first.
fn written_ids(text: &str) -> Vec<&str> {
    fn token(rest: &str) -> &str {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches('-')
    }
    fn add<'t>(t: &'t str, out: &mut Vec<&'t str>) {
        let id_like = !t.is_empty() && t.len() <= 64 && t.chars().any(|c| c.is_ascii_digit());
        if id_like && !out.contains(&t) && out.len() < MAX_ITEMS {
            out.push(t);
        }
    }
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines().take(4 * MAX_ITEMS) {
        let trimmed = line.trim_start_matches(|c: char| c.is_whitespace() || "-*•>".contains(c));
        if let Some(rest) = trimmed.strip_prefix('[') {
            let t = token(rest);
            if rest[t.len()..].starts_with(']') {
                add(t, &mut out);
            }
        }
        let bytes = line.as_bytes();
        for (at, _) in line.match_indices('#') {
            let before = at.checked_sub(1).map(|b| bytes[b]);
            if before.is_none_or(|b| b.is_ascii_whitespace() || b"([{,:".contains(&b)) {
                add(token(&line[at + 1..]), &mut out);
            }
        }
        let lowered = line.to_ascii_lowercase();
        for (at, _) in lowered.match_indices("id") {
            let before = at.checked_sub(1).map(|b| bytes[b]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                continue;
            }
            let rest = line[at + 2..].trim_start();
            if let Some(rest) = rest.strip_prefix([':', '=']) {
                let rest = rest.trim_start().trim_start_matches(['"', '\'', '`']);
                add(token(rest), &mut out);
            }
        }
    }
    out
}

/// Whether `value` is of the JSON kind of `like`: a string for a string, a
/// number for a number (nothing else fits a scalar parameter).
fn same_json_kind(value: &Value, like: &Value) -> bool {
    match like {
        Value::String(_) => value.is_string(),
        Value::Number(_) => value.is_number(),
        _ => false,
    }
}

/// Whether a collection's key names a kind of thing (`tasks`, `entities`)
/// rather than a wrapper (`results`, `items`, `data`) whose members may be
/// of any kind.
fn names_a_kind(collection: &str) -> bool {
    ![
        "results",
        "result",
        "items",
        "item",
        "data",
        "records",
        "entries",
        "rows",
        "values",
        "matches",
        "hits",
        "list",
        "content",
        "structuredcontent",
        "response",
        "payload",
    ]
    .contains(&collection.to_ascii_lowercase().as_str())
}

/// `entityName` → (`entity`, `name`), `table_name` → (`table`, `name`),
/// `noteId` → (`note`, `id`): the thing a parameter names and by what.
/// What one of a pair of parameters names (`id_a` and `id_b`, `note1` and
/// `note2`, `first_id` and `second_id`): the two ends of a link or a
/// comparison, each a thing of the kind the rest of the name says (`id`,
/// `note`, `id`).
pub(crate) fn paired_stem(param: &str) -> Option<String> {
    let mut words = crate::plan::cues::words(param);
    let last = words.pop()?;
    if words.is_empty() {
        // `note1`: one word, a digit ending it.
        let stem = last.strip_suffix(['1', '2'])?;
        return (stem.len() >= 2 && stem.chars().all(|c| c.is_ascii_alphabetic()))
            .then(|| stem.to_owned());
    }
    if matches!(last.as_str(), "a" | "b" | "1" | "2") {
        return Some(words.join("_"));
    }
    if let Some(stem) = last.strip_suffix(['1', '2'])
        && stem.len() >= 2
        && stem.chars().all(|c| c.is_ascii_alphabetic())
    {
        words.push(stem.to_owned());
        return Some(words.join("_"));
    }
    // `first_id`, `second_key`; not `first_name`, a person's.
    if matches!(words[0].as_str(), "first" | "second") && matches!(last.as_str(), "id" | "key") {
        words.remove(0);
        words.push(last);
        return Some(words.join("_"));
    }
    None
}

/// The one word left of a parameter named for the existing thing a
/// change starts from (`source_sheet` → `sheet`, `fromBranch` → `branch`,
/// `old_name` → `name`); `None` for any other name. A destination
/// (`target_sheet`, `new_name`) is not one: a copy's target is new.
pub(crate) fn existing_one(param: &str) -> Option<String> {
    let words = crate::plan::cues::words(param);
    let (first, rest) = words.split_first()?;
    let roles = [
        "source", "src", "from", "old", "current", "existing", "original", "orig",
    ];
    // Text an edit finds (`old_text`, `old_string`) and a place are not
    // things of a kind: their own rules fill them.
    let not_things = [
        "text", "string", "str", "content", "value", "line", "path", "file", "dir", "date", "time",
    ];
    match rest {
        [one] if roles.contains(&first.as_str()) && !not_things.contains(&one.as_str()) => {
            Some(one.clone())
        }
        _ => None,
    }
}

fn named_thing(param: &str) -> Option<(String, &'static str)> {
    for (suffix, key) in [
        ("_name", "name"),
        ("Name", "name"),
        ("_id", "id"),
        ("Id", "id"),
        ("ID", "id"),
    ] {
        if let Some(stem) = param.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return Some((stem.to_ascii_lowercase(), key));
        }
    }
    None
}

/// A plural collection name made singular (`entities` → `entity`,
/// `notes` → `note`, `boxes` → `box`), lowercased.
pub fn singular(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    if let Some(stem) = w.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for suffix in ["sses", "xes", "ches", "shes"] {
        if let Some(stem) = w.strip_suffix(suffix) {
            return format!("{stem}{}", &suffix[..suffix.len() - 2]);
        }
    }
    match w.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') && !stem.is_empty() => stem.to_owned(),
        _ => w,
    }
}

/// `text` without a note for people in parentheses at its end, when the
/// note is a count (`vegetables (2 chunks)`) or a state (`main
/// (current)`), not a part of the name (`Photos (2019)`, `New Folder
/// (2)`).
fn without_note(text: &str) -> Option<&str> {
    const STATES: [&str; 6] = [
        "current",
        "default",
        "active",
        "selected",
        "empty",
        "checked out",
    ];
    let inner = text.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let (name, note) = (inner[..open].trim_end(), &inner[open + 2..]);
    let mut words = note.split_whitespace();
    let count = matches!(
        (words.next(), words.next(), words.next()),
        (Some(n), Some(unit), None)
            if n.chars().all(|c| c.is_ascii_digit()) && unit.chars().all(char::is_alphabetic)
    );
    let state = STATES.contains(&note.to_lowercase().as_str());
    (!name.is_empty() && !name.contains('(') && (count || state)).then_some(name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(t: &str) -> Value {
        json!({"content": [{"type": "text", "text": t}]})
    }

    #[test]
    fn an_echo_of_an_invented_value_is_not_harvested_but_a_made_name_is_the_plans() {
        let mut pool = Pool::default();
        let answer = json!({"structuredContent": {"id": "witness", "items": [{"id": "note_7"}],
            "created": {"name": "witness-create_note"}}});
        pool.absorb_answer(
            "create_note",
            1,
            &answer,
            &[json!("witness")],
            &[json!("witness-create_note")],
            &[],
        );
        let values: Vec<(&Value, &Source)> = pool.items().map(|h| (&h.value, &h.source)).collect();
        assert!(
            !values.iter().any(|(v, _)| **v == json!("witness")),
            "{values:?}"
        );
        assert!(
            values.contains(&(&json!("note_7"), &Source::Answer)),
            "{values:?}"
        );
        assert!(
            values.contains(&(&json!("witness-create_note"), &Source::Plan)),
            "{values:?}"
        );
    }

    #[test]
    fn what_a_rename_or_copy_starts_from_is_an_existing_one_of_its_kind() {
        let mut pool = Pool::default();
        let at = StoreObject {
            store: "sheets".into(),
            object: "xlsx/budget.xlsx#Q1!A1".into(),
        };
        pool.seed(
            vec![Harvested::seeded("sheet", json!("Q1"), at, Some("sheets"))],
            Vec::new(),
        );
        let head = StoreObject {
            store: "repo".into(),
            object: "ref/refs/heads/drafts".into(),
        };
        pool.seed(
            vec![Harvested::seeded("revision", json!("drafts"), head, None)],
            Vec::new(),
        );
        let value = |tool: &str, param: &str| pool.candidate(tool, param).map(|h| h.value.clone());
        assert_eq!(value("copy_sheet", "source_sheet"), Some(json!("Q1")));
        assert_eq!(value("rename_sheet", "old_name"), Some(json!("Q1")));
        assert_eq!(value("create_branch", "fromBranch"), Some(json!("drafts")));
        // A destination, and the text an edit finds, are not existing things.
        assert_eq!(value("copy_sheet", "target_sheet"), None);
        assert_eq!(value("rename_sheet", "new_name"), None);
        assert_eq!(value("edit_sheet", "old_text"), None);
    }

    #[test]
    fn a_parameter_named_for_a_listed_kind_takes_a_plain_string_of_the_list() {
        let mut pool = Pool::default();
        pool.absorb(
            "list_vaults",
            1,
            &json!({"structuredContent": {"vaults": ["notes"]}}),
        );
        let found = pool
            .candidate("read_vault", "vault")
            .map(|h| h.value.clone());
        assert_eq!(found, Some(json!("notes")));
        let named = pool
            .candidate("read_vault", "vaultName")
            .map(|h| h.value.clone());
        assert_eq!(named, Some(json!("notes")));
        assert!(pool.candidate("read_vault", "page").is_none());
    }

    #[test]
    fn a_listed_name_with_a_note_for_people_is_offered_bare() {
        let mut pool = Pool::default();
        pool.absorb(
            "get_project_stats",
            1,
            &json!({"structuredContent": {"categoryNames": ["vegetables (2 chunks)", "tools"]}}),
        );
        let values: Vec<Value> = pool.items().map(|h| h.value.clone()).collect();
        assert_eq!(values, [json!("vegetables"), json!("tools")]);
        assert_eq!(without_note("main (current)"), Some("main"));
        // A note that is part of the name: kept whole.
        assert_eq!(without_note("Photos (2019)"), None);
        assert_eq!(without_note("New Folder (2)"), None);
        assert_eq!(without_note("(draft)"), None);
        assert_eq!(without_note("f(x)"), None);
        assert_eq!(without_note("a (b (c))"), None);
    }

    #[test]
    fn a_plain_text_listing_offers_its_names_to_parameters_named_for_them() {
        let mut pool = Pool::default();
        pool.absorb("list_projects", 1, &text("field-notes,garden"));
        let named = pool
            .candidate("list_project_files", "projectName")
            .map(|h| (h.value.clone(), h.path.clone()));
        assert_eq!(named, Some((json!("garden"), "text[1]".to_owned())));
        let mut lines = Pool::default();
        lines.absorb("listNotes", 1, &text("- Ideas.md\n- Projects/Gate.md\n"));
        assert_eq!(
            lines
                .candidate("read_note", "noteName")
                .map(|h| h.value.clone()),
            Some(json!("Projects/Gate.md"))
        );
        // Prose, or a tool that does not list, offers no names.
        let mut prose = Pool::default();
        prose.absorb("list_projects", 1, &text("There are no projects yet."));
        prose.absorb("get_status", 2, &text("ready,idle"));
        assert!(prose.candidate("x", "projectName").is_none());
        assert!(prose.candidate("x", "statusName").is_none());
    }

    #[test]
    fn a_parameter_named_for_a_kind_takes_a_name_an_answer_about_that_kind_gave() {
        let mut pool = Pool::default();
        pool.absorb(
            "list_projects",
            1,
            &text(r#"[{"name": "garden-guide", "chunks": 3}, {"name": "shop-faq"}]"#),
        );
        let found = pool
            .candidate("list_categories", "project")
            .map(|h| &h.value);
        assert!(
            matches!(found, Some(v) if v == "garden-guide" || v == "shop-faq"),
            "{found:?}"
        );
        // Another kind's names are not a project's.
        assert!(pool.candidate("list_chunks", "category").is_none());
    }

    #[test]
    fn an_id_nested_among_another_kind_is_not_the_named_things() {
        let mut pool = Pool::default();
        pool.absorb(
            "add_project_task",
            2,
            &text(r#"{"id": "p-1", "name": "garden", "tasks": [{"id": "t-9"}]}"#),
        );
        assert_eq!(
            pool.candidate("update_project", "project_id")
                .map(|h| &h.value),
            Some(&json!("p-1"))
        );
    }

    #[test]
    fn a_checkout_target_is_a_branch_the_repository_holds() {
        use witness_model::audit::StoreObject;
        let mut pool = Pool::default();
        let at = StoreObject {
            store: "repo".into(),
            object: "ref/refs/heads/drafts".into(),
        };
        pool.seed(
            vec![Harvested::seeded("revision", json!("drafts"), at, None)],
            Vec::new(),
        );
        for param in ["target", "ref", "branch", "commit"] {
            assert_eq!(
                pool.candidate("git_checkout", param).map(|h| &h.value),
                Some(&json!("drafts")),
                "{param}"
            );
        }
        assert!(pool.candidate("git_checkout", "message").is_none());
    }

    #[test]
    fn a_key_in_another_spelling_is_the_same_key() {
        let mut pool = Pool::default();
        pool.seed(
            vec![Harvested::seeded(
                "table_name",
                json!("orders"),
                StoreObject {
                    store: "db".into(),
                    object: "sqlite_master/table:orders".into(),
                },
                Some("tables"),
            )],
            Vec::new(),
        );
        let found = pool.candidate("get_table_schema", "tableName");
        assert_eq!(found.map(|h| h.value.clone()), Some(json!("orders")));
        assert!(pool.candidate("get_table_schema", "tables").is_none());
    }

    #[test]
    fn ids_are_found_with_their_path_and_fit_by_stem_or_noun() {
        let mut pool = Pool::default();
        pool.absorb(
            "create_grant",
            1,
            &text("{\"id\": \"grant_0001\", \"scope\": \"x\"}"),
        );
        pool.absorb("list_notes", 2, &text("[\"welcome\", \"draft\"]"));
        let grant = pool
            .candidate("mint_api_key", "grant_id")
            .map(|h| (h.value.clone(), h.path.clone(), h.step));
        assert_eq!(grant, Some((json!("grant_0001"), "json.id".to_string(), 1)));
        let note = pool
            .candidate("get_note", "id")
            .map(|h| (h.value.clone(), h.path.clone()));
        assert_eq!(note, Some((json!("draft"), "json[1]".to_string())));
        assert!(pool.candidate("create_webhook", "url").is_none());
    }

    #[test]
    fn ids_written_beside_a_listings_items_are_harvested() {
        assert_eq!(
            written_ids("Tasks:\n#1 Plan the garden\n- #2 Fix the gate [open]\n  [ ] #3 Water\n"),
            vec!["1", "2", "3"]
        );
        assert_eq!(
            written_ids("[12] Fix the gate\n[x] done\n- Pay rent (id: 7)\nID=task-9"),
            vec!["12", "7", "task-9"]
        );
        // Headings, words in brackets, colour-less marks and `valid:` are no ids.
        assert!(written_ids("# Heading\n## Notes\n[draft] x\nvalid: yes\nsee #readme").is_empty());
        let mut pool = Pool::default();
        pool.absorb(
            "list_tasks",
            1,
            &json!({"content": [{"type": "text", "text": "#1 Plan the garden\n#4 Fix the gate"}]}),
        );
        let cues = ToolCues {
            tool: "complete_task".into(),
            ..ToolCues::default()
        };
        let found = pool
            .candidate_like(&cues, "task_id", &json!(0))
            .expect("a number id");
        assert_eq!(found.value, json!(4));
        let found = pool
            .candidate_like(&cues, "task_id", &json!("x"))
            .expect("a string id");
        assert_eq!(found.value, json!("4"));
    }

    #[test]
    fn serial_ids_in_prose_are_harvested() {
        let mut pool = Pool::default();
        pool.absorb(
            "create_grant",
            1,
            &text("Created grant grant_0001 for scope 'x'."),
        );
        assert_eq!(
            pool.candidate("mint_api_key", "grant_id")
                .map(|h| (h.value.clone(), h.path.clone())),
            Some((json!("grant_0001"), "text".to_string()))
        );
        assert!(!serial_id("scope"));
        assert!(!serial_id("_12"));
    }

    #[test]
    fn a_parameter_named_for_what_a_creator_made_gets_it() {
        let mut pool = Pool::default();
        assert!(pool.candidate("list_categories", "project").is_none());
        pool.created(
            "create_project",
            3,
            "name",
            &json!("witness-create_project"),
            None,
        );
        let found = pool.candidate("list_categories", "project").unwrap();
        assert_eq!(found.value, json!("witness-create_project"));
        assert_eq!(found.step, 3);
        assert!(pool.candidate("list_categories", "category").is_none());
    }

    #[test]
    fn exact_key_beats_stem_and_nothing_is_invented() {
        let mut pool = Pool::default();
        pool.absorb(
            "mint_api_key",
            3,
            &text("{\"id\": \"key_0002\", \"grant_id\": \"grant_0007\"}"),
        );
        assert_eq!(
            pool.candidate("x", "grant_id").map(|h| h.value.clone()),
            Some(json!("grant_0007"))
        );
        assert_eq!(
            pool.candidate("revoke_api_key", "key_id")
                .map(|h| h.value.clone()),
            Some(json!("key_0002"))
        );
        assert!(Pool::default().candidate("get_note", "id").is_none());
    }

    #[test]
    fn a_tool_that_names_a_kind_of_file_gets_a_file_of_that_kind() {
        let at = |object: &str| StoreObject {
            store: "fs".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/s/a.csv".into(), PathKind::File, at("file/a.csv")),
                Harvested::seeded_path("/s/b.xlsx".into(), PathKind::File, at("file/b.xlsx")),
            ],
            vec!["/s".into()],
        );
        let cues = |tool: &str, description: &str| ToolCues {
            tool: tool.into(),
            store_first: true,
            text: format!("{tool} {description}").to_lowercase(),
            ..ToolCues::default()
        };
        let path = |c: &ToolCues| {
            pool.candidate_like(c, "path", &json!("x"))
                .map(|h| h.value.clone())
        };
        assert_eq!(
            path(&cues("read_sheet", "Read a sheet of an Excel workbook")),
            Some(json!("/s/b.xlsx"))
        );
        assert_eq!(
            path(&cues("read_file", "Read a file")),
            Some(json!("/s/a.csv"))
        );
        assert_eq!(
            cues("read_json", "Returns JSON").file_types(),
            Vec::<&str>::new(),
            "json describes answers, not files"
        );
    }

    #[test]
    fn a_folder_a_tool_moves_or_deletes_is_one_below_the_stores_root() {
        let at = |object: &str| StoreObject {
            store: "vault".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/v".into(), PathKind::Root, at("")),
                Harvested::seeded_path("/v/Daily".into(), PathKind::Dir, at("dir/Daily")),
            ],
            vec!["/v".into()],
        );
        let cues = |tool: &str| ToolCues {
            tool: tool.into(),
            store_first: true,
            text: tool.to_owned(),
            ..ToolCues::default()
        };
        let folder = |tool: &str, param: &str| {
            pool.candidate_like(&cues(tool), param, &json!("x"))
                .map(|h| h.value.clone())
        };
        // Refused as `Invalid folder path: '.'`, the root moved nothing.
        let mut hidden_only = Pool::default();
        hidden_only.seed(
            vec![
                Harvested::seeded_path("/v".into(), PathKind::Root, at("")),
                Harvested::seeded_path("/v/.git".into(), PathKind::Dir, at("dir/.git")),
            ],
            vec!["/v".into()],
        );
        assert!(
            hidden_only
                .candidate_like(&cues("delete_directory"), "folder", &json!("x"))
                .is_none(),
            "never the repository's own folder"
        );
        assert_eq!(folder("move_folder", "old_dir"), Some(json!("/v/Daily")));
        assert_eq!(
            folder("delete_directory", "folder"),
            Some(json!("/v/Daily"))
        );
        // A lister or a search still gets the root, which reaches all.
        assert_eq!(folder("list_folder", "folder"), Some(json!("/v")));
        // Where the folder goes is no folder the store holds.
        assert!(cues("move_folder").new_place("new_dir"));
        assert!(cues("move_folder").new_place("destFolder"));
        assert!(!cues("move_folder").new_place("old_dir"));
        assert!(!cues("move_folder").new_place("todo_dir"));
        assert!(
            !cues("change_dir").new_place("new_dir"),
            "a folder that exists"
        );
    }

    #[test]
    fn each_end_of_a_pair_is_a_thing_of_the_kind_the_rest_of_its_name_says() {
        assert_eq!(paired_stem("id_a").as_deref(), Some("id"));
        assert_eq!(paired_stem("idB").as_deref(), Some("id"));
        assert_eq!(paired_stem("note1").as_deref(), Some("note"));
        assert_eq!(paired_stem("note_id_2").as_deref(), Some("note_id"));
        assert_eq!(paired_stem("second_id").as_deref(), Some("id"));
        assert_eq!(paired_stem("sha256"), None);
        assert_eq!(paired_stem("id"), None);
        assert_eq!(paired_stem("vitamin_b12"), None);
        let mut pool = Pool::default();
        pool.absorb(
            "memory_write",
            3,
            &json!({"structuredContent": {"id": "20261207_abc", "type": "fact"}}),
        );
        // `memory_link` is about memories: the id `memory_write` answered.
        for end in ["id_a", "id_b"] {
            assert_eq!(
                pool.candidate("memory_link", end).map(|h| h.value.clone()),
                Some(json!("20261207_abc")),
                "{end}"
            );
        }
        assert!(pool.candidate("tag_link", "id_a").is_none());
        assert_eq!(paired_stem("first_name"), None, "a person's, not a pair's");
        assert_eq!(paired_stem("first_id").as_deref(), Some("id"));
        // A verb is no thing: `delete_link` takes no id from `delete_*`.
        let mut deletes = Pool::default();
        deletes.absorb(
            "delete_config",
            1,
            &json!({"structuredContent": {"id": "cfg-1"}}),
        );
        assert!(deletes.candidate("delete_link", "id").is_none());
    }

    #[test]
    fn the_kind_a_tool_wants_most_wins_over_the_stores_order_and_the_newest() {
        let at = |object: &str| StoreObject {
            store: "docs".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/d/README.md".into(), PathKind::File, at("file/README.md")),
                Harvested::seeded_path("/d/logo.png".into(), PathKind::File, at("file/logo.png")),
                Harvested::seeded_path("/d/scan.pdf".into(), PathKind::File, at("file/scan.pdf")),
            ],
            vec!["/d".into()],
        );
        let cues = |tool: &str, description: &str| ToolCues {
            tool: tool.into(),
            store_first: true,
            text: format!("{tool} {description}").to_lowercase(),
            ..ToolCues::default()
        };
        let path = |pool: &Pool, c: &ToolCues| {
            pool.candidate_like(c, "input_path", &json!("x"))
                .map(|h| h.value.clone())
        };
        // The PNG and the Markdown file come first in the store, and the
        // text names images and Markdown too: the PDF the name says wins.
        assert_eq!(
            path(
                &pool,
                &cues("read_pdf", "Reads PDF text and embedded images")
            ),
            Some(json!("/d/scan.pdf"))
        );
        assert_eq!(
            path(&pool, &cues("extract_structured", "PDF pages to Markdown")),
            Some(json!("/d/scan.pdf"))
        );
        // The store holds no deck, the plan made one and then a PDF: a
        // deck editor whose text mentions PDFs edits the deck.
        for (step, made) in [(4, "/d/witness.pptx"), (5, "/d/witness.pdf")] {
            pool.created("make", step, "out_path", &json!(made), Some(PathKind::File));
        }
        assert_eq!(
            path(
                &pool,
                &cues("edit_pptx", "Edits a deck. Do not use for PDFs")
            ),
            Some(json!("/d/witness.pptx"))
        );
    }

    #[test]
    fn a_named_parameter_fits_the_name_inside_a_collection_of_that_thing() {
        let mut pool = Pool::default();
        pool.absorb(
            "create_entities",
            1,
            &json!({"structuredContent": {"entities": [{"name": "Ada", "entityType": "person"}]}}),
        );
        let hit = pool
            .candidate("add_observations", "entityName")
            .map(|h| (h.value.clone(), h.path.clone()));
        assert_eq!(
            hit,
            Some((json!("Ada"), "structured.entities[0].name".to_string()))
        );
        assert!(pool.candidate("x", "relationName").is_none());
        // A number never stands in for a string, nor the reverse.
        let cues = ToolCues {
            tool: "add_observations".into(),
            ..ToolCues::default()
        };
        assert!(
            pool.candidate_like(&cues, "entityName", &json!(1))
                .is_none()
        );
        assert_eq!(singular("entities"), "entity");
        assert_eq!(singular("Notes"), "note");
        assert_eq!(singular("boxes"), "box");
        assert_eq!(singular("address"), "address");
    }
}
