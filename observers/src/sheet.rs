//! Spreadsheets inside a directory store, read as their cells.
//!
//! A spreadsheet server re-saves a whole workbook on every change: new zip
//! timestamps, another compression, shared strings renumbered, yet no cell
//! changed. Seen as bytes that is an overwrite of the file; seen as cells it
//! is nothing. So a workbook is one object per non-empty cell, named by its
//! sheet and A1 reference, whose content is the cell's value:
//!
//! - **xlsx** (a zip whose `[Content_Types].xml` declares a SpreadsheetML
//!   workbook, plain, macro-enabled or template): read with calamine's
//!   streaming cell reader, so memory follows the cells the sheet holds,
//!   never its bounding box; `<sheet>!<A1>`.
//! - **ods** (a zip whose `mimetype` entry is an OpenDocument spreadsheet):
//!   read with calamine; `<sheet>!<A1>`.
//! - In an xlsx workbook, each **merged range** is an object of its own,
//!   `<sheet>!<A1>:<C1>`: merging cells is its create (beside the values
//!   the merge cleared), unmerging them its delete, though no value
//!   changes. A sheet whose merges cannot be read is read without them.
//! - In a workbook, each **sheet** is an object of its own, `<sheet>!`, so a
//!   sheet added with no cells yet (or one emptied and removed) is seen; and
//!   each **picture** it embeds (an `xl/media/` or `Pictures/` entry of the
//!   zip) is `media/<digest>`, one field per copy, so an inserted image is
//!   a create, a second copy of it an additive update, and a removed one a
//!   delete. Picture ids are by content: a writer that renumbers the zip's
//!   media entries on save (openpyxl does) moved nothing.
//! - **csv** (a file named `.csv`, since CSV has no magic, that parses
//!   under RFC 4180's quoting rules, which [`csv_cells`] holds it to):
//!   `<A1>`. A file that does not parse is a file.
//!
//! A value is digested typed (`n:` a number, `s:` text, `b:` a boolean, `e:`
//! an error, `t:`/`p:` an ISO date or duration), with a number written the
//! same whether the file stored `1`, `1.0` or `1E0`, and a date as the
//! number it is (its display format is a style, not a value). A cleared cell
//! (absent, or empty text) is no object, so clearing one is its delete;
//! styles, column widths and the zip's own metadata are not values and
//! change nothing (but see sheets and pictures below). In an xlsx workbook a formula cell is its formula
//! (`f:SUM(B2:B5)`), not the result cached beside it: the result follows
//! from other cells, whose own changes are seen, and a writer that saves
//! without results (openpyxl drops them) removed nothing.
//!
//! Before calamine reads a workbook, every entry of its zip is unpacked once
//! into nothing, counted: one whose total passes the byte budget (a zip bomb
//! unpacks a thousandfold) falls back to the file view, as does a workbook
//! calamine cannot read.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Cursor, Read};
use std::time::Instant;

use calamine::{Data, DataRef, Ods, Reader, Xlsx, XlsxError};

use crate::{ObjectState, digest_hex};

/// Most bytes a workbook's zip may unpack to (its XML is read whole by
/// calamine, and a sheet's cells are held as they are read).
pub const MAX_UNPACKED_BYTES: u64 = 256 << 20;

/// How often (in cells) a read looks at the clock.
const CLOCK_EVERY: usize = 4_096;

/// The first bytes of every zip file that has an entry.
const ZIP_MAGIC: &[u8; 4] = b"PK\x03\x04";

/// The content types of SpreadsheetML workbooks: plain, macro-enabled and
/// template (`[Content_Types].xml`).
const XLSX_TYPES: [&str; 4] = [
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
    "application/vnd.ms-excel.template.macroEnabled.main+xml",
];

/// The media type of an OpenDocument spreadsheet (the `mimetype` entry;
/// calamine reads no template).
const ODS_TYPE: &str = "application/vnd.oasis.opendocument.spreadsheet";

/// Largest `[Content_Types].xml` or `mimetype` entry looked at.
const TYPES_LIMIT: u64 = 1 << 20;

/// Which workbook a zip says it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Book {
    Xlsx,
    Ods,
}

/// The cells of one file, by id inside it, or why they could not be read.
pub(crate) type Cells = Result<BTreeMap<String, ObjectState>, String>;

/// Whether a file beginning with `head` is a zip (a workbook is one).
pub(crate) fn is_zip(head: &[u8]) -> bool {
    head.starts_with(ZIP_MAGIC)
}

/// The workbook the zip `reader` declares itself to be, if any: by its
/// content types, never by a name. A zip that does not open is none.
pub(crate) fn book_of<R: Read + io::Seek>(reader: R) -> Option<Book> {
    let mut archive = zip::ZipArchive::new(reader).ok()?;
    let mut text = String::new();
    if let Ok(entry) = archive.by_name("[Content_Types].xml")
        && entry.take(TYPES_LIMIT).read_to_string(&mut text).is_ok()
        && XLSX_TYPES.iter().any(|t| text.contains(t))
    {
        return Some(Book::Xlsx);
    }
    text.clear();
    if let Ok(entry) = archive.by_name("mimetype")
        && entry.take(TYPES_LIMIT).read_to_string(&mut text).is_ok()
        && text.trim() == ODS_TYPE
    {
        return Some(Book::Ods);
    }
    None
}

/// Whether a zip too large to read looks like a workbook by its first
/// entry, the one place both formats put first: `[Content_Types].xml` (as
/// spreadsheet programs write an xlsx) or `mimetype` holding the ods type
/// stored (as ODF requires). Only says whether to warn that a workbook was
/// too large: its central directory, which a server sizes, is not parsed.
pub(crate) fn looks_like_book(first: &[u8]) -> bool {
    let (Some(name_len), Some(extra_len)) = (first.get(26..28), first.get(28..30)) else {
        return false;
    };
    let name_len = usize::from(u16::from_le_bytes([name_len[0], name_len[1]]));
    let extra_len = usize::from(u16::from_le_bytes([extra_len[0], extra_len[1]]));
    let Some(name) = first.get(30..30 + name_len) else {
        return false;
    };
    let data = first.get(30 + name_len + extra_len..).unwrap_or_default();
    is_zip(first)
        && (name == b"[Content_Types].xml"
            || (name == b"mimetype" && data.starts_with(ODS_TYPE.as_bytes())))
}

/// Reads a workbook's cells, as `<sheet>!<A1>`, within `max_unpacked`
/// bytes unpacked and by `deadline`.
pub(crate) fn workbook_cells(
    bytes: &[u8],
    book: Book,
    max_unpacked: u64,
    deadline: Instant,
) -> Cells {
    let pictures = unpacked_within(bytes, max_unpacked, deadline)?;
    let mut cells = Collect::new(deadline);
    match book {
        Book::Xlsx => {
            let unreadable = |_: XlsxError| "not readable as an xlsx workbook".to_owned();
            let mut workbook = Xlsx::new(Cursor::new(bytes)).map_err(unreadable)?;
            for sheet in workbook.sheet_names() {
                cells.sheet(&sheet);
                let mut reader = match workbook.worksheet_cells_reader(&sheet) {
                    Ok(reader) => reader,
                    // A chart sheet has no cells.
                    Err(XlsxError::NotAWorksheet(_)) => continue,
                    Err(e) => return Err(unreadable(e)),
                };
                let prefix = format!("{sheet}!");
                while let Some(cell) = reader.next_cell_with_formula().map_err(unreadable)? {
                    let (row, col) = cell.pos;
                    cells.typed.clear();
                    // A formula is the cell's content; its cached result
                    // is derived, and a writer that saves without one
                    // (openpyxl) has removed nothing.
                    let kept = match cell.formula.as_deref() {
                        Some(formula) if !formula.is_empty() => {
                            cells.typed.push_str("f:");
                            cells.typed.push_str(formula);
                            true
                        }
                        _ => write_typed_ref(&cell.value, &mut cells.typed),
                    };
                    if kept {
                        cells.add(&prefix, row, col)?;
                    }
                }
                drop(reader);
                // A merged range is what a person sees of the sheet as
                // much as a value is: merging and unmerging are changes.
                // A sheet whose merges cannot be read keeps its cells (the
                // file view would make every cell look deleted), and a
                // reader that panics on a reversed range costs only them.
                if Instant::now() > cells.deadline {
                    return Err(late());
                }
                let merged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    workbook.merge_cells_by_sheet_name(&sheet)
                }));
                for range in merged.ok().and_then(Result::ok).unwrap_or_default() {
                    cells.merged(&prefix, range.start, range.end)?;
                }
            }
        }
        Book::Ods => {
            let unreadable = |_| "not readable as an ods workbook".to_owned();
            let mut workbook: Ods<_> = Ods::new(Cursor::new(bytes)).map_err(unreadable)?;
            for sheet in workbook.sheet_names() {
                cells.sheet(&sheet);
                let range = workbook.worksheet_range(&sheet).map_err(unreadable)?;
                let (top, left) = range.start().unwrap_or((0, 0));
                let prefix = format!("{sheet}!");
                for (row, col, value) in range.used_cells() {
                    cells.typed.clear();
                    if write_typed(value, &mut cells.typed) {
                        let (row, col) = (top + row as u32, left + col as u32);
                        cells.add(&prefix, row, col)?;
                    }
                }
            }
        }
    }
    let mut objects = cells.finish();
    objects.extend(picture_objects(&pictures));
    Ok(objects)
}

/// Where a workbook's zip keeps the pictures it embeds: xlsx, then ods.
const PICTURE_FOLDERS: [&str; 2] = ["xl/media/", "Pictures/"];

/// The pictures of a workbook as objects: `media/<digest>` (the first 16
/// hex digits of the content's blake3), one field per copy, so that a
/// second copy of the same picture is a field added.
fn picture_objects(digests: &[String]) -> BTreeMap<String, ObjectState> {
    let mut copies: BTreeMap<&str, usize> = BTreeMap::new();
    for digest in digests {
        *copies.entry(digest.as_str()).or_default() += 1;
    }
    copies
        .into_iter()
        .map(|(digest, count)| {
            let fields: BTreeMap<String, String> = (1..=count)
                .map(|copy| (format!("copy {copy}"), digest.to_owned()))
                .collect();
            let short = digest.get(..16).unwrap_or(digest);
            let state = ObjectState {
                digest: digest_hex(format!("{digest}*{count}").as_bytes()),
                size: count as u64,
                fields,
                head: None,
            };
            (format!("media/{short}"), state)
        })
        .collect()
}

/// Unpacks every entry once, counting, so that what calamine will unpack
/// is known to fit before it does; returns the digest of every picture
/// entry ([`PICTURE_FOLDERS`]) met on the way.
fn unpacked_within(
    bytes: &[u8],
    max_unpacked: u64,
    deadline: Instant,
) -> Result<Vec<String>, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|_| "not readable as a zip archive".to_owned())?;
    let mut total = 0u64;
    let over = || {
        format!(
            "unpacks to more than {max_unpacked} bytes (--max-observe-bytes, at most {MAX_UNPACKED_BYTES})"
        )
    };
    let mut pictures = Vec::new();
    for i in 0..archive.len() {
        let entry = archive
            .by_index(i)
            .map_err(|_| "not readable as a zip archive".to_owned())?;
        let room = max_unpacked.saturating_sub(total);
        if entry.size() > room {
            return Err(over());
        }
        let name = entry.name_raw();
        let picture = PICTURE_FOLDERS
            .iter()
            .any(|folder| name.starts_with(folder.as_bytes()) && name.len() > folder.len());
        let unreadable = |_| "not readable as a zip archive".to_owned();
        let read = if picture {
            let mut hasher = blake3::Hasher::new();
            let read = io::copy(&mut entry.take(room.saturating_add(1)), &mut hasher)
                .map_err(unreadable)?;
            pictures.push(hasher.finalize().to_hex().to_string());
            read
        } else {
            io::copy(&mut entry.take(room.saturating_add(1)), &mut io::sink())
                .map_err(unreadable)?
        };
        total = total.saturating_add(read);
        if total > max_unpacked {
            return Err(over());
        }
        if Instant::now() > deadline {
            return Err(late());
        }
    }
    Ok(pictures)
}

/// Reads `text` as CSV under RFC 4180's quoting, one object per non-empty
/// field, as `<A1>`; `None` when it does not parse: a quote inside an
/// unquoted field, anything but a comma or a line end after a closing
/// quote, a quote left open, a carriage return alone, bytes that are not
/// UTF-8. Lines may end in CRLF or LF, and rows may differ in length.
pub(crate) fn csv_cells(bytes: &[u8], deadline: Instant) -> Option<Cells> {
    let text = std::str::from_utf8(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)).ok()?;
    let b = text.as_bytes();
    let mut cells = Collect::new(deadline);
    let (mut row, mut col, mut i) = (0u32, 0u32, 0usize);
    let mut field = String::new();
    while i < b.len() {
        field.clear();
        if b[i] == b'"' {
            i += 1;
            loop {
                let close = i + text[i..].find('"')?;
                field.push_str(&text[i..close]);
                if b.get(close + 1) == Some(&b'"') {
                    field.push('"');
                    i = close + 2;
                } else {
                    i = close + 1;
                    break;
                }
            }
        } else {
            let end = text[i..]
                .find([',', '\r', '\n', '"'])
                .map_or(b.len(), |n| i + n);
            if b.get(end) == Some(&b'"') {
                return None;
            }
            field.push_str(&text[i..end]);
            i = end;
        }
        if !field.is_empty() {
            cells.typed.clear();
            cells.typed.push_str("s:");
            cells.typed.push_str(&field);
            if let Err(late) = cells.add("", row, col) {
                return Some(Err(late));
            }
        }
        match b.get(i) {
            None => break,
            Some(b',') => {
                col = col.checked_add(1)?;
                i += 1;
            }
            Some(b'\n') => {
                (row, col) = (row.checked_add(1)?, 0);
                i += 1;
            }
            Some(b'\r') if b.get(i + 1) == Some(&b'\n') => {
                (row, col) = (row.checked_add(1)?, 0);
                i += 2;
            }
            Some(_) => return None,
        }
    }
    Some(Ok(cells.finish()))
}

/// A cell's A1 reference from its zero-based row and column: columns are
/// letters in bijective base 26 (A … Z, AA …), rows count from 1.
#[cfg(test)]
pub(crate) fn cell_name(row: u32, col: u32) -> String {
    let mut name = String::new();
    push_cell_name(&mut name, row, col);
    name
}

/// Writes the A1 reference of (`row`, `col`) at the end of `out`.
fn push_cell_name(out: &mut String, row: u32, col: u32) {
    let mut letters = [0u8; 8];
    let mut at = letters.len();
    let mut n = u64::from(col) + 1;
    while n > 0 {
        at -= 1;
        letters[at] = b'A' + ((n - 1) % 26) as u8;
        n = (n - 1) / 26;
    }
    out.extend(letters[at..].iter().copied().map(char::from));
    // Writing to a String cannot fail.
    let _ = write!(out, "{}", u64::from(row) + 1);
}

/// The cells of one file, gathered as they are read (and sorted once at
/// the end, cheaper than keeping them sorted), with the clock looked at
/// now and then.
struct Collect {
    objects: Vec<(String, ObjectState)>,
    /// The typed value of the cell about to be added.
    typed: String,
    deadline: Instant,
}

impl Collect {
    fn new(deadline: Instant) -> Self {
        Self {
            objects: Vec::new(),
            typed: String::new(),
            deadline,
        }
    }

    /// Adds the cell `<prefix><A1>` whose typed value is in `self.typed`.
    fn add(&mut self, prefix: &str, row: u32, col: u32) -> Result<(), String> {
        self.on_time()?;
        let mut id = String::with_capacity(prefix.len() + 12);
        id.push_str(prefix);
        push_cell_name(&mut id, row, col);
        self.objects.push((id, cell_state(&self.typed)));
        Ok(())
    }

    /// Past the deadline, an error; looked at once every [`CLOCK_EVERY`]
    /// objects.
    fn on_time(&self) -> Result<(), String> {
        if self.objects.len().is_multiple_of(CLOCK_EVERY) && Instant::now() > self.deadline {
            return Err(late());
        }
        Ok(())
    }

    /// Adds the merged range `<prefix><A1>:<C1>` from `start` to `end`
    /// (row, column), whose content is that it is merged.
    fn merged(&mut self, prefix: &str, start: (u32, u32), end: (u32, u32)) -> Result<(), String> {
        self.on_time()?;
        let mut id = String::with_capacity(prefix.len() + 24);
        id.push_str(prefix);
        push_cell_name(&mut id, start.0, start.1);
        id.push(':');
        push_cell_name(&mut id, end.0, end.1);
        self.objects.push((id, cell_state("merged")));
        Ok(())
    }

    /// Adds the sheet itself, `<sheet>!`: present whether or not it has
    /// cells.
    fn sheet(&mut self, name: &str) {
        self.objects.push((format!("{name}!"), cell_state("sheet")));
    }

    /// The cells by id; of two at one place (a file may say so), the last.
    fn finish(self) -> BTreeMap<String, ObjectState> {
        self.objects.into_iter().collect()
    }
}

fn late() -> String {
    "read past the observation time budget (--max-observe-ms)".into()
}

/// A cell's state: the digest of its typed value. A cell has one value
/// and so no fields: any change of it is an overwrite of the cell (and a
/// field map per cell would cost more than the rest of the cell together).
fn cell_state(typed: &str) -> ObjectState {
    ObjectState {
        digest: digest_hex(typed.as_bytes()),
        size: typed.len() as u64,
        fields: BTreeMap::new(),
        head: None,
    }
}

/// Writes a value as digested to `out`; `false` for an empty cell.
fn write_typed(value: &Data, out: &mut String) -> bool {
    // Writing to a String cannot fail.
    let _ = match value {
        Data::Empty => return false,
        Data::String(s) => return text(s, out),
        Data::Int(n) => write!(out, "n:{n}"),
        Data::Float(f) => number(*f, out),
        Data::Bool(b) => write!(out, "b:{b}"),
        Data::DateTime(d) => number(d.as_f64(), out),
        Data::DateTimeIso(s) => write!(out, "t:{s}"),
        Data::DurationIso(s) => write!(out, "p:{s}"),
        Data::Error(e) => write!(out, "e:{e}"),
    };
    true
}

/// The same for a cell read from a stream (a shared string is text).
fn write_typed_ref(value: &DataRef<'_>, out: &mut String) -> bool {
    // Writing to a String cannot fail.
    let _ = match value {
        DataRef::Empty => return false,
        DataRef::SharedString(s) => return text(s, out),
        DataRef::String(s) => return text(s, out),
        DataRef::Int(n) => write!(out, "n:{n}"),
        DataRef::Float(f) => number(*f, out),
        DataRef::Bool(b) => write!(out, "b:{b}"),
        DataRef::DateTime(d) => number(d.as_f64(), out),
        DataRef::DateTimeIso(s) => write!(out, "t:{s}"),
        DataRef::DurationIso(s) => write!(out, "p:{s}"),
        DataRef::Error(e) => write!(out, "e:{e}"),
    };
    true
}

/// Text as digested; empty text is an empty cell.
fn text(s: &str, out: &mut String) -> bool {
    out.push_str("s:");
    out.push_str(s);
    !s.is_empty()
}

/// A number as one text whatever its stored form: an integer within the
/// range a double holds exactly is written as one (`1`, never `1.0`),
/// anything else in Rust's shortest round-trip form.
fn number(f: f64, out: &mut String) -> std::fmt::Result {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if f.is_finite() && f.fract() == 0.0 && f.abs() <= EXACT {
        write!(out, "n:{}", f as i64)
    } else {
        write!(out, "n:{f}")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use zip::write::SimpleFileOptions;

    use super::*;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    /// How a workbook's parts are packed: the zip's own metadata, which a
    /// re-save changes although no cell does.
    #[derive(Clone, Copy)]
    pub(crate) struct Packing {
        pub(crate) deflate: bool,
        pub(crate) year: u16,
        /// Strings shared (`t="s"`), or inline (`t="inlineStr"`).
        pub(crate) shared: bool,
    }

    pub(crate) const PLAIN: Packing = Packing {
        deflate: true,
        year: 2024,
        shared: true,
    };

    fn zip_of(parts: &[(&str, String)], packing: Packing) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let when = zip::DateTime::from_date_and_time(packing.year, 3, 4, 5, 6, 8).unwrap();
        let options = SimpleFileOptions::default()
            .compression_method(if packing.deflate {
                zip::CompressionMethod::Deflated
            } else {
                zip::CompressionMethod::Stored
            })
            .last_modified_time(when);
        for (name, text) in parts {
            // ODF stores its media type first and uncompressed, whatever
            // the rest is packed with.
            let options = if *name == "mimetype" {
                options.compression_method(zip::CompressionMethod::Stored)
            } else {
                options
            };
            out.start_file(*name, options).unwrap();
            out.write_all(text.as_bytes()).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    /// A minimal xlsx of one sheet named `Tasks`: each row's cells, text or
    /// a number, starting at column A.
    pub(crate) fn xlsx(rows: &[&[&str]], packing: Packing) -> Vec<u8> {
        let mut strings: Vec<&str> = Vec::new();
        let mut sheet = String::from(
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#,
        );
        for (r, row) in rows.iter().enumerate() {
            sheet.push_str(&format!("<row r=\"{}\">", r + 1));
            for (c, value) in row.iter().enumerate() {
                let at = cell_name(r as u32, c as u32);
                if value.is_empty() {
                    continue;
                }
                if let Some(formula) = value.strip_prefix('=') {
                    // `=SUM(A1:A2)|3`: a formula with its cached result.
                    let (formula, cached) = formula.split_once('|').unwrap_or((formula, ""));
                    let cached = if cached.is_empty() {
                        String::new()
                    } else {
                        format!("<v>{cached}</v>")
                    };
                    sheet.push_str(&format!("<c r=\"{at}\"><f>{formula}</f>{cached}</c>"));
                } else if value.parse::<f64>().is_ok() {
                    sheet.push_str(&format!("<c r=\"{at}\"><v>{value}</v></c>"));
                } else if packing.shared {
                    let n = strings.iter().position(|s| s == value).unwrap_or_else(|| {
                        strings.push(value);
                        strings.len() - 1
                    });
                    sheet.push_str(&format!("<c r=\"{at}\" t=\"s\"><v>{n}</v></c>"));
                } else {
                    sheet.push_str(&format!(
                        "<c r=\"{at}\" t=\"inlineStr\"><is><t>{value}</t></is></c>"
                    ));
                }
            }
            sheet.push_str("</row>");
        }
        sheet.push_str("</sheetData></worksheet>");
        let shared: String = strings
            .iter()
            .map(|s| format!("<si><t>{s}</t></si>"))
            .collect();
        let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
        let rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
        let mut parts = vec![
            (
                "[Content_Types].xml",
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="{}"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
                    XLSX_TYPES[0]
                ),
            ),
            (
                "_rels/.rels",
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
                ),
            ),
            (
                "xl/workbook.xml",
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" xmlns:r="{rel}"><sheets><sheet name="Tasks" sheetId="1" r:id="rId1"/></sheets></workbook>"#
                ),
            ),
            (
                "xl/_rels/workbook.xml.rels",
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#
                ),
            ),
            ("xl/worksheets/sheet1.xml", sheet),
            (
                "xl/sharedStrings.xml",
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{main}" count="{n}" uniqueCount="{n}">{shared}</sst>"#,
                    n = strings.len()
                ),
            ),
        ];
        if !packing.deflate {
            // Another writer, another order of the parts.
            parts.reverse();
        }
        zip_of(&parts, packing)
    }

    /// `book` unpacked and packed again with `parts` put in: each replaces
    /// the part of its name, or is added.
    fn with_parts(book: &[u8], parts: &[(&str, String)]) -> Vec<u8> {
        let mut archive = zip::ZipArchive::new(Cursor::new(book)).unwrap();
        let mut all: Vec<(String, String)> = Vec::new();
        for i in 0..archive.len() {
            let mut entry = archive.by_index(i).unwrap();
            let name = entry.name().unwrap().into_owned();
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            all.push((name, text));
        }
        for (name, text) in parts {
            match all.iter_mut().find(|(n, _)| n == name) {
                Some(part) => part.1 = text.clone(),
                None => all.push(((*name).to_owned(), text.clone())),
            }
        }
        let borrowed: Vec<(&str, String)> =
            all.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        zip_of(&borrowed, PLAIN)
    }

    /// `book` (of [`xlsx`]) with a second sheet, `Notes`, that has no cells.
    fn with_empty_sheet(book: &[u8]) -> Vec<u8> {
        let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
        let rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
        let mut archive = zip::ZipArchive::new(Cursor::new(book)).unwrap();
        let read = |archive: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str| {
            let mut text = String::new();
            archive
                .by_name(name)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        };
        let types = read(&mut archive, "[Content_Types].xml").replace(
            "</Types>",
            r#"<Override PartName="/xl/worksheets/sheet2.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        );
        let workbook = read(&mut archive, "xl/workbook.xml").replace(
            "</sheets>",
            r#"<sheet name="Notes" sheetId="2" r:id="rId3"/></sheets>"#,
        );
        let rels = read(&mut archive, "xl/_rels/workbook.xml.rels").replace(
            "</Relationships>",
            &format!(
                r#"<Relationship Id="rId3" Type="{rel}/worksheet" Target="worksheets/sheet2.xml"/></Relationships>"#
            ),
        );
        let empty = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main}"><sheetData/></worksheet>"#
        );
        with_parts(
            book,
            &[
                ("[Content_Types].xml", types),
                ("xl/workbook.xml", workbook),
                ("xl/_rels/workbook.xml.rels", rels),
                ("xl/worksheets/sheet2.xml", empty),
            ],
        )
    }

    #[test]
    fn a_sheet_added_with_no_cells_is_an_object_of_its_own() {
        let book = xlsx(&[&["id"], &["1"]], PLAIN);
        let before = cells(&book);
        let after = cells(&with_empty_sheet(&book));
        let added: Vec<&str> = after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .map(String::as_str)
            .collect();
        assert_eq!(added, ["Notes!"]);
        assert!(before.iter().all(|(k, v)| after.get(k) == Some(v)));
    }

    #[test]
    fn a_merged_range_is_an_object_of_its_own_so_a_merge_and_an_unmerge_are_seen() {
        let book = xlsx(&[&["Title", "", ""], &["1", "2", "3"]], PLAIN);
        let sheet = {
            let mut archive = zip::ZipArchive::new(Cursor::new(&book[..])).unwrap();
            let mut entry = archive.by_name("xl/worksheets/sheet1.xml").unwrap();
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            text
        };
        let merged_xml = sheet.replace(
            "</worksheet>",
            r#"<mergeCells count="1"><mergeCell ref="A1:C1"/></mergeCells></worksheet>"#,
        );
        assert_ne!(merged_xml, sheet, "the sheet's XML ends as expected");
        let merged = with_parts(&book, &[("xl/worksheets/sheet1.xml", merged_xml)]);
        let before = cells(&book);
        let after = cells(&merged);
        let added: Vec<&str> = after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .map(String::as_str)
            .collect();
        assert_eq!(added, ["Tasks!A1:C1"]);
        // Every value is as it was: the merge is the one change.
        assert!(before.iter().all(|(k, v)| after.get(k) == Some(v)));
    }

    #[test]
    fn a_picture_is_one_object_by_content_and_a_second_copy_a_field_added() {
        let book = xlsx(&[&["id"], &["1"]], PLAIN);
        let logo = "\u{89}PNG logo bytes".to_owned();
        let one = cells(&with_parts(&book, &[("xl/media/image1.png", logo.clone())]));
        let pictures: Vec<&String> = one.keys().filter(|k| k.starts_with("media/")).collect();
        assert_eq!(pictures.len(), 1, "{one:?}");
        let id = pictures[0].clone();
        assert_eq!(one[&id].fields.len(), 1);
        // Renumbered on a re-save: the same picture, nothing changed.
        let renamed = cells(&with_parts(&book, &[("xl/media/image7.png", logo.clone())]));
        assert_eq!(one, renamed);
        // A second copy: the same object with one field more, none changed.
        let two = cells(&with_parts(
            &book,
            &[
                ("xl/media/image1.png", logo.clone()),
                ("xl/media/image2.png", logo),
            ],
        ));
        assert_eq!(two[&id].fields.len(), 2);
        assert!(
            one[&id]
                .fields
                .iter()
                .all(|(k, v)| two[&id].fields.get(k) == Some(v))
        );
        // A part named like the folder but outside it is no picture.
        let other = cells(&with_parts(&book, &[("xl/mediafile.xml", "x".into())]));
        assert!(other.keys().all(|k| !k.starts_with("media/")));
    }

    const MANIFEST: &str = r#"<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>"#;

    /// A minimal ods of one sheet named `Tasks`.
    fn ods(rows: &[&[&str]], packing: Packing) -> Vec<u8> {
        let mut table = String::new();
        for row in rows {
            table.push_str("<table:table-row>");
            for value in *row {
                if value.is_empty() {
                    table.push_str("<table:table-cell/>");
                } else if let Ok(n) = value.parse::<f64>() {
                    table.push_str(&format!(
                        "<table:table-cell office:value-type=\"float\" office:value=\"{n}\"><text:p>{value}</text:p></table:table-cell>"
                    ));
                } else {
                    table.push_str(&format!(
                        "<table:table-cell office:value-type=\"string\"><text:p>{value}</text:p></table:table-cell>"
                    ));
                }
            }
            table.push_str("</table:table-row>");
        }
        let content = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body><office:spreadsheet><table:table table:name="Tasks">{table}</table:table></office:spreadsheet></office:body></office:document-content>"#
        );
        zip_of(
            &[
                ("mimetype", ODS_TYPE.to_owned()),
                ("META-INF/manifest.xml", MANIFEST.to_owned()),
                ("content.xml", content),
            ],
            packing,
        )
    }

    fn cells(bytes: &[u8]) -> BTreeMap<String, ObjectState> {
        let book = book_of(Cursor::new(bytes)).expect("a workbook");
        workbook_cells(bytes, book, MAX_UNPACKED_BYTES, later()).expect("cells")
    }

    fn ids(map: &BTreeMap<String, ObjectState>) -> Vec<&str> {
        map.keys().map(String::as_str).collect()
    }

    #[test]
    fn cells_are_named_by_column_letters_and_row_numbers() {
        assert_eq!(cell_name(0, 0), "A1");
        assert_eq!(cell_name(9, 25), "Z10");
        assert_eq!(cell_name(0, 26), "AA1");
        assert_eq!(cell_name(0, 701), "ZZ1");
        assert_eq!(cell_name(0, 702), "AAA1");
        assert_eq!(cell_name(1_048_575, 16_383), "XFD1048576");
        assert_eq!(cell_name(u32::MAX, u32::MAX), "MWLQKWV4294967296");
    }

    #[test]
    fn a_workbook_is_one_object_per_non_empty_cell_by_sheet_and_cell() {
        let rows: &[&[&str]] = &[&["id", "title"], &["1", "write"], &["2", ""]];
        for book in [xlsx(rows, PLAIN), ods(rows, PLAIN)] {
            let found = cells(&book);
            assert_eq!(
                ids(&found),
                [
                    "Tasks!", "Tasks!A1", "Tasks!A2", "Tasks!A3", "Tasks!B1", "Tasks!B2"
                ]
            );
            assert_eq!(found["Tasks!A2"], cell_state("n:1"));
            assert_eq!(found["Tasks!B2"], cell_state("s:write"));
        }
        assert_eq!(book_of(Cursor::new(xlsx(rows, PLAIN))), Some(Book::Xlsx));
        assert_eq!(book_of(Cursor::new(ods(rows, PLAIN))), Some(Book::Ods));
    }

    #[test]
    fn a_formula_cell_is_its_formula_with_or_without_a_cached_result() {
        let cached: &[&[&str]] = &[&["1", "2", "=SUM(A1:B1)|3"]];
        let dropped: &[&[&str]] = &[&["1", "2", "=SUM(A1:B1)"]];
        let (a, b) = (cells(&xlsx(cached, PLAIN)), cells(&xlsx(dropped, PLAIN)));
        assert_eq!(a, b, "a resave without results removed nothing");
        assert_eq!(a["Tasks!C1"], cell_state("f:SUM(A1:B1)"));
        let changed: &[&[&str]] = &[&["1", "2", "=A1*B1|2"]];
        assert_ne!(cells(&xlsx(changed, PLAIN))["Tasks!C1"], a["Tasks!C1"]);
    }

    #[test]
    fn a_resave_with_other_zip_metadata_and_the_same_cells_reads_the_same() {
        let rows: &[&[&str]] = &[&["id", "title"], &["1", "write"], &["2", "test"]];
        let other = Packing {
            deflate: false,
            year: 2026,
            shared: false,
        };
        let (a, b) = (xlsx(rows, PLAIN), xlsx(rows, other));
        assert_ne!(a, b);
        assert_eq!(cells(&a), cells(&b));
        let (a, b) = (ods(rows, PLAIN), ods(rows, other));
        assert_ne!(a, b);
        assert_eq!(cells(&a), cells(&b));
        // A number is the same number however it is written.
        assert_eq!(
            cells(&xlsx(&[&["1.0"]], PLAIN)),
            cells(&xlsx(&[&["1"]], PLAIN))
        );
    }

    #[test]
    fn a_zip_that_declares_no_workbook_is_none_and_a_bomb_is_refused() {
        let other = zip_of(&[("readme.txt", "hello".to_owned())], PLAIN);
        assert!(is_zip(&other));
        assert_eq!(book_of(Cursor::new(&other)), None);
        assert_eq!(book_of(Cursor::new(b"PK\x03\x04 not a zip")), None);
        let book = xlsx(&[&["x".repeat(10_000).as_str()]], PLAIN);
        let found = workbook_cells(&book, Book::Xlsx, 5_000, later());
        assert!(found.is_err_and(|why| why.starts_with("unpacks to more than 5000 bytes")));
    }

    #[test]
    fn a_zip_too_large_to_read_is_told_a_workbook_by_its_first_entry() {
        let rows: &[&[&str]] = &[&["a"]];
        assert!(looks_like_book(&xlsx(rows, PLAIN)[..128]));
        assert!(looks_like_book(&ods(rows, PLAIN)[..128]));
        let other = zip_of(&[("readme.txt", "hello".to_owned())], PLAIN);
        assert!(!looks_like_book(&other[..other.len().min(128)]));
        assert!(!looks_like_book(b"PK\x03\x04"));
    }

    #[test]
    fn a_read_past_the_deadline_falls_back() {
        let past = Instant::now() - Duration::from_millis(1);
        let book = xlsx(&[&["a"]], PLAIN);
        let found = workbook_cells(&book, Book::Xlsx, MAX_UNPACKED_BYTES, past);
        assert_eq!(found, Err(late()));
        assert_eq!(csv_cells(b"a,b\n", past), Some(Err(late())));
    }

    #[test]
    fn a_corrupt_workbook_is_not_read() {
        let mut book = xlsx(&[&["a"]], PLAIN);
        // The sheet's XML cut short, its content type still declared.
        let broken = zip_of(
            &[
                (
                    "[Content_Types].xml",
                    format!(
                        "<Types><Override ContentType=\"{}\"/></Types>",
                        XLSX_TYPES[0]
                    ),
                ),
                ("xl/workbook.xml", "<workbook><sheets><sheet".to_owned()),
            ],
            PLAIN,
        );
        assert_eq!(book_of(Cursor::new(&broken)), Some(Book::Xlsx));
        assert!(workbook_cells(&broken, Book::Xlsx, MAX_UNPACKED_BYTES, later()).is_err());
        // Bytes damaged inside the zip: its checksums no longer agree.
        let middle = book.len() / 2;
        book[middle] ^= 0xff;
        if book_of(Cursor::new(&book)).is_some() {
            assert!(workbook_cells(&book, Book::Xlsx, MAX_UNPACKED_BYTES, later()).is_err());
        }
    }

    fn csv(text: &str) -> Option<Vec<(String, String)>> {
        let found = csv_cells(text.as_bytes(), later())?.expect("in time");
        Some(
            found
                .into_iter()
                .map(|(id, state)| (id, state.digest))
                .collect(),
        )
    }

    fn digest(value: &str) -> String {
        cell_state(&format!("s:{value}")).digest
    }

    #[test]
    fn csv_quoting_follows_rfc_4180() {
        let found = csv("id,note\r\n1,\"a, \"\"quoted\"\"\r\nline\"\r\n2,\n").expect("parses");
        assert_eq!(
            found,
            [
                ("A1".into(), digest("id")),
                ("A2".into(), digest("1")),
                ("A3".into(), digest("2")),
                ("B1".into(), digest("note")),
                ("B2".into(), digest("a, \"quoted\"\r\nline")),
            ]
        );
        // The same cells, quoted otherwise and with other line ends.
        assert_eq!(
            csv("\"id\",\"note\"\n\"1\",\"a, \"\"quoted\"\"\r\nline\"\n2,\"\"").expect("parses"),
            found
        );
        // Ragged rows and no final line end are still CSV.
        assert!(csv("a,b\nc").is_some());
        assert_eq!(csv(""), Some(vec![]));
        for broken in [
            "a\"b,c\n",    // a quote inside an unquoted field
            "\"a\"b,c\n",  // text after a closing quote
            "\"open,c\n",  // a quote never closed
            "a\rb\n",      // a carriage return alone
            "a,\"b\"\"\n", // an escaped quote, then no close
        ] {
            assert_eq!(csv(broken), None, "{broken:?}");
        }
        assert!(csv_cells(b"a,\xff\n", later()).is_none());
    }
}
