//! A folder of real office documents for the field study's document
//! servers: a workbook of two sheets, a Word report, a one-page PDF, a CSV,
//! a small PNG and a markdown note, each in its format's own structure, so that a tool
//! that opens `.xlsx`, `.docx` or `.pdf` meets a file it can open.
//!
//! The packages are written here rather than by a library: each is the
//! smallest one the format's readers (openpyxl, python-docx, pypdf, the
//! project's own sheet observer) accept, and every byte is fixed (entries
//! stamped 1980-01-01), so two stores made apart are identical.

use std::io::Write;
use std::path::Path;

use zip::write::SimpleFileOptions;

const RELATIONSHIPS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const XML: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;

/// A budget row: an item, its amount, its owner.
type Row = (&'static str, u32, &'static str);

/// The budget's rows, one sheet per quarter.
const QUARTERS: [(&str, [Row; 4]); 2] = [
    (
        "Q1",
        [
            ("Rent", 1200, "Ada"),
            ("Groceries", 430, "Grace"),
            ("Power", 95, "Ada"),
            ("Garden", 60, "Charles"),
        ],
    ),
    (
        "Q2",
        [
            ("Rent", 1200, "Ada"),
            ("Groceries", 455, "Grace"),
            ("Power", 80, "Ada"),
            ("Hinge", 25, "Charles"),
        ],
    ),
];

const REPORT: [&str; 4] = [
    "Household report",
    "The gate's hinge was replaced in April; the old one had rusted through.",
    "Spending on power fell from 95 to 80 after the new boiler.",
    "Next: a rain barrel by the shed.",
];

const CATALOG: &str =
    "sku,name,price\nB-01,bird box,12.50\nR-02,rain barrel,48.00\nH-03,hinge,6.25\n";

/// A 4×4 RGB PNG (the household's logo): what a tool that places an image
/// in a document is handed.
const LOGO: [u8; 73] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 4, 0, 0, 0, 4, 8, 2, 0,
    0, 0, 38, 147, 9, 41, 0, 0, 0, 16, 73, 68, 65, 84, 120, 218, 99, 80, 104, 112, 128, 35, 6, 226,
    56, 0, 106, 67, 14, 1, 0, 220, 15, 213, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

const NOTE: &str = "# Documents\n\nThe household's papers: the budget, the report, the scan.\n";

/// Writes the folder at `root`.
pub fn write(root: &Path) -> Result<(), String> {
    std::fs::create_dir_all(root).map_err(|e| format!("cannot make {}: {e}", root.display()))?;
    let files: [(&str, Vec<u8>); 6] = [
        ("budget.xlsx", workbook()?),
        ("report.docx", report()?),
        ("scan.pdf", pdf(&REPORT[..2])),
        ("catalog.csv", CATALOG.as_bytes().to_vec()),
        ("README.md", NOTE.as_bytes().to_vec()),
        ("logo.png", LOGO.to_vec()),
    ];
    for (name, bytes) in files {
        std::fs::write(root.join(name), bytes).map_err(|e| format!("cannot seed {name}: {e}"))?;
    }
    Ok(())
}

/// A zip package of `parts`, deflated, every entry stamped the same.
fn package(parts: &[(&str, String)]) -> Result<Vec<u8>, String> {
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let failed = |e: &dyn std::fmt::Display| format!("cannot pack a document: {e}");
    for (name, text) in parts {
        out.start_file(*name, options).map_err(|e| failed(&e))?;
        out.write_all(text.as_bytes()).map_err(|e| failed(&e))?;
    }
    let cursor = out.finish().map_err(|e| failed(&e))?;
    Ok(cursor.into_inner())
}

/// Text escaped for XML content.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn content_types(overrides: &[(&str, &str)]) -> String {
    let each: String = overrides
        .iter()
        .map(|(part, kind)| format!(r#"<Override PartName="{part}" ContentType="{kind}"/>"#))
        .collect();
    format!(
        r#"{XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>{each}</Types>"#
    )
}

fn root_relationship(target: &str) -> String {
    format!(
        r#"{XML}<Relationships xmlns="{RELATIONSHIPS}"><Relationship Id="rId1" Type="{OFFICE}/officeDocument" Target="{target}"/></Relationships>"#
    )
}

/// `budget.xlsx`: sheets Q1 and Q2, a header row, four items and a SUM row.
fn workbook() -> Result<Vec<u8>, String> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let sheet_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
    let mut overrides = vec![(
        "/xl/workbook.xml".to_owned(),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
    )];
    let mut sheets = String::new();
    let mut rels = String::new();
    let mut parts: Vec<(String, String)> = Vec::new();
    for (i, (name, rows)) in QUARTERS.iter().enumerate() {
        let n = i + 1;
        overrides.push((format!("/xl/worksheets/sheet{n}.xml"), sheet_type));
        sheets.push_str(&format!(
            r#"<sheet name="{name}" sheetId="{n}" r:id="rId{n}"/>"#
        ));
        rels.push_str(&format!(
            r#"<Relationship Id="rId{n}" Type="{OFFICE}/worksheet" Target="worksheets/sheet{n}.xml"/>"#
        ));
        let text = |at: &str, value: &str| {
            format!(
                r#"<c r="{at}" t="inlineStr"><is><t>{}</t></is></c>"#,
                escaped(value)
            )
        };
        let mut data = format!(
            r#"<row r="1">{}{}{}</row>"#,
            text("A1", "Item"),
            text("B1", "Amount"),
            text("C1", "Owner")
        );
        for (r, (item, amount, owner)) in rows.iter().enumerate() {
            let row = r + 2;
            data.push_str(&format!(
                r#"<row r="{row}">{}<c r="B{row}"><v>{amount}</v></c>{}</row>"#,
                text(&format!("A{row}"), item),
                text(&format!("C{row}"), owner)
            ));
        }
        let total: u32 = rows.iter().map(|(_, amount, _)| amount).sum();
        let last = rows.len() + 1;
        let sum_row = rows.len() + 2;
        data.push_str(&format!(
            r#"<row r="{sum_row}">{}<c r="B{sum_row}"><f>SUM(B2:B{last})</f><v>{total}</v></c></row>"#,
            text(&format!("A{sum_row}"), "Total")
        ));
        parts.push((
            format!("xl/worksheets/sheet{n}.xml"),
            format!(r#"{XML}<worksheet xmlns="{main}"><sheetData>{data}</sheetData></worksheet>"#),
        ));
    }
    let overrides: Vec<(&str, &str)> = overrides.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    let mut all = vec![
        ("[Content_Types].xml".to_owned(), content_types(&overrides)),
        (
            "_rels/.rels".to_owned(),
            root_relationship("xl/workbook.xml"),
        ),
        (
            "xl/workbook.xml".to_owned(),
            format!(
                r#"{XML}<workbook xmlns="{main}" xmlns:r="{OFFICE}"><sheets>{sheets}</sheets></workbook>"#
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels".to_owned(),
            format!(r#"{XML}<Relationships xmlns="{RELATIONSHIPS}">{rels}</Relationships>"#),
        ),
    ];
    all.extend(parts);
    let borrowed: Vec<(&str, String)> = all.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    package(&borrowed)
}

/// The paragraph styles a document editor asks for by name: python-docx's
/// `add_heading` and list paragraphs fail on a package without them.
const STYLES: [(&str, &str); 8] = [
    ("Normal", "Normal"),
    ("Title", "Title"),
    ("Heading1", "heading 1"),
    ("Heading2", "heading 2"),
    ("Heading3", "heading 3"),
    ("ListBullet", "List Bullet"),
    ("ListNumber", "List Number"),
    ("Quote", "Quote"),
];

/// `report.docx`: a title and three paragraphs, with its style sheet.
fn report() -> Result<Vec<u8>, String> {
    let word = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
    let body: String = REPORT
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let style = if i == 0 {
                r#"<w:pPr><w:pStyle w:val="Title"/></w:pPr>"#
            } else {
                ""
            };
            format!(
                r#"<w:p>{style}<w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
                escaped(p)
            )
        })
        .collect();
    let styles: String = STYLES
        .iter()
        .map(|(id, name)| {
            let default = if *id == "Normal" { r#" w:default="1""# } else { "" };
            let based = if *id == "Normal" {
                ""
            } else {
                r#"<w:basedOn w:val="Normal"/>"#
            };
            format!(
                r#"<w:style w:type="paragraph"{default} w:styleId="{id}"><w:name w:val="{name}"/>{based}</w:style>"#
            )
        })
        .collect();
    package(&[
        (
            "[Content_Types].xml",
            content_types(&[
                (
                    "/word/document.xml",
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                ),
                (
                    "/word/styles.xml",
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml",
                ),
            ]),
        ),
        ("_rels/.rels", root_relationship("word/document.xml")),
        (
            "word/_rels/document.xml.rels",
            format!(
                r#"{XML}<Relationships xmlns="{RELATIONSHIPS}"><Relationship Id="rId1" Type="{OFFICE}/styles" Target="styles.xml"/></Relationships>"#
            ),
        ),
        (
            "word/styles.xml",
            format!(r#"{XML}<w:styles xmlns:w="{word}">{styles}</w:styles>"#),
        ),
        (
            "word/document.xml",
            format!(
                r#"{XML}<w:document xmlns:w="{word}"><w:body>{body}<w:sectPr/></w:body></w:document>"#
            ),
        ),
    ])
}

/// A one-page PDF showing `lines`, with a cross-reference table whose
/// offsets are the objects' own.
fn pdf(lines: &[&str]) -> Vec<u8> {
    let shown: String = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let text = line
                .replace('\\', "\\\\")
                .replace('(', "\\(")
                .replace(')', "\\)");
            format!("BT /F1 12 Tf 72 {} Td ({text}) Tj ET\n", 720 - 20 * i)
        })
        .collect();
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{shown}endstream", shown.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_holds_each_format_and_is_the_same_every_time() {
        let a = tempfile::tempdir().expect("tempdir");
        let b = tempfile::tempdir().expect("tempdir");
        write(a.path()).expect("written");
        write(b.path()).expect("written");
        for name in [
            "budget.xlsx",
            "report.docx",
            "scan.pdf",
            "catalog.csv",
            "README.md",
        ] {
            let first = std::fs::read(a.path().join(name)).expect("read");
            assert_eq!(
                first,
                std::fs::read(b.path().join(name)).expect("read"),
                "{name}"
            );
        }
        // The packages are zip files holding their main parts.
        for (name, part) in [
            ("budget.xlsx", "xl/worksheets/sheet2.xml"),
            ("report.docx", "word/document.xml"),
        ] {
            let file = std::fs::File::open(a.path().join(name)).expect("open");
            let mut archive = zip::ZipArchive::new(file).expect("a zip");
            assert!(archive.by_name(part).is_ok(), "{name} lacks {part}");
        }
        // The PDF's cross-reference table points at its objects.
        let pdf = std::fs::read(a.path().join("scan.pdf")).expect("read");
        let text = String::from_utf8_lossy(&pdf);
        let xref: usize = text
            .split("startxref\n")
            .nth(1)
            .and_then(|t| t.lines().next())
            .and_then(|n| n.parse().ok())
            .expect("startxref");
        assert!(text[xref..].starts_with("xref"));
        let first = text[xref..].lines().nth(3).expect("object 1's entry");
        let offset: usize = first[..10].parse().expect("an offset");
        assert!(text[offset..].starts_with("1 0 obj"));
    }
}
