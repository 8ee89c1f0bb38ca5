//! Annotation suggestions: from an audit's record, the declarations its
//! observed behaviour supports, for a server's author.
//!
//! A suggestion rests on a verdict of the effect lane, never on a name or a
//! guess. For a hint a tool declared with its safer value (`readOnlyHint:
//! true`, `destructiveHint: false`, `idempotentHint: true`, `openWorldHint:
//! false`) the verdict is the one the audit recorded. For a hint the tool
//! left unset, or declared otherwise, the same check is judged again on the
//! same ledger as if the tool had claimed the safer value
//! ([`crate::audit::effect_lane`], with the audit's own background controls
//! and network observer): a failure there is behaviour the unset hint should
//! say out loud.
//!
//! The asymmetry is deliberate. A failure is evidence: the observed write,
//! delete, repeat effect or outbound attempt. The absence of one over a few
//! calls is not proof of safety, so the safer value is never suggested from
//! silence: not `readOnlyHint: true` because nothing was written, not
//! `idempotentHint: true` because one repeat changed nothing, not
//! `openWorldHint: false` because nothing was reached. Nor `destructiveHint:
//! false`: a tool declared destructive that was seen changing existing
//! content and keeping it (an update that only added, a delete the store
//! still holds), and never deleting or overwriting anything, gets a [`Note`]
//! saying so, with its calls, but no suggestion and no patch. What one
//! audit's calls did to one state does not say what the tool does to every
//! state: the testbed's residual-revoke marks a key revoked by adding a
//! field, and mcp-server-git's `git_reset` unstages a file whose content
//! the object database keeps, and neither tool is safe to call unasked. A
//! tool with no successful call is not judged at all, and neither is a hint
//! whose check was untestable.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use witness_model::audit::{
    AUDIT_SCHEMA, AuditReport, CallRecord, CheckId, CheckResult, Effect, Hint, Op, ToolEntry,
    Verdict,
};

/// Why an audit document could not be read for suggestions. Every variant
/// is a mistake of the invocation (the file given), never of the server.
#[derive(Debug, thiserror::Error)]
pub enum SuggestError {
    // The I/O error is part of the one line, not a source: the line is
    // the whole message wherever it is shown.
    #[error("cannot read {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path} is not JSON: {message}")]
    NotJson { path: PathBuf, message: String },
    #[error("{path} is not an audit report: {why}")]
    NotAnAudit { path: PathBuf, why: String },
    #[error("{path} is a {found} document; this mcp-witness reads {AUDIT_SCHEMA}")]
    SchemaVersion { path: PathBuf, found: String },
    #[error("{path} does not parse as {AUDIT_SCHEMA}: {message}")]
    Malformed { path: PathBuf, message: String },
}

/// Reads the audit report at `path` (what `audit --format json` prints and
/// `audit --out` writes as `audit.json`).
pub fn read(path: &Path) -> Result<AuditReport, SuggestError> {
    let text = std::fs::read_to_string(path).map_err(|error| SuggestError::Read {
        path: path.to_owned(),
        error,
    })?;
    parse(&text, path)
}

/// Parses an audit report, telling a document of another kind or version
/// from one that is broken.
pub fn parse(text: &str, path: &Path) -> Result<AuditReport, SuggestError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SuggestError::NotJson {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let schema = match value.get("schema") {
        Some(Value::String(schema)) => schema.clone(),
        Some(_) => {
            return Err(SuggestError::NotAnAudit {
                path: path.to_owned(),
                why: "its \"schema\" is not a string".into(),
            });
        }
        None => {
            return Err(SuggestError::NotAnAudit {
                path: path.to_owned(),
                why: format!("it has no \"schema\" field naming {AUDIT_SCHEMA}"),
            });
        }
    };
    if schema != AUDIT_SCHEMA {
        let kind = AUDIT_SCHEMA.split('/').next().unwrap_or(AUDIT_SCHEMA);
        if schema.split('/').next() == Some(kind) {
            return Err(SuggestError::SchemaVersion {
                path: path.to_owned(),
                found: witness_text::clip(&schema, 60),
            });
        }
        return Err(SuggestError::NotAnAudit {
            path: path.to_owned(),
            why: format!(
                "it is a {} document, not {AUDIT_SCHEMA}",
                witness_text::clip(&schema, 60)
            ),
        });
    }
    serde_json::from_value(value).map_err(|e| SuggestError::Malformed {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// How a suggestion relates to what the tool declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The declared value is contradicted by what was observed.
    Contradicted,
    /// The hint is unset (or not a boolean); the observed behaviour says
    /// which value it should have.
    Missing,
}

/// One annotation the observed behaviour supports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub hint: Hint,
    /// The declared boolean (`None`: unset or not a boolean).
    pub declared: Option<bool>,
    pub value: bool,
    pub change: Change,
    /// The check the suggestion rests on.
    pub check: CheckId,
    /// Whether that verdict is the one the audit recorded (`false`: judged
    /// again, as if the tool had claimed the safer value).
    pub recorded: bool,
    /// The calls whose observations it rests on, ascending (confirmations
    /// included).
    pub calls: Vec<u32>,
    /// What was observed, in one line.
    pub basis: String,
}

/// The suggestions for one tool of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSuggestions {
    /// Its index in the catalog the audit recorded (`/tools/<index>`).
    pub index: usize,
    pub tool: String,
    pub suggestions: Vec<Suggestion>,
}

/// A tool, or one hint of it, that the audit gives no ground to judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotJudged {
    pub tool: String,
    /// The hint, when only it was not judged (`None`: the whole tool).
    pub hint: Option<Hint>,
    pub why: String,
}

/// Behaviour consistent with a hint's safer value, observed but too narrow
/// to suggest it (`destructiveHint: false`): for the author to weigh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub index: usize,
    pub tool: String,
    pub hint: Hint,
    pub declared: Option<bool>,
    /// The value the observations are consistent with.
    pub consistent_with: bool,
    pub calls: Vec<u32>,
    pub basis: String,
}

/// A hint judged and found silent: its check, recorded or judged as if
/// claimed, passed. Nothing argues against the safer value, which is still
/// never suggested (silence over a few calls is not proof); kept so that a
/// reader counting what was judged can tell silence from not judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Silent {
    pub tool: String,
    pub hint: Hint,
    pub declared: Option<bool>,
    /// The passing verdict's reason.
    pub reason: String,
}

/// Every suggestion an audit supports, in catalog order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestions {
    pub tools: Vec<ToolSuggestions>,
    pub notes: Vec<Note>,
    pub not_judged: Vec<NotJudged>,
    /// Hints judged with nothing observed against the safer value, tool by
    /// tool in catalog order (a hint with a note is among them).
    pub silent: Vec<Silent>,
    /// Whether the catalog arrived whole; when it did not, indices are into
    /// the part that arrived.
    pub catalog_complete: bool,
}

impl Suggestions {
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The suggestions as an RFC 6902 JSON patch against the server's
    /// `tools/list` result (`{"tools": [...]}`, in the order the audit
    /// recorded it). Each patched tool is first tested by name, and each
    /// declared value by its value, so the patch refuses to apply to a
    /// catalog that changed since the audit. No suggestion: `[]`.
    pub fn json_patch(&self, report: &AuditReport) -> Value {
        let mut ops = Vec::new();
        for tool in &self.tools {
            let base = format!("/tools/{}", tool.index);
            ops.push(json!({"op": "test", "path": format!("{base}/name"), "value": tool.tool}));
            let annotations = report
                .tools
                .get(tool.index)
                .and_then(|t| t.annotations.as_ref());
            match annotations {
                Some(Value::Object(declared)) => {
                    for s in &tool.suggestions {
                        let path = format!("{base}/annotations/{}", s.hint.key());
                        match declared.get(s.hint.key()) {
                            Some(old) => {
                                ops.push(json!({"op": "test", "path": path, "value": old}));
                                ops.push(json!({"op": "replace", "path": path, "value": s.value}));
                            }
                            None => ops.push(json!({"op": "add", "path": path, "value": s.value})),
                        }
                    }
                }
                // No annotations object (absent, or not an object): one
                // holding the suggested hints takes its place.
                _ => {
                    let object: Map<String, Value> = tool
                        .suggestions
                        .iter()
                        .map(|s| (s.hint.key().to_owned(), Value::Bool(s.value)))
                        .collect();
                    ops.push(json!({
                        "op": "add",
                        "path": format!("{base}/annotations"),
                        "value": Value::Object(object),
                    }));
                }
            }
        }
        Value::Array(ops)
    }
}

/// The check that holds a tool to `hint`'s safer value.
fn check_of(hint: Hint) -> CheckId {
    match hint {
        Hint::ReadOnly => CheckId::Eff01,
        Hint::Destructive => CheckId::Eff02,
        Hint::Idempotent => CheckId::Eff03,
        Hint::OpenWorld => CheckId::Eff04,
    }
}

fn declared(tool: &ToolEntry, hint: Hint) -> Option<bool> {
    match hint {
        Hint::ReadOnly => tool.hints.read_only,
        Hint::Destructive => tool.hints.destructive,
        Hint::Idempotent => tool.hints.idempotent,
        Hint::OpenWorld => tool.hints.open_world,
    }
}

/// The catalog with every tool claiming `hint`'s safer value.
fn claiming(tools: &[ToolEntry], hint: Hint) -> Vec<ToolEntry> {
    tools
        .iter()
        .map(|tool| {
            let mut tool = tool.clone();
            let safer = Some(hint.safer_value());
            match hint {
                Hint::ReadOnly => tool.hints.read_only = safer,
                Hint::Destructive => tool.hints.destructive = safer,
                Hint::Idempotent => tool.hints.idempotent = safer,
                Hint::OpenWorld => tool.hints.open_world = safer,
            }
            tool.class = tool.hints.class();
            tool
        })
        .collect()
}

/// Every suggestion `report` supports.
pub fn suggest(report: &AuditReport) -> Suggestions {
    // The effect lane as if every tool claimed each safer value; EFF-06
    // (which reads the probe) is not used, so no probe is assumed.
    let claimed: Vec<(Hint, Vec<CheckResult>)> = Hint::ALL
        .into_iter()
        .map(|hint| {
            let tools = claiming(&report.tools, hint);
            (hint, crate::audit::effect_lane(report, &tools, false))
        })
        .collect();
    let mut tools = Vec::new();
    let mut notes = Vec::new();
    let mut not_judged = Vec::new();
    let mut silent = Vec::new();
    for (index, tool) in report.tools.iter().enumerate() {
        let calls: Vec<&CallRecord> = report
            .calls
            .iter()
            .filter(|c| c.tool == tool.name && c.confirms.is_none())
            .collect();
        if !calls.iter().any(|c| c.succeeded()) {
            not_judged.push(NotJudged {
                tool: tool.name.clone(),
                hint: None,
                why: not_exercised(report, &tool.name, &calls),
            });
            continue;
        }
        let mut suggestions = Vec::new();
        for (hint, lane) in &claimed {
            let hint = *hint;
            let id = check_of(hint);
            let declared = declared(tool, hint);
            // Declared with the value a failure would suggest: a failure
            // agrees with it, and silence never argues for the safer value
            // (destructiveHint's kept content aside).
            if declared == Some(!hint.safer_value()) && hint != Hint::Destructive {
                continue;
            }
            let (verdict, recorded) = if declared == Some(hint.safer_value()) {
                (report.check(id, &tool.name), true)
            } else {
                (
                    lane.iter().find(|c| c.id == id && c.tool == tool.name),
                    false,
                )
            };
            let Some(verdict) = verdict else {
                continue;
            };
            match verdict.verdict {
                Verdict::Fail if declared != Some(!hint.safer_value()) => {
                    suggestions.push(Suggestion {
                        hint,
                        declared,
                        value: !hint.safer_value(),
                        change: if declared.is_some() {
                            Change::Contradicted
                        } else {
                            Change::Missing
                        },
                        check: id,
                        recorded,
                        calls: basis_calls(report, verdict),
                        basis: observed(report, verdict),
                    });
                }
                Verdict::Pass => {
                    if hint == Hint::Destructive {
                        notes.extend(kept_content(index, tool, &calls));
                    }
                    silent.push(Silent {
                        tool: tool.name.clone(),
                        hint,
                        declared,
                        reason: verdict.reason.clone(),
                    });
                }
                Verdict::Untestable if declared != Some(!hint.safer_value()) => {
                    not_judged.push(NotJudged {
                        tool: tool.name.clone(),
                        hint: Some(hint),
                        why: verdict.reason.clone(),
                    })
                }
                _ => {}
            }
        }
        if !suggestions.is_empty() {
            tools.push(ToolSuggestions {
                index,
                tool: tool.name.clone(),
                suggestions,
            });
        }
    }
    Suggestions {
        tools,
        notes,
        not_judged,
        silent,
        catalog_complete: report.catalog.complete,
    }
}

/// Why a tool with no successful call was not judged: the coverage's words
/// where the audit recorded them.
fn not_exercised(report: &AuditReport, tool: &str, calls: &[&CallRecord]) -> String {
    let recorded = report
        .coverage
        .as_ref()
        .and_then(|c| c.by_tool.iter().find(|t| t.tool == tool))
        .and_then(|t| t.why.clone());
    recorded.unwrap_or_else(|| {
        if calls.is_empty() {
            "not called".to_owned()
        } else {
            format!("none of its {} call(s) succeeded", calls.len())
        }
    })
}

/// The calls a failing verdict's observations came from, with the
/// confirmations that repeated them.
fn basis_calls(report: &AuditReport, verdict: &CheckResult) -> Vec<u32> {
    let mut calls: BTreeSet<u32> = verdict.evidence.effects.iter().map(|e| e.call).collect();
    calls.extend(verdict.evidence.network.iter().map(|n| n.call));
    calls.extend(verdict.evidence.calls.iter().copied().filter(|id| {
        report
            .calls
            .iter()
            .any(|c| c.id == *id && c.confirms.is_some())
    }));
    calls.into_iter().collect()
}

/// What a failing verdict observed, in one line: effects or attempts by
/// call, at most five named.
fn observed(report: &AuditReport, verdict: &CheckResult) -> String {
    let mut items: Vec<String> = verdict
        .evidence
        .effects
        .iter()
        .map(|e| format!("call {} {} {}", e.call, op_word(e.op), e.object))
        .collect();
    items.extend(
        verdict
            .evidence
            .network
            .iter()
            .map(|n| format!("call {} reached {}", n.call, n.destination)),
    );
    let shown: Vec<String> = items
        .iter()
        .take(5)
        .map(|i| witness_text::clip(i, 120))
        .collect();
    let mut line = shown.join("; ");
    if items.len() > shown.len() {
        line.push_str(&format!("; and {} more", items.len() - shown.len()));
    }
    if verdict.id == CheckId::Eff03 {
        line = format!("the identical repeat changed more: {line}");
    }
    let confirmations: Vec<String> = verdict
        .evidence
        .calls
        .iter()
        .filter(|id| {
            report
                .calls
                .iter()
                .any(|c| c.id == **id && c.confirms.is_some())
        })
        .map(u32::to_string)
        .collect();
    if !confirmations.is_empty() {
        line.push_str(&format!(
            " (confirmed by call {})",
            confirmations.join(", ")
        ));
    }
    line
}

fn op_word(op: Op) -> &'static str {
    match op {
        Op::Create => "created",
        Op::Update => "updated",
        Op::Delete => "deleted",
    }
}

/// Content that existed and was changed without being destroyed: an
/// update that only added, or a delete whose content the store keeps.
fn kept_existing(effect: &Effect) -> bool {
    matches!(effect.op, Op::Update | Op::Delete) && effect.overwrite == Some(false)
}

/// A note, when a tool not declared `destructiveHint: false` changed
/// existing content and kept it, and nothing it did (late effects included)
/// destroyed any.
fn kept_content(index: usize, tool: &ToolEntry, calls: &[&CallRecord]) -> Option<Note> {
    let declared = tool.hints.destructive;
    if declared == Some(false) || tool.hints.read_only == Some(true) {
        return None;
    }
    let all = calls
        .iter()
        .flat_map(|c| c.effects.iter().chain(&c.late_effects));
    if all.clone().any(Effect::is_destructive) {
        return None;
    }
    let kept: Vec<(u32, &Effect)> = calls
        .iter()
        .flat_map(|c| c.effects.iter().map(move |e| (c.id, e)))
        .filter(|(_, e)| kept_existing(e))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let ids: BTreeSet<u32> = kept.iter().map(|(id, _)| *id).collect();
    let shown: Vec<String> = kept
        .iter()
        .take(5)
        .map(|(id, e)| {
            witness_text::clip(
                &format!("call {id} {} {}", op_word(e.op), e.qualified()),
                120,
            )
        })
        .collect();
    Some(Note {
        index,
        tool: tool.name.clone(),
        hint: Hint::Destructive,
        declared,
        consistent_with: false,
        calls: ids.into_iter().collect(),
        basis: format!(
            "existing content changed and kept ({}), and no delete or overwrite over {} call(s)",
            shown.join("; "),
            calls.len()
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn committed(name: &str) -> AuditReport {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../experiments/results/audits")
            .join(format!("{name}.json"));
        read(&path).unwrap_or_else(|e| panic!("{e}"))
    }

    /// (tool, hint key, suggested value) of every suggestion.
    fn named(suggestions: &Suggestions) -> Vec<(String, &'static str, bool)> {
        suggestions
            .tools
            .iter()
            .flat_map(|t| {
                t.suggestions
                    .iter()
                    .map(|s| (t.tool.clone(), s.hint.key(), s.value))
            })
            .collect()
    }

    /// A minimal RFC 6902 applier (test, add, replace on object members),
    /// enough to prove the patch applies to the catalog and what it gives.
    fn apply(document: &mut Value, patch: &Value) -> Result<(), String> {
        for op in patch.as_array().ok_or("not an array")? {
            let path = op["path"].as_str().ok_or("no path")?;
            let (parent, key) = path.rsplit_once('/').ok_or("bad path")?;
            let target = document.pointer_mut(parent).ok_or(format!("no {parent}"))?;
            match op["op"].as_str() {
                Some("test") => {
                    let here = target
                        .get(key)
                        .or_else(|| key.parse::<usize>().ok().and_then(|i| target.get(i)));
                    if here != Some(&op["value"]) {
                        return Err(format!("test failed at {path}"));
                    }
                }
                Some("replace") => {
                    let slot = target.get_mut(key).ok_or(format!("nothing at {path}"))?;
                    *slot = op["value"].clone();
                }
                Some("add") => {
                    target
                        .as_object_mut()
                        .ok_or(format!("{parent} is not an object"))?
                        .insert(key.to_owned(), op["value"].clone());
                }
                other => return Err(format!("unexpected op {other:?}")),
            }
        }
        Ok(())
    }

    fn tools_list(report: &AuditReport) -> Value {
        let tools: Vec<Value> = report
            .tools
            .iter()
            .map(|t| {
                let mut tool = json!({"name": t.name});
                if let Some(a) = &t.annotations {
                    tool["annotations"] = a.clone();
                }
                tool
            })
            .collect();
        json!({ "tools": tools })
    }

    #[test]
    fn each_planted_lie_of_e1_is_named_with_the_value_its_behaviour_supports() {
        let expected: [(&str, &str, &str, bool); 6] = [
            ("lie-readonly", "save_note", "readOnlyHint", false),
            ("hide-destructive", "delete_note", "destructiveHint", true),
            ("webhook-readonly", "create_webhook", "readOnlyHint", false),
            ("silent-keymint", "get_note", "readOnlyHint", false),
            ("shadow-webhook", "list_notes", "readOnlyHint", false),
            ("phantom-write", "ping", "readOnlyHint", false),
        ];
        for (variant, tool, hint, value) in expected {
            let report = committed(variant);
            let suggestions = suggest(&report);
            let found = named(&suggestions);
            assert!(
                found.contains(&(tool.to_owned(), hint, value)),
                "{variant}: {found:?}"
            );
            // Only the lying tool is touched.
            assert!(
                found.iter().all(|(t, _, _)| t == tool),
                "{variant}: {found:?}"
            );
            let patch = suggestions.json_patch(&report);
            let mut catalog = tools_list(&report);
            apply(&mut catalog, &patch).unwrap_or_else(|e| panic!("{variant}: {e}"));
            let index = report
                .tools
                .iter()
                .position(|t| t.name == tool)
                .unwrap_or(usize::MAX);
            assert_eq!(
                catalog["tools"][index]["annotations"][hint],
                Value::Bool(value),
                "{variant}: {patch:#}"
            );
        }
    }

    #[test]
    fn the_honest_testbed_gets_no_suggestion_and_an_empty_patch() {
        let report = committed("honest");
        let suggestions = suggest(&report);
        assert!(suggestions.is_empty(), "{:?}", suggestions.tools);
        assert_eq!(suggestions.json_patch(&report), json!([]));
    }

    #[test]
    fn a_suggestion_says_its_calls_and_whether_a_confirmation_repeated_it() {
        let report = committed("silent-keymint");
        let suggestions = suggest(&report);
        let get_note = &suggestions.tools[0];
        assert_eq!(get_note.tool, "get_note");
        assert_eq!(get_note.index, 1);
        let read_only = &get_note.suggestions[0];
        assert_eq!(read_only.hint, Hint::ReadOnly);
        assert_eq!(read_only.change, Change::Contradicted);
        assert!(read_only.recorded);
        assert_eq!(read_only.calls, [3, 4, 19]);
        assert!(
            read_only
                .basis
                .contains("call 3 created db:api_keys/key_0001")
                && read_only.basis.ends_with("(confirmed by call 19)"),
            "{}",
            read_only.basis
        );
        // The repeat minted another key: idempotentHint is contradicted too.
        let idempotent = get_note
            .suggestions
            .iter()
            .find(|s| s.hint == Hint::Idempotent);
        assert_eq!(
            idempotent.map(|s| (s.value, s.calls.clone())),
            Some((false, vec![4]))
        );
    }

    #[test]
    fn an_unset_hint_is_judged_as_if_claimed_and_never_from_silence() {
        let mut report = committed("phantom-write");
        // ping declares nothing at all; get_note keeps only readOnlyHint.
        for tool in report.tools.iter_mut() {
            if tool.name == "ping" {
                tool.annotations = None;
                tool.hints = Default::default();
                tool.class = tool.hints.class();
            }
        }
        let suggestions = suggest(&report);
        let ping = suggestions.tools.iter().find(|t| t.tool == "ping");
        let ping = ping.map(|t| {
            t.suggestions
                .iter()
                .map(|s| (s.hint.key(), s.value, s.change, s.recorded))
                .collect::<Vec<_>>()
        });
        assert_eq!(
            ping,
            Some(vec![
                ("readOnlyHint", false, Change::Missing, false),
                ("idempotentHint", false, Change::Missing, false),
            ]),
            "writes are evidence; nothing suggests destructiveHint or openWorldHint"
        );
        // Judged and silent is told apart from not judged, and a hint is
        // never both suggested and silent.
        assert!(
            suggestions
                .silent
                .iter()
                .any(|s| s.tool == "ping" && s.hint == Hint::Destructive && s.declared.is_none()),
            "{:?}",
            suggestions.silent
        );
        for s in &suggestions.silent {
            assert!(
                !named(&suggestions).contains(&(
                    s.tool.clone(),
                    s.hint.key(),
                    !s.hint.safer_value()
                )),
                "{s:?}"
            );
        }
        let patch = suggestions.json_patch(&report);
        let ops: Vec<&str> = patch
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["op"].as_str())
            .collect();
        assert_eq!(ops, ["test", "add"], "{patch:#}");
        let mut catalog = tools_list(&report);
        apply(&mut catalog, &patch).unwrap_or_else(|e| panic!("{e}"));
        let index = report
            .tools
            .iter()
            .position(|t| t.name == "ping")
            .unwrap_or(usize::MAX);
        assert_eq!(
            catalog["tools"][index]["annotations"],
            json!({"readOnlyHint": false, "idempotentHint": false})
        );
        // A patch for another catalog refuses to apply.
        let mut other = tools_list(&report);
        other["tools"][index]["name"] = json!("renamed");
        assert!(apply(&mut other, &patch).is_err());
    }

    #[test]
    fn destructive_false_is_only_ever_a_note_on_existing_content_kept() {
        let mut report = committed("honest");
        // save_note (declared destructive) now only added to the note it saved.
        let call = report.calls.iter_mut().find(|c| c.id == 7);
        let effect = call.and_then(|c| c.effects.first_mut());
        if let Some(effect) = effect {
            effect.op = Op::Update;
            effect.overwrite = Some(false);
        }
        let suggestions = suggest(&report);
        assert!(
            suggestions.is_empty(),
            "never a suggestion: {:?}",
            suggestions.tools
        );
        assert_eq!(suggestions.json_patch(&report), json!([]));
        let notes: Vec<(&str, &str, bool, &[u32])> = suggestions
            .notes
            .iter()
            .map(|n| {
                (
                    n.tool.as_str(),
                    n.hint.key(),
                    n.consistent_with,
                    n.calls.as_slice(),
                )
            })
            .collect();
        assert_eq!(notes, [("save_note", "destructiveHint", false, &[7][..])]);
        let basis = &suggestions.notes[0].basis;
        assert!(basis.contains("call 7 updated db:notes/draft"), "{basis}");
        // One overwrite anywhere, late effects included, and it is not suggested.
        let mut late = report.clone();
        if let Some(call) = late.calls.iter_mut().find(|c| c.id == 8) {
            call.late_effects = vec![Effect {
                store: "db".into(),
                object: "notes/draft".into(),
                op: Op::Delete,
                overwrite: None,
                before: None,
                after: None,
            }];
        }
        assert!(suggest(&late).notes.is_empty());
    }

    #[test]
    fn tools_without_a_successful_call_and_untestable_hints_are_not_judged() {
        let mut report = committed("lie-readonly");
        for call in report.calls.iter_mut().filter(|c| c.tool == "save_note") {
            call.outcome.status = witness_model::audit::CallStatus::ToolError;
        }
        let suggestions = suggest(&report);
        assert!(suggestions.is_empty(), "{:?}", suggestions.tools);
        assert!(
            suggestions
                .not_judged
                .iter()
                .any(|n| n.tool == "save_note" && n.hint.is_none())
        );
        // No network observer: an unset openWorldHint is not judged.
        let mut report = committed("honest");
        report.isolation.network_observer = None;
        for tool in report.tools.iter_mut().filter(|t| t.name == "ping") {
            tool.hints.open_world = None;
            tool.class = tool.hints.class();
        }
        let suggestions = suggest(&report);
        assert!(suggestions.is_empty());
        assert!(
            suggestions
                .not_judged
                .iter()
                .any(|n| n.tool == "ping" && n.hint == Some(Hint::OpenWorld))
        );
    }

    #[test]
    fn bad_documents_are_told_apart() {
        let path = Path::new("x.json");
        assert!(matches!(
            parse("{", path),
            Err(SuggestError::NotJson { .. })
        ));
        assert!(matches!(
            parse("[]", path),
            Err(SuggestError::NotAnAudit { .. })
        ));
        assert!(matches!(
            parse(r#"{"schema": "mcp-witness.e1/v1"}"#, path),
            Err(SuggestError::NotAnAudit { .. })
        ));
        let v2 = parse(r#"{"schema": "mcp-witness.audit/v2"}"#, path);
        assert!(matches!(v2, Err(SuggestError::SchemaVersion { .. })));
        assert_eq!(
            v2.map(|_| ()).map_err(|e| e.to_string()),
            Err("x.json is a mcp-witness.audit/v2 document; this mcp-witness reads mcp-witness.audit/v1".into())
        );
        assert!(matches!(
            parse(r#"{"schema": "mcp-witness.audit/v1"}"#, path),
            Err(SuggestError::Malformed { .. })
        ));
        assert!(matches!(
            read(Path::new("/nonexistent/audit.json")),
            Err(SuggestError::Read { .. })
        ));
        for e in [
            parse("{\n", path),
            parse("{\"schema\":\n\"mcp-witness.audit/v1\"}", path),
        ] {
            let message = e
                .map(|_| ())
                .map_err(|e| e.to_string())
                .err()
                .unwrap_or_default();
            assert!(!message.is_empty() && !message.contains('\n'), "{message}");
        }
    }
}
