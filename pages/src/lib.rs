//! Pages a person reads in a browser, rendered with minijinja from the JSON
//! documents the engine and the lab write — and from nothing else, so a page
//! cannot say anything the measurement did not.
//!
//! - [`render_audit`]: the effect-evidence report of one audit
//!   (`mcp-witness.audit/v1`);
//! - [`render_index`]: the evaluation page over `e1.json`, `e2.json`,
//!   `e3.json` and any `case-*.json` in a results directory;
//! - [`render_all`]: both, plus `summary.md`, written to disk (what `lab` and
//!   `report` call);
//! - [`sweep::render_dir`]: a sweep's prevalence page and its targets'
//!   evidence pages (what `sweep` and `sweep merge` call).
//! - [`ci`]: an audit as JUnit XML and SARIF 2.1.0, for CI systems.
//! - [`agent`]: the page and text summary of an agent run
//!   (`mcp-witness.agent-run/v1`);
//! - [`compare`]: the page and text of an agent compare
//!   (`mcp-witness.agent-compare/v1`).
//!
//! Safety: templates are HTML with autoescape on, and every interpolated
//! value goes through [`html_formatter`], which also makes invisible
//! characters (bidi overrides, zero-width and control characters) visible.
//! The `safe` filter is removed, so no template can print server text raw.
//! Nothing a server sent becomes a link: hrefs are built here, from our own
//! file names and anchors only. Secrets never reach a page because pages read
//! the already-redacted JSON.
//!
//! Rendering is deterministic: no clock, no environment, sorted inputs.

pub mod agent;
mod audit;
mod charts;
pub mod ci;
pub mod compare;
mod coverage;
mod field;
pub mod guidance;
mod index;
mod lenient;
pub mod manifest;
pub mod markdown;
pub mod plan;
pub mod sweep;
pub mod text;
pub mod trace_check;

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use minijinja::{AutoEscape, Environment, Error, Output, State, UndefinedBehavior, Value};
use serde::Serialize;

use witness_model::audit::{AuditReport, Verdict, VerdictTally};
use witness_text::is_invisible;

pub use audit::AuditLinks;
pub use index::{CaseView, Documents};

const STYLE: &str = include_str!("../templates/style.css");
const MACROS: &str = include_str!("../templates/macros.html.j2");
const AUDIT: &str = include_str!("../templates/audit.html.j2");
const INDEX: &str = include_str!("../templates/index.html.j2");
const SWEEP: &str = include_str!("../templates/sweep.html.j2");
const AGENT_RUN: &str = include_str!("../templates/agent-run.html.j2");
const TRACE_CHECK: &str = include_str!("../templates/trace-check.html.j2");
const AGENT_COMPARE: &str = include_str!("../templates/agent-compare.html.j2");
const COMPARE_ROWS: &str = include_str!("../templates/compare-rows.html.j2");

/// The template environment: embedded templates, HTML autoescape for
/// `*.html.j2`, strict undefined values, the escaping formatter.
fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html.j2") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_formatter(html_formatter);
    env.remove_filter("safe");
    env.set_keep_trailing_newline(true);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    for (name, source) in [
        ("style.css", STYLE),
        ("macros.html.j2", MACROS),
        ("audit.html.j2", AUDIT),
        ("index.html.j2", INDEX),
        ("sweep.html.j2", SWEEP),
        ("agent-run.html.j2", AGENT_RUN),
        ("trace-check.html.j2", TRACE_CHECK),
        ("agent-compare.html.j2", AGENT_COMPARE),
        ("compare-rows.html.j2", COMPARE_ROWS),
    ] {
        env.add_template(name, source)
            .map_err(|e| anyhow!("template {name}: {e:#}"))?;
    }
    Ok(env)
}

fn render(template: &str, context: impl Serialize) -> Result<String> {
    let env = environment()?;
    let template = env
        .get_template(template)
        .map_err(|e| anyhow!("template {template}: {e:#}"))?;
    template
        .render(context)
        .map_err(|e| anyhow!("cannot render {}: {e:#}", template.name()))
}

/// Writes values into HTML: markup produced by our own macros passes through;
/// everything else is escaped, and invisible characters are shown as a marked
/// code point instead of acting on the text around them.
fn html_formatter(out: &mut Output, state: &State, value: &Value) -> Result<(), Error> {
    if state.auto_escape() != AutoEscape::Html {
        return minijinja::escape_formatter(out, state, value);
    }
    if value.is_undefined() || value.is_none() {
        return Ok(());
    }
    let text = match value.as_str() {
        Some(s) => s.to_owned(),
        None => value.to_string(),
    };
    let written = if value.is_safe() {
        text
    } else {
        escape_html(&text)
    };
    out.write_str(&written).map_err(Error::from)
}

/// HTML text for `s`: `& < > " '` escaped; invisible characters replaced by
/// a visible, marked code point such as `U+202E`.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_invisible(c) => {
                let _ = write!(
                    out,
                    "<span class=\"ctl\" title=\"invisible character\">U+{:04X}</span>",
                    u32::from(c)
                );
            }
            c => out.push(c),
        }
    }
    out
}

/// An HTML id fragment for any text: ASCII letters, digits, `_` and `-` stay;
/// every other character becomes `.xx.` (its code point in hex), so distinct
/// names never share an id and nothing a server named can break out of it.
pub fn anchor_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            let _ = write!(out, ".{:x}.", u32::from(c));
        }
    }
    out
}

/// The anchor of one check verdict: `EFF-01-get_note`.
pub fn check_anchor(id: &str, tool: &str) -> String {
    format!("{}-{}", anchor_part(id), anchor_part(tool))
}

/// A file name we are willing to link to: our own audit names only.
fn safe_stem(stem: &str) -> bool {
    !stem.is_empty()
        && stem.len() <= 120
        && !stem.starts_with('.')
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The evidence report's file name for the audit `audits/<stem>.json`.
pub fn report_file(stem: &str) -> String {
    format!("effect-report-{stem}.html")
}

/// `audits/<stem>.json` → `<stem>`, when that is a name we link to.
fn audit_stem(relative: &str) -> Option<&str> {
    relative
        .strip_prefix("audits/")
        .and_then(|r| r.strip_suffix(".json"))
        .filter(|s| safe_stem(s) && !s.contains('/'))
}

/// A relative href from directory `from` to directory `to`, ending in `/`
/// (empty when they are the same directory). Both must exist.
pub fn relative_href(from: &Path, to: &Path) -> Result<String> {
    let from = from
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", from.display()))?;
    let to = to
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", to.display()))?;
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut href = String::new();
    for _ in common..a.len() {
        href.push_str("../");
    }
    for part in &b[common..] {
        let name = part.as_os_str().to_string_lossy();
        href.push_str(&encode_path_segment(&name));
        href.push('/');
    }
    Ok(href)
}

/// Percent-encodes a path segment for an href (unreserved characters stay).
fn encode_path_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The effect-evidence report of one audit, as a self-contained HTML page.
pub fn render_audit(report: &AuditReport, links: &AuditLinks) -> Result<String> {
    render("audit.html.j2", audit::view(report, links))
}

/// The evaluation page over the lab documents in `data`; `data_href` is the
/// relative href from the page's directory to `data` (`""` or
/// `"../experiments/results/"`).
pub fn render_index(data: &Path, data_href: &str) -> Result<String> {
    render("index.html.j2", index::view(data, data_href)?)
}

/// What [`render_all`] wrote.
#[derive(Debug, Default)]
pub struct Rendered {
    pub files: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// Renders every page from the JSON in `data`: `data/summary.md`,
/// `pages/index.html` and `pages/effect-report-<stem>.html` for every
/// `data/audits/<stem>.json` (and the audit each case study names). Reads
/// nothing but those files; runs nothing.
pub fn render_all(data: &Path, pages: &Path) -> Result<Rendered> {
    std::fs::create_dir_all(pages).with_context(|| format!("cannot create {}", pages.display()))?;
    let data_href = relative_href(pages, data)?;
    let mut rendered = Rendered::default();

    let docs = index::Documents::load(data)?;
    let cases: Vec<CaseView> = docs
        .cases
        .iter()
        .map(|c| index::case_view(c, data, ""))
        .collect();
    let summary = markdown::markdown(
        docs.e1.as_ref(),
        docs.e2.as_ref(),
        docs.e3.as_ref(),
        (docs.e2_postgres.as_ref(), docs.e3_postgres.as_ref()),
        &cases,
        docs.coverage.as_ref(),
        docs.field.as_ref(),
    );
    let path = data.join("summary.md");
    write(&path, &summary)?;
    rendered.files.push(path);

    let mut audits: Vec<(String, String)> = audit_files(data, &mut rendered.warnings)?
        .into_iter()
        .map(|(stem, relative)| (report_file(&stem), relative))
        .collect();
    for case in &docs.cases {
        if let Some(audit) = index::case_audit(case, data).filter(|a| a.separate) {
            audits.push((audit.report, audit.relative));
        }
    }
    for (file, relative) in audits {
        let path = data.join(&relative);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let report: AuditReport = match serde_json::from_str(&text) {
            Ok(report) => report,
            Err(e) => {
                rendered.warnings.push(format!(
                    "{}: not an mcp-witness.audit/v1 document ({e}); no report rendered",
                    path.display()
                ));
                continue;
            }
        };
        let links = AuditLinks {
            raw_json: Some(format!("{data_href}{relative}")),
            index: Some("index.html".into()),
        };
        let html = render_audit(&report, &links)?;
        let out = pages.join(file);
        write(&out, &html)?;
        rendered.files.push(out);
    }

    let html = render_index(data, &data_href)?;
    let out = pages.join("index.html");
    write(&out, &html)?;
    rendered.files.push(out);
    Ok(rendered)
}

/// `(stem, "audits/<stem>.json")` for every audit in `data/audits`, sorted.
fn audit_files(data: &Path, warnings: &mut Vec<String>) -> Result<Vec<(String, String)>> {
    let dir = data.join("audits");
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        if !safe_stem(stem) {
            warnings.push(format!(
                "audits/{name}: file name not used in links (letters, digits, . _ - only); skipped"
            ));
            continue;
        }
        out.push((stem.to_owned(), format!("audits/{name}")));
    }
    out.sort();
    Ok(out)
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Three decimals, or `n/a` for an undefined ratio.
fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".into(), |v| format!("{v:.3}"))
}

/// `1 fail · 3 pass · 6 skip`: the verdicts that occurred, fail first, as
/// the evidence page's check groups and the case studies both count them.
fn verdict_counts(tally: &VerdictTally) -> String {
    [
        Verdict::Fail,
        Verdict::Pass,
        Verdict::Skip,
        Verdict::Untestable,
    ]
    .into_iter()
    .filter(|v| tally.get(*v) > 0)
    .map(|v| format!("{} {v}", tally.get(v)))
    .collect::<Vec<_>>()
    .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_invisible_characters() {
        assert_eq!(
            escape_html("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        let bidi = escape_html("abc\u{202E}def");
        assert!(!bidi.contains('\u{202E}'));
        assert!(bidi.contains(">U+202E</span>"));
        assert_eq!(escape_html("line\nnext\ttab"), "line\nnext\ttab");
    }

    #[test]
    fn anchors_are_injective_and_inert() {
        assert_eq!(check_anchor("EFF-01", "get_note"), "EFF-01-get_note");
        let evil = anchor_part("<script>\"x\"");
        assert!(
            evil.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        );
        assert_ne!(anchor_part("a.b"), anchor_part("a.2e.b"));
        assert_ne!(anchor_part("a b"), anchor_part("a_b"));
    }

    #[test]
    fn an_attempt_whose_first_bytes_were_none_renders() {
        // A connect that sent nothing has no digest: the page says none
        // rather than failing to render (the field study met one).
        let committed = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../experiments/results/audits/honest.json"
        );
        let text = std::fs::read_to_string(committed).expect("the committed honest audit");
        let mut report: AuditReport = serde_json::from_str(&text).expect("an audit report");
        report
            .network_outside_calls
            .push(witness_model::audit::NetworkAttempt {
                protocol: "tcp".into(),
                address: "198.18.0.1".into(),
                port: 443,
                host: Some("telemetry.example.invalid".into()),
                bytes: 0,
                digest: None,
            });
        let page = render_audit(&report, &AuditLinks::default()).expect("renders");
        assert!(page.contains("telemetry.example.invalid"));
    }

    #[test]
    fn relative_hrefs_between_directories() {
        let root = tempfile::tempdir().expect("tempdir");
        let data = root.path().join("experiments/results");
        let pages = root.path().join("reports");
        std::fs::create_dir_all(&data).expect("mkdir");
        std::fs::create_dir_all(&pages).expect("mkdir");
        assert_eq!(
            relative_href(&pages, &data).expect("href"),
            "../experiments/results/"
        );
        assert_eq!(relative_href(&data, &data).expect("href"), "");
        let spaced = root.path().join("a b");
        std::fs::create_dir_all(&spaced).expect("mkdir");
        assert_eq!(relative_href(&pages, &spaced).expect("href"), "../a%20b/");
    }

    #[test]
    fn only_our_audit_names_become_links() {
        assert_eq!(
            audit_stem("audits/silent-keymint.json"),
            Some("silent-keymint")
        );
        assert_eq!(audit_stem("audits/../x.json"), None);
        assert_eq!(audit_stem("https://example.invalid/a.json"), None);
        assert_eq!(audit_stem("audits/a b.json"), None);
    }
}
