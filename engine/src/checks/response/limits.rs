//! Bounds a plan puts on one call: RSP-05 (`max_items`) and RSP-06
//! (`latency_under`).
//!
//! A latency is the wall-clock time from sending `tools/call` to its answer.
//! It differs from run to run, so the measurement itself is kept under the
//! audit's `volatile` values and the verdict names only the bound.

use witness_model::audit::{CallStatus, CheckId, Expectation, Verdict};

use super::super::paging::items;
use super::super::{Outcome, Subject};
use super::{ended, judge_each, unreached};

/// RSP-05: the result holds no more items than the limit.
pub(in crate::checks) fn max_items(subject: &Subject<'_>) -> Outcome {
    judge_each(subject, CheckId::Rsp05, |call, expect| {
        let Expectation::MaxItems { limit, path } = expect else {
            return (Verdict::Skip, "not a max_items check".into());
        };
        if let Some(reason) = unreached(call) {
            return (Verdict::Untestable, reason);
        }
        let response = match (&call.response, call.outcome.status) {
            (Some(response), CallStatus::Ok) => response,
            _ => {
                return (
                    Verdict::Untestable,
                    format!("returned {}, so no items to count", ended(call)),
                );
            }
        };
        let Some(found) = items(response, path.as_deref()) else {
            return (
                Verdict::Untestable,
                match path {
                    Some(p) => format!("no list at {p}"),
                    None => "no single list in the result (name one with `path`)".into(),
                },
            );
        };
        let n = found.len() as u64;
        if n > *limit {
            (
                Verdict::Fail,
                format!("{n} items, more than the limit of {limit}"),
            )
        } else {
            (
                Verdict::Pass,
                format!("{n} items, within the limit of {limit}"),
            )
        }
    })
}

/// RSP-06: the call was answered in less than the bound.
pub(in crate::checks) fn latency_under(subject: &Subject<'_>) -> Outcome {
    judge_each(subject, CheckId::Rsp06, |call, expect| {
        let Expectation::LatencyUnder { ms } = expect else {
            return (Verdict::Skip, "not a latency_under check".into());
        };
        if let Some(reason) = unreached(call) {
            return (Verdict::Untestable, reason);
        }
        match subject.latency.get(&call.id) {
            None => (
                Verdict::Untestable,
                "no latency was measured for this call".into(),
            ),
            Some(took) if took < ms => (Verdict::Pass, format!("answered in less than {ms} ms")),
            Some(_) => (
                Verdict::Fail,
                format!("not answered within the {ms} ms bound"),
            ),
        }
    })
}
