//! Cursors a tool hands back in its results, and the items of a page: read
//! one way by the audit that follows them and by RSP-07 that judges them.
//!
//! MCP paginates its own lists (`tools/list`) with `cursor` and
//! `nextCursor`; tools that page their results have no protocol rule, so
//! the default here is the protocol's own words: a result whose structured
//! content (or JSON text) has a top-level `nextCursor` (or `next_cursor`)
//! hands a cursor back, and a tool takes it back in its `cursor` parameter.
//! A plan's `pagination_terminates` may name other places.

use serde_json::{Map, Value};
use witness_model::audit::{Expectation, ToolClass, ToolEntry};

use crate::plan::MAX_PAGES;
use crate::plan::result::{lookup, result_view};

/// The input parameter a cursor goes back in, unless a plan says otherwise.
pub const CURSOR_PARAM: &str = "cursor";

/// Where a result hands its next cursor back, unless a plan says otherwise.
const NEXT_KEYS: [&str; 2] = ["nextCursor", "next_cursor"];

/// How one call's pages are followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paging {
    pub param: String,
    /// A result path (`structured.page.next`) where the next cursor sits.
    pub next: Option<String>,
    /// A result path where a page's items sit.
    pub items: Option<String>,
    /// Pages at most, the first included.
    pub max_pages: u32,
    /// Whether a plan asked for it (`pagination_terminates`).
    pub asked: bool,
}

impl Paging {
    /// As the call's plan checks ask, or the defaults.
    pub fn of(expect: &[Expectation]) -> Self {
        let asked = expect.iter().find_map(|e| match e {
            Expectation::PaginationTerminates {
                cursor,
                next,
                items,
                max_pages,
            } => Some((cursor, next, items, max_pages)),
            _ => None,
        });
        match asked {
            Some((cursor, next, items, max_pages)) => Self {
                param: cursor.clone().unwrap_or_else(|| CURSOR_PARAM.to_owned()),
                next: next.clone(),
                items: items.clone(),
                max_pages: max_pages.unwrap_or(MAX_PAGES),
                asked: true,
            },
            None => Self {
                param: CURSOR_PARAM.to_owned(),
                next: None,
                items: None,
                max_pages: MAX_PAGES,
                asked: false,
            },
        }
    }

    /// Whether the audit follows this tool's cursor by itself: when a plan
    /// asked, or when the tool is declared read-only and takes the cursor
    /// back (following a cursor calls the tool again, so a tool that may
    /// write is only paged when a person asked for it).
    pub fn follows(&self, tool: &ToolEntry) -> bool {
        self.asked || (tool.class == ToolClass::ReadOnly && takes(tool, &self.param))
    }
}

/// Whether the tool's input schema lists `param`.
pub fn takes(tool: &ToolEntry, param: &str) -> bool {
    tool.input_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(param))
}

/// The cursor `result` hands back, and where it sat (`structured.nextCursor`).
/// A missing, null or empty cursor ends the pagination.
pub fn next_cursor(result: &Value, next: Option<&str>) -> Option<(Value, String)> {
    let view = result_view(result);
    let found = match next {
        Some(path) => lookup(&view, path).map(|v| (v, path.to_owned())),
        None => ["structured", "json"].iter().find_map(|root| {
            NEXT_KEYS.iter().find_map(|key| {
                view.get(root)
                    .and_then(|r| r.get(key))
                    .map(|v| (v.clone(), format!("{root}.{key}")))
            })
        }),
    }?;
    match &found.0 {
        Value::String(s) if !s.is_empty() => Some(found),
        Value::Number(_) => Some(found),
        _ => None,
    }
}

/// The items of one result: at `path`, or the result's list (its structured
/// content, else its JSON text: the value itself when it is a list, or its
/// only list-valued member).
pub fn items(result: &Value, path: Option<&str>) -> Option<Vec<Value>> {
    let view = result_view(result);
    if let Some(path) = path {
        return lookup(&view, path).and_then(|v| v.as_array().cloned());
    }
    ["structured", "json"]
        .iter()
        .filter_map(|root| view.get(root))
        .find_map(only_list)
}

fn only_list(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(items) => Some(items.clone()),
        Value::Object(map) => single_array(map),
        _ => None,
    }
}

fn single_array(map: &Map<String, Value>) -> Option<Vec<Value>> {
    let mut lists = map.values().filter_map(Value::as_array);
    let first = lists.next()?;
    lists.next().is_none().then(|| first.clone())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn structured(content: Value) -> Value {
        json!({"content": [], "structuredContent": content})
    }

    #[test]
    fn cursors_are_read_from_the_protocols_words_or_where_a_plan_says() {
        let page = structured(json!({"items": [1, 2], "nextCursor": "c2"}));
        assert_eq!(
            next_cursor(&page, None),
            Some((json!("c2"), "structured.nextCursor".into()))
        );
        let text =
            json!({"content": [{"type": "text", "text": "{\"next_cursor\": 7, \"rows\": []}"}]});
        assert_eq!(
            next_cursor(&text, None),
            Some((json!(7), "json.next_cursor".into()))
        );
        let last = structured(json!({"items": [], "nextCursor": ""}));
        assert_eq!(next_cursor(&last, None), None, "an empty cursor ends it");
        let nested = structured(json!({"page": {"after": "x"}}));
        assert_eq!(next_cursor(&nested, None), None);
        assert_eq!(
            next_cursor(&nested, Some("structured.page.after")).map(|c| c.0),
            Some(json!("x"))
        );
    }

    #[test]
    fn a_pages_items_are_its_only_list_unless_a_path_names_one() {
        let page = structured(json!({"items": [1, 2], "nextCursor": "c2"}));
        assert_eq!(items(&page, None), Some(vec![json!(1), json!(2)]));
        let two = structured(json!({"a": [1], "b": [2]}));
        assert_eq!(items(&two, None), None, "two lists: ambiguous");
        assert_eq!(items(&two, Some("structured.b")), Some(vec![json!(2)]));
        let bare = json!({"content": [{"type": "text", "text": "[\"x\"]"}]});
        assert_eq!(items(&bare, None), Some(vec![json!("x")]));
    }
}
