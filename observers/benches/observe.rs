//! Observer micro-benchmarks (issue 14): a cold first observation, an
//! observation of an untouched store, and one after a single row or file
//! changed, at three sizes each. Run with `cargo bench -p witness-observers`;
//! CI only builds them. Whole-audit numbers and their shell baselines come
//! from `bench/run.py` (docs/performance.md); the content views' (a 10 MB
//! JSON document, a 10^4-row workbook) from `bench/content.sh`.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::Duration;

use divan::Bencher;
use rusqlite::Connection;
use witness_observers::Observer;
use witness_observers::fs::FsObserver;
use witness_observers::sqlite::SqliteObserver;

fn main() {
    divan::main();
}

const ROWS: [usize; 3] = [10_000, 100_000, 1_000_000];
const FILES: [usize; 3] = [1_000, 10_000, 100_000];

/// A database of `rows` rows in `dir` (about 74 bytes a row).
fn database(dir: &Path, rows: usize) -> PathBuf {
    let path = dir.join("items.db");
    let mut conn = Connection::open(&path).expect("open");
    conn.execute_batch(
        "CREATE TABLE items(id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER);",
    )
    .expect("schema");
    let tx = conn.transaction().expect("transaction");
    {
        let mut insert = tx
            .prepare("INSERT INTO items(id, body, n) VALUES (?1, ?2, ?3)")
            .expect("insert");
        for i in 1..=rows as i64 {
            let body = format!("{:056x}", (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            insert
                .execute(rusqlite::params![i, body, i * 7])
                .expect("row");
        }
    }
    tx.commit().expect("commit");
    path
}

/// A tree of `files` files of 0-8 KiB in 100 directories.
fn tree(dir: &Path, files: usize) -> PathBuf {
    let root = dir.join("tree");
    for n in 0..files {
        let sub = root.join(format!("d{:03}", n % 100));
        if n < 100 {
            std::fs::create_dir_all(&sub).expect("mkdir");
        }
        let size = (n * 7919) % 8192;
        std::fs::write(
            sub.join(format!("f{:04}", n / 100)),
            vec![(n % 251) as u8; size],
        )
        .expect("write");
    }
    root
}

/// Long enough for the stamps of a fresh store to settle.
fn settle() {
    std::thread::sleep(Duration::from_millis(50));
}

#[divan::bench(args = ROWS, sample_count = 10, sample_size = 1)]
fn sqlite_cold(bencher: Bencher, rows: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = database(dir.path(), rows);
    bencher.bench_local(|| SqliteObserver::new(&db).observe(false).expect("observe"));
}

#[divan::bench(args = ROWS, sample_count = 30, sample_size = 1)]
fn sqlite_no_change(bencher: Bencher, rows: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = database(dir.path(), rows);
    let mut observer = SqliteObserver::new(&db);
    observer.observe(false).expect("observe");
    settle();
    bencher.bench_local(|| observer.observe(true).expect("observe"));
}

#[divan::bench(args = ROWS, sample_count = 20, sample_size = 1)]
fn sqlite_one_row(bencher: Bencher, rows: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = database(dir.path(), rows);
    let writer = Connection::open(&db).expect("open");
    let observer = RefCell::new(SqliteObserver::new(&db));
    observer.borrow_mut().observe(false).expect("observe");
    let n = Cell::new(0i64);
    bencher
        .with_inputs(|| {
            n.set(n.get() + 9_973);
            let id = n.get() % rows as i64 + 1;
            writer
                .execute("UPDATE items SET n = n + 1 WHERE id = ?1", [id])
                .expect("update");
        })
        .bench_local_values(|()| observer.borrow_mut().observe(true).expect("observe"));
}

#[divan::bench(args = FILES, sample_count = 10, sample_size = 1)]
fn tree_cold(bencher: Bencher, files: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), files);
    bencher.bench_local(|| FsObserver::new(&root).observe(false).expect("observe"));
}

#[divan::bench(args = FILES, sample_count = 30, sample_size = 1)]
fn tree_no_change(bencher: Bencher, files: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), files);
    let mut observer = FsObserver::new(&root);
    observer.observe(false).expect("observe");
    settle();
    bencher.bench_local(|| observer.observe(true).expect("observe"));
}

/// The same without events: every stamp read (the fallback's cost).
#[divan::bench(args = FILES, sample_count = 10, sample_size = 1)]
fn tree_no_change_by_stamps(bencher: Bencher, files: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), files);
    let mut observer = FsObserver::new(&root).without_events();
    observer.observe(false).expect("observe");
    settle();
    bencher.bench_local(|| observer.observe(true).expect("observe"));
}

#[divan::bench(args = FILES, sample_count = 20, sample_size = 1)]
fn tree_one_file(bencher: Bencher, files: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = tree(dir.path(), files);
    let observer = RefCell::new(FsObserver::new(&root));
    observer.borrow_mut().observe(false).expect("observe");
    let n = Cell::new(0usize);
    bencher
        .with_inputs(|| {
            n.set(n.get() + 37);
            let k = n.get() % files;
            let path = root.join(format!("d{:03}/f{:04}", k % 100, k / 100));
            let mut bytes = std::fs::read(&path).expect("read");
            bytes.push(b'x');
            std::fs::write(&path, bytes).expect("write");
        })
        .bench_local_values(|()| observer.borrow_mut().observe(true).expect("observe"));
}

/// A JSON document of about 10 MB, as a task manager keeps one: requests,
/// each with its tasks, every record with an id. Written pretty-printed, as
/// such servers write it. `WITNESS_BENCH_JSON` names a file to observe
/// instead (what `bench/content.sh` times its shell baseline on), copied in
/// so the document is the same for both.
fn document(dir: &Path) -> PathBuf {
    let root = dir.join("docs");
    std::fs::create_dir_all(&root).expect("mkdir");
    let path = root.join("tasks.json");
    if let Some(given) = std::env::var_os("WITNESS_BENCH_JSON") {
        std::fs::copy(given, &path).expect("copy the given document");
        return root;
    }
    std::fs::write(&path, tasks_document(1_300, 25)).expect("write");
    root
}

/// `requests` requests of `tasks` tasks each (1 300 × 25 ≈ 10 MB).
fn tasks_document(requests: usize, tasks: usize) -> Vec<u8> {
    let requests: Vec<serde_json::Value> = (0..requests)
        .map(|r| {
            let tasks: Vec<serde_json::Value> = (0..tasks)
                .map(|t| {
                    serde_json::json!({
                        "id": format!("task-{r}-{t}"),
                        "title": format!("Task {t} of request {r}: {:048x}", (r * 31 + t) as u128 * 0x9e37_79b9),
                        "description": "Write the code, then the tests, then the docs.",
                        "done": t % 3 == 0,
                        "approved": false,
                        "completedDetails": ""
                    })
                })
                .collect();
            serde_json::json!({
                "requestId": format!("req-{r}"),
                "originalRequest": format!("Request number {r}"),
                "splitDetails": "",
                "tasks": tasks,
                "completed": false
            })
        })
        .collect();
    serde_json::to_vec_pretty(&serde_json::json!({ "requests": requests })).expect("json")
}

/// The first observation of a directory holding the document, read as
/// objects (what a directory store costs cold).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn json_document_cold(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = document(dir.path());
    bencher.bench_local(|| {
        FsObserver::new(&root)
            .with_content_views()
            .observe(false)
            .expect("observe")
    });
}

/// A call that changed nothing: the document is not read again.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn json_document_no_change(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = document(dir.path());
    let mut observer = FsObserver::new(&root).with_content_views();
    observer.observe(false).expect("observe");
    settle();
    bencher.bench_local(|| observer.observe(true).expect("observe"));
}

/// A call that rewrote the document whole with one record changed: read,
/// parsed and diffed object by object.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn json_document_rewritten(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = document(dir.path());
    let path = root.join("tasks.json");
    let original = std::fs::read(&path).expect("read");
    let observer = RefCell::new(FsObserver::new(&root).with_content_views());
    observer.borrow_mut().observe(false).expect("observe");
    let n = Cell::new(0usize);
    bencher
        .with_inputs(|| {
            n.set(n.get() + 1);
            // One title changed, the rest as it was: one update.
            let mut bytes = original.clone();
            let at = bytes.len() / 2;
            let marker = b"Task ";
            if let Some(i) = bytes[at..].windows(marker.len()).position(|w| w == marker) {
                bytes[at + i] = if n.get().is_multiple_of(2) {
                    b'T'
                } else {
                    b't'
                };
            }
            let tmp = root.join("tasks.json.tmp");
            std::fs::write(&tmp, &bytes).expect("write");
            std::fs::rename(&tmp, &path).expect("rename");
        })
        .bench_local_values(|()| observer.borrow_mut().observe(true).expect("observe"));
}

/// Rows of the spreadsheet benchmarks (the issue's 10^4).
const SHEET_ROWS: usize = 10_000;

/// An xlsx of `rows` task rows and a header, five columns (an id, a unique
/// title, a status and an owner from a few shared strings, an estimate),
/// packed as a spreadsheet program packs it: deflated, strings shared. With
/// `variant`, the title of row 5 000 carries it (one cell changed).
fn workbook(rows: usize, variant: Option<usize>) -> Vec<u8> {
    use std::io::Write;
    let statuses = ["todo", "doing", "done", "blocked"];
    let owners = ["ana", "bo", "chen", "dana", "eli", "fay"];
    let mut strings: Vec<String> = ["id", "title", "status", "owner", "estimate"]
        .iter()
        .chain(&statuses)
        .chain(&owners)
        .map(|s| (*s).to_owned())
        .collect();
    let mut sheet = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c><c r="E1" t="s"><v>4</v></c></row>"#,
    );
    for i in 0..rows {
        let r = i + 2;
        let mut title = format!(
            "Task {i}: {:032x}",
            (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        );
        if i == rows / 2
            && let Some(v) = variant
        {
            title.push_str(&format!(" (edit {v})"));
        }
        strings.push(title);
        let t = strings.len() - 1;
        let s = 5 + i % statuses.len();
        let o = 5 + statuses.len() + i % owners.len();
        let estimate = (i % 40) as f64 * 0.25 + 0.5;
        sheet.push_str(&format!(
            r#"<row r="{r}"><c r="A{r}"><v>{}</v></c><c r="B{r}" t="s"><v>{t}</v></c><c r="C{r}" t="s"><v>{s}</v></c><c r="D{r}" t="s"><v>{o}</v></c><c r="E{r}"><v>{estimate}</v></c></row>"#,
            i + 1
        ));
    }
    sheet.push_str("</sheetData></worksheet>");
    let mut shared = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{n}" uniqueCount="{n}">"#,
        n = strings.len()
    );
    for s in &strings {
        shared.push_str(&format!("<si><t>{s}</t></si>"));
    }
    shared.push_str("</sst>");
    let rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let pkg = "http://schemas.openxmlformats.org/package/2006/relationships";
    let parts = [
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#.to_owned()),
        ("_rels/.rels", format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#)),
        ("xl/workbook.xml", format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="{rel}"><sheets><sheet name="Tasks" sheetId="1" r:id="rId1"/></sheets></workbook>"#)),
        ("xl/_rels/workbook.xml.rels", format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{pkg}"><Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#)),
        ("xl/worksheets/sheet1.xml", sheet),
        ("xl/sharedStrings.xml", shared),
    ];
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in parts {
        out.start_file(name, options).expect("zip entry");
        out.write_all(text.as_bytes()).expect("zip write");
    }
    out.finish().expect("zip").into_inner()
}

/// A directory holding the workbook, as `book.xlsx`.
fn spreadsheet(dir: &Path) -> PathBuf {
    let root = dir.join("sheets");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("book.xlsx"), workbook(SHEET_ROWS, None)).expect("write");
    root
}

/// The baseline: reading the sheet with calamine as a program would (the
/// file read, the workbook opened, every sheet's range of values built).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn spreadsheet_calamine_read(bencher: Bencher) {
    use calamine::Reader;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = spreadsheet(dir.path());
    let path = root.join("book.xlsx");
    bencher.bench_local(|| {
        let bytes = std::fs::read(&path).expect("read");
        let mut book = calamine::Xlsx::new(std::io::Cursor::new(bytes)).expect("open");
        let mut cells = 0usize;
        for name in book.sheet_names() {
            let range = book.worksheet_range(&name).expect("sheet");
            cells += range.used_cells().count();
        }
        assert_eq!(cells, (SHEET_ROWS + 1) * 5);
        cells
    });
}

/// The first observation of a directory holding the workbook, read as
/// cells (what a directory store costs cold).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn spreadsheet_cold(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = spreadsheet(dir.path());
    bencher.bench_local(|| {
        FsObserver::new(&root)
            .with_content_views()
            .observe(false)
            .expect("observe")
    });
}

/// A call that changed nothing: the workbook is not read again.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn spreadsheet_no_change(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = spreadsheet(dir.path());
    let mut observer = FsObserver::new(&root).with_content_views();
    observer.observe(false).expect("observe");
    settle();
    bencher.bench_local(|| observer.observe(true).expect("observe"));
}

/// A call that re-saved the workbook whole with one cell changed: read,
/// unpacked, its cells read and diffed cell by cell (one update).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn spreadsheet_one_cell(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = spreadsheet(dir.path());
    let path = root.join("book.xlsx");
    let observer = RefCell::new(FsObserver::new(&root).with_content_views());
    observer.borrow_mut().observe(false).expect("observe");
    let n = Cell::new(0usize);
    bencher
        .with_inputs(|| {
            n.set(n.get() + 1);
            let tmp = root.join("book.xlsx.tmp");
            std::fs::write(&tmp, workbook(SHEET_ROWS, Some(n.get()))).expect("write");
            std::fs::rename(&tmp, &path).expect("rename");
        })
        .bench_local_values(|()| {
            let seen = observer.borrow_mut().observe(true).expect("observe");
            assert_eq!(seen.delta.changes.len(), 1, "{:?}", seen.delta.changes);
            seen
        });
}
