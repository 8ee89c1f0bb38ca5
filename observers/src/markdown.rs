//! Markdown files inside a directory store, read as what they hold.
//!
//! A board or notes server rewrites its whole `.md` file to add one card;
//! seen as bytes that is an overwrite of the file, and an honest tool that
//! only adds fails EFF-02. So a markdown file is read as an outline of
//! objects, each named by where it sits (`<inner id>` below is what follows
//! `md/<path>#`):
//!
//! - **Front matter** (YAML between a `---` first line and the next `---`
//!   or `...` line): one object per top-level key, `front-matter/<key>`.
//!   Its fields are the value on the key's own line and each line under it
//!   (a block list's items), so an item added to a list value is an
//!   additive update and a value changed an overwrite.
//! - **Headings** (ATX `#`…`######`, and setext `===`/`---` under a
//!   one-line paragraph): one object per heading, `/<heading>/<subheading>`
//!   by the headings above it, each step the heading's text. A heading's
//!   object holds its level and the text directly under it: every line up
//!   to the next heading of *any* level, except list items, which are
//!   objects of their own. So a card added under a heading is the create
//!   of that card and leaves the heading as it was, and a paragraph
//!   changed in one section is an update of that section alone.
//! - **List items** (`-`, `*`, `+`, `1.`, `1)`), with their continuation
//!   lines: one object per item, `<section>/[#<16 hex>]`, or
//!   `<item>/[#<16 hex>]` for an item nested in another. The digest is of
//!   the item's first line with its marker and checkbox taken off and its
//!   whitespace collapsed: never its position, so inserting an item in the
//!   middle of a list is one create and renumbering an ordered list is no
//!   change. The item's fields are its checkbox (`[ ]`, `[x]`, any one
//!   character) and its continuation lines; its nested items are objects
//!   of their own. Ticking a checkbox is an update of the item (an
//!   overwrite: a field changed), a line added under it an additive update,
//!   and moving it under another heading the delete of one object and the
//!   create of another.
//! - **Text before the first heading** (not front matter, not list items):
//!   the object `` (the empty inner id), present when there is any.
//!
//! A step's text escapes `~` as `~0` and `/` as `~1`, and a heading whose
//! text begins with `[` writes it `~3`, so a heading step is never taken
//! for an item's. A heading or key longer than 120 bytes is written as its
//! first 64 bytes, `…` and `(<16 hex digits>)` of the whole. Two siblings with the same step (two `## Notes`, two
//! items with the same text) are told apart by order: the second is
//! `*2`, the third `*3`; an id that would still collide gets the next free
//! number.
//!
//! What is not content: blank lines, whitespace at line ends, an ordered
//! item's number, a bullet's character, and the order of items or lines
//! (an object whose lines were only reordered is an additive update; a
//! list reordered is no change at all). What the keys cannot follow:
//! editing an item's first line, or renaming a heading, is the delete of
//! the old object (and of every object below it) and the create of the new
//! one; of two items with the same first line, the one that comes first
//! is `[#…]`, so adding a duplicate before it shifts the ordinal. (A file
//! only appended to is judged by its bytes as well: the directory
//! observer marks no change of such a file destructive.)
//!
//! The reading is line by line, the way CommonMark sees blocks, with fewer
//! cases: a fenced code block (`` ``` `` or `~~~`) is text wherever its
//! lines look like headings or items; an item holds the lines indented at
//! least to its text, and a line that follows its text directly (a lazy
//! continuation); four spaces of indentation outside a list is code, text
//! of the section. A setext heading is only recognised under a paragraph of
//! one line. Only digests of content are kept, never the text: memory
//! follows the objects and their lines, not the file's bytes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use crate::{ObjectState, digest_hex};

/// How often (in lines) a reading looks at the clock.
const CLOCK_EVERY: usize = 4_096;

/// What a reading of a markdown file gave: its objects, or why it could not
/// be read within the time budget.
pub(crate) type Outline = Result<BTreeMap<String, ObjectState>, String>;

/// Whether a file named `name` is read as markdown (`.md`, `.markdown`, any
/// case): markdown has no magic, so its name says it is one.
pub(crate) fn is_markdown_name(name: &std::ffi::OsStr) -> bool {
    std::path::Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
}

/// Reads `bytes` as markdown, or `None` when they are not UTF-8 (such a file
/// is observed as a file).
pub(crate) fn outline(bytes: &[u8], deadline: Instant) -> Option<Outline> {
    let text = std::str::from_utf8(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)).ok()?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut reader = Reader::new(deadline);
    let body_from = front_matter_end(text);
    if let Some(end) = body_from {
        // The opening `---`, then the keys up to the closing line.
        lines.next();
        for line in lines.by_ref().take(end - 1) {
            if reader.tick() {
                return Some(Err(late()));
            }
            reader.front_matter(line);
        }
        lines.next();
        reader.close_key();
    }
    for line in lines {
        if reader.tick() {
            return Some(Err(late()));
        }
        reader.line(line);
    }
    Some(Ok(reader.finish()))
}

fn late() -> String {
    "parsed past the observation time budget (--max-observe-ms)".to_owned()
}

/// The index of the line that closes the front matter, when the text opens
/// with one (`---` alone on the first line, `---` or `...` alone later).
fn front_matter_end(text: &str) -> Option<usize> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    lines
        .position(|l| matches!(l.trim_end(), "---" | "..."))
        .map(|n| n + 1)
}

/// One object being read: its id, the digest of its content in order, and
/// its fields (each line of content a field, as a multiset).
struct Block {
    id: String,
    hasher: blake3::Hasher,
    size: u64,
    fields: BTreeMap<String, String>,
    counts: HashMap<String, usize>,
}

impl Block {
    /// A block whose first field, present whatever else it holds, says what
    /// it is: an object that only gains lines is seen to grow.
    fn new(id: String, what: &str, value: &str) -> Self {
        let mut block = Self {
            id,
            hasher: blake3::Hasher::new(),
            size: 0,
            fields: BTreeMap::new(),
            counts: HashMap::new(),
        };
        block.field(what, value);
        block
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.size += bytes.len() as u64;
    }

    /// A named field (`checkbox`, `value`), digested in order.
    fn field(&mut self, name: &str, value: &str) {
        self.feed(name.as_bytes());
        self.feed(b"\0");
        self.feed(value.as_bytes());
        self.feed(b"\n");
        self.fields.insert(name.to_owned(), value.to_owned());
    }

    /// A line of content: a field named by its digest (the second alike
    /// `#2`), so a line added is a field added wherever it is.
    fn line(&mut self, text: &str) {
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        self.feed(b"|");
        self.feed(text.as_bytes());
        self.feed(b"\n");
        let digest = short(text);
        let count = self.counts.entry(digest.clone()).or_insert(0);
        *count += 1;
        let name = if *count == 1 {
            format!("line:{digest}")
        } else {
            format!("line:{digest}#{count}")
        };
        self.fields.insert(name, "1".to_owned());
    }

    fn has_lines(&self) -> bool {
        !self.counts.is_empty()
    }

    fn finish(self) -> (String, ObjectState) {
        let state = ObjectState {
            digest: self.hasher.finalize().to_hex().to_string(),
            size: self.size,
            fields: self.fields,
            head: None,
        };
        (self.id, state)
    }
}

/// 16 hex digits of the digest of `text`.
fn short(text: &str) -> String {
    let mut digest = digest_hex(text.as_bytes());
    digest.truncate(16);
    digest
}

/// A list item still open: lines indented to `content` columns are its.
struct Item {
    block: Block,
    content: usize,
}

/// A heading on the path to the current section.
struct Heading {
    level: usize,
    id: String,
}

/// A fenced code block being read: its fence's character and length.
#[derive(Clone, Copy)]
struct Fence {
    mark: char,
    len: usize,
}

/// What the previous line was, as far as the next line cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Before {
    /// The start, a blank line, a heading: a paragraph may begin.
    Break,
    /// A line of text of the open item (a lazy line may follow).
    ItemText,
    /// A line of the section's own text.
    SectionText,
}

struct Reader {
    objects: BTreeMap<String, ObjectState>,
    /// Every id given out, so no two objects share one.
    taken: HashSet<String>,
    /// How many times each id was asked for.
    asked: HashMap<String, usize>,
    headings: Vec<Heading>,
    /// The section whose text is being read (the root before any heading).
    section: Block,
    items: Vec<Item>,
    fence: Option<Fence>,
    before: Before,
    /// A section line that began a paragraph, held back one line in case
    /// the next underlines it as a setext heading.
    pending: Option<String>,
    /// The front-matter key being read.
    key: Option<Block>,
    /// Lines read, for the clock.
    read: usize,
    deadline: Instant,
}

impl Reader {
    fn new(deadline: Instant) -> Self {
        Self {
            objects: BTreeMap::new(),
            taken: HashSet::new(),
            asked: HashMap::new(),
            headings: Vec::new(),
            section: Block::new(String::new(), "preamble", "1"),
            items: Vec::new(),
            fence: None,
            before: Before::Break,
            pending: None,
            key: None,
            read: 0,
            deadline,
        }
    }

    /// Whether the reading is past its deadline (looked at now and then).
    fn tick(&mut self) -> bool {
        self.read += 1;
        self.read.is_multiple_of(CLOCK_EVERY) && Instant::now() > self.deadline
    }

    /// The id for `base`, made unique: `*2`, `*3` for the second and third
    /// alike, and further if a literal text already took that.
    fn unique(&mut self, base: String) -> String {
        let count = self.asked.entry(base.clone()).or_insert(0);
        *count += 1;
        let mut n = *count;
        let mut id = if n == 1 {
            base.clone()
        } else {
            format!("{base}*{n}")
        };
        while self.taken.contains(&id) {
            n += 1;
            id = format!("{base}*{n}");
        }
        self.taken.insert(id.clone());
        id
    }

    fn keep(&mut self, block: Block) {
        let (id, state) = block.finish();
        self.objects.insert(id, state);
    }

    // --- Front matter ---

    fn front_matter(&mut self, line: &str) {
        let starts_key = !line.starts_with([' ', '\t', '#', '-']) && !line.trim().is_empty();
        if starts_key && let Some((key, value)) = split_key(line) {
            self.close_key();
            let id = self.unique(format!("front-matter/{}", named(key)));
            let mut block = Block::new(id, "key", "1");
            let value = value.trim();
            if !value.is_empty() {
                block.field("value", &short(value));
            }
            self.key = Some(block);
            return;
        }
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            return;
        }
        if self.key.is_none() {
            // Lines before any key (a document that is a list): one object.
            let id = self.unique("front-matter/".to_owned());
            self.key = Some(Block::new(id, "key", "1"));
        }
        if let Some(block) = &mut self.key {
            block.line(text);
        }
    }

    fn close_key(&mut self) {
        if let Some(block) = self.key.take() {
            self.keep(block);
        }
    }

    // --- The body ---

    fn line(&mut self, line: &str) {
        if let Some(fence) = self.fence {
            if closes(line, fence) {
                self.fence = None;
            }
            self.text_of_container(line);
            return;
        }
        let (indent, rest) = indentation(line);
        if rest.is_empty() {
            self.flush_pending();
            self.before = Before::Break;
            return;
        }
        if indent <= 3 {
            if let Some(heading) = self.setext(rest) {
                self.heading(heading.0, &heading.1);
                return;
            }
            self.flush_pending();
            if let Some((level, text)) = atx(rest) {
                self.heading(level, text);
                return;
            }
            if is_break(rest) {
                self.close_items();
                self.section.line(line);
                self.before = Before::SectionText;
                return;
            }
        } else {
            self.flush_pending();
        }
        if let Some(marker) = list_marker(rest) {
            self.pop_items_deeper_than(indent);
            if !(self.items.is_empty() && indent >= 4) {
                self.item(indent, marker, &rest[marker.len..]);
                return;
            }
        }
        let lazy = self.before == Before::ItemText
            && self.items.last().is_some_and(|item| indent < item.content);
        if !lazy {
            self.pop_items_deeper_than(indent);
        }
        if let Some(fence) = opens(rest) {
            self.fence = Some(fence);
        }
        match self.items.last_mut() {
            Some(item) => {
                let text = if lazy {
                    rest
                } else {
                    strip_columns(line, item.content)
                };
                item.block.line(text);
                self.before = Before::ItemText;
            }
            None => {
                if self.before == Before::Break && self.fence.is_none() && indent <= 3 {
                    self.pending = Some(line.to_owned());
                } else {
                    self.section.line(line);
                }
                self.before = Before::SectionText;
            }
        }
    }

    /// A line inside a fence: the open item's, or the section's.
    fn text_of_container(&mut self, line: &str) {
        match self.items.last_mut() {
            Some(item) => item.block.line(strip_columns(line, item.content)),
            None => self.section.line(line),
        }
    }

    /// The held-back first line of a paragraph, underlined by `rest`: a
    /// setext heading (level 1 for `=`, 2 for `-`).
    fn setext(&mut self, rest: &str) -> Option<(usize, String)> {
        let underline = rest.trim_end();
        let level = if !underline.is_empty() && underline.bytes().all(|b| b == b'=') {
            1
        } else if !underline.is_empty() && underline.bytes().all(|b| b == b'-') {
            2
        } else {
            return None;
        };
        let text = self.pending.take()?;
        Some((level, text.trim().to_owned()))
    }

    fn flush_pending(&mut self) {
        if let Some(line) = self.pending.take() {
            self.section.line(&line);
        }
    }

    fn heading(&mut self, level: usize, text: &str) {
        self.close_items();
        while self.headings.last().is_some_and(|h| h.level >= level) {
            self.headings.pop();
        }
        let parent = self.headings.last().map_or("", |h| h.id.as_str());
        let base = format!("{parent}/{}", heading_step(text));
        let id = self.unique(base);
        self.headings.push(Heading {
            level,
            id: id.clone(),
        });
        let done = std::mem::replace(
            &mut self.section,
            Block::new(id, "heading", &level.to_string()),
        );
        self.close_section(done);
        self.before = Before::Break;
    }

    /// Keeps a finished section: a heading always, the root only when it
    /// holds text.
    fn close_section(&mut self, done: Block) {
        if !done.id.is_empty() || done.has_lines() {
            self.keep(done);
        }
    }

    fn item(&mut self, indent: usize, marker: Marker, after: &str) {
        // The text begins after one to four spaces; more is code inside it.
        let spaces = after.len() - after.trim_start_matches([' ', '\t']).len();
        let gap = if after.trim().is_empty() || spaces > 4 {
            1
        } else {
            spaces
        };
        let content = indent + marker.len + gap;
        let text = after.trim();
        let (checkbox, text) = checkbox(text);
        let parent = match self.items.last() {
            Some(item) => item.block.id.clone(),
            None => self.section.id.clone(),
        };
        let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let id = self.unique(format!("{parent}/[#{}]", short(&collapsed)));
        let mut block = Block::new(id, "item", "1");
        if let Some(mark) = checkbox {
            block.field("checkbox", &mark.to_string());
        }
        self.items.push(Item { block, content });
        self.before = Before::ItemText;
    }

    fn pop_items_deeper_than(&mut self, indent: usize) {
        while self.items.last().is_some_and(|item| item.content > indent) {
            if let Some(item) = self.items.pop() {
                self.keep(item.block);
            }
        }
    }

    fn close_items(&mut self) {
        while let Some(item) = self.items.pop() {
            self.keep(item.block);
        }
    }

    fn finish(mut self) -> BTreeMap<String, ObjectState> {
        self.close_key();
        self.flush_pending();
        self.close_items();
        let section = std::mem::replace(&mut self.section, Block::new(String::new(), "", ""));
        self.close_section(section);
        self.objects
    }
}

/// `key: value` at the start of a front-matter line: the key (unquoted) and
/// what follows its colon.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let at = line
        .char_indices()
        .find(|&(i, c)| c == ':' && matches!(line[i + 1..].chars().next(), None | Some(' ' | '\t')))
        .map(|(i, _)| i)?;
    let key = line[..at].trim();
    let key = key
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key);
    Some((key, &line[at + 1..]))
}

/// The columns of leading whitespace (a tab to the next multiple of four)
/// and what follows it.
fn indentation(line: &str) -> (usize, &str) {
    let mut columns = 0;
    for (i, c) in line.char_indices() {
        match c {
            ' ' => columns += 1,
            '\t' => columns += 4 - columns % 4,
            _ => return (columns, line[i..].trim_end()),
        }
    }
    (columns, "")
}

/// `line` with up to `columns` columns of leading whitespace taken off.
fn strip_columns(line: &str, columns: usize) -> &str {
    let mut at = 0;
    for (i, c) in line.char_indices() {
        let width = match c {
            ' ' => 1,
            '\t' => 4 - at % 4,
            _ => return &line[i..],
        };
        if at + width > columns {
            return &line[i..];
        }
        at += width;
    }
    ""
}

/// An ATX heading: its level and text (closing `#`s taken off).
fn atx(rest: &str) -> Option<(usize, &str)> {
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim();
    let closed = text.trim_end_matches('#');
    let text = if closed.is_empty() {
        ""
    } else if closed.ends_with([' ', '\t']) {
        closed.trim_end()
    } else {
        text
    };
    Some((level, text))
}

/// A thematic break: three or more of one of `-`, `*`, `_`, spaces between.
fn is_break(rest: &str) -> bool {
    let mut marks = rest.chars().filter(|c| !c.is_whitespace());
    let Some(first @ ('-' | '*' | '_')) = marks.next() else {
        return false;
    };
    let mut count = 1;
    for c in marks {
        if c != first {
            return false;
        }
        count += 1;
    }
    count >= 3
}

/// A list item's marker at the start of `rest`.
#[derive(Clone, Copy)]
struct Marker {
    /// Its length in bytes (and columns: it is ASCII).
    len: usize,
}

fn list_marker(rest: &str) -> Option<Marker> {
    let bytes = rest.as_bytes();
    let len = match bytes.first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return None;
            }
            digits + 1
        }
        _ => return None,
    };
    match bytes.get(len) {
        None | Some(b' ' | b'\t') => Some(Marker { len }),
        _ => None,
    }
}

/// A task's checkbox at the start of an item's text: `[ ]`, `[x]`, or any
/// one other character (the state some boards add), followed by a space
/// or the end.
fn checkbox(text: &str) -> (Option<char>, &str) {
    let mut chars = text.chars();
    if chars.next() != Some('[') {
        return (None, text);
    }
    let Some(mark) = chars.next() else {
        return (None, text);
    };
    if mark == ']' || mark == '[' || chars.next() != Some(']') {
        return (None, text);
    }
    let after = chars.as_str();
    if after.is_empty() || after.starts_with([' ', '\t']) {
        (Some(mark), after.trim_start())
    } else {
        (None, text)
    }
}

/// A fence that opens a code block: three or more backticks or tildes.
fn opens(rest: &str) -> Option<Fence> {
    let mark = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = rest.chars().take_while(|&c| c == mark).count();
    (len >= 3).then_some(Fence { mark, len })
}

/// Whether `line` closes `fence`: as many of its marks or more, alone.
fn closes(line: &str, fence: Fence) -> bool {
    let rest = line.trim();
    rest.chars().take_while(|&c| c == fence.mark).count() >= fence.len
        && rest.chars().all(|c| c == fence.mark)
}

/// A step's text in an id: `~` as `~0`, `/` as `~1`.
fn escape(text: &str) -> String {
    text.replace('~', "~0").replace('/', "~1")
}

/// A heading's step: its text, whitespace collapsed and escaped, a leading
/// `[` written `~3` (an item's step begins with `[`).
fn heading_step(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let step = named(&collapsed);
    match step.strip_prefix('[') {
        Some(rest) => format!("~3{rest}"),
        None => step,
    }
}

/// Longest heading or key written whole into an id.
const MAX_NAME_BYTES: usize = 120;

/// A heading's or key's text as a step, escaped; a longer one than
/// [`MAX_NAME_BYTES`] as its beginning and the digest of the whole, so a
/// file cannot make its ids as long as it likes.
fn named(text: &str) -> String {
    if text.len() <= MAX_NAME_BYTES {
        return escape(text);
    }
    let mut cut = 64;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…({})", escape(&text[..cut]), short(text))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::{Op, Snapshot, diff};

    fn objects(text: &str) -> BTreeMap<String, ObjectState> {
        match outline(text.as_bytes(), Instant::now() + Duration::from_secs(60)) {
            Some(Ok(objects)) => objects,
            Some(Err(why)) => panic!("{why}"),
            None => panic!("not UTF-8"),
        }
    }

    fn ids(text: &str) -> Vec<String> {
        objects(text).into_keys().collect()
    }

    /// The changes from `a` to `b` as (object, op, destructive).
    fn changes(a: &str, b: &str) -> Vec<(String, Op, bool)> {
        let snap = |t: &str| Snapshot {
            objects: objects(t),
            warnings: Vec::new(),
        };
        diff(&snap(a), &snap(b))
            .changes
            .into_iter()
            .map(|c| (c.object.clone(), c.op, c.is_destructive()))
            .collect()
    }

    fn item(section: &str, text: &str) -> String {
        format!("{section}/[#{}]", short(text))
    }

    const BOARD: &str = "---\nkanban-plugin: basic\ntags:\n  - work\n---\n\n\
        ## Todo\n\n- [ ] write the docs\n- [ ] review the plan\n\n\
        ## Done\n\n- [x] set up the board\n";

    #[test]
    fn a_board_is_its_keys_headings_and_cards() {
        let mut expected = [
            "/Done".to_owned(),
            item("/Done", "set up the board"),
            "/Todo".to_owned(),
            item("/Todo", "review the plan"),
            item("/Todo", "write the docs"),
            "front-matter/kanban-plugin".to_owned(),
            "front-matter/tags".to_owned(),
        ];
        expected.sort();
        assert_eq!(ids(BOARD), expected);
    }

    #[test]
    fn a_card_appended_to_a_column_is_one_create() {
        let added = BOARD.replace(
            "- [ ] review the plan\n",
            "- [ ] review the plan\n- [ ] ship it\n",
        );
        assert_eq!(
            changes(BOARD, &added),
            [(item("/Todo", "ship it"), Op::Create, false)]
        );
        // Inserted first: the same one create, nothing after it moves.
        let first = BOARD.replace("## Todo\n\n", "## Todo\n\n- [ ] ship it\n");
        assert_eq!(
            changes(BOARD, &first),
            [(item("/Todo", "ship it"), Op::Create, false)]
        );
    }

    #[test]
    fn a_card_moved_between_columns_is_a_delete_and_a_create() {
        let moved = BOARD
            .replace("- [ ] write the docs\n", "")
            .replace("- [x] set up", "- [ ] write the docs\n- [x] set up");
        assert_eq!(
            changes(BOARD, &moved),
            [
                (item("/Done", "write the docs"), Op::Create, false),
                (item("/Todo", "write the docs"), Op::Delete, true),
            ]
        );
    }

    #[test]
    fn a_checkbox_ticked_is_an_update_of_its_card() {
        let ticked = BOARD.replace("- [ ] write the docs", "- [x] write the docs");
        assert_eq!(
            changes(BOARD, &ticked),
            [(item("/Todo", "write the docs"), Op::Update, true)]
        );
    }

    #[test]
    fn a_front_matter_key_changed_is_an_update_and_a_list_value_grown_additive() {
        let changed = BOARD.replace("kanban-plugin: basic", "kanban-plugin: board");
        assert_eq!(
            changes(BOARD, &changed),
            [("front-matter/kanban-plugin".into(), Op::Update, true)]
        );
        let grown = BOARD.replace("  - work\n", "  - work\n  - home\n");
        assert_eq!(
            changes(BOARD, &grown),
            [("front-matter/tags".into(), Op::Update, false)]
        );
        let added = BOARD.replace("tags:", "owner: ada\ntags:");
        assert_eq!(
            changes(BOARD, &added),
            [("front-matter/owner".into(), Op::Create, false)]
        );
    }

    const NOTE: &str = "Intro line.\n\n# Plan\n\nFirst paragraph\nwrapped here.\n\n\
        ## Risks\n\nSecond paragraph.\n\n```\n# not a heading\n- not an item\n```\n\n\
        ## Steps\n\n1. one\n2. two\n   more about two\n   - a nested step\n";

    #[test]
    fn a_note_rewritten_with_one_paragraph_changed_is_an_update_of_that_section() {
        assert_eq!(
            ids(NOTE),
            [
                String::new(),
                "/Plan".to_owned(),
                "/Plan/Risks".to_owned(),
                "/Plan/Steps".to_owned(),
                item("/Plan/Steps", "one"),
                item("/Plan/Steps", "two"),
                item(&item("/Plan/Steps", "two"), "a nested step"),
            ]
        );
        let edited = NOTE.replace("Second paragraph.", "Second paragraph, edited.");
        assert_eq!(
            changes(NOTE, &edited),
            [("/Plan/Risks".into(), Op::Update, true)]
        );
        // A line added to a section, or under an item, only adds.
        let grown = NOTE.replace("wrapped here.\n", "wrapped here.\nAnd more.\n");
        assert_eq!(changes(NOTE, &grown), [("/Plan".into(), Op::Update, false)]);
        let noted = NOTE.replace("   more about two\n", "   more about two\n   and again\n");
        assert_eq!(
            changes(NOTE, &noted),
            [(item("/Plan/Steps", "two"), Op::Update, false)]
        );
        // A step inserted in an ordered list renumbers the rest: one create.
        let inserted = NOTE.replace("2. two", "2. one and a half\n3. two");
        assert_eq!(
            changes(NOTE, &inserted),
            [(item("/Plan/Steps", "one and a half"), Op::Create, false)]
        );
        // A nested item added leaves its parent as it was.
        let nested = NOTE.replace("   - a nested step\n", "   - a nested step\n   - another\n");
        assert_eq!(
            changes(NOTE, &nested),
            [(
                item(&item("/Plan/Steps", "two"), "another"),
                Op::Create,
                false
            )]
        );
    }

    #[test]
    fn the_same_text_rewritten_or_reformatted_is_no_change() {
        assert_eq!(changes(BOARD, BOARD), []);
        // Other bullets, CRLF, trailing spaces, blank lines: the same outline.
        let reformatted = BOARD
            .replace("- [", "* [")
            .replace("\n\n", "\n")
            .replace('\n', "  \r\n");
        assert_eq!(changes(BOARD, &reformatted), []);
    }

    #[test]
    fn duplicates_are_numbered_and_ids_never_collide() {
        let text = "## Notes\n- a\n- a\n## Notes\n## Notes*2\n";
        assert_eq!(
            ids(text),
            [
                "/Notes".to_owned(),
                "/Notes*2".to_owned(),
                // The literal `Notes*2`, after the second `Notes` took it.
                "/Notes*2*2".to_owned(),
                item("/Notes", "a"),
                format!("{}*2", item("/Notes", "a")),
            ]
        );
        // A heading that begins like an item's step, and one with a slash.
        assert_eq!(ids("# [x] a/b\n"), ["/~3x] a~1b"]);
        // A heading too long to be an id whole: its beginning and a digest.
        let long = "é".repeat(100);
        assert_eq!(
            ids(&format!("# {long}\n")),
            [format!("/{}…({})", "é".repeat(32), short(&long))]
        );
    }

    #[test]
    fn setext_headings_lazy_lines_and_code_are_read_as_commonmark_reads_them() {
        let text = "Title\n=====\n\n- item\nlazy line\n\n  second paragraph of the item\n\n\
            Text of the section.\n\n    - code, not an item\n\nSub\n---\ntext\n";
        let found = objects(text);
        assert_eq!(
            found.keys().cloned().collect::<Vec<_>>(),
            [
                "/Title".to_owned(),
                "/Title/Sub".to_owned(),
                item("/Title", "item"),
            ]
        );
        // The lazy line is the item's, and so is the indented paragraph.
        assert_eq!(found[&item("/Title", "item")].fields.len(), 3);
        // The section holds its text and the code.
        assert_eq!(found["/Title"].fields.len(), 3);
        assert_eq!(found["/Title/Sub"].fields.len(), 2);
    }

    #[test]
    fn not_utf8_is_no_outline_and_a_late_reading_says_so() {
        assert!(outline(b"# a\n\xff\n", Instant::now()).is_none());
        let long = "- x\n".repeat(CLOCK_EVERY * 2);
        assert!(matches!(
            outline(long.as_bytes(), Instant::now()),
            Some(Err(_))
        ));
    }

    #[test]
    fn markdown_is_known_by_its_name() {
        use std::ffi::OsStr;
        assert!(is_markdown_name(OsStr::new("Board.MD")));
        assert!(is_markdown_name(OsStr::new("notes.markdown")));
        assert!(!is_markdown_name(OsStr::new("notes.txt")));
        assert!(!is_markdown_name(OsStr::new("md")));
    }
}
