//! **An error that says nothing is answered by the likeliest mend.** Many
//! servers hide their exceptions (`Error executing tool create_table`, a
//! framework's default), and no rule that reads an error finds anything
//! to read. The call failed on something the audit chose, and two of its
//! choices fail most often where the server never says why: a name it
//! made up with a hyphen (`witness-create_table`), which identifiers of
//! tables, sheets' tables, columns and variables refuse, and an invented
//! word for a parameter that names a thing, where the store or an earlier
//! answer has since shown a real one. A third is a thing the audit made
//! itself and handed on: a sheet, project or list the plan created is
//! new and empty, and a tool that works on what a thing holds (a table
//! over a sheet's rows, a query of its columns) fails on it where the
//! store's own thing of that kind, which has content, would do.
//!
//! So when an error's text holds no word beyond the failure itself and
//! the tool's name, the retry sends every name the audit made up with
//! underscores in place of hyphens, every invented value of a parameter
//! that names an existing thing a real one of the pool, where there is
//! one, and in place of a thing the plan made, the store's own of the
//! same parameter (one of the file the call names, where it names one),
//! and in place of a range made up from the schema's example on a sheet
//! the store held, the range that sheet's cells fill. When none changes
//! the call, nothing is retried.
//!
//! Example: `create_table {"sheet": "witness_create_sheet", "table_name":
//! "witness-create_table", ...}` answered `Error executing tool
//! create_table`; the retry sends `"sheet": "Q1"` (a sheet the store's
//! workbook held) and `"table_name": "witness_create_table"`.

use serde_json::Value;
use witness_model::audit::{Argument, Provenance};

use super::read_error::Retry;
use crate::plan::harvest::{Harvested, Pool, Source};
use crate::plan::{ArgSpec, PlanStep};

/// Words a failure is written in that say nothing about its cause.
const EMPTY_WORDS: [&str; 13] = [
    "error",
    "executing",
    "tool",
    "internal",
    "failed",
    "failure",
    "exception",
    "an",
    "occurred",
    "while",
    "calling",
    "call",
    "the",
];

/// Whether `error` says nothing but that the call of `tool` failed (never
/// `Unknown tool`, which says the tool is not there).
pub fn says_nothing(error: &str, tool: &str) -> bool {
    let tool_words = super::text_words(tool);
    let words = super::text_words(error);
    !words.is_empty()
        && words
            .iter()
            .all(|w| tool_words.contains(w) || EMPTY_WORDS.contains(&w.as_str()))
}

/// The retry of a call of `step` that sent `sent` and failed with `error`,
/// when the error says nothing.
pub fn retry(step: &PlanStep, sent: &[Argument], error: &str, pool: &Pool) -> Option<Retry> {
    if !says_nothing(error, &step.tool) {
        return None;
    }
    let mut retry = step.clone();
    let mut mended = Vec::new();
    for (name, spec) in &mut retry.args {
        let made_up = match spec {
            ArgSpec::Fresh(Value::String(s)) | ArgSpec::Synthesized(Value::String(s)) => s,
            _ => continue,
        };
        if made_up.starts_with("witness") && made_up.contains('-') {
            *made_up = made_up.replace('-', "_");
            mended.push(name.clone());
        }
    }
    for argument in sent {
        // Only what the planner invented or would fill: a value the schema
        // offers or an error listed (recorded as synthesized too) stays.
        let invented = step.args.iter().any(|(n, spec)| {
            *n == argument.name && matches!(spec, ArgSpec::Synthesized(_) | ArgSpec::Auto(_))
        });
        if argument.source != Provenance::Synthesized
            || !invented
            || !crate::plan::harvest::names_an_object(&argument.name)
            || step.cues.new_name(&argument.name)
            || mended.contains(&argument.name)
        {
            continue;
        }
        if let Some(real) = pool.candidate_like(&step.cues, &argument.name, &argument.value) {
            retry.set(&argument.name, ArgSpec::Chosen(Box::new(real.clone())));
            mended.push(argument.name.clone());
        }
    }
    for argument in sent {
        if mended.contains(&argument.name) || step.cues.new_name(&argument.name) {
            continue;
        }
        if let Some((own, file)) = stores_own(step, sent, argument, pool) {
            retry.set(&argument.name, ArgSpec::Chosen(Box::new(own.clone())));
            mended.push(argument.name.clone());
            // The file it was found in is sent again as it was, not
            // chosen anew (the newest file may be one the plan made).
            if let Some(file) = file
                && let Some(held) = sent
                    .iter()
                    .find(|a| a.name == file)
                    .and_then(|a| pool.holding(&a.value))
            {
                retry.set(&file, ArgSpec::Chosen(Box::new(held.clone())));
            }
        }
    }
    if let Some((name, range)) = sheet_range(&retry, sent, pool) {
        retry.set(&name, ArgSpec::Chosen(Box::new(range.clone())));
        mended.push(name);
    }
    if mended.is_empty() {
        return None;
    }
    Some(Retry {
        step: retry,
        reading: format!(
            "the error says nothing: {} mended (names without hyphens, real things)",
            mended.join(", ")
        ),
        then: Vec::new(),
    })
}

/// The store's own thing to send for `argument` in place of the one the
/// plan made and sent: a value the stores held before the first call
/// under the parameter's own name (a workbook's `sheet`), one of the file
/// another argument of the call names first, with that argument's name.
/// Never for a path, whose kind other rules choose, nor for a value the
/// stores themselves held.
fn stores_own<'p>(
    step: &PlanStep,
    sent: &[Argument],
    argument: &Argument,
    pool: &'p Pool,
) -> Option<(&'p Harvested, Option<String>)> {
    let value = &argument.value;
    if !value.is_string() || step.cues.path_kind(&argument.name).is_some() {
        return None;
    }
    let made = |h: &Harvested| h.value == *value && matches!(h.source, Source::Plan);
    let baseline = |h: &Harvested| matches!(h.source, Source::Store(_));
    if !pool.items().any(made) || pool.items().any(|h| baseline(h) && h.value == *value) {
        return None;
    }
    let own: Vec<&Harvested> = pool
        .items()
        .filter(|h| baseline(h) && h.key == argument.name && h.value.is_string())
        .collect();
    // The file the call names (`path: .../budget.xlsx`) holds the thing
    // looked for: a sheet of that workbook, not of another.
    let in_file = |h: &Harvested| {
        let file = h.content_file()?;
        let name = file.rsplit('/').next().unwrap_or(&file).to_owned();
        sent.iter()
            .filter(|a| a.name != argument.name)
            .find(|a| {
                a.value
                    .as_str()
                    .is_some_and(|v| v.rsplit('/').next() == Some(name.as_str()))
            })
            .map(|a| a.name.clone())
    };
    own.iter()
        .find_map(|h| in_file(h).map(|file| (*h, Some(file))))
        .or_else(|| own.first().map(|h| (*h, None)))
}

/// For a range the audit made up (`cell_range: "A1:D10"`, the schema's
/// example) on a sheet the store held, that sheet's used range: a table,
/// chart or sort over cells past the data has empty headers, which such
/// tools refuse. The parameter's name and the range it was sent.
fn sheet_range<'p>(
    retry: &PlanStep,
    sent: &[Argument],
    pool: &'p Pool,
) -> Option<(String, &'p Harvested)> {
    let argument = sent.iter().find(|a| {
        a.source == Provenance::Synthesized
            && crate::plan::cues::words(&a.name)
                .iter()
                .any(|w| w == "range")
            && a.value.as_str().is_some_and(a1_range)
    })?;
    // The sheet the retry sends: one a mend chose, else one sent.
    let chosen = retry.args.iter().filter_map(|(_, spec)| match spec {
        ArgSpec::Chosen(h) if h.key == "sheet" => Some(h.as_ref()),
        _ => None,
    });
    let sent_sheets = sent.iter().filter_map(|a| {
        pool.items().find(|h| {
            h.key == "sheet" && h.value == a.value && matches!(h.source, Source::Store(_))
        })
    });
    let sheet = chosen.chain(sent_sheets).next()?;
    let of_sheet = |h: &Harvested| {
        let (file, inner) = crate::plan::seeds::content_file(&h.path)?;
        Some((file, inner.rsplit_once('!')?.0.to_owned()))
    };
    let wanted = of_sheet(sheet)?;
    let range = pool.items().find(|h| {
        h.key == crate::plan::seeds::USED_RANGE && of_sheet(h).as_ref() == Some(&wanted)
    })?;
    (range.value != argument.value).then(|| (argument.name.clone(), range))
}

/// `A1:D10`: two cells joined by a colon.
fn a1_range(text: &str) -> bool {
    let cell = |c: &str| {
        let digits = c.trim_start_matches(|ch: char| ch.is_ascii_uppercase());
        digits.len() < c.len() && !digits.is_empty() && digits.chars().all(|ch| ch.is_ascii_digit())
    };
    text.split_once(':')
        .is_some_and(|(a, b)| cell(a) && cell(b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;

    fn step() -> PlanStep {
        PlanStep {
            tool: "create_table".into(),
            args: vec![
                ("sheet".into(), ArgSpec::Auto(json!("Q1"))),
                (
                    "table_name".into(),
                    ArgSpec::Fresh(json!("witness-create_table")),
                ),
            ],
            cues: crate::plan::cues::ToolCues {
                tool: "create_table".into(),
                ..Default::default()
            },
        }
    }

    #[test]
    fn only_an_error_with_no_word_of_its_own_says_nothing() {
        assert!(says_nothing(
            "Error executing tool create_table",
            "create_table"
        ));
        assert!(says_nothing("Internal error", "create_table"));
        assert!(says_nothing(
            "Error executing tool create-table",
            "create-table"
        ));
        assert!(!says_nothing("Unknown tool: create_table", "create_table"));
        assert!(!says_nothing("", "create_table"));
        assert!(!says_nothing(
            "Error executing tool create_table: Table name invalid",
            "create_table"
        ));
    }

    #[test]
    fn a_made_up_name_loses_its_hyphens() {
        let retry = retry(
            &step(),
            &[],
            "Error executing tool create_table",
            &Pool::default(),
        )
        .expect("a retry");
        assert_eq!(
            retry.step.args[1].1,
            ArgSpec::Fresh(json!("witness_create_table"))
        );
        // The sheet, the store's, is kept.
        assert_eq!(retry.step.args[0].1, ArgSpec::Auto(json!("Q1")));
    }

    #[test]
    fn an_invented_thing_is_given_a_real_one_the_pool_has_since_seen() {
        let mut pool = Pool::default();
        pool.absorb(
            "list_memories",
            1,
            &json!({"structuredContent": {"memories": [{"id": "m1"}]}}),
        );
        let step = PlanStep {
            tool: "memory_link".into(),
            args: vec![("memory_id".into(), ArgSpec::Synthesized(json!("witness")))],
            cues: crate::plan::cues::ToolCues {
                tool: "memory_link".into(),
                ..Default::default()
            },
        };
        let sent = [super::super::test_support::argument(
            "memory_id",
            json!("witness"),
            Provenance::Synthesized,
        )];
        let retry =
            retry(&step, &sent, "Error executing tool memory_link", &pool).expect("a retry");
        match &retry.step.args[0].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("m1")),
            other => panic!("expected the memory the pool saw, got {other:?}"),
        }
    }

    #[test]
    fn an_error_with_words_or_nothing_to_mend_retries_nothing() {
        assert!(
            retry(
                &step(),
                &[],
                "Error executing tool create_table: Table name invalid",
                &Pool::default()
            )
            .is_none()
        );
        let plain = PlanStep {
            args: vec![("sheet".into(), ArgSpec::Auto(json!("Q1")))],
            ..step()
        };
        assert!(
            retry(
                &plain,
                &[],
                "Error executing tool create_table",
                &Pool::default()
            )
            .is_none()
        );
    }

    #[test]
    fn a_thing_the_plan_made_gives_way_to_the_stores_own_of_the_file_named() {
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded(
                    "sheet",
                    json!("C1"),
                    object("xlsx/contacts.xlsx#C1!A1"),
                    None,
                ),
                Harvested::seeded("sheet", json!("Q1"), object("xlsx/budget.xlsx#Q1!A1"), None),
            ],
            Vec::new(),
        );
        pool.created(
            "create_sheet",
            3,
            "sheet",
            &json!("witness_create_sheet"),
            None,
        );
        let workbook = json!("/jail/stores/sheets/tree/budget.xlsx");
        pool.created("create_sheet", 3, "path", &workbook, None);
        let step = PlanStep {
            args: vec![
                ("sheet".into(), ArgSpec::Auto(json!("witness"))),
                ("table_name".into(), ArgSpec::Fresh(json!("witness_t"))),
                ("path".into(), ArgSpec::Auto(json!("witness"))),
            ],
            ..step()
        };
        let sent = [
            argument(
                "sheet",
                json!("witness_create_sheet"),
                Provenance::Harvested,
            ),
            argument("table_name", json!("witness_t"), Provenance::Synthesized),
            argument(
                "path",
                json!("/jail/stores/sheets/tree/budget.xlsx"),
                Provenance::Store,
            ),
        ];
        let retry = retry(&step, &sent, "Error executing tool create_table", &pool)
            .expect("a retry on the store's sheet");
        match &retry.step.args[0].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("Q1")),
            other => panic!("expected the workbook's own sheet, got {other:?}"),
        }
        // And its workbook is sent again, not chosen anew.
        match &retry.step.args[2].1 {
            ArgSpec::Chosen(h) => {
                assert_eq!(h.value, json!("/jail/stores/sheets/tree/budget.xlsx"));
            }
            other => panic!("expected the workbook sent before, got {other:?}"),
        }
        // A sheet the store held is kept as it is; so is one the plan
        // made where the store has none under that name.
        let store_sheet = [argument("sheet", json!("Q1"), Provenance::Store)];
        assert!(retry_none(&step, &store_sheet, &pool));
        let mut bare = Pool::default();
        bare.created(
            "create_sheet",
            3,
            "sheet",
            &json!("witness_create_sheet"),
            None,
        );
        assert!(retry_none(&step, &sent[..1], &bare));
    }

    fn retry_none(step: &PlanStep, sent: &[Argument], pool: &Pool) -> bool {
        retry(step, sent, "Error executing tool create_table", pool).is_none()
    }

    /// A workbook's object in the store `sheets`.
    fn object(id: &str) -> StoreObject {
        StoreObject {
            store: "sheets".into(),
            object: id.into(),
        }
    }

    fn argument(name: &str, value: Value, source: Provenance) -> Argument {
        super::super::test_support::argument(name, value, source)
    }

    #[test]
    fn a_made_up_range_on_a_store_sheet_becomes_the_range_it_fills() {
        let mut pool = Pool::default();
        pool.seed(
            vec![
                Harvested::seeded("sheet", json!("Q1"), object("xlsx/budget.xlsx#Q1!A1"), None),
                Harvested::seeded("sheet", json!("Q2"), object("xlsx/budget.xlsx#Q2!A1"), None),
                Harvested::seeded(
                    crate::plan::seeds::USED_RANGE,
                    json!("A1:C6"),
                    object("xlsx/budget.xlsx#Q1!A1"),
                    None,
                ),
                Harvested::seeded(
                    crate::plan::seeds::USED_RANGE,
                    json!("A1:B3"),
                    object("xlsx/budget.xlsx#Q2!A1"),
                    None,
                ),
            ],
            Vec::new(),
        );
        let step = PlanStep {
            args: vec![
                ("sheet".into(), ArgSpec::Auto(json!("witness"))),
                ("cell_range".into(), ArgSpec::Pinned(json!("A1:D10"))),
                ("table_name".into(), ArgSpec::Fresh(json!("witness_t"))),
            ],
            ..step()
        };
        let sent = [
            argument("sheet", json!("Q2"), Provenance::Store),
            argument("cell_range", json!("A1:D10"), Provenance::Synthesized),
            argument("table_name", json!("witness_t"), Provenance::Synthesized),
        ];
        let retry = retry(&step, &sent, "Error executing tool create_table", &pool)
            .expect("a retry over the sheet's cells");
        match &retry.step.args[1].1 {
            ArgSpec::Chosen(h) => assert_eq!(h.value, json!("A1:B3")),
            other => panic!("expected Q2's used range, got {other:?}"),
        }
        // A range that is already the sheet's is no mend.
        let filled = [
            argument("sheet", json!("Q2"), Provenance::Store),
            argument("cell_range", json!("A1:B3"), Provenance::Synthesized),
            argument("table_name", json!("witness_t"), Provenance::Synthesized),
        ];
        assert!(retry_none(&step, &filled, &pool));
        assert!(a1_range("A1:D10") && a1_range("AB2:AC30"));
        assert!(!a1_range("A1") && !a1_range("witness") && !a1_range(":"));
    }
}
