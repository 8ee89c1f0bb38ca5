//! The planner's named strategies: each a rule for any server, answering one
//! failure the field study showed, with its own test and a paragraph in
//! `docs/coverage.md`. None names a server or a tool.
//!
//! - [`read_error`]: a failed call is tried again with what its error text
//!   asks for (a flag, a required field, a listed value, a form, the next
//!   real object).
//! - [`already_there`]: a real value an error says is already in place
//!   (`Chunk is already in that category`) is swapped for the next of its
//!   kind.
//! - [`change_fields`]: an in-place change by id alone is also given a
//!   field to change, and a move where to.
//! - [`scope`]: optional parameters that choose where a call acts are
//!   filled with the store.
//! - [`operations`]: every value of an operation enum is asked, each as its
//!   own form.
//! - [`root_lesson`]: a store's root the server refused for a parameter
//!   (`store must not equal workspace root`) is replaced, for every tool,
//!   by the root a retry got past the refusal with.
//! - [`idle_lesson`]: the object an idle retry did a tool's job on is
//!   the one that tool's later forms are sent in place of the object it
//!   did nothing on.
//! - [`named_first`]: the tool an error says to call first is called
//!   first, and the failed step asked again.
//! - [`existing_folder`]: a value an error says must be an existing
//!   folder (`export destination must be an existing directory`) is a
//!   folder a store holds.
//! - [`no_dot`]: a value with a leading dot (a root sent as `.`) where
//!   an error refuses hidden names is a folder not hidden, or a fresh name.
//! - [`opaque_error`]: an error that says nothing (`Error executing tool
//!   x`) is answered by names made up without hyphens and real things for
//!   invented ones.
//! - [`front_matter`]: fields an error says a note lacks (`missing
//!   required field: title`) are given in the front matter its text opens
//!   with.
//! - [`file_text`]: text an edit is to find is a line of the file it edits.
//! - [`switches`]: a tool that writes only when asked (`save_to_file`,
//!   `force`, `dry_run: false`, an `output` given) is also asked so.
//! - [`store_objects`]: the store's objects in the forms servers accept
//!   (relative paths, bare names), and only objects that still exist.
//! - [`search_terms`]: a search is sent a word of a name the store held,
//!   not the audit's own word, which no search finds.
//! - [`local_urls`]: a URL parameter of a tool about a kind of file is
//!   sent the store's file of that kind as a `file://` URL, which the
//!   jail, with no network, can reach.
//! - [`written_choices`]: a parameter whose valid values are written in
//!   prose (`type: fact|decision`) is sent the first of them.
//! - [`second_make`]: a call that created files under names it chose
//!   itself is made a second time, which replaces them.
//! - [`second_object`]: a tool that links two things (`memory_link`)
//!   and was given one thing twice, or found no second, has the first's
//!   maker called again for a second.
//! - [`late_look`]: once every step has run, a tool that did nothing, or
//!   destroyed nothing, before another tool changed the store is asked
//!   once more (a reader too: it reads what changed).
//! - [`stale_output`]: after the looks, a tool that made or changed
//!   things and destroyed none is asked again after the audit changed
//!   what its output is made from, so that its output is replaced.
//! - [`undo_pairs`]: an undo (`unmerge_cells`, `remove_dependency`) is
//!   sent what its counterpart's call that did its job sent.
//! - [`example_shape`]: a value an error shows by example (`must look like
//!   'notes/a.md:12#ab12'`) is answered by a value of that shape the
//!   server wrote in an earlier answer, else by the example.

pub mod already_there;
pub mod change_fields;
pub mod example_shape;
pub mod existing_folder;
pub mod file_text;
pub mod front_matter;
pub mod idle_lesson;
pub mod late_look;
pub mod local_urls;
pub mod named_first;
pub mod no_dot;
pub mod opaque_error;
pub mod operations;
pub mod read_error;
pub mod root_lesson;
pub mod scope;
pub mod search_terms;
pub mod second_make;
pub mod second_object;
pub mod stale_output;
pub mod store_objects;
pub mod switches;
pub mod undo_pairs;
pub mod written_choices;

/// The lowercase words of `text`, split at anything not a letter, digit or
/// underscore.
pub(crate) fn text_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `text` names parameter `param` as a word: `force`, `project_id`,
/// `projectId` read as `project id`, a plural (`tags` for `tag`).
pub(crate) fn names_param(text: &str, param: &str) -> bool {
    let words = text_words(text);
    let lowered = param.to_lowercase();
    if words.contains(&lowered) {
        return true;
    }
    let parts = crate::plan::cues::words(param);
    if parts.is_empty() {
        return false;
    }
    let singular = |w: &str| crate::plan::harvest::singular(w);
    words.windows(parts.len()).any(|window| {
        window
            .iter()
            .zip(&parts)
            .all(|(w, p)| w == p || singular(w) == *p || singular(p) == *w)
    })
}

/// Sends `taught` for parameter `param` of `step` where the planner fills
/// or invents it (never a value a form or a retry chose, the schema pins
/// or a plan file gives) and, as `resolved` (the step's argument object)
/// has it, it would be `was`: how a lesson is applied. Whether it changed
/// `step`.
pub(crate) fn teach(
    step: &mut crate::plan::PlanStep,
    resolved: &serde_json::Value,
    param: &str,
    was: &serde_json::Value,
    taught: &crate::plan::harvest::Harvested,
) -> bool {
    use crate::plan::ArgSpec;
    let filled = step.args.iter().any(|(n, spec)| {
        n == param
            && matches!(
                spec,
                ArgSpec::Auto(_) | ArgSpec::Synthesized(_) | ArgSpec::IfReal(_)
            )
    });
    if !filled || resolved.get(param) != Some(was) {
        return false;
    }
    step.set(param, ArgSpec::Chosen(Box::new(taught.clone())));
    true
}

/// What the strategies' tests build their calls from.
#[cfg(test)]
pub(crate) mod test_support {
    use serde_json::Value;
    use witness_model::audit::{Argument, Provenance};

    /// An argument as a call sent it: `value` for `name`, of `source`, taken
    /// from no answer and no store object.
    pub(crate) fn argument(name: &str, value: Value, source: Provenance) -> Argument {
        Argument {
            name: name.into(),
            value,
            source,
            from: None,
            object: None,
            parts: Vec::new(),
        }
    }
}
