//! **A URL parameter of a tool about a kind of file is sent the store's
//! file of that kind, as a `file://` URL.** The jail has no network: an
//! invented `https://` address, or the example a description gives, fails
//! on every call (`fetch failed`), and a tool that opens, saves or converts
//! the document it is pointed at by URL is then never exercised
//! (`Save is only supported for local files`). Servers that take a URL for
//! a document commonly take a local one too, and list their files that
//! way themselves (`file:///…/scan.pdf`).
//!
//! Only where the tool's name or text names a kind of file (a PDF, a
//! workbook, an image) and a store holds one: a tool that fetches web
//! pages, or a webhook's address, keeps its invented URL.
//!
//! Example: `save_pdf {"url": …, "data": …}` of a PDF viewer, with a store
//! holding `scan.pdf`, is sent `"url": "file:///jail/papers/scan.pdf"`.

use serde_json::{Value, json};

use crate::plan::cues::{ToolCues, flat};
use crate::plan::harvest::{Harvested, Pool, Source};

/// Whether parameter `name` holds a URL (`url`, `pdf_url`, `fileUri`,
/// `href`).
pub fn names_url(name: &str) -> bool {
    let flat = flat(name);
    flat.ends_with("url")
        || flat.ends_with("uri")
        || flat.ends_with("urls")
        || matches!(flat.as_str(), "href" | "link")
}

/// Whether URL parameter `name` is one the tool reads from: not where it
/// writes, sends or calls back (`output_url`, `upload_url`,
/// `webhook_url`, `redirect_uri`), which pointed at the store's file would
/// have an honest exporter overwrite it.
fn reads_from(cues: &ToolCues, name: &str) -> bool {
    const ELSEWHERE: [&str; 14] = [
        "out",
        "output",
        "dest",
        "destination",
        "target",
        "save",
        "export",
        "upload",
        "webhook",
        "callback",
        "redirect",
        "notify",
        "post",
        "endpoint",
    ];
    let words = crate::plan::cues::words(name);
    !cues.new_name(name)
        && !cues.output_place(name)
        && !words.iter().any(|w| ELSEWHERE.contains(&w.as_str()))
}

/// The `file://` URL of the store's file that parameter `name` of the tool
/// points at, and the file it names; `None` where the tool names no kind of
/// file, the parameter is no URL, the value it would be sent is not a web
/// address, or no store file is of a kind the tool names.
pub fn file_url<'p>(
    cues: &ToolCues,
    name: &str,
    fallback: &Value,
    pool: &'p Pool,
) -> Option<(String, &'p Harvested)> {
    let invented = fallback
        .as_str()
        .is_some_and(|v| v.starts_with("https://") || v.starts_with("http://"));
    if !invented || !names_url(name) || !reads_from(cues, name) {
        return None;
    }
    let wanted = cues.file_types_for(name);
    if wanted.is_empty() {
        return None;
    }
    // The file the tool's path parameter would be handed, by the same
    // rules (the kind the name says first, a file that still exists).
    let file = pool.candidate_like(cues, "file_path", &json!("x"))?;
    if !matches!(file.source, Source::Store(_)) {
        return None;
    }
    let path = file.value.as_str()?;
    let of_kind = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| wanted.iter().any(|w| w.eq_ignore_ascii_case(e)));
    (of_kind && path.starts_with('/')).then(|| (format!("file://{path}"), file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::cues::PathKind;
    use witness_model::audit::StoreObject;

    fn pool() -> Pool {
        let at = |object: &str| StoreObject {
            store: "papers".into(),
            object: object.into(),
        };
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded_path("/j/p/logo.png".into(), PathKind::File, at("file/logo.png")),
                Harvested::seeded_path("/j/p/scan.pdf".into(), PathKind::File, at("file/scan.pdf")),
            ],
            vec!["/j/p".into()],
        );
        pool
    }

    fn cues(tool: &str, text: &str) -> ToolCues {
        ToolCues {
            tool: tool.into(),
            store_first: true,
            text: format!("{tool} {text}").to_lowercase(),
            ..ToolCues::default()
        }
    }

    #[test]
    fn a_document_tool_is_pointed_at_the_stores_document_by_url() {
        let pool = pool();
        let web = json!("https://example.invalid/witness");
        let save = cues("save_pdf", "Save the annotated PDF back to its file");
        let (url, file) = file_url(&save, "url", &web, &pool).unwrap_or_else(|| panic!("no url"));
        assert_eq!(url, "file:///j/p/scan.pdf");
        assert_eq!(file.value, json!("/j/p/scan.pdf"));
        let example = json!("https://arxiv.org/pdf/1706.03762");
        assert!(file_url(&save, "pdfUrl", &example, &pool).is_some());
    }

    #[test]
    fn web_tools_and_values_that_are_no_web_address_keep_theirs() {
        let pool = pool();
        let web = json!("https://example.invalid/witness");
        let fetch = cues("fetch", "Fetch a web page and return its text");
        assert!(file_url(&fetch, "url", &web, &pool).is_none());
        let save = cues("save_pdf", "Save a PDF");
        assert!(file_url(&save, "path", &web, &pool).is_none(), "no URL");
        assert!(file_url(&save, "url", &json!("witness"), &pool).is_none());
        // A workbook tool, and the store holds no workbook.
        let sheet = cues("open_workbook", "Open an Excel workbook by URL");
        assert!(file_url(&sheet, "url", &web, &pool).is_none());
        // Where a document tool writes or calls back is never the store's
        // file: an honest exporter would overwrite it.
        let export = cues("export_pdf", "Export a PDF to a URL");
        for elsewhere in [
            "output_url",
            "webhook_url",
            "callbackUrl",
            "redirect_uri",
            "upload_url",
        ] {
            assert!(
                file_url(&export, elsewhere, &web, &pool).is_none(),
                "{elsewhere}"
            );
        }
        assert!(file_url(&export, "source_url", &web, &pool).is_some());
    }
}
