//! **A search for something the store holds.** A tool that searches was
//! sent the audit's own word,
//! `witness`, and every one of them on the field study's development half
//! answered that it found nothing: `{"results": [], "count": 0}`, `No
//! matches found`. A search that finds nothing lists no id, path or title
//! for the calls after it to take, and a search that writes (an index, a
//! cache, a usage count) on what it finds never writes.
//!
//! So a search parameter left to the planner (`query`, `q`, `search`,
//! `search_query`, `search_term`, `search_text`, `term`, `keyword`,
//! `pattern`, `query_text`; `query`, `term`, `keyword` and `pattern` only
//! of a tool whose name has a word of searching in it: search, find,
//! grep, query, lookup, recall, retrieve, match, locate; never of a tool
//! named to change, remove or write) is sent a word of a name the store
//! held before the first call: a note's title, else a file's name,
//! the first word of four letters or more in the baseline's order that
//! names no generic part of a store (`readme`, `index`, `config`) and is
//! no part of an id (a part mixing letters and digits, any part of a name
//! written in hex digits: `bccf31a2-0f4e-...`). Only
//! names, never contents, as for every value seeded from a store (a
//! column's value may be a credential). A search parameter the schema or
//! the description gives a value for keeps it, and a store with no such
//! word leaves the audit's own.
//!
//! Example: a vault holding `Garden plan.md` and `README.md`: `search_notes
//! {"query": string}` is called `{"query": "garden"}`, not `{"query":
//! "witness"}`.

use witness_model::audit::StoreObject;

use crate::plan::cues::{PathKind, ToolCues, flat, words};
use crate::plan::harvest::{Pool, Source};

/// Parameters that hold what a search looks for.
const SEARCH_PARAMS: [&str; 10] = [
    "query",
    "q",
    "search",
    "searchquery",
    "searchterm",
    "searchtext",
    "term",
    "keyword",
    "pattern",
    "querytext",
];

/// Words of a tool's name that say it searches.
const SEARCH_WORDS: [&str; 9] = [
    "search", "find", "grep", "query", "lookup", "recall", "retrieve", "match", "locate",
];

/// Words of a store's names that name no thing a search would look for.
const GENERIC: [&str; 14] = [
    "readme", "index", "config", "settings", "data", "file", "files", "notes", "json", "yaml",
    "test", "tmp", "temp", "witness",
];

/// Whether `param` of the tool `cues` describes holds what the tool
/// searches for. A parameter named for SQL is SQL, not a word; and a tool
/// whose name says it changes, removes or writes things is no search,
/// whatever its parameter is called (`search_replace {"search": ...}`):
/// its word would be no object it acts on, and a claim that it destroys
/// nothing rests only on calls that acted on something that existed.
pub fn is_search_param(cues: &ToolCues, param: &str) -> bool {
    let flat = flat(param);
    if !SEARCH_PARAMS.contains(&flat.as_str())
        || cues.sql_kind(param).is_some()
        || cues.changes()
        || cues.overwrites()
    {
        return false;
    }
    // `query` and `pattern` belong to many tools; a search's own names
    // (`search_term`, `q`) only to searches.
    let searching = words(&cues.tool)
        .iter()
        .any(|w| SEARCH_WORDS.contains(&w.as_str()));
    searching || flat.starts_with("search") || flat == "q"
}

/// A word of a name the store held, and the object it names: a note's
/// title first, then a file's name.
pub fn term(pool: &Pool) -> Option<(String, StoreObject)> {
    let held = |h: &&crate::plan::harvest::Harvested| matches!(h.source, Source::Store(_));
    let titles = pool.items().filter(held).filter(|h| h.key == "title");
    let files = pool
        .items()
        .filter(held)
        .filter(|h| h.shape == Some(PathKind::File));
    for h in titles.chain(files) {
        let Source::Store(object) = &h.source else {
            continue;
        };
        let Some(text) = h.value.as_str() else {
            continue;
        };
        let name = std::path::Path::new(text)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(text);
        // Nothing of a hidden folder (`.obsidian/workspace.json`): the
        // store's machinery, not what it holds.
        let hidden = object.object.split('/').any(|c| c.starts_with('.'));
        if hidden || name.starts_with('.') {
            continue;
        }
        // A part that mixes letters and digits (`0bccf3a1`, `v2`) is an
        // id, and so is every letter run of a name made of hex digits
        // (`bccf-31a2-...`): no search finds its letters as a word.
        if hex_id(name) {
            continue;
        }
        let word = name
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().all(char::is_alphabetic))
            .map(str::to_lowercase)
            .find(|w| w.chars().count() >= 4 && !GENERIC.contains(&w.as_str()));
        if let Some(word) = word {
            return Some((word, object.clone()));
        }
    }
    None
}

/// Whether `name` is an id written in hex digits: eight or more of them,
/// at least one a digit, with nothing else but `-` and `_`.
fn hex_id(name: &str) -> bool {
    let hex = name.chars().filter(char::is_ascii_hexdigit).count();
    hex >= 8
        && name.chars().any(|c| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::harvest::Harvested;

    fn cues(name: &str) -> ToolCues {
        let tool: witness_model::audit::ToolEntry = serde_json::from_value(serde_json::json!({
            "name": name, "description": "", "hints": {}, "class": "unknown",
            "has_output_schema": false, "input_schema": {"type": "object"},
        }))
        .expect("a tool entry");
        ToolCues::of(&tool)
    }

    fn file(path: &str) -> Harvested {
        Harvested::seeded_path(
            format!("/j/vault/{path}"),
            PathKind::File,
            StoreObject {
                store: "vault".into(),
                object: format!("file/{path}"),
            },
        )
    }

    #[test]
    fn a_search_is_sent_a_word_of_a_name_the_store_held() {
        assert!(is_search_param(&cues("search_notes"), "query"));
        assert!(is_search_param(&cues("memory_search"), "query"));
        assert!(is_search_param(&cues("list_items"), "search_term"));
        assert!(is_search_param(&cues("grep_files"), "pattern"));
        assert!(
            !is_search_param(&cues("update_note"), "query"),
            "a tool that does not search"
        );
        assert!(!is_search_param(&cues("search_notes"), "path"));
        assert!(
            !is_search_param(&cues("search_replace"), "search"),
            "a tool that replaces: its word would pass for an object it acted on"
        );
        assert!(!is_search_param(&cues("delete_matching"), "pattern"));

        let mut pool = Pool::default();
        assert_eq!(term(&pool), None, "an empty store leaves the audit's word");
        pool.seed(
            vec![
                file(".obsidian/workspace.json"),
                file("README.md"),
                file("Garden plan.md"),
            ],
            Vec::new(),
        );
        let (word, object) = term(&pool).unwrap_or_else(|| panic!("a word"));
        assert_eq!(word, "garden");
        assert_eq!(object.object, "file/Garden plan.md");
    }

    #[test]
    fn an_id_in_a_name_is_no_word() {
        let mut pool = Pool::default();
        pool.seed(
            vec![
                file("memories/bccf31a2-0f4e-4d1a-9c2b-7e5d3a1f0b6c.md"),
                file("memories/0bccf3a1.md"),
                file("memories/v2dcbaface.md"),
                file("memories/Deploy rules.md"),
            ],
            Vec::new(),
        );
        let (word, _) = term(&pool).unwrap_or_else(|| panic!("a word"));
        assert_eq!(word, "deploy");
    }
}
