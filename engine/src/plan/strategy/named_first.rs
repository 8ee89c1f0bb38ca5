//! **The tool an error says to call first is called first.** Servers
//! that need a set-up step say which one: `No git repository found. Run
//! init_repo() first.`, `Call create_project before adding tasks`. When a
//! failed call's error names another tool of the catalog as a word, with
//! words that say to call it (`run`, `call`, `use`, `first`, `before`),
//! that tool is called with its planned arguments, once per audit, and the
//! failed step is asked again.
//!
//! Answers the failure where every write of a wiki server answered `Run
//! init_repo() first` and no claim on them could rest on a call that did
//! its job.
//!
//! Example: `write_page {"path": "a.md"}` answers `Error: No git
//! repository found at /jail/wiki. Run init_repo() first.`; `init_repo`
//! is called next (its ledger record answers the failed call), then
//! `write_page` again.

use witness_model::audit::ToolEntry;

use super::text_words;

/// Words that say a named tool is to be called.
const CALL_WORDS: [&str; 8] = [
    "run",
    "call",
    "use",
    "first",
    "before",
    "initialize",
    "initialise",
    "invoke",
];

/// The tool of `catalog`, other than `tool`, that `error` says to call
/// first; `None` when it names none, or names one without saying to call
/// it.
pub fn named_first<'c>(error: &str, tool: &str, catalog: &'c [ToolEntry]) -> Option<&'c ToolEntry> {
    let words = text_words(error);
    if !words.iter().any(|w| CALL_WORDS.contains(&w.as_str())) {
        return None;
    }
    catalog.iter().find(|t| {
        t.name != tool && t.name.len() >= 4 && words.iter().any(|w| w.eq_ignore_ascii_case(&t.name))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> ToolEntry {
        serde_json::from_value(json!({"name": name, "hints": {}, "class": "unknown",
            "has_output_schema": false}))
        .expect("a tool entry")
    }

    #[test]
    fn a_tool_the_error_says_to_run_first_is_found() {
        let catalog = [tool("write_page"), tool("init_repo"), tool("read_page")];
        let error = "Error: No git repository found at /jail/wiki. Run init_repo() first.";
        assert_eq!(
            named_first(error, "write_page", &catalog).map(|t| t.name.as_str()),
            Some("init_repo")
        );
        // Named without being asked for, or only itself: nothing.
        assert!(named_first("init_repo failed: disk full", "write_page", &catalog).is_none());
        assert!(named_first("Run write_page again", "write_page", &catalog).is_none());
        assert!(named_first("Run the setup first", "write_page", &catalog).is_none());
    }
}
