//! **An undo is sent what its counterpart did.** Many servers pair a tool
//! that does something with one that undoes it: `merge_cells` and
//! `unmerge_cells`, `add_dependency` and `remove_dependency`, `pin` and
//! `unpin`, `attach_tag` and `detach_tag`. The undo acts only on exactly
//! what was done: the range that was merged, the pair of tasks that was
//! linked. Given an invented range, or two real tasks that were never
//! linked, it answers `not found` or changes nothing, and a claim about
//! what it removes passes on a call that removed nothing.
//!
//! So a tool whose name is another tool's name with its verb undone (an
//! `un` before a verb of [`UNDONE_BY_UN`]: `unmerge`, `unlink`, `untrack`;
//! or `remove`, `detach`, `disconnect`, `disable` for `add`, `attach`,
//! `connect`, `enable`) is sent, on its first call, for each parameter
//! both tools have that the planner would invent or fill from the pool,
//! the value the counterpart's last call that did its job sent (it
//! answered ok and changed something observed). A fresh name, SQL, a
//! value the schema pins keep theirs, and so do the undo's retries. A
//! value the counterpart invented is recorded as invented; a real one as
//! taken from the counterpart's call. Nothing changes while the
//! counterpart has not done its job, and a plan file's steps are never
//! touched.
//!
//! Example: after `merge_cells {"sheet": "Q1", "cell_range": "A1:C1"}`
//! merged the range, `unmerge_cells {"sheet": "Q1", "cell_range":
//! "A1:B2"}` is sent `"cell_range": "A1:C1"`.

use crate::plan::cues::words;

/// Verbs that an `un` undoes (`unmerge`, `unpin`): a list, since `un`
/// opens words that undo nothing of another tool (`unzip` reads what
/// `zip` wrote; `unpack`, `unescape`).
const UNDONE_BY_UN: [&str; 24] = [
    "merge",
    "link",
    "pin",
    "track",
    "assign",
    "lock",
    "archive",
    "star",
    "watch",
    "follow",
    "share",
    "publish",
    "block",
    "mute",
    "register",
    "subscribe",
    "schedule",
    "hide",
    "mark",
    "flag",
    "tag",
    "label",
    "stage",
    "favorite",
];

/// Verbs that undo another, and the verb they undo.
const UNDOING: [(&str, &str); 4] = [
    ("remove", "add"),
    ("detach", "attach"),
    ("disconnect", "connect"),
    ("disable", "enable"),
];

/// The name of the tool in `names` whose doing `tool` undoes, when there is
/// one: the same words with the undoing verb in the done one's place.
pub fn counterpart<'n>(tool: &str, names: impl IntoIterator<Item = &'n str>) -> Option<&'n str> {
    let mine = words(tool);
    let done: Vec<Vec<String>> = mine
        .iter()
        .enumerate()
        .filter_map(|(i, word)| {
            let undone = UNDOING
                .iter()
                .find(|(undo, _)| undo == word)
                .map(|(_, done)| (*done).to_owned())
                .or_else(|| {
                    word.strip_prefix("un")
                        .filter(|rest| UNDONE_BY_UN.contains(rest))
                        .map(str::to_owned)
                })?;
            let mut words = mine.clone();
            words[i] = undone;
            Some(words)
        })
        .collect();
    if done.is_empty() {
        return None;
    }
    names
        .into_iter()
        .find(|name| *name != tool && done.contains(&words(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undo_s_counterpart_is_the_same_name_with_the_verb_done() {
        let names = [
            "merge_cells",
            "unmerge_cells",
            "tf_add_initiative_dep",
            "tf_remove_initiative_dep",
            "pinNote",
            "unpinNote",
            "attach_tag",
            "detach_tag",
            "add_task",
            "remove_tag",
            "understand",
            "zip_file",
            "unzip_file",
        ];
        let of = |t: &str| counterpart(t, names.iter().copied());
        assert_eq!(of("unmerge_cells"), Some("merge_cells"));
        assert_eq!(
            of("tf_remove_initiative_dep"),
            Some("tf_add_initiative_dep")
        );
        assert_eq!(of("unpinNote"), Some("pinNote"));
        assert_eq!(of("detach_tag"), Some("attach_tag"));
        // No tool does what these undo: `add_tag` is not in the catalog,
        // and `add_task` is another thing.
        assert_eq!(of("remove_tag"), None);
        // A doing tool, and a word that only starts with `un`, have none.
        assert_eq!(of("merge_cells"), None);
        assert_eq!(of("understand"), None);
        // `un` before a verb that undoes nothing of another tool.
        assert_eq!(of("unzip_file"), None);
    }
}
