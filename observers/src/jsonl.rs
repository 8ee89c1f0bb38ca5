//! JSON-lines observer.
//!
//! Treats each line of a JSONL file as one object, identified by a key taken
//! from the line itself (never by its position, which shifts whenever an
//! earlier line is deleted), and digested from its *canonical* JSON: keys
//! sorted recursively and no insignificant whitespace. A server that rewrites
//! the whole file with the same content, reordered keys or different spacing
//! (the memory server rewrites on every change, via temp file and rename) is
//! therefore seen to change nothing.
//!
//! Each object is split into fields so that [`crate::diff`] can tell growth
//! from loss: a scalar top-level key is one field (its value's short digest),
//! and an array is a multiset of elements, one field per element
//! (`observations[]<short digest>`, with `#2`, `#3` for repeated elements) plus
//! a marker field `observations[]` for the array itself. Appending an
//! observation only adds a field (an additive update); deleting one, or
//! removing the array, makes a field vanish (an overwrite). Reordering
//! elements changes the digest but no field, so it reads as additive.
//!
//! Nothing in the file is fatal. A line that is not JSON, or not a JSON
//! object, becomes `line/<n>` (1-based physical line number) digested from its
//! raw bytes, with a warning; an object without the expected key becomes
//! `line/<n>` with its canonical digest, with a warning; a key seen twice keeps
//! both lines as `<id>` and `<id>#2`, with a warning. Blank lines are skipped
//! (but counted, so line numbers match an editor's), as is a UTF-8 byte-order
//! mark at the start of the file. A line longer than
//! [`MAX_LINE_BYTES`] is digested as it streams past, never held or parsed.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::stamp::{Stamp, now_ns};
use crate::watch::FileSetWatch;
use crate::{
    Activity, Budget, Delta, ObjectState, Observation, ObserveError, Observer, Snapshot, diff,
    digest_hex,
};

/// Longest line that is parsed. A store line this long is either not a store
/// or an attack on the observer; either way it is not worth the memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Hex characters kept of a per-field digest (as the SQLite observer does).
const FIELD_DIGEST_CHARS: usize = 16;

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Prefix used by `field:` specs that do not name one.
const DEFAULT_PREFIX: &str = "record";

/// How a line's object id is derived from its content.
///
/// As a string (for a command line), a strategy is one of:
///
/// - `memory`: the knowledge graph of `@modelcontextprotocol/server-memory`.
///   `{"type":"entity","name":N,…}` is `entity/N`;
///   `{"type":"relation","from":F,"to":T,"relationType":R}` is `relation/F->T:R`.
/// - `field:<f1>[,<f2>…]`: the values of the named top-level fields, joined
///   with `,`, under the prefix `record`: `field:id` gives `record/42`.
/// - `field:<f1>[,<f2>…]@<prefix>`: the same under another prefix:
///   `field:user,day@visit` gives `visit/alice,2024-05-01`.
///
/// - `content`: no key in the line; each line is `record/<short digest>` of
///   its canonical JSON, so a reordered file is no change, an edited line is
///   the delete of one record and the create of another, and a removed line
///   the delete of its record. (What a directory store uses for a JSON-lines
///   file whose lines carry no evident key; see [`evident_strategy`].)
///
/// Field names in the string form cannot contain `,` or `@`; build
/// [`KeyStrategy::Fields`] directly for such names. A string field value is
/// used as is; any other value by its canonical JSON (`42`, `true`). A field
/// that is absent or `null` means the line has no key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeyStrategy {
    #[default]
    Memory,
    Fields {
        prefix: String,
        fields: Vec<String>,
    },
    Content,
}

/// A key strategy string that does not follow the syntax of [`KeyStrategy`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid JSONL key strategy {spec:?}: {reason} (expected `memory`, `field:<f1>[,<f2>…]` or `field:<f1>[,<f2>…]@<prefix>`)"
)]
pub struct KeySpecError {
    pub spec: String,
    pub reason: &'static str,
}

impl FromStr for KeyStrategy {
    type Err = KeySpecError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let fail = |reason| KeySpecError {
            spec: spec.to_owned(),
            reason,
        };
        let trimmed = spec.trim();
        if trimmed == "memory" {
            return Ok(Self::Memory);
        }
        if trimmed == "content" {
            return Ok(Self::Content);
        }
        let Some(rest) = trimmed.strip_prefix("field:") else {
            return Err(fail("unknown strategy"));
        };
        let (names, prefix) = match rest.split_once('@') {
            Some((names, prefix)) => (names, prefix.trim()),
            None => (rest, DEFAULT_PREFIX),
        };
        if prefix.is_empty() {
            return Err(fail("empty prefix"));
        }
        let fields: Vec<String> = names.split(',').map(|f| f.trim().to_owned()).collect();
        if fields.iter().any(String::is_empty) {
            return Err(fail("empty field name"));
        }
        Ok(Self::Fields {
            prefix: prefix.to_owned(),
            fields,
        })
    }
}

impl fmt::Display for KeyStrategy {
    /// The string form, so a report can say how ids were made and a CLI can
    /// take it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str("memory"),
            Self::Content => f.write_str("content"),
            Self::Fields { prefix, fields } => {
                write!(f, "field:{}", fields.join(","))?;
                if prefix != DEFAULT_PREFIX {
                    write!(f, "@{prefix}")?;
                }
                Ok(())
            }
        }
    }
}

impl KeyStrategy {
    /// The id of one line's object, or why the line has none.
    fn id_of(&self, object: &Map<String, Value>) -> Result<String, String> {
        match self {
            Self::Memory => {
                let text = |key: &str| object.get(key).and_then(Value::as_str);
                match text("type") {
                    Some("entity") => match text("name") {
                        Some(name) => Ok(format!("entity/{name}")),
                        None => Err("entity without a string \"name\"".into()),
                    },
                    Some("relation") => match (text("from"), text("to"), text("relationType")) {
                        (Some(from), Some(to), Some(kind)) => {
                            Ok(format!("relation/{from}->{to}:{kind}"))
                        }
                        _ => Err("relation without string \"from\", \"to\" and \
                                      \"relationType\""
                            .into()),
                    },
                    Some(other) => Err(format!("unknown \"type\" {other:?}")),
                    None => Err("no string \"type\"".into()),
                }
            }
            Self::Content => {
                let mut text = String::new();
                write_object(object, &mut text);
                let mut digest = digest_hex(text.as_bytes());
                digest.truncate(FIELD_DIGEST_CHARS);
                Ok(format!("{DEFAULT_PREFIX}/{digest}"))
            }
            Self::Fields { prefix, fields } => {
                let mut parts = Vec::with_capacity(fields.len());
                for field in fields {
                    match object.get(field) {
                        None | Some(Value::Null) => return Err(format!("no {field:?}")),
                        Some(Value::String(s)) => parts.push(s.clone()),
                        Some(other) => parts.push(canonical(other)),
                    }
                }
                Ok(format!("{prefix}/{}", parts.join(",")))
            }
        }
    }
}

/// Observes a JSON-lines file line by line.
#[derive(Debug)]
pub struct JsonlObserver {
    path: PathBuf,
    strategy: KeyStrategy,
    max_line: usize,
    last: Snapshot,
    budget: Budget,
    events: Option<FileSetWatch>,
    parsed: LineCache,
    /// The file's stamp before the last read, and when it was taken.
    stamp: Option<(Option<Stamp>, i128)>,
}

impl JsonlObserver {
    /// The path is remembered, not opened: the memory server creates its file
    /// only on the first change. Ids follow [`KeyStrategy::Memory`] until
    /// [`Self::with_strategy`] says otherwise.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            strategy: KeyStrategy::default(),
            max_line: MAX_LINE_BYTES,
            last: Snapshot::default(),
            budget: Budget::DEFAULT,
            events: None,
            parsed: LineCache::new(),
            stamp: None,
        }
    }

    /// Chooses how object ids are derived from lines.
    pub fn with_strategy(mut self, strategy: KeyStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets how much one observation may read and how long it may take.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// The file this observer watches, for reports and error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn strategy(&self) -> &KeyStrategy {
        &self.strategy
    }

    /// One line's bytes, parsed.
    fn parse(&self, buf: &[u8]) -> Parsed {
        match serde_json::from_slice::<Value>(buf) {
            Ok(Value::Object(object)) => {
                Parsed::Object(self.strategy.id_of(&object), object_state(&object))
            }
            Ok(_) => Parsed::NotObject(ObjectState::whole(buf)),
            Err(e) => Parsed::NotJson(e.to_string(), ObjectState::whole(buf)),
        }
    }

    /// Reads a whole JSONL stream into a snapshot, parsing only lines not in
    /// `old` and leaving every line read in `fresh`. Only I/O errors are fatal.
    fn read(
        &self,
        mut reader: impl BufRead,
        old: &LineCache,
        fresh: &mut LineCache,
    ) -> io::Result<Snapshot> {
        let mut lines = Lines::default();
        let mut buf = Vec::new();
        let mut line_no = 0usize;
        loop {
            buf.clear();
            let limit = u64::try_from(self.max_line)
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            let read = reader.by_ref().take(limit).read_until(b'\n', &mut buf)?;
            if read == 0 {
                break;
            }
            line_no += 1;
            let ended = buf.last() == Some(&b'\n');
            if ended {
                buf.pop();
            }
            let id_fallback = format!("line/{line_no}");
            if !ended && buf.len() > self.max_line {
                let mut hasher = blake3::Hasher::new();
                hasher.update(&buf);
                let rest = digest_rest_of_line(&mut reader, &mut hasher)?;
                let size = u64::try_from(buf.len())
                    .unwrap_or(u64::MAX)
                    .saturating_add(rest);
                lines.warn(format!(
                    "line {line_no}: longer than {} bytes, digested without parsing",
                    self.max_line
                ));
                let state = ObjectState {
                    digest: hasher.finalize().to_hex().to_string(),
                    size,
                    fields: BTreeMap::new(),
                    head: None,
                };
                lines.insert(id_fallback, line_no, state);
                continue;
            }
            if line_no == 1 && buf.starts_with(UTF8_BOM) {
                // Some editors start a file with one; it is not part of the JSON.
                buf.drain(..UTF8_BOM.len());
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let key = *blake3::hash(&buf).as_bytes();
            let parsed = match old.get(&key) {
                Some(parsed) => parsed.clone(),
                None => self.parse(&buf),
            };
            match &parsed {
                Parsed::Object(Ok(id), state) => lines.insert(id.clone(), line_no, state.clone()),
                Parsed::Object(Err(reason), state) => {
                    lines.warn(format!(
                        "line {line_no}: {reason}; observed as {id_fallback}"
                    ));
                    lines.insert(id_fallback, line_no, state.clone());
                }
                Parsed::NotObject(state) => {
                    lines.warn(format!("line {line_no}: not a JSON object"));
                    lines.insert(id_fallback, line_no, state.clone());
                }
                Parsed::NotJson(e, state) => {
                    lines.warn(format!("line {line_no}: not JSON: {e}"));
                    lines.insert(id_fallback, line_no, state.clone());
                }
            }
            fresh.insert(key, parsed);
        }
        Ok(lines.snapshot)
    }
}

impl Observer for JsonlObserver {
    fn kind(&self) -> &'static str {
        "jsonl"
    }

    /// A file whose stamp did not move (clearly after its last write, or
    /// with events saying nothing touched it) is not read again; otherwise
    /// only lines not seen before are parsed.
    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        if self.events.is_none() {
            let files = vec![self.path.clone()];
            self.events = Some(FileSetWatch::new(&files));
        }
        let quiet = self.events.as_mut().and_then(FileSetWatch::take_touched) == Some(false);
        let taken_at = now_ns();
        let stamp = Stamp::read(&self.path).map_err(|source| ObserveError::Io {
            path: self.path.clone(),
            source,
        })?;
        if let Some((last, at)) = self.stamp
            && last == stamp
            && (quiet || stamp.is_none_or(|s| s.settled_at(at)))
        {
            return Ok(Observation {
                delta: Delta::default(),
                warnings: self.last.warnings.clone(),
                rows: Vec::new(),
            });
        }
        let now = self.snapshot()?;
        self.stamp = Some((stamp, taken_at));
        let delta = if changes {
            diff(&self.last, &now)
        } else {
            Delta::default()
        };
        let warnings = now.warnings.clone();
        self.last = now;
        Ok(Observation {
            delta,
            warnings,
            rows: Vec::new(),
        })
    }

    fn activity(&mut self) -> Activity {
        FileSetWatch::activity_of(self.events.as_mut())
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        for id in self.last.objects.keys() {
            visit(id);
        }
        Ok(())
    }
}

impl JsonlObserver {
    /// Opens the file once: a concurrent temp+rename rewrite replaces the
    /// directory entry, not the inode being read, so a snapshot is always of
    /// one whole version of the file.
    pub fn snapshot(&mut self) -> Result<Snapshot, ObserveError> {
        let io_err = |source| ObserveError::Io {
            path: self.path.clone(),
            source,
        };
        let file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Snapshot::default()),
            Err(e) => return Err(io_err(e)),
        };
        if let Ok(meta) = file.metadata()
            && meta.len() > self.budget.max_bytes
        {
            return Err(ObserveError::OverBudget {
                path: self.path.clone(),
                size: meta.len(),
                budget: self.budget.max_bytes,
            });
        }
        let old = std::mem::take(&mut self.parsed);
        let mut fresh = LineCache::new();
        let read = self.read(BufReader::with_capacity(64 * 1024, file), &old, &mut fresh);
        self.parsed = fresh;
        read.map_err(io_err)
    }
}

/// Field names that say "this is the record's identity" wherever they are
/// found, tried in this order before any `…Id`/`…_id` field (see
/// [`evident_key`]).
const KEY_NAMES: [&str; 5] = ["id", "_id", "uuid", "key", "name"];

/// The field that identifies every one of `records`, when one is evident: a
/// field every record has, whose value is a string or an integer, distinct
/// in each record. `id`, `_id`, `uuid`, `key` and `name` are tried first, in
/// that order, then any field whose name ends in `Id`, `ID` or `_id`
/// (`requestId`, `task_id`), in byte order. Nothing about the server or the
/// file's name is consulted: only what the records hold.
pub(crate) fn evident_key<'a>(
    records: impl Iterator<Item = &'a Map<String, Value>> + Clone,
) -> Option<String> {
    let first = records.clone().next()?;
    let mut candidates: Vec<&str> = KEY_NAMES
        .iter()
        .copied()
        .filter(|k| first.contains_key(*k))
        .collect();
    let mut suffixed: Vec<&str> = first
        .keys()
        .map(String::as_str)
        .filter(|k| {
            !KEY_NAMES.contains(k)
                && k.len() > 2
                && (k.ends_with("Id") || k.ends_with("ID") || k.ends_with("_id"))
        })
        .collect();
    suffixed.sort_unstable();
    candidates.extend(suffixed);
    candidates.into_iter().find_map(|name| {
        let mut seen = std::collections::HashSet::new();
        let identifies = records.clone().all(|record| match record.get(name) {
            Some(Value::String(s)) => seen.insert(s.clone()),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => seen.insert(n.to_string()),
            _ => false,
        });
        identifies.then(|| name.to_owned())
    })
}

/// How to key the lines of `bytes`, when `bytes` reads as JSON lines: every
/// non-blank line a JSON object, and more than one of them (one alone is a
/// JSON document, but for the memory server's shape or in a file whose name
/// says JSON lines, `named_lines`). The
/// memory server's shape when every line has it, else a key field when one
/// is evident ([`evident_key`]), else the lines' content. `None` when the
/// bytes are not JSON lines.
pub(crate) fn evident_strategy(bytes: &[u8], named_lines: bool) -> Option<KeyStrategy> {
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let mut objects = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(object)) => objects.push(object),
            _ => return None,
        }
    }
    let memory = objects.iter().all(|o| KeyStrategy::Memory.id_of(o).is_ok());
    match objects.len() {
        0 => return None,
        // One object is a JSON document, unless it has the memory server's
        // shape or the file's name says JSON lines: its next line would
        // make it JSON lines, and ids that change kind with the second
        // record would read as a rewrite.
        1 if !memory && !named_lines => return None,
        _ => {}
    }
    if memory {
        return Some(KeyStrategy::Memory);
    }
    // One record is unique in any field: a key taken from it could be
    // missing from the next line, and the first line's id would change
    // with it. A one-line file named for lines is keyed by content.
    if objects.len() == 1 {
        return Some(KeyStrategy::Content);
    }
    Some(match evident_key(objects.iter()) {
        Some(field) => KeyStrategy::Fields {
            prefix: DEFAULT_PREFIX.to_owned(),
            fields: vec![field],
        },
        None => KeyStrategy::Content,
    })
}

/// Whether every line of `bytes` still has what `strategy` keys it by, so
/// a view can keep the ids it gave before rather than infer new ones.
pub(crate) fn still_fits(bytes: &[u8], strategy: &KeyStrategy) -> bool {
    if *strategy == KeyStrategy::Content {
        return true;
    }
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .all(|line| match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(object)) => strategy.id_of(&object).is_ok(),
            _ => false,
        })
}

/// The objects of JSON-lines `bytes` keyed by `strategy`, exactly as a
/// JSON-lines store of that strategy sees them (the same reader).
pub(crate) fn snapshot_of(bytes: &[u8], strategy: &KeyStrategy) -> Snapshot {
    let reader = JsonlObserver::new(PathBuf::new()).with_strategy(strategy.clone());
    // Reading from memory cannot fail.
    reader
        .read(bytes, &LineCache::new(), &mut LineCache::new())
        .unwrap_or_default()
}

/// What parsing one line's bytes gave, kept by the line's digest so a line
/// that did not change is not parsed again.
#[derive(Clone, Debug)]
enum Parsed {
    /// An object, with its id (or why it has none).
    Object(Result<String, String>, ObjectState),
    NotObject(ObjectState),
    NotJson(String, ObjectState),
}

/// Lines parsed by the last observation, by the blake3 of their bytes.
type LineCache = HashMap<[u8; 32], Parsed>;

/// The snapshot under construction, with where each id was first seen.
#[derive(Default)]
struct Lines {
    snapshot: Snapshot,
    first_seen: HashMap<String, usize>,
}

impl Lines {
    fn warn(&mut self, warning: String) {
        self.snapshot.warnings.push(warning);
    }

    /// A repeated id is kept, not overwritten: which copy the server reads
    /// back is its own business, but losing one would hide a change to it.
    fn insert(&mut self, id: String, line_no: usize, state: ObjectState) {
        if !self.snapshot.objects.contains_key(&id) {
            self.first_seen.insert(id.clone(), line_no);
            self.snapshot.objects.insert(id, state);
            return;
        }
        let first = self.first_seen.get(&id).copied().unwrap_or(0);
        let mut n = 2usize;
        let unique = loop {
            let candidate = format!("{id}#{n}");
            if !self.snapshot.objects.contains_key(&candidate) {
                break candidate;
            }
            n += 1;
        };
        self.warn(format!(
            "line {line_no}: duplicate id {id:?} (first on line {first}); observed as {unique:?}"
        ));
        self.first_seen.insert(unique.clone(), line_no);
        self.snapshot.objects.insert(unique, state);
    }
}

/// Feeds the rest of an over-long line to `hasher` without keeping it, and
/// consumes its newline. Returns the number of bytes hashed.
fn digest_rest_of_line(reader: &mut impl BufRead, hasher: &mut blake3::Hasher) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let (used, done) = {
            let available = match reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(total);
            }
            match available.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    hasher.update(&available[..end]);
                    total += end as u64;
                    (end + 1, true)
                }
                None => {
                    hasher.update(available);
                    total += available.len() as u64;
                    (available.len(), false)
                }
            }
        };
        reader.consume(used);
        if done {
            return Ok(total);
        }
    }
}

/// Digest, canonical size and field breakdown of one line's object.
fn object_state(object: &Map<String, Value>) -> ObjectState {
    let mut text = String::new();
    write_object(object, &mut text);
    let mut fields = BTreeMap::new();
    for (key, value) in object {
        match value {
            Value::Array(items) => {
                fields.insert(format!("{key}[]"), "1".to_owned());
                let mut seen: HashMap<String, usize> = HashMap::new();
                for item in items {
                    let digest = short_digest(item);
                    let count = seen.entry(digest.clone()).or_insert(0);
                    *count += 1;
                    let field = if *count == 1 {
                        format!("{key}[]{digest}")
                    } else {
                        format!("{key}[]{digest}#{count}")
                    };
                    fields.insert(field, "1".to_owned());
                }
            }
            other => {
                fields.insert(key.clone(), short_digest(other));
            }
        }
    }
    ObjectState {
        digest: digest_hex(text.as_bytes()),
        size: text.len() as u64,
        fields,
        head: None,
    }
}

pub(crate) fn short_digest(value: &Value) -> String {
    let mut digest = digest_hex(canonical(value).as_bytes());
    digest.truncate(FIELD_DIGEST_CHARS);
    digest
}

/// Canonical JSON text of a value: object keys sorted by their UTF-8 bytes at
/// every depth, no whitespace. The workspace builds serde_json with
/// `preserve_order`, so its own output keeps the file's key order; this must
/// not.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => write_object(object, out),
    }
}

pub(crate) fn write_object(object: &Map<String, Value>, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = object.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(key, out);
        out.push(':');
        write_value(value, out);
    }
    out.push('}');
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use std::fs;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::{Op, diff};

    fn entity(name: &str, kind: &str, observations: &[&str]) -> String {
        serde_json::json!({
            "type": "entity",
            "name": name,
            "entityType": kind,
            "observations": observations,
        })
        .to_string()
    }

    fn relation(from: &str, to: &str, kind: &str) -> String {
        serde_json::json!({"type": "relation", "from": from, "to": to, "relationType": kind})
            .to_string()
    }

    /// The memory server's layout: lines joined by `\n`, no trailing newline.
    fn memory_file(lines: &[String]) -> String {
        lines.join("\n")
    }

    #[test]
    fn snapshot_leaves_the_file_and_its_directory_unchanged() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.jsonl");
        fs::write(
            &path,
            memory_file(&[entity("Alice", "person", &["a"]), "{bad".into()]),
        )
        .unwrap();
        let meta = fs::metadata(&path).unwrap();
        let before = (
            fs::read(&path).unwrap(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.mode(),
        );
        let listing = || {
            let mut names: Vec<_> = fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            names.sort();
            names
        };
        let files = listing();
        let mut observer = JsonlObserver::new(&path);
        for _ in 0..3 {
            observer.snapshot().unwrap();
        }
        let meta = fs::metadata(&path).unwrap();
        let after = (
            fs::read(&path).unwrap(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.mode(),
        );
        assert_eq!(before, after);
        assert_eq!(files, listing());
    }

    fn rewrite_via_rename(path: &Path, content: &str) {
        let tmp = path.with_extension("jsonl.tmp");
        fs::write(&tmp, content).unwrap();
        fs::rename(&tmp, path).unwrap();
    }

    fn snapshot_of(content: &str) -> Snapshot {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.jsonl");
        fs::write(&path, content).unwrap();
        JsonlObserver::new(&path).snapshot().unwrap()
    }

    fn ids(snap: &Snapshot) -> Vec<&str> {
        snap.objects.keys().map(String::as_str).collect()
    }

    #[test]
    fn knowledge_graph_entities_and_relations_get_readable_ids() {
        let snap = snapshot_of(&memory_file(&[
            entity("Alice", "person", &["likes tea"]),
            entity("Acme", "company", &[]),
            relation("Alice", "Acme", "works_at"),
        ]));
        assert_eq!(
            ids(&snap),
            vec![
                "entity/Acme",
                "entity/Alice",
                "relation/Alice->Acme:works_at"
            ]
        );
        assert!(snap.warnings.is_empty());
        let alice = &snap.objects["entity/Alice"];
        let keys: Vec<&str> = alice.fields.keys().map(String::as_str).collect();
        let tea = short_digest(&Value::from("likes tea"));
        assert_eq!(
            keys,
            vec![
                "entityType",
                "name",
                "observations[]",
                &format!("observations[]{tea}"),
                "type"
            ]
        );
    }

    #[test]
    fn adding_an_observation_is_an_additive_update() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.jsonl");
        let mut observer = JsonlObserver::new(&path);
        rewrite_via_rename(&path, &memory_file(&[entity("Alice", "person", &["a"])]));
        let before = observer.snapshot().unwrap();
        rewrite_via_rename(
            &path,
            &memory_file(&[entity("Alice", "person", &["a", "b"])]),
        );
        let after = observer.snapshot().unwrap();
        let delta = diff(&before, &after);
        assert_eq!(delta.changes.len(), 1);
        assert_eq!(delta.changes[0].object, "entity/Alice");
        assert_eq!(delta.changes[0].op, Op::Update);
        assert_eq!(delta.changes[0].overwrite, Some(false));
        assert!(!delta.changes[0].is_destructive());
    }

    #[test]
    fn deleting_an_observation_is_an_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.jsonl");
        let mut observer = JsonlObserver::new(&path);
        rewrite_via_rename(
            &path,
            &memory_file(&[entity("Alice", "person", &["a", "b"])]),
        );
        let before = observer.snapshot().unwrap();
        rewrite_via_rename(&path, &memory_file(&[entity("Alice", "person", &["b"])]));
        let after = observer.snapshot().unwrap();
        let delta = diff(&before, &after);
        assert_eq!(delta.changes.len(), 1);
        assert_eq!(delta.changes[0].op, Op::Update);
        assert_eq!(delta.changes[0].overwrite, Some(true));
        assert!(delta.changes[0].is_destructive());
    }

    #[test]
    fn repeated_observations_count_as_separate_elements() {
        let one = snapshot_of(&entity("A", "t", &["x"]));
        let two = snapshot_of(&entity("A", "t", &["x", "x"]));
        assert_eq!(diff(&one, &two).changes[0].overwrite, Some(false));
        assert_eq!(diff(&two, &one).changes[0].overwrite, Some(true));
    }

    #[test]
    fn emptying_or_dropping_an_array_is_an_overwrite_changing_a_scalar_too() {
        let empty = snapshot_of(&entity("A", "t", &[]));
        let dropped = snapshot_of(r#"{"type":"entity","name":"A","entityType":"t"}"#);
        assert_eq!(diff(&empty, &dropped).changes[0].overwrite, Some(true));
        let retyped = snapshot_of(&entity("A", "other", &[]));
        assert_eq!(diff(&empty, &retyped).changes[0].overwrite, Some(true));
    }

    #[test]
    fn identical_rewrite_via_rename_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.jsonl");
        let content = memory_file(&[
            entity("Alice", "person", &["a"]),
            relation("Alice", "Alice", "knows"),
        ]);
        rewrite_via_rename(&path, &content);
        let mut observer = JsonlObserver::new(&path);
        let before = observer.snapshot().unwrap();
        rewrite_via_rename(&path, &content);
        assert!(diff(&before, &observer.snapshot().unwrap()).is_empty());
        // Key order, spacing, a trailing newline and blank lines are not content.
        rewrite_via_rename(
            &path,
            "\n{ \"observations\": [\"a\"], \"entityType\": \"person\", \"name\": \"Alice\", \
             \"type\": \"entity\" }\n\n{\"relationType\":\"knows\",\"to\":\"Alice\",\
             \"from\":\"Alice\",\"type\":\"relation\"}\n",
        );
        let after = observer.snapshot().unwrap();
        assert!(
            diff(&before, &after).is_empty(),
            "{:?}",
            diff(&before, &after)
        );
        assert!(after.warnings.is_empty());
    }

    #[test]
    fn canonical_form_sorts_keys_at_every_depth() {
        let value: Value =
            serde_json::from_str(r#"{"b":{"z":1,"a":[{"y":"\n","x":null}]},"a":true}"#).unwrap();
        assert_eq!(
            canonical(&value),
            r#"{"a":true,"b":{"a":[{"x":null,"y":"\n"}],"z":1}}"#
        );
        let Value::Object(object) = &value else {
            unreachable!()
        };
        let state = object_state(object);
        assert_eq!(state.size, canonical(&value).len() as u64);
        assert_eq!(state.digest, digest_hex(canonical(&value).as_bytes()));
    }

    #[test]
    fn malformed_lines_are_warned_and_the_rest_observed() {
        let snap = snapshot_of(&format!(
            "{}\nnot json at all\n[1,2,3]\n{}\n",
            entity("A", "t", &[]),
            relation("A", "B", "r"),
        ));
        assert_eq!(
            ids(&snap),
            vec!["entity/A", "line/2", "line/3", "relation/A->B:r"]
        );
        assert_eq!(
            snap.objects["line/2"],
            ObjectState::whole(b"not json at all")
        );
        assert_eq!(snap.objects["line/3"], ObjectState::whole(b"[1,2,3]"));
        assert_eq!(snap.warnings.len(), 2);
        assert!(snap.warnings[0].starts_with("line 2: not JSON"));
        assert_eq!(snap.warnings[1], "line 3: not a JSON object");
    }

    #[test]
    fn invalid_utf8_line_is_malformed_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        let mut bytes = entity("A", "t", &[]).into_bytes();
        bytes.extend_from_slice(b"\n{\"name\":\"\xff\"}\n");
        fs::write(&path, &bytes).unwrap();
        let snap = JsonlObserver::new(&path).snapshot().unwrap();
        assert_eq!(ids(&snap), vec!["entity/A", "line/2"]);
        assert_eq!(
            snap.objects["line/2"],
            ObjectState::whole(b"{\"name\":\"\xff\"}")
        );
        assert_eq!(snap.warnings.len(), 1);
    }

    #[test]
    fn lines_without_a_key_fall_back_to_their_line_number() {
        let snap = snapshot_of(&format!(
            "{}\n{{\"type\":\"note\",\"text\":\"hi\"}}\n{{\"type\":\"entity\"}}",
            entity("A", "t", &[])
        ));
        assert_eq!(ids(&snap), vec!["entity/A", "line/2", "line/3"]);
        assert_eq!(
            snap.warnings,
            vec![
                "line 2: unknown \"type\" \"note\"; observed as line/2".to_string(),
                "line 3: entity without a string \"name\"; observed as line/3".to_string(),
            ]
        );
        // Still digested canonically, with fields.
        assert_eq!(snap.objects["line/2"].fields.len(), 2);
    }

    #[test]
    fn duplicate_ids_are_all_kept_with_a_warning() {
        let snap = snapshot_of(&memory_file(&[
            entity("A", "t", &["first"]),
            relation("A", "A", "self"),
            entity("A", "t", &["second"]),
            entity("A", "t", &["third"]),
        ]));
        assert_eq!(
            ids(&snap),
            vec!["entity/A", "entity/A#2", "entity/A#3", "relation/A->A:self"]
        );
        assert_eq!(snap.warnings.len(), 2);
        assert_eq!(
            snap.warnings[0],
            "line 3: duplicate id \"entity/A\" (first on line 1); observed as \"entity/A#2\""
        );
        // Deterministic: the same file gives the same snapshot.
        assert_eq!(
            snap,
            snapshot_of(&memory_file(&[
                entity("A", "t", &["first"]),
                relation("A", "A", "self"),
                entity("A", "t", &["second"]),
                entity("A", "t", &["third"]),
            ]))
        );
    }

    #[test]
    fn leading_byte_order_mark_is_not_content() {
        let plain = entity("A", "t", &["x"]);
        let with_bom = format!("\u{feff}{plain}");
        assert_eq!(snapshot_of(&with_bom), snapshot_of(&plain));
    }

    #[test]
    fn missing_file_is_an_empty_store() {
        let dir = tempfile::tempdir().unwrap();
        let snap = JsonlObserver::new(dir.path().join("none.jsonl"))
            .snapshot()
            .unwrap();
        assert!(snap.is_empty());
        assert!(snap.warnings.is_empty());
    }

    #[test]
    fn overlong_line_is_digested_without_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        let long = format!("{{\"type\":\"entity\",\"name\":\"{}\"}}", "x".repeat(200));
        let exact = "y".repeat(64);
        let content = format!("{long}\n{exact}\n{}", entity("B", "t", &[]));
        fs::write(&path, &content).unwrap();
        let mut observer = JsonlObserver::new(&path);
        observer.max_line = 64;
        let snap = observer.snapshot().unwrap();
        assert_eq!(ids(&snap), vec!["entity/B", "line/1", "line/2"]);
        assert_eq!(snap.objects["line/1"], ObjectState::whole(long.as_bytes()));
        // Exactly at the limit: parsed (and found not to be JSON).
        assert_eq!(snap.objects["line/2"], ObjectState::whole(exact.as_bytes()));
        assert_eq!(
            snap.warnings[0],
            "line 1: longer than 64 bytes, digested without parsing"
        );
        assert!(snap.warnings[1].starts_with("line 2: not JSON"));
        // Also when the long line is the last one, without a newline.
        fs::write(&path, format!("{}\n{long}", entity("B", "t", &[]))).unwrap();
        let snap = observer.snapshot().unwrap();
        assert_eq!(snap.objects["line/2"], ObjectState::whole(long.as_bytes()));
    }

    #[test]
    fn field_strategy_keys_by_named_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        fs::write(
            &path,
            "{\"id\":7,\"v\":1}\n{\"id\":\"a\",\"v\":2}\n{\"v\":3}\n{\"id\":null}\n",
        )
        .unwrap();
        let mut observer = JsonlObserver::new(&path).with_strategy("field:id".parse().unwrap());
        let snap = observer.snapshot().unwrap();
        assert_eq!(ids(&snap), vec!["line/3", "line/4", "record/7", "record/a"]);
        assert_eq!(snap.warnings.len(), 2);

        fs::write(&path, "{\"user\":\"al\",\"day\":3}\n").unwrap();
        let mut observer =
            JsonlObserver::new(&path).with_strategy("field:user, day@visit".parse().unwrap());
        assert_eq!(ids(&observer.snapshot().unwrap()), vec!["visit/al,3"]);
    }

    #[test]
    fn key_strategy_strings_parse_and_round_trip() {
        assert_eq!("memory".parse::<KeyStrategy>(), Ok(KeyStrategy::Memory));
        let fields = KeyStrategy::Fields {
            prefix: "visit".into(),
            fields: vec!["user".into(), "day".into()],
        };
        assert_eq!(
            "field:user,day@visit".parse::<KeyStrategy>(),
            Ok(fields.clone())
        );
        for strategy in [KeyStrategy::Memory, fields, "field:id".parse().unwrap()] {
            assert_eq!(strategy.to_string().parse::<KeyStrategy>(), Ok(strategy));
        }
        assert_eq!(
            "field:id".parse::<KeyStrategy>().unwrap().to_string(),
            "field:id"
        );
        for bad in [
            "",
            "sqlite",
            "field:",
            "field:a,,b",
            "field:id@",
            "memory:x",
        ] {
            assert!(
                bad.parse::<KeyStrategy>().is_err(),
                "{bad:?} should not parse"
            );
        }
    }
}
