//! Content views: a file in a directory store seen for what it holds.
//!
//! A server that keeps its records in one JSON document rewrites the whole
//! file on every change; seen as bytes, adding a record is an overwrite of
//! the file. A directory store's observer ([`crate::fs::FsObserver::with_content_views`])
//! therefore reads a file it can parse as the objects inside it, chosen by
//! what the bytes are (their first bytes, then a successful parse), never by
//! the file's or the server's name:
//!
//! - **SQLite** (the 16-byte `SQLite format 3` header): a database, observed
//!   row by row and schema entry by schema entry by the SQLite observer
//!   itself; its `-wal`, `-shm` and `-journal` companions are part of it,
//!   not files of their own.
//! - **JSON lines** (two or more lines, each one JSON object; or one line of
//!   the memory server's shape, or in a file named `.jsonl`, `.ndjson` or
//!   `.jsonlines`, whose name says what its next line will make it): the lines, keyed as the JSON-lines store
//!   keys them (the same reader, [`crate::jsonl`]), by the memory server's
//!   shape when every line has it, else by an evident key field, else by
//!   each line's content; never by position.
//! - **JSON** (any other text that parses as one JSON value): one object per
//!   JSON object in the document, named by its JSON pointer, where a step
//!   into an array of records is `[field=value]` by the records' evident id
//!   field ([`crate::jsonl::evident_key`]) and `[#digest]` by content when
//!   no field is evident. An object's fields are its scalar members and the
//!   elements of its arrays of scalars; a member that is an object or an
//!   array of records is an object of its own, so adding a record is the
//!   create of that record and an additive update of nothing else, and
//!   removing one is the delete of that record.
//! - **Spreadsheets** ([`crate::sheet`]): a zip whose content types declare
//!   an xlsx or ods workbook, and a file named `.csv` that parses as RFC
//!   4180 CSV, one object per non-empty cell, its value the content.
//! - **Markdown** ([`crate::markdown`]): a file named `.md` or `.markdown`
//!   that is UTF-8, one object per front-matter key, heading and list item,
//!   so a card added to a board rewritten whole is the create of that card.
//!
//! Object ids name the file and the object inside it:
//! `json/<path>#<pointer>`, `jsonl/<path>#<line id>`, `sqlite/<path>#<row id>`,
//! `xlsx/<path>#<sheet>!<A1>`, `ods/<path>#<sheet>!<A1>`, `csv/<path>#<A1>`,
//! `md/<path>#front-matter/<key>`, `md/<path>#/<heading>/[#<item digest>]`,
//! where `<path>` is rendered as the file's `file/` id renders it, with `#`
//! written `\x23` so the first `#` always ends the path. Pointer steps escape
//! `~` as `~0`, `/` as `~1` and (inside a record key) `]` as `~2`.
//!
//! A file is parsed only when it is no larger than [`MAX_PARSE_BYTES`] and the
//! observation's byte budget; a larger one, or one whose parse runs past the
//! time budget, is observed as a file, with a warning.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::jsonl::{self, KeyStrategy, evident_key, short_digest};
use crate::{ObjectState, digest_hex, markdown, sheet};

/// Largest file read as content (a JSON document is held in memory, about
/// ten times its size once parsed).
pub const MAX_PARSE_BYTES: u64 = 64 << 20;

/// The header every SQLite database file begins with.
pub(crate) const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The files SQLite keeps beside a database while it works on it.
pub(crate) const SQLITE_COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// How often (in JSON objects visited) a parse looks at the clock.
const CLOCK_EVERY: usize = 4_096;

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// What a file was read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Json,
    Jsonl,
    Sqlite,
    Xlsx,
    Ods,
    Csv,
    Markdown,
}

impl Kind {
    /// The group its objects' ids begin with.
    pub(crate) fn group(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Jsonl => "jsonl",
            Self::Sqlite => "sqlite",
            Self::Xlsx => "xlsx",
            Self::Ods => "ods",
            Self::Csv => "csv",
            Self::Markdown => "md",
        }
    }
}

/// What, beside its bytes, decides how a file is read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hints<'a> {
    /// How the file read before, so JSON lines keep their keys.
    pub(crate) previous: Option<&'a View>,
    /// The file is named `.csv`: CSV has no magic, so only such a file is
    /// tried as one (and read as one only if it parses).
    pub(crate) csv_name: bool,
    /// The file is named `.md` or `.markdown`: markdown has no magic either,
    /// so only such a file is read as one (if it is UTF-8).
    pub(crate) markdown_name: bool,
    /// The file is named `.jsonl`, `.ndjson` or `.jsonlines`: its one line
    /// is JSON lines too, so the line the second one joins keeps its id
    /// rather than reading as a document's pointers deleted.
    pub(crate) lines_name: bool,
    /// Most bytes a workbook's zip may unpack to.
    pub(crate) max_unpacked: u64,
    pub(crate) deadline: Instant,
}

impl Hints<'_> {
    /// Whether a file named `name` may be CSV.
    pub(crate) fn is_csv_name(name: &std::ffi::OsStr) -> bool {
        std::path::Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    }

    /// Whether a file named `name` says it holds JSON lines.
    pub(crate) fn is_lines_name(name: &std::ffi::OsStr) -> bool {
        std::path::Path::new(name).extension().is_some_and(|e| {
            ["jsonl", "ndjson", "jsonlines"]
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        })
    }
}

/// The objects one file holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) kind: Kind,
    /// By id inside the file (empty for a database: its observer keeps them).
    pub(crate) objects: BTreeMap<String, ObjectState>,
    /// How JSON lines were keyed, kept so the next reading keys them alike.
    pub(crate) strategy: Option<KeyStrategy>,
    /// What a reader should know (a duplicate key), each about this file.
    pub(crate) warnings: Vec<String>,
}

/// What reading one file's bytes as content gave.
pub(crate) enum Read {
    /// Not a kind of content read here: a file like any other.
    Opaque,
    View(View),
    /// Content that could not be read within the budget: a file, with why.
    Fallback(String),
}

/// Whether a file beginning with `head` is a SQLite database.
pub(crate) fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(SQLITE_MAGIC)
}

/// Whether a file beginning with `head` may be JSON or JSON lines: its first
/// byte that is not whitespace (after a byte-order mark) opens an object or
/// an array. Only such files are parsed.
pub(crate) fn may_be_json(head: &[u8]) -> bool {
    let head = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    matches!(
        head.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// Whether a file beginning with `head`, named as `hints` say, is read as
/// content at all (read whole, then sniffed and parsed).
pub(crate) fn may_be_content(head: &[u8], hints: &Hints<'_>) -> bool {
    is_sqlite(head)
        || sheet::is_zip(head)
        || may_be_json(head)
        || hints.csv_name
        || hints.markdown_name
}

/// The objects of a workbook, a CSV or a markdown file, as a view.
fn cells(kind: Kind, read: sheet::Cells) -> Read {
    match read {
        Ok(objects) => Read::View(View {
            kind,
            objects,
            strategy: None,
            warnings: Vec::new(),
        }),
        Err(why) => Read::Fallback(why),
    }
}

/// Reads `bytes` (a whole file) as content, keying JSON lines as the
/// previous reading did where its key still fits every line.
pub(crate) fn read(bytes: &[u8], hints: &Hints<'_>) -> Read {
    let (previous, deadline) = (hints.previous, hints.deadline);
    if is_sqlite(bytes) {
        return Read::View(View {
            kind: Kind::Sqlite,
            objects: BTreeMap::new(),
            strategy: None,
            warnings: Vec::new(),
        });
    }
    if sheet::is_zip(bytes) {
        let max = hints.max_unpacked.min(sheet::MAX_UNPACKED_BYTES);
        return match sheet::book_of(std::io::Cursor::new(bytes)) {
            Some(sheet::Book::Xlsx) => cells(
                Kind::Xlsx,
                sheet::workbook_cells(bytes, sheet::Book::Xlsx, max, deadline),
            ),
            Some(sheet::Book::Ods) => cells(
                Kind::Ods,
                sheet::workbook_cells(bytes, sheet::Book::Ods, max, deadline),
            ),
            None => Read::Opaque,
        };
    }
    if hints.csv_name
        && let Some(read) = sheet::csv_cells(bytes, deadline)
    {
        return cells(Kind::Csv, read);
    }
    if hints.markdown_name
        && let Some(read) = markdown::outline(bytes, deadline)
    {
        return cells(Kind::Markdown, read);
    }
    if !may_be_json(bytes) {
        return Read::Opaque;
    }
    let kept = previous
        .and_then(|p| p.strategy.as_ref())
        .filter(|s| {
            jsonl::evident_strategy(bytes, hints.lines_name).is_some()
                && jsonl::still_fits(bytes, s)
        })
        .cloned();
    if let Some(strategy) = kept.or_else(|| jsonl::evident_strategy(bytes, hints.lines_name)) {
        let snapshot = jsonl::snapshot_of(bytes, &strategy);
        return Read::View(View {
            kind: Kind::Jsonl,
            objects: snapshot.objects,
            strategy: Some(strategy),
            warnings: snapshot.warnings,
        });
    }
    let text = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let Ok(value) = serde_json::from_slice::<Value>(text) else {
        return Read::Opaque;
    };
    if Instant::now() > deadline {
        return Read::Fallback("parsed past the observation time budget (--max-observe-ms)".into());
    }
    let mut walk = Walk {
        objects: BTreeMap::new(),
        visited: 0,
        deadline,
        late: false,
    };
    walk.node(&value, String::new());
    if walk.late {
        return Read::Fallback("parsed past the observation time budget (--max-observe-ms)".into());
    }
    Read::View(View {
        kind: Kind::Json,
        objects: walk.objects,
        strategy: None,
        warnings: Vec::new(),
    })
}

/// A JSON document's objects, collected as its tree is walked.
struct Walk {
    objects: BTreeMap<String, ObjectState>,
    visited: usize,
    deadline: Instant,
    late: bool,
}

impl Walk {
    /// The object at `pointer` and every object below it.
    fn node(&mut self, value: &Value, pointer: String) {
        match value {
            Value::Object(members) => self.object(members, pointer),
            other => {
                if self.tick() {
                    return;
                }
                let mut fields = BTreeMap::new();
                self.member("", other, pointer.clone(), &mut fields);
                self.objects.insert(pointer, state_of(fields));
            }
        }
    }

    /// Whether the parse is past its deadline (looked at now and then).
    fn tick(&mut self) -> bool {
        self.visited += 1;
        if self.visited.is_multiple_of(CLOCK_EVERY) && Instant::now() > self.deadline {
            self.late = true;
        }
        self.late
    }

    fn object(&mut self, members: &Map<String, Value>, pointer: String) {
        if self.tick() {
            return;
        }
        let mut fields = BTreeMap::new();
        // Present in every object, so an empty one that gains a member is
        // seen to grow, not to be replaced.
        fields.insert("{}".to_owned(), "1".to_owned());
        for (name, member) in members {
            let below = format!("{pointer}/{}", escape(name));
            self.member(name, member, below, &mut fields);
        }
        self.objects.insert(pointer, state_of(fields));
    }

    /// One member of an object (or a document that is not one): a field of
    /// it, or objects of their own at `below`.
    fn member(
        &mut self,
        name: &str,
        value: &Value,
        below: String,
        fields: &mut BTreeMap<String, String>,
    ) {
        match value {
            Value::Object(_) => {
                fields.insert(format!("{name}{{}}"), "1".to_owned());
                self.node(value, below);
            }
            Value::Array(items) => {
                let records: Option<Vec<&Map<String, Value>>> =
                    items.iter().map(Value::as_object).collect();
                match records {
                    Some(records) if !records.is_empty() => {
                        // The same marker as any array: emptied, it lost
                        // its records (deleted on their own), not itself.
                        fields.insert(format!("{name}[]"), "1".to_owned());
                        self.records(&records, &below);
                    }
                    _ => {
                        // A multiset of values, as the JSON-lines store
                        // splits an array: growth adds fields, loss removes.
                        fields.insert(format!("{name}[]"), "1".to_owned());
                        let mut seen: HashMap<String, usize> = HashMap::new();
                        for item in items {
                            let digest = short_digest(item);
                            let count = seen.entry(digest.clone()).or_insert(0);
                            *count += 1;
                            let field = if *count == 1 {
                                format!("{name}[]{digest}")
                            } else {
                                format!("{name}[]{digest}#{count}")
                            };
                            fields.insert(field, "1".to_owned());
                        }
                    }
                }
            }
            scalar => {
                let name = if name.is_empty() { "value" } else { name };
                fields.insert(name.to_owned(), short_digest(scalar));
            }
        }
    }

    /// An array of records, each under `pointer/[field=value]`, or by its
    /// content where no field identifies them.
    fn records(&mut self, records: &[&Map<String, Value>], pointer: &str) {
        let key = evident_key(records.iter().copied());
        let mut seen: HashMap<String, usize> = HashMap::new();
        for record in records {
            let step = match key.as_deref().and_then(|k| record.get(k).map(|v| (k, v))) {
                Some((field, Value::String(s))) => format!("[{}={}]", escape(field), escape_key(s)),
                Some((field, other)) => format!("[{}={}]", escape(field), other),
                None => {
                    let mut text = String::new();
                    jsonl::write_object(record, &mut text);
                    let mut digest = digest_hex(text.as_bytes());
                    digest.truncate(16);
                    let count = seen.entry(digest.clone()).or_insert(0);
                    *count += 1;
                    if *count == 1 {
                        format!("[#{digest}]")
                    } else {
                        format!("[#{digest}*{count}]")
                    }
                }
            };
            self.object(record, format!("{pointer}/{step}"));
        }
    }
}

/// The digest of an object's fields (its own members, not its children's).
fn state_of(fields: BTreeMap<String, String>) -> ObjectState {
    let mut text = String::new();
    for (name, digest) in &fields {
        text.push_str(name);
        text.push('\0');
        text.push_str(digest);
        text.push('\n');
    }
    ObjectState {
        digest: digest_hex(text.as_bytes()),
        size: text.len() as u64,
        fields,
        head: None,
    }
}

/// A member name as a JSON pointer step.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A record's key value inside `[field=value]`.
fn escape_key(value: &str) -> String {
    escape(value).replace(']', "~2")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::{Op, Snapshot, diff};

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    fn hints(previous: Option<&View>, deadline: Instant) -> Hints<'_> {
        Hints {
            previous,
            csv_name: false,
            markdown_name: false,
            lines_name: false,
            max_unpacked: u64::MAX,
            deadline,
        }
    }

    fn view(bytes: &[u8]) -> View {
        match read(bytes, &hints(None, later())) {
            Read::View(v) => v,
            Read::Opaque => panic!("opaque"),
            Read::Fallback(why) => panic!("fallback: {why}"),
        }
    }

    fn snap(v: &View) -> Snapshot {
        Snapshot {
            objects: v.objects.clone(),
            warnings: Vec::new(),
        }
    }

    fn changes(a: &[u8], b: &[u8]) -> Vec<(String, Op, bool)> {
        diff(&snap(&view(a)), &snap(&view(b)))
            .changes
            .into_iter()
            .map(|c| (c.object.clone(), c.op, c.is_destructive()))
            .collect()
    }

    const TASKS: &str = r#"{
  "requests": [
    {"requestId": "req-1", "originalRequest": "plan", "completed": false,
     "tasks": [{"id": "task-1", "title": "a", "done": false}]}
  ]
}"#;

    #[test]
    fn a_record_added_to_a_rewritten_document_is_one_create() {
        let added = r#"{"requests":[{"tasks":[{"done":false,"title":"a","id":"task-1"},
            {"id":"task-2","title":"b","done":false}],"completed":false,
            "originalRequest":"plan","requestId":"req-1"}]}"#;
        assert_eq!(
            changes(TASKS.as_bytes(), added.as_bytes()),
            [(
                "/requests/[requestId=req-1]/tasks/[id=task-2]".into(),
                Op::Create,
                false
            )]
        );
    }

    #[test]
    fn a_record_removed_is_the_delete_of_that_record_and_an_edit_an_overwrite() {
        let removed = r#"{"requests":[{"requestId":"req-1","originalRequest":"plan",
            "completed":false,"tasks":[]}]}"#;
        assert_eq!(
            changes(TASKS.as_bytes(), removed.as_bytes()),
            [(
                "/requests/[requestId=req-1]/tasks/[id=task-1]".into(),
                Op::Delete,
                true
            )]
        );
        let edited = TASKS.replace("\"done\": false", "\"done\": true");
        assert_eq!(
            changes(TASKS.as_bytes(), edited.as_bytes()),
            [(
                "/requests/[requestId=req-1]/tasks/[id=task-1]".into(),
                Op::Update,
                true
            )]
        );
        // A member added to a record only grows it.
        let grown = TASKS.replace("\"done\": false", "\"done\": false, \"note\": \"x\"");
        assert_eq!(
            changes(TASKS.as_bytes(), grown.as_bytes()),
            [(
                "/requests/[requestId=req-1]/tasks/[id=task-1]".into(),
                Op::Update,
                false
            )]
        );
    }

    #[test]
    fn records_without_an_evident_id_are_keyed_by_content_not_position() {
        let before = br#"[{"t":"a"},{"t":"b"},{"t":"c"}]"#;
        let after = br#"[{"t":"b"},{"t":"c"}]"#;
        let found = changes(before, after);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1, Op::Delete);
        assert!(found[0].0.starts_with("/[#"), "{found:?}");
        // The same records in another order, reformatted: no change.
        assert!(changes(before, b"[ {\"t\":\"c\"}, {\"t\":\"a\"}, {\"t\":\"b\"} ]").is_empty());
    }

    #[test]
    fn json_lines_are_keyed_as_the_jsonl_store_keys_them() {
        let before = b"{\"id\":2,\"t\":\"b\"}\n{\"id\":1,\"t\":\"a\"}\n";
        let sorted = b"{\"id\":1,\"t\":\"a\"}\n{\"id\":2,\"t\":\"b\"}\n{\"id\":3,\"t\":\"c\"}\n";
        let v = view(before);
        assert_eq!(v.kind, Kind::Jsonl);
        assert_eq!(
            changes(before, sorted),
            [("record/3".into(), Op::Create, false)]
        );
        // No key: by content; a line removed is its delete.
        let plain = b"{\"t\":\"a\"}\n{\"t\":\"b\"}\n";
        let fewer = b"{\"t\":\"b\"}\n";
        assert_eq!(view(plain).strategy, Some(KeyStrategy::Content));
        let found = changes(plain, fewer);
        // One line left is a JSON document, not JSON lines.
        assert_eq!(view(fewer).kind, Kind::Json);
        assert!(!found.is_empty());
        let memory =
            b"{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"p\",\"observations\":[]}";
        assert_eq!(view(memory).kind, Kind::Jsonl);
    }

    #[test]
    fn a_kept_key_survives_a_line_that_would_change_the_inference() {
        let first = view(b"{\"id\":1,\"t\":\"a\"}\n{\"id\":2,\"t\":\"b\"}\n");
        let next = b"{\"id\":1,\"t\":\"a\"}\n{\"id\":2,\"t\":\"b\"}\n{\"id\":3,\"t\":\"a\"}\n";
        let Read::View(v) = read(next, &hints(Some(&first), later())) else {
            panic!("a view");
        };
        assert_eq!(v.strategy, first.strategy);
    }

    #[test]
    fn what_is_not_json_or_sqlite_is_opaque_and_a_database_is_seen_by_its_header() {
        assert!(matches!(
            read(b"hello", &hints(None, later())),
            Read::Opaque
        ));
        assert!(matches!(
            read(b"{not json", &hints(None, later())),
            Read::Opaque
        ));
        let mut db = SQLITE_MAGIC.to_vec();
        db.extend_from_slice(&[0; 84]);
        assert!(matches!(
            read(&db, &hints(None, later())),
            Read::View(View {
                kind: Kind::Sqlite,
                ..
            })
        ));
    }

    #[test]
    fn a_parse_past_the_deadline_falls_back() {
        let big: String = format!(
            "[{}]",
            (0..20_000)
                .map(|i| format!("{{\"id\":{i}}}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(matches!(
            read(big.as_bytes(), &hints(None, Instant::now())),
            Read::Fallback(_)
        ));
    }
}
