//! Controls on a failure: background, and confirmation.
//!
//! An effect-lane failure rests on effects charged to a call. Two controls
//! stand between such a failure and the report:
//!
//! 1. **Background.** When every effect the failure rests on is to an
//!    object the idle controls saw the server change with no call in flight
//!    (learnt by [`background_key`], possibly after the call was made), the
//!    failure rests on the server's own activity: `untestable`.
//! 2. **Confirmation.** The audit repeated the failing call after the
//!    stores were quiet (with fresh values where the planner makes them,
//!    and the real objects it was sent while they are there), recorded
//!    with `confirms`. The failure stands when the same check
//!    fails on the confirmation alone. A repeat with the very same
//!    arguments cannot redo what is already done (a record already
//!    deleted, content already overwritten), so when it changed nothing the
//!    failure stands on the controls instead, and so it does when the
//!    server refused the confirmation (it then did nothing and can show
//!    nothing): none of its objects ever changed while idle, and none is one the call just before may have
//!    written late (another tool's call, handed the object's name, whose
//!    tool writes objects of that kind).
//!    Otherwise — fresh values that changed nothing, or
//!    objects that proved to be background — the effect was not
//!    reproduced: `untestable`. An output asked again after a change
//!    the audit made (`after_change`) is confirmed only by an effect its
//!    confirmation shows again, after the change is made again: that
//!    repeat can redo what was done.
//!
//! A failure with no confirmation call (`--no-confirm`, or a server that
//! could not be asked again) stands as observed; the report says whether
//! confirmation was on.

use witness_model::audit::{
    CallRecord, CheckId, Evidence, StoreBackground, StoreEntry, Verdict, background_key,
};

use super::{Check, Outcome, Subject};

/// The checks whose failures are confirmed: those that rest on one call's
/// store effects. EFF-03 has its own repeat as control; EFF-04 and EFF-06
/// rest on the network sink and on probes, not on what a store showed.
pub const CONFIRMED: [CheckId; 3] = [CheckId::Eff01, CheckId::Eff02, CheckId::Eff05];

/// What the idle controls learnt, and the stores' kinds to key objects by.
#[derive(Clone, Copy, Default)]
pub struct Controls<'a> {
    pub background: &'a [StoreBackground],
    pub stores: &'a [StoreEntry],
}

impl Controls<'_> {
    /// `object`'s background key, by the kind of its store.
    fn key_of<'o>(&self, store: &str, object: &'o str) -> &'o str {
        let kind = self
            .stores
            .iter()
            .find(|s| s.name == store)
            .map_or("fs", |s| s.kind.as_str());
        background_key(kind, object)
    }

    /// Whether `object` (qualified, `store:object`) is a background object.
    fn is_background(&self, qualified: &str) -> bool {
        let Some((store, object)) = qualified.split_once(':') else {
            return false;
        };
        let key = self.key_of(store, object);
        self.background
            .iter()
            .any(|b| b.store == store && b.objects.iter().any(|o| o == key))
    }
}

/// `check` on `subject`, with the controls applied to a failure.
pub(super) fn confirmed(check: &Check, subject: &Subject<'_>, controls: &Controls<'_>) -> Outcome {
    let (verdict, reason, evidence) = (check.evaluate)(subject);
    // A write attempted on a store's original stands as observed: no idle
    // change of the jail's stores explains it, and the server must not get
    // a second chance at the user's data to prove it.
    if verdict != Verdict::Fail
        || !CONFIRMED.contains(&check.id)
        || evidence.effects.is_empty()
        || !evidence.original_writes.is_empty()
    {
        return (verdict, reason, evidence);
    }
    let background: Vec<&str> = evidence
        .effects
        .iter()
        .map(|e| e.object.as_str())
        .filter(|o| controls.is_background(o))
        .collect();
    if background.len() == evidence.effects.len() {
        return (
            Verdict::Untestable,
            format!(
                "its only evidence is background activity: the server also changed {} with no call in flight",
                objects_of(&background)
            ),
            evidence,
        );
    }
    // Only a confirmation of a call whose effects the failure rests on
    // judges it: the repeat of a tool's create says nothing of the delete
    // its later overwrite form made.
    let confirmations: Vec<&CallRecord> = subject
        .all
        .iter()
        .filter(|c| {
            c.confirms
                .is_some_and(|of| evidence.effects.iter().any(|e| e.call == of))
        })
        .collect();
    let Some(first) = confirmations.first() else {
        return (verdict, reason, evidence);
    };
    let again = Subject {
        calls: confirmations.clone(),
        ..*subject
    };
    let (repeated, _, _) = (check.evaluate)(&again);
    let with_confirmations = |evidence: Evidence| Evidence {
        calls: evidence
            .calls
            .iter()
            .copied()
            .chain(confirmations.iter().map(|c| c.id))
            .collect(),
        ..evidence
    };
    if repeated == Verdict::Fail {
        let reason = format!("{reason}; confirmed by call {}", first.id);
        return (verdict, reason, with_confirmations(evidence));
    }
    let original = first
        .confirms
        .and_then(|id| subject.all.iter().find(|c| c.id == id));
    // An output asked again after a change the audit made can show its
    // effect again once the change is made again before its
    // confirmation: a confirmation that shows nothing then speaks against
    // the effect, as fresh values that change nothing do (the effect may
    // have been the change's own write, finished late).
    if let Some(change) = original.and_then(|o| o.after_change) {
        let again = first.after_change.filter(|c| *c != change).map_or_else(
            || "the change could not be made again".to_owned(),
            |c| format!("after call {c} made the change again"),
        );
        return (
            Verdict::Untestable,
            format!(
                "effect not reproduced: call {} asked the output again on the same values, {again}, and it replaced nothing",
                first.id
            ),
            with_confirmations(evidence),
        );
    }
    // The same values sent: where each came from (the answer it was read
    // in) does not change what the server was asked.
    let sent = |c: &CallRecord| -> Vec<(String, serde_json::Value)> {
        c.arguments
            .iter()
            .map(|a| (a.name.clone(), a.value.clone()))
            .collect()
    };
    let same_arguments = original.is_some_and(|o| sent(o) == sent(first));
    let late_writer = written_late_by_the_call_before(&evidence, subject, controls);
    // A confirmation the server refused (an error, or an error in the
    // answer: fresh values naming nothing that exists) did nothing, so it
    // cannot show the effect was not the call's: as with a repeat that
    // cannot redo what is done, the failure stands on the controls.
    let refused = confirmations.iter().all(|c| !c.succeeded());
    if (same_arguments || refused) && background.is_empty() && late_writer.is_none() {
        let how = if same_arguments {
            "a repeat cannot redo what is done"
        } else {
            "the server refused it, so it did nothing"
        };
        let reason = format!(
            "{reason}; confirmed by the controls: call {} repeated it, {how}, and none of its objects changed with no call in flight",
            first.id
        );
        return (verdict, reason, with_confirmations(evidence));
    }
    if let Some((object, other)) = late_writer {
        return (
            Verdict::Untestable,
            format!(
                "effect not reproduced: call {} repeated the call and changed nothing, and {object} is named by the call just before, of {other}, which writes such objects (the write may have been that call's, finished late)",
                first.id
            ),
            with_confirmations(evidence),
        );
    }
    (
        Verdict::Untestable,
        format!(
            "effect not reproduced: background activity (call {} repeated the call after the stores were quiet{})",
            first.id,
            if same_arguments {
                ""
            } else {
                ", on fresh values"
            }
        ),
        with_confirmations(evidence),
    )
}

/// The first object of `evidence` that the call just before the failing
/// one may have written late, with that call's tool: a call of another
/// tool, handed the very name the object goes by (`note_revisions/n1`
/// after `save_note` was handed `n1`), whose tool changes objects of the
/// same kind (by their background key: rows by their table) in its own
/// calls, during them or late. "A repeat cannot redo what is done" speaks
/// for a call only when the write could be nobody else's: a write the
/// call before finishes after its answer (a server thread held up on a
/// loaded machine) can land in this call's window however the controls
/// are timed, and a repeat that changes nothing then says the write was
/// not this call's.
fn written_late_by_the_call_before(
    evidence: &Evidence,
    subject: &Subject<'_>,
    controls: &Controls<'_>,
) -> Option<(String, String)> {
    evidence.effects.iter().find_map(|e| {
        let (store, object) = e.object.split_once(':')?;
        let name = object.rsplit('/').next().unwrap_or(object);
        let before = subject
            .all
            .iter()
            .find(|c| e.call > 1 && c.id == e.call - 1)
            .filter(|c| c.tool != subject.tool.name)?;
        let handed = before
            .arguments
            .iter()
            .any(|a| a.value.as_str() == Some(name));
        let wanted = controls.key_of(store, object);
        let writes_such = subject
            .all
            .iter()
            .filter(|c| c.tool == before.tool)
            .any(|c| {
                c.effects
                    .iter()
                    .chain(&c.late_effects)
                    .any(|o| o.store == store && controls.key_of(&o.store, &o.object) == wanted)
            });
        (handed && writes_such).then(|| (format!("{store}:{object}"), before.tool.clone()))
    })
}

/// At most three objects, then how many more.
fn objects_of(objects: &[&str]) -> String {
    let shown: Vec<&str> = objects.iter().take(3).copied().collect();
    match objects.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}
