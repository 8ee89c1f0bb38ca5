//! The prevalence tables: across every tool of a sweep, how often each
//! declared annotation held, was contradicted, or could not be tested.
//!
//! Computed from the dataset's rows alone, so a reader of `dataset.jsonl`
//! can recompute every number on the page.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SweepRow;
use crate::vocab::{CheckId, Hint, Verdict};

/// One annotation across every tool of a sweep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HintPrevalence {
    /// The annotation's key (`readOnlyHint`).
    pub hint: String,
    /// The value that claims more safety: the one a client acts on without
    /// asking, so the one the checks verify.
    pub claim: bool,
    /// Tools that declare the annotation at all, either value.
    pub declared: usize,
    /// Tools that declare the claim.
    pub claimed: usize,
    /// Of those, tools where a check of the claim passed and none failed or
    /// was untestable.
    pub held: usize,
    /// Tools where a check of the claim failed.
    pub contradicted: usize,
    /// Tools where none failed and one could not be tested.
    pub untestable: usize,
    /// Tools where nothing concluded: every check skipped, or no evaluated
    /// check tests this annotation yet.
    pub not_checked: usize,
}

/// One check's verdicts across every tool of a sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckPrevalence {
    pub check: CheckId,
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub untestable: usize,
}

/// The page's prevalence tables, as data.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prevalence {
    /// Targets with at least one tool in the dataset.
    pub targets: usize,
    pub tools: usize,
    /// Tools that declare none of the four annotations.
    pub declaring_nothing: usize,
    pub hints: Vec<HintPrevalence>,
    pub checks: Vec<CheckPrevalence>,
}

/// What one tool declared and what its checks said.
struct ToolVerdicts<'a> {
    first: &'a SweepRow,
    verdicts: BTreeMap<CheckId, Verdict>,
}

impl ToolVerdicts<'_> {
    fn declared(&self, hint: Hint) -> Option<bool> {
        match hint {
            Hint::ReadOnly => self.first.read_only,
            Hint::Destructive => self.first.destructive,
            Hint::Idempotent => self.first.idempotent,
            Hint::OpenWorld => self.first.open_world,
        }
    }

    /// The verdicts of the checks that test `hint`.
    fn verdicts_for(&self, hint: Hint) -> Vec<Verdict> {
        hint.checks()
            .into_iter()
            .filter_map(|c| self.verdicts.get(&c).copied())
            .collect()
    }
}

impl Prevalence {
    /// The tables over `rows` (rows without a tool count nowhere here).
    pub fn of(rows: &[SweepRow]) -> Self {
        let mut tools: BTreeMap<(&str, &str), ToolVerdicts<'_>> = BTreeMap::new();
        for row in rows {
            let Some(tool) = row.tool.as_deref() else {
                continue;
            };
            let entry = tools
                .entry((row.key.as_str(), tool))
                .or_insert(ToolVerdicts {
                    first: row,
                    verdicts: BTreeMap::new(),
                });
            if let (Some(check), Some(verdict)) = (row.check, row.verdict) {
                entry.verdicts.insert(check, verdict);
            }
        }
        let targets = tools
            .keys()
            .map(|(key, _)| *key)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let declaring_nothing = tools
            .values()
            .filter(|t| Hint::ALL.iter().all(|h| t.declared(*h).is_none()))
            .count();
        Self {
            targets,
            tools: tools.len(),
            declaring_nothing,
            hints: Hint::ALL
                .iter()
                .map(|h| hint_prevalence(*h, tools.values()))
                .collect(),
            checks: check_prevalence(rows),
        }
    }
}

fn hint_prevalence<'a>(
    hint: Hint,
    tools: impl Iterator<Item = &'a ToolVerdicts<'a>>,
) -> HintPrevalence {
    let mut out = HintPrevalence {
        hint: hint.key().to_owned(),
        claim: hint.safer_value(),
        ..HintPrevalence::default()
    };
    for tool in tools {
        let Some(value) = tool.declared(hint) else {
            continue;
        };
        out.declared += 1;
        if value != hint.safer_value() {
            continue;
        }
        out.claimed += 1;
        let verdicts = tool.verdicts_for(hint);
        let counter = if verdicts.contains(&Verdict::Fail) {
            &mut out.contradicted
        } else if verdicts.contains(&Verdict::Untestable) {
            &mut out.untestable
        } else if verdicts.contains(&Verdict::Pass) {
            &mut out.held
        } else {
            &mut out.not_checked
        };
        *counter += 1;
    }
    out
}

fn check_prevalence(rows: &[SweepRow]) -> Vec<CheckPrevalence> {
    CheckId::evaluated_ids()
        .into_iter()
        .map(|check| {
            let mut tally = CheckPrevalence {
                check,
                pass: 0,
                fail: 0,
                skip: 0,
                untestable: 0,
            };
            for verdict in rows
                .iter()
                .filter(|r| r.check == Some(check))
                .filter_map(|r| r.verdict)
            {
                *match verdict {
                    Verdict::Pass => &mut tally.pass,
                    Verdict::Fail => &mut tally.fail,
                    Verdict::Skip => &mut tally.skip,
                    Verdict::Untestable => &mut tally.untestable,
                } += 1;
            }
            tally
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, tool: &str, read_only: Option<bool>, check: CheckId, v: Verdict) -> SweepRow {
        SweepRow {
            key: key.into(),
            tool: Some(tool.into()),
            read_only,
            check: Some(check),
            verdict: Some(v),
            ..SweepRow::default()
        }
    }

    #[test]
    fn a_claim_is_held_contradicted_untestable_or_not_checked_by_its_checks() {
        use CheckId::*;
        use Verdict::*;
        let rows = vec![
            // Held: EFF-01 and EFF-02 pass, EFF-06 skips.
            row("a", "get", Some(true), Eff01, Pass),
            row("a", "get", Some(true), Eff02, Pass),
            row("a", "get", Some(true), Eff06, Skip),
            // Contradicted, whatever else passed.
            row("a", "peek", Some(true), Eff01, Fail),
            row("a", "peek", Some(true), Eff02, Pass),
            // Untestable.
            row("b", "get", Some(true), Eff01, Untestable),
            // Declares the less safe value: declared, not a claim.
            row("b", "put", Some(false), Eff01, Skip),
            // Declares nothing.
            row("b", "raw", None, Eff01, Skip),
        ];
        let p = Prevalence::of(&rows);
        assert_eq!((p.targets, p.tools, p.declaring_nothing), (2, 5, 1));
        let read_only = &p.hints[0];
        assert_eq!(read_only.hint, "readOnlyHint");
        assert!(read_only.claim);
        assert_eq!(
            [
                read_only.declared,
                read_only.claimed,
                read_only.held,
                read_only.contradicted,
                read_only.untestable,
                read_only.not_checked
            ],
            [4, 3, 1, 1, 1, 0]
        );
        let eff01 = &p.checks[0];
        assert_eq!(eff01.check, Eff01);
        assert_eq!(
            [eff01.pass, eff01.fail, eff01.skip, eff01.untestable],
            [1, 1, 2, 1]
        );
        // openWorldHint has no evaluated check: a claim of it is never checked.
        let mut open = row("c", "fetch", None, Eff01, Skip);
        open.open_world = Some(false);
        let p = Prevalence::of(&[open]);
        assert_eq!(p.hints[3].hint, "openWorldHint");
        assert_eq!((p.hints[3].claimed, p.hints[3].not_checked), (1, 1));
    }
}
