//! HTML checks shared by the page tests: the page parses, its tags nest,
//! ids are unique, and every link we made lands on something.

use std::collections::BTreeSet;
use std::path::Path;

/// Elements that never have a closing tag.
const VOID: [&str; 6] = ["meta", "br", "link", "img", "hr", "input"];

/// The tag names in `html`, in order, as (name, is_closing, is_self_closing);
/// the contents of `<style>` are skipped.
fn tags(html: &str) -> Vec<(String, bool, bool)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let Some(end) = rest.find('>') else {
            panic!("unterminated tag near {:?}", &rest[..rest.len().min(60)]);
        };
        let inside = &rest[..end];
        rest = &rest[end + 1..];
        if inside.starts_with('!') {
            continue;
        }
        let closing = inside.starts_with('/');
        let name: String = inside
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let self_closing = inside.ends_with('/');
        if name == "style" && !closing {
            let Some(close) = rest.find("</style>") else {
                panic!("unclosed <style>");
            };
            rest = &rest[close + "</style>".len()..];
            continue;
        }
        out.push((name, closing, self_closing));
    }
    out
}

/// Every non-void element is closed, in order.
pub fn assert_well_nested(name: &str, html: &str) {
    let mut stack: Vec<String> = Vec::new();
    for (tag, closing, self_closing) in tags(html) {
        if VOID.contains(&tag.as_str()) || self_closing {
            continue;
        }
        if closing {
            match stack.pop() {
                Some(open) if open == tag => {}
                other => panic!("{name}: </{tag}> closes {other:?}"),
            }
        } else {
            stack.push(tag);
        }
    }
    assert!(stack.is_empty(), "{name}: unclosed {stack:?}");
}

pub struct Page {
    pub ids: BTreeSet<String>,
    pub hrefs: Vec<String>,
    /// Tag names present.
    pub elements: BTreeSet<String>,
    /// Attribute names present, on any element.
    pub attributes: BTreeSet<String>,
    /// Text of every `<th>`.
    pub headers: Vec<String>,
    pub tables: usize,
}

/// Parses `html` with a real HTML parser and collects what the checks need.
pub fn parse(name: &str, html: &str) -> Page {
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{name}: no doctype at the very start"
    );
    assert_well_nested(name, html);
    let dom = tl::parse(html, tl::ParserOptions::default())
        .unwrap_or_else(|e| panic!("{name}: does not parse: {e:?}"));
    let parser = dom.parser();
    let mut page = Page {
        ids: BTreeSet::new(),
        hrefs: Vec::new(),
        elements: BTreeSet::new(),
        attributes: BTreeSet::new(),
        headers: Vec::new(),
        tables: 0,
    };
    for node in dom.nodes() {
        let Some(tag) = node.as_tag() else { continue };
        let element = tag.name().as_utf8_str().to_ascii_lowercase();
        if element == "table" {
            page.tables += 1;
        }
        if element == "th" {
            page.headers.push(tag.inner_text(parser).trim().to_string());
        }
        page.elements.insert(element);
        for (key, value) in tag.attributes().iter() {
            let key = key.to_ascii_lowercase();
            let value = value.map(|v| v.to_string()).unwrap_or_default();
            if key == "id" {
                let id = value.clone();
                assert!(page.ids.insert(id.clone()), "{name}: duplicate id {id:?}");
            }
            if key == "href" {
                page.hrefs.push(value);
            }
            page.attributes.insert(key);
        }
    }
    page
}

/// Every link resolves: `#x` to an id on the page, `file` to a file next to
/// it (relative), `file#x` to an id in that file. Nothing points off-site.
pub fn assert_links_resolve(page_path: &Path, page: &Page) {
    let dir = page_path.parent().unwrap_or(Path::new("."));
    for href in &page.hrefs {
        let lowered = href.to_ascii_lowercase();
        assert!(
            !lowered.contains("://")
                && !lowered.starts_with("javascript:")
                && !lowered.starts_with("data:")
                && !lowered.starts_with("//"),
            "{}: external or scripted link {href:?}",
            page_path.display()
        );
        let (file, fragment) = match href.split_once('#') {
            Some((file, fragment)) => (file, Some(fragment)),
            None => (href.as_str(), None),
        };
        if file.is_empty() {
            let fragment = fragment.unwrap_or_default();
            assert!(
                page.ids.contains(fragment),
                "{}: #{fragment} has no matching id",
                page_path.display()
            );
            continue;
        }
        let target = dir.join(file.replace("%20", " "));
        assert!(
            target.is_file(),
            "{}: link {href:?} points at a missing file {}",
            page_path.display(),
            target.display()
        );
        if let Some(fragment) = fragment {
            let html = std::fs::read_to_string(&target).expect("read link target");
            let other = parse(&target.display().to_string(), &html);
            assert!(
                other.ids.contains(fragment),
                "{}: link {href:?}: no id {fragment:?} in {}",
                page_path.display(),
                target.display()
            );
        }
    }
}
