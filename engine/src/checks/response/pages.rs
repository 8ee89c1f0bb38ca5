//! RSP-07: a tool that returns a cursor terminates. Following the tool's
//! own cursor must end: no cursor returned twice, no item on two pages,
//! within the page bound. The audit follows a read-only tool's cursor by
//! itself, and any tool's when a plan attaches `pagination_terminates`;
//! the pages it made are the calls marked `page_of` the first one.

use witness_model::audit::{CallRecord, CallStatus, ToolClass, ToolEntry, Verdict};

use super::super::paging::{Paging, items, next_cursor};
use super::super::{Outcome, Subject, evidence_of};
use super::{ended, gate, per_call, unanswered, unreached};

/// One pagination's verdict, its reason, and the calls it rests on.
type Judged<'a> = (Verdict, String, Vec<&'a CallRecord>);

pub(in crate::checks) fn terminates(subject: &Subject<'_>) -> Outcome {
    let calls = subject.calls.as_slice();
    let mut judged: Vec<Judged<'_>> = Vec::new();
    for first in calls
        .iter()
        .filter(|c| c.page_of.is_none() && c.repeat_of.is_none())
    {
        let pages: Vec<&CallRecord> = std::iter::once(*first)
            .chain(
                calls
                    .iter()
                    .copied()
                    .filter(|c| c.page_of == Some(first.id)),
            )
            .collect();
        let paging = Paging::of(&first.expect);
        if let Some((verdict, reason)) = judge(subject.tool, &paging, &pages) {
            judged.push((verdict, reason, pages));
        }
    }
    for verdict in [
        Verdict::Fail,
        Verdict::Untestable,
        Verdict::Pass,
        Verdict::Skip,
    ] {
        let these: Vec<&Judged<'_>> = judged.iter().filter(|j| j.0 == verdict).collect();
        if these.is_empty() {
            continue;
        }
        let chains: Vec<&CallRecord> = these.iter().flat_map(|j| j.2.iter().copied()).collect();
        let reason = per_call(these.iter().map(|j| (j.2[0].id, j.1.as_str())));
        return gate((verdict, reason, evidence_of(&chains, vec![])), &chains);
    }
    let (verdict, reason) = unanswered(calls).unwrap_or((
        Verdict::Skip,
        "returned no cursor: there was nothing to follow".into(),
    ));
    (verdict, reason, evidence_of(calls, vec![]))
}

/// The verdict on one pagination; `None` when there is nothing to say (no
/// cursor, and no plan asked).
fn judge(tool: &ToolEntry, paging: &Paging, pages: &[&CallRecord]) -> Option<(Verdict, String)> {
    let first = pages[0];
    let response = match (&first.response, first.outcome.status) {
        (Some(r), CallStatus::Ok) => r,
        _ if !paging.asked => return None,
        _ => {
            let why = unreached(first).unwrap_or_else(|| format!("returned {}", ended(first)));
            return Some((Verdict::Untestable, format!("the first page {why}")));
        }
    };
    let Some(_) = next_cursor(response, paging.next.as_deref()) else {
        return paging.asked.then(|| {
            (
                Verdict::Pass,
                "a single page: the first result returned no cursor".into(),
            )
        });
    };
    if !paging.follows(tool) {
        let why = if tool.class != ToolClass::ReadOnly {
            "returned a cursor, not followed without a plan because the tool is not declared read-only"
                .to_owned()
        } else {
            format!(
                "returned a cursor but takes no `{}` parameter to send it back (a plan's pagination_terminates can name one)",
                paging.param
            )
        };
        return Some((Verdict::Skip, why));
    }
    Some(walk(paging, pages))
}

/// Reads the pages in order, as the audit followed them.
fn walk(paging: &Paging, pages: &[&CallRecord]) -> (Verdict, String) {
    let mut cursors = Vec::new();
    let mut seen = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let n = i + 1;
        let response = match (&page.response, page.outcome.status) {
            (Some(r), CallStatus::Ok) => r,
            _ => {
                if let Some(why) = unreached(page) {
                    return (Verdict::Untestable, format!("page {n}: {why}"));
                }
                return (
                    Verdict::Fail,
                    format!(
                        "page {n} (call {}) returned {} for the cursor the server itself handed out",
                        page.id,
                        ended(page)
                    ),
                );
            }
        };
        if let Some(list) = items(response, paging.items.as_deref()) {
            if list.iter().any(|item| seen.contains(item)) {
                return (
                    Verdict::Fail,
                    format!(
                        "page {n} (call {}) repeats an item of an earlier page",
                        page.id
                    ),
                );
            }
            seen.extend(list);
        }
        let Some((cursor, _)) = next_cursor(response, paging.next.as_deref()) else {
            return (
                Verdict::Pass,
                format!(
                    "ended after {n} page(s) and {} item(s); no cursor or item came twice",
                    seen.len()
                ),
            );
        };
        if cursors.contains(&cursor) {
            return (
                Verdict::Fail,
                format!(
                    "page {n} (call {}) returned a cursor an earlier page returned: the pagination loops",
                    page.id
                ),
            );
        }
        cursors.push(cursor);
    }
    if pages.len() as u32 >= paging.max_pages {
        return (
            Verdict::Fail,
            format!(
                "still returned a new cursor after {} pages, the bound",
                paging.max_pages
            ),
        );
    }
    (
        Verdict::Untestable,
        format!(
            "following stopped after {} page(s), before the cursor ended",
            pages.len()
        ),
    )
}
