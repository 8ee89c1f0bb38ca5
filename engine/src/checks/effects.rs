//! EFF-01, EFF-02 and EFF-03: what the declared annotations say about
//! effects, held to the effects observed.

use witness_model::audit::{CallForm, CallRecord, EvidenceOriginalWrite, Verdict};

use super::{
    Outcome, Subject, acted_on_existing, all_said_idle, did_its_job, effects_where, evidence_of,
    form_unmet, named_a_thing, said_nothing_done, unexercised,
};

/// EFF-01: a tool declared read-only changed nothing.
pub(super) fn read_only(subject: &Subject<'_>) -> Outcome {
    let (tool, calls) = (subject.tool, subject.calls.as_slice());
    if tool.hints.read_only != Some(true) {
        return (
            Verdict::Skip,
            "not declared readOnlyHint: true; nothing to verify".into(),
            evidence_of(calls, vec![]),
        );
    }
    let writes = effects_where(calls, |_| true);
    // A write on a store's original is the server's attempt even though
    // the sandbox kept the original from it: it tried, and the decoy in
    // the original's place took the write.
    let attempts: Vec<EvidenceOriginalWrite> = calls
        .iter()
        .flat_map(|c| {
            c.original_writes.iter().map(|path| EvidenceOriginalWrite {
                call: c.id,
                path: path.clone(),
            })
        })
        .collect();
    if !writes.is_empty() || !attempts.is_empty() {
        let mut parts = Vec::new();
        if !writes.is_empty() {
            parts.push(format!(
                "{} observed change(s) followed its calls",
                writes.len()
            ));
        }
        if !attempts.is_empty() {
            parts.push(format!(
                "it tried to write {} path(s) of a store's original, which the sandbox kept out of its reach",
                attempts.len()
            ));
        }
        let reason = format!("declared read-only, but {}", parts.join(", and "));
        let mut evidence = evidence_of(calls, writes);
        evidence.original_writes = attempts;
        return (Verdict::Fail, reason, evidence);
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    // A reader named to write is held to its writer-shaped calls: a pass
    // on its reader-shaped ones says nothing about what the name offers.
    // As for EFF-02, a change of a thing the store holds that answered ok
    // and changed nothing observed (a delete of a line the server writes
    // back at once) did not do a writer's job either; one handed only a
    // store's root may keep what it was told in memory.
    if let Some(why) = form_unmet(
        calls,
        |c| c.form.is_some_and(CallForm::writes),
        |c| {
            did_its_job(c)
                && (c.form != Some(CallForm::Change) || !c.effects.is_empty() || !named_a_thing(c))
        },
        "the call asked to write",
    ) {
        return (
            Verdict::Untestable,
            format!("declared read-only, but {why}"),
            evidence_of(calls, vec![]),
        );
    }
    if let Some(why) = all_said_idle(calls) {
        return (
            Verdict::Untestable,
            format!("declared read-only, but {why}"),
            evidence_of(calls, vec![]),
        );
    }
    (
        Verdict::Pass,
        format!(
            "declared read-only and no change was observed over {} call(s)",
            calls.len()
        ),
        evidence_of(calls, vec![]),
    )
}

/// EFF-02: every delete or overwrite is covered by the declarations.
pub(super) fn destructive(subject: &Subject<'_>) -> Outcome {
    let (tool, calls) = (subject.tool, subject.calls.as_slice());
    let destructive = effects_where(calls, |e| e.is_destructive());
    let denies = tool.hints.read_only == Some(true) || tool.hints.destructive == Some(false);
    if !destructive.is_empty() {
        if denies {
            let claim = if tool.hints.read_only == Some(true) {
                "readOnlyHint: true"
            } else {
                "destructiveHint: false"
            };
            return (
                Verdict::Fail,
                format!(
                    "declared {claim}, but {} delete(s) or overwrite(s) were observed",
                    destructive.len()
                ),
                evidence_of(calls, destructive),
            );
        }
        let basis = if tool.hints.destructive == Some(true) {
            "destructiveHint: true"
        } else {
            "the specification's default for an unset destructiveHint (true)"
        };
        return (
            Verdict::Pass,
            format!(
                "{} delete(s) or overwrite(s) observed, covered by {basis}",
                destructive.len()
            ),
            evidence_of(calls, destructive),
        );
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    // A claim to destroy nothing, on a tool asked to change, overwrite,
    // move or remove things, rests only on such a call that did its job on
    // something that existed: a delete of a name that was never there
    // destroys nothing whatever the tool would do, an update that answered
    // it changed nothing (`"updated": 0`) while no change was observed
    // shows nothing of what a change destroys, and neither does a move or
    // an update of a thing the store holds that answered ok and changed
    // nothing the observers saw (a section moved to the place it had). A
    // call handed only a store's root may keep what it was told in memory
    // (`set_workspace`): no store shows that, and its answer stands.
    if denies
        && let Some(why) = form_unmet(
            calls,
            |c| c.form == Some(CallForm::Change),
            |c| {
                did_its_job(c)
                    && acted_on_existing(c)
                    && (!c.effects.is_empty() || !named_a_thing(c))
            },
            "the call asked to change or remove something that existed",
        )
    {
        return (
            Verdict::Untestable,
            format!("declared to destroy nothing, but {why}"),
            evidence_of(calls, vec![]),
        );
    }
    if denies && let Some(why) = all_said_idle(calls) {
        return (
            Verdict::Untestable,
            format!("declared to destroy nothing, but {why}"),
            evidence_of(calls, vec![]),
        );
    }
    (
        Verdict::Pass,
        "no delete or overwrite was observed".into(),
        evidence_of(calls, vec![]),
    )
}

/// EFF-03: the identical repeat of a tool declared idempotent changed nothing more.
pub(super) fn idempotent(subject: &Subject<'_>) -> Outcome {
    let (tool, calls) = (subject.tool, subject.calls.as_slice());
    if tool.hints.idempotent != Some(true) {
        return (
            Verdict::Skip,
            "not declared idempotentHint: true; nothing to verify".into(),
            evidence_of(calls, vec![]),
        );
    }
    let repeats: Vec<&CallRecord> = calls
        .iter()
        .copied()
        .filter(|c| c.repeat_of.is_some())
        .collect();
    let further = effects_where(&repeats, |_| true);
    if !further.is_empty() {
        return (
            Verdict::Fail,
            format!(
                "declared idempotent, but the identical repeat caused {} further change(s)",
                further.len()
            ),
            evidence_of(calls, further),
        );
    }
    // A repeat of a call that answered it changed nothing, and changed
    // nothing observed, repeats nothing: the claim rests on the others.
    let original = |repeat: &CallRecord| calls.iter().find(|c| Some(c.id) == repeat.repeat_of);
    // Only a call asked to write can fail to: a read that found nothing
    // did what it was asked.
    let did_nothing = |repeat: &CallRecord| {
        original(repeat)
            .filter(|o| o.form.is_some_and(CallForm::writes))
            .and_then(|o| said_nothing_done(o))
    };
    if repeats
        .iter()
        .any(|c| c.succeeded() && did_nothing(c).is_none())
    {
        return (
            Verdict::Pass,
            "the identical repeat caused no further change".into(),
            evidence_of(calls, vec![]),
        );
    }
    if let Some(text) = repeats
        .iter()
        .filter(|c| c.succeeded())
        .find_map(|c| did_nothing(c))
    {
        return (
            Verdict::Untestable,
            format!(
                "declared idempotent, but the call repeated answered that it changed nothing the first time: {text}"
            ),
            evidence_of(calls, vec![]),
        );
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    (
        Verdict::Untestable,
        "no identical repeat completed, so the claim could not be exercised".into(),
        evidence_of(calls, vec![]),
    )
}
