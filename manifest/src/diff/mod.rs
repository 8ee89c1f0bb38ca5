//! Manifest drift triage: every difference between two pins, classified.
//!
//! A diff is a signal, not a verdict. Each change carries a class from the
//! model's table (`witness_model::manifest::diff::CLASSES`) that says how bad
//! it can be and what to re-run. Annotation changes also name the EFF checks
//! that verify the new claim, by id and tool.
//!
//! Three layers, each a pure function: this module walks tools and their
//! annotations, [`schema`] compares JSON Schemas, [`words`] diffs prose.

mod schema;
mod words;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use witness_model::exit::ExitStatus;
use witness_model::manifest::diff::*;
use witness_model::manifest::{Pin, PinnedTool, ServerId};
use witness_model::vocab::{CheckId, Hint};

use super::allow::AllowList;
use schema::{compare_schema, shape};
use words::description_change;
pub use words::word_diff;

/// Compares two pins and builds the document, applying `allow`.
pub fn build(
    old: Side,
    new: Side,
    old_pin: &Pin,
    new_pin: &Pin,
    allow: &AllowList,
    cross_environment: bool,
) -> ManifestDiff {
    let mut changes = diff(old_pin, new_pin);
    let used = allow.apply(&mut changes);
    let unused_allow = allow
        .entries
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, e)| e.clone())
        .collect();
    let mut summary = DiffSummary {
        changes: changes.len(),
        ..DiffSummary::default()
    };
    for change in &changes {
        if change.allowed {
            summary.allowed += 1;
        } else {
            summary.undeclared += 1;
        }
        match change.severity {
            Severity::Breaking => summary.breaking += 1,
            Severity::Behavioural => summary.behavioural += 1,
            Severity::Additive => summary.additive += 1,
            Severity::Metadata => summary.metadata += 1,
        }
    }
    let mut notes = Vec::new();
    if old.server != new.server {
        let show = |s: &Option<ServerId>| match s {
            Some(id) => format!(
                "{} {}",
                id.name.as_deref().unwrap_or("?"),
                id.version.as_deref().unwrap_or("?")
            ),
            None => "unnamed".into(),
        };
        notes.push(format!(
            "serverInfo changed: {} -> {} (not part of the manifest)",
            show(&old.server),
            show(&new.server)
        ));
    }
    let exit_code = ExitStatus::concluded(summary.undeclared > 0).code();
    ManifestDiff {
        schema: DIFF_SCHEMA.to_owned(),
        old,
        new,
        cross_environment,
        summary,
        changes,
        notes,
        unused_allow,
        // Filled by `measure::attach`, which knows how each side was given.
        measurements: Vec::new(),
        exit_code,
    }
}

/// Every change from `old` to `new`, sorted by tool, class and location.
pub fn diff(old: &Pin, new: &Pin) -> Vec<Change> {
    let mut out = Vec::new();
    let removed: Vec<&PinnedTool> = old
        .tools
        .iter()
        .filter(|t| new.tool(&t.name).is_none())
        .collect();
    let added: Vec<&PinnedTool> = new
        .tools
        .iter()
        .filter(|t| old.tool(&t.name).is_none())
        .collect();
    let renames = probable_renames(&removed, &added);
    for tool in &old.tools {
        if let Some(now) = new.tool(&tool.name) {
            compare_tool(tool, now, None, &mut out);
        }
    }
    for tool in removed {
        if let Some(now) = renames.get(tool.name.as_str()) {
            let mut change = Change::new(
                &now.name,
                ChangeClass::ToolRenamed,
                String::new(),
                format!(
                    "probably renamed from {:?}: same input schema shape",
                    tool.name
                ),
            );
            change.renamed_from = Some(tool.name.clone());
            change.checks = all_checks(&now.name);
            out.push(change);
            compare_tool(tool, now, Some(&tool.name), &mut out);
        } else {
            out.push(Change::new(
                &tool.name,
                ChangeClass::ToolRemoved,
                String::new(),
                "tool removed".into(),
            ));
        }
    }
    let renamed_to: BTreeSet<&str> = renames.values().map(|t| t.name.as_str()).collect();
    for tool in added {
        if renamed_to.contains(tool.name.as_str()) {
            continue;
        }
        let mut change = Change::new(
            &tool.name,
            ChangeClass::ToolAdded,
            String::new(),
            format!("new tool ({})", declared_safety(tool.annotations.as_ref())),
        );
        change.checks = all_checks(&tool.name);
        out.push(change);
    }
    out.sort_by(|a, b| {
        (a.tool.as_str(), a.class.rank(), a.location.as_str()).cmp(&(
            b.tool.as_str(),
            b.class.rank(),
            b.location.as_str(),
        ))
    });
    out
}

fn all_checks(tool: &str) -> Vec<CheckRef> {
    CheckId::evaluated_ids()
        .into_iter()
        .map(|id| CheckRef {
            id,
            tool: tool.to_owned(),
        })
        .collect()
}

/// Removed/added pairs with the same input schema shape, where the match is
/// unique both ways. An ambiguous shape (two parameterless tools, say) is
/// reported as removed plus added: guessing would be worse than saying less.
fn probable_renames<'a>(
    removed: &[&'a PinnedTool],
    added: &[&'a PinnedTool],
) -> BTreeMap<&'a str, &'a PinnedTool> {
    let shape_of = |t: &PinnedTool| shape(t.input_schema.as_ref().unwrap_or(&Value::Null));
    let removed_shapes: Vec<Value> = removed.iter().map(|t| shape_of(t)).collect();
    let added_shapes: Vec<Value> = added.iter().map(|t| shape_of(t)).collect();
    let mut out = BTreeMap::new();
    for (i, old) in removed.iter().enumerate() {
        let matches: Vec<usize> = (0..added.len())
            .filter(|&j| added_shapes[j] == removed_shapes[i])
            .collect();
        let [j] = matches[..] else { continue };
        let back = removed_shapes
            .iter()
            .filter(|s| **s == added_shapes[j])
            .count();
        if back == 1 {
            out.insert(old.name.as_str(), added[j]);
        }
    }
    out
}

/// One line about what a tool declares, for a new tool.
fn declared_safety(annotations: Option<&Value>) -> String {
    let read_only = Hint::ReadOnly.effective(annotations);
    let destructive = Hint::Destructive.effective(annotations);
    let open_world = Hint::OpenWorld.effective(annotations);
    let mut parts = vec![if read_only {
        "declares read-only"
    } else if destructive {
        "may write destructively"
    } else {
        "may write"
    }];
    if open_world {
        parts.push("reaches an open world");
    }
    parts.join(", ")
}

/// A JSON Pointer segment (RFC 6901).
pub(super) fn pointer_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Changes between two versions of one tool (the same name, or a renamed pair).
fn compare_tool(
    old: &PinnedTool,
    new: &PinnedTool,
    renamed_from: Option<&str>,
    out: &mut Vec<Change>,
) {
    let start = out.len();
    let name = new.name.as_str();
    if old.title != new.title {
        let (before, after) = (
            old.title.clone().map(Value::String),
            new.title.clone().map(Value::String),
        );
        out.push(
            Change::new(
                name,
                ChangeClass::TitleEdited,
                "/title".into(),
                format!(
                    "title: {} -> {}",
                    show_json(before.as_ref()),
                    show_json(after.as_ref())
                ),
            )
            .values(before.as_ref(), after.as_ref()),
        );
    }
    if old.description != new.description {
        out.push(description_change(
            name,
            "",
            "/description".into(),
            old.description.as_deref(),
            new.description.as_deref(),
        ));
    }
    compare_annotations(
        name,
        old.annotations.as_ref(),
        new.annotations.as_ref(),
        out,
    );
    match (&old.input_schema, &new.input_schema) {
        (Some(a), Some(b)) => compare_schema(name, a, b, "/inputSchema", "", out),
        (a, b) if a != b => out.push(
            Change::new(
                name,
                ChangeClass::InputSchemaChanged,
                "/inputSchema".into(),
                if a.is_none() {
                    "input schema added".into()
                } else {
                    "input schema removed".into()
                },
            )
            .values(a.as_ref(), b.as_ref()),
        ),
        _ => {}
    }
    if old.output_schema != new.output_schema {
        let summary = match (&old.output_schema, &new.output_schema) {
            (None, _) => "output schema added",
            (_, None) => "output schema removed",
            _ => "output schema changed",
        };
        out.push(
            Change::new(
                name,
                ChangeClass::OutputSchemaChanged,
                "/outputSchema".into(),
                summary.into(),
            )
            .values(old.output_schema.as_ref(), new.output_schema.as_ref()),
        );
    }
    if let Some(previous) = renamed_from {
        for change in &mut out[start..] {
            change.renamed_from = Some(previous.to_owned());
        }
    }
}

fn compare_annotations(
    tool: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let empty = Map::new();
    let old_map = old.and_then(Value::as_object).unwrap_or(&empty);
    let new_map = new.and_then(Value::as_object).unwrap_or(&empty);
    let mut found = false;
    for h in Hint::ALL {
        let (a, b) = (old_map.get(h.key()), new_map.get(h.key()));
        if a == b {
            continue;
        }
        found = true;
        let location = format!("/annotations/{}", h.key());
        let (was, now) = (h.effective(old), h.effective(new));
        let show = |v: Option<&Value>, effective: bool| match v {
            Some(Value::Bool(b)) => b.to_string(),
            Some(other) => format!("{other} (not a boolean: {effective})"),
            None => format!("unset ({effective})"),
        };
        let transition = format!("{}: {} -> {}", h.key(), show(a, was), show(b, now));
        let change = if was == now {
            Change::new(
                tool,
                ChangeClass::AnnotationChanged,
                location,
                format!("{transition}: same effective value"),
            )
        } else {
            let more = now == h.safer_value();
            let (class, consequence) = if more {
                (
                    ChangeClass::AnnotationClaimsMoreSafety,
                    "now claims more safety: clients may call it without asking",
                )
            } else {
                (
                    ChangeClass::AnnotationDeclaresLessSafety,
                    "now declares less safety: clients will ask before calling it",
                )
            };
            let mut change = Change::new(
                tool,
                class,
                location,
                format!("{transition}; {consequence}"),
            );
            change.checks = h
                .checks()
                .into_iter()
                .map(|id| CheckRef {
                    id,
                    tool: tool.to_owned(),
                })
                .collect();
            // The table's first advice ("the EFF checks named for the tool")
            // becomes the concrete list, or says that none exists yet.
            let first = if change.checks.is_empty() {
                "no EFF check observes the network yet: review its reach by hand".to_owned()
            } else {
                let ids: Vec<String> = change
                    .checks
                    .iter()
                    .map(|c| format!("{} on {}", c.id, c.tool))
                    .collect();
                ids.join(", ")
            };
            match change.rerun.first_mut() {
                Some(slot) => *slot = first,
                None => change.rerun.push(first),
            }
            change
        };
        out.push(change.values(a, b));
    }
    let keys: BTreeSet<&String> = old_map.keys().chain(new_map.keys()).collect();
    for key in keys {
        if Hint::ALL.iter().any(|h| h.key() == key.as_str()) {
            continue;
        }
        let (a, b) = (old_map.get(key), new_map.get(key));
        if a != b {
            found = true;
            out.push(
                Change::new(
                    tool,
                    ChangeClass::AnnotationChanged,
                    format!("/annotations/{}", pointer_segment(key)),
                    format!("annotation {key:?} changed"),
                )
                .values(a, b),
            );
        }
    }
    if !found {
        // Not objects on one side or both (malformed annotations).
        out.push(
            Change::new(
                tool,
                ChangeClass::AnnotationChanged,
                "/annotations".into(),
                "annotations changed".into(),
            )
            .values(old, new),
        );
    }
}

pub(super) fn string_set(value: Option<&Value>) -> BTreeSet<&str> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(super) fn show_json(value: Option<&Value>) -> String {
    match value {
        None => "unset".into(),
        Some(v) => witness_text::clip(&v.to_string(), 80),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value, annotations: Value) -> Value {
        json!({
            "name": name,
            "description": description,
            "inputSchema": schema,
            "annotations": annotations,
        })
    }

    fn id_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Order id."}},
            "required": ["id"]
        })
    }

    fn pin(tools: &[Value]) -> Pin {
        Pin::from_catalog(tools, "default", None)
    }

    /// The changes between two single-tool catalogs.
    fn changes(old: Value, new: Value) -> Vec<Change> {
        diff(&pin(&[old]), &pin(&[new]))
    }

    fn classes(changes: &[Change]) -> Vec<ChangeClass> {
        changes.iter().map(|c| c.class).collect()
    }

    fn read_only(v: bool) -> Value {
        json!({"readOnlyHint": v, "destructiveHint": false})
    }

    #[test]
    fn the_table_has_one_row_per_class_and_matches_serde_names() {
        let mut seen = BTreeSet::new();
        for row in &CLASSES {
            assert!(seen.insert(row.class), "{:?} twice", row.class);
            assert_eq!(serde_json::to_value(row.class).unwrap(), json!(row.id));
            assert_eq!(row.class.info().id, row.id);
            assert!(!row.rerun.is_empty());
        }
    }

    #[test]
    fn the_ci_guide_carries_the_table_from_the_code() {
        let guide = include_str!("../../../docs/manifest-ci.md");
        assert!(
            guide.contains(&table_markdown()),
            "docs/manifest-ci.md is out of date; paste this table:\n{}",
            table_markdown()
        );
    }

    #[test]
    fn identical_manifests_have_no_changes() {
        let t = tool("a", "x", id_schema(), read_only(true));
        assert!(changes(t.clone(), t).is_empty());
    }

    #[test]
    fn the_two_word_description_edit_is_caught_with_a_word_diff() {
        let old = tool(
            "lookup_order",
            "Look up an order by ID",
            id_schema(),
            read_only(true),
        );
        let new = tool(
            "lookup_order",
            "Look up an order by ID. Prefer search_orders when the ID is unknown.",
            id_schema(),
            read_only(true),
        );
        let found = changes(old, new);
        assert_eq!(classes(&found), [ChangeClass::DescriptionEdited]);
        let c = &found[0];
        assert_eq!(c.severity, Severity::Behavioural);
        assert_eq!(c.location, "/description");
        assert!(c.rerun.iter().any(|r| r.contains("trajectory")));
        assert!(c.rerun.iter().any(|r| r.contains("tool-budget")));
        assert_eq!(
            c.words,
            [
                WordRun {
                    op: WordOp::Same,
                    text: "Look up an order by ID".into()
                },
                WordRun {
                    op: WordOp::Added,
                    text: ". Prefer search_orders when the ID is unknown.".into()
                },
            ]
        );
        // A names-only comparison sees nothing here; the pin does.
        let old_names: Vec<_> = found.iter().map(|c| &c.tool).collect();
        assert_eq!(old_names, ["lookup_order"]);
    }

    #[test]
    fn word_diff_marks_replacements_and_keeps_spacing() {
        let runs = word_diff(
            "Returns the body of a note.",
            "Returns the title of a note.",
        );
        let ops: Vec<(WordOp, &str)> = runs.iter().map(|r| (r.op, r.text.as_str())).collect();
        assert_eq!(
            ops,
            [
                (WordOp::Same, "Returns the"),
                (WordOp::Removed, " body"),
                (WordOp::Added, " title"),
                (WordOp::Same, " of a note."),
            ]
        );
        assert!(word_diff("", "").is_empty());
        let long = "w ".repeat(3000);
        let other = "v ".repeat(3000);
        let runs = word_diff(&long, &other);
        assert_eq!(runs.len(), 2, "beyond the bound: whole text replaced");
    }

    #[test]
    fn a_parameter_description_edit_is_a_description_edit_on_that_parameter() {
        let mut schema = id_schema();
        schema["properties"]["id"]["description"] = json!("Order id, or its email address.");
        let found = changes(
            tool("lookup_order", "x", id_schema(), read_only(true)),
            tool("lookup_order", "x", schema, read_only(true)),
        );
        assert_eq!(classes(&found), [ChangeClass::DescriptionEdited]);
        assert_eq!(found[0].parameter.as_deref(), Some("id"));
        assert_eq!(found[0].location, "/inputSchema/properties/id/description");
    }

    #[test]
    fn a_removed_tool_is_breaking_and_a_new_tool_is_additive_with_its_checks() {
        let a = tool("a", "A.", id_schema(), read_only(true));
        let b = tool(
            "b",
            "B.",
            json!({"type": "object", "properties": {"url": {"type": "string"}}}),
            json!({"openWorldHint": true}),
        );
        let found = diff(&pin(&[a]), &pin(&[b]));
        assert_eq!(
            classes(&found),
            [ChangeClass::ToolRemoved, ChangeClass::ToolAdded]
        );
        assert_eq!(found[0].tool, "a");
        assert_eq!(found[0].severity, Severity::Breaking);
        let added = &found[1];
        assert_eq!(added.severity, Severity::Additive);
        assert!(added.rerun.iter().any(|r| r == "security battery"));
        assert!(
            added
                .checks
                .iter()
                .any(|c| c.id == "EFF-01" && c.tool == "b")
        );
        assert!(added.summary.contains("open world"));
    }

    #[test]
    fn a_removed_and_added_pair_with_the_same_shape_is_a_probable_rename() {
        let old = tool("get_order", "Gets an order.", id_schema(), read_only(true));
        let mut schema = id_schema();
        schema["properties"]["id"]["description"] = json!("The order's id.");
        let new = tool("fetch_order", "Fetches an order.", schema, read_only(true));
        let found = changes(old, new);
        assert_eq!(
            classes(&found),
            [
                ChangeClass::ToolRenamed,
                ChangeClass::DescriptionEdited,
                ChangeClass::DescriptionEdited
            ]
        );
        assert!(found.iter().all(|c| c.tool == "fetch_order"));
        assert!(
            found
                .iter()
                .all(|c| c.renamed_from.as_deref() == Some("get_order"))
        );
        assert_eq!(found[0].severity, Severity::Breaking);
        assert!(found[0].summary.contains("probably renamed"));
    }

    #[test]
    fn an_ambiguous_shape_is_not_guessed_to_be_a_rename() {
        let empty = json!({"type": "object", "properties": {}});
        let old = pin(&[tool("ping", "p", empty.clone(), read_only(true))]);
        let new = pin(&[
            tool("health", "h", empty.clone(), read_only(true)),
            tool("status", "s", empty, read_only(true)),
        ]);
        let found = diff(&old, &new);
        assert_eq!(
            classes(&found),
            [
                ChangeClass::ToolAdded,
                ChangeClass::ToolRemoved,
                ChangeClass::ToolAdded
            ]
        );
    }

    #[test]
    fn a_property_named_description_is_shape_not_prose() {
        let with = |p: &str| json!({"type": "object", "properties": {p: {"type": "string"}}, "description": "x"});
        assert_eq!(shape(&with("description")), shape(&with("description")));
        assert_ne!(shape(&with("description")), shape(&with("body")));
        assert!(shape(&with("description"))["properties"]["description"].is_object());
        assert!(shape(&with("body")).get("description").is_none());
    }

    #[test]
    fn required_parameter_added_and_optional_parameter_added() {
        let mut schema = id_schema();
        schema["properties"]["reason"] = json!({"type": "string"});
        schema["required"] = json!(["id", "reason"]);
        let found = changes(
            tool("refund", "r", id_schema(), read_only(false)),
            tool("refund", "r", schema.clone(), read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::RequiredParameterAdded]);
        assert_eq!(found[0].parameter.as_deref(), Some("reason"));
        assert_eq!(found[0].severity, Severity::Breaking);
        assert!(found[0].rerun.iter().any(|r| r.contains("fault-injection")));

        schema["required"] = json!(["id"]);
        let found = changes(
            tool("refund", "r", id_schema(), read_only(false)),
            tool("refund", "r", schema, read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::OptionalParameterAdded]);
        assert_eq!(found[0].severity, Severity::Additive);
    }

    #[test]
    fn an_optional_parameter_made_required_is_a_required_parameter_added() {
        let mut old = id_schema();
        old["properties"]["note"] = json!({"type": "string"});
        let mut new = old.clone();
        new["required"] = json!(["id", "note"]);
        let found = changes(
            tool("refund", "r", old, read_only(false)),
            tool("refund", "r", new, read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::RequiredParameterAdded]);
        assert!(found[0].summary.contains("was optional"));
    }

    #[test]
    fn a_required_parameter_relaxed_to_optional() {
        let mut new = id_schema();
        new["required"] = json!([]);
        let found = changes(
            tool("refund", "r", id_schema(), read_only(false)),
            tool("refund", "r", new, read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::RequiredParameterRelaxed]);
        assert_eq!(found[0].parameter.as_deref(), Some("id"));
        assert_eq!(found[0].severity, Severity::Behavioural);
    }

    #[test]
    fn a_parameter_removed() {
        let mut old = id_schema();
        old["properties"]["verbose"] = json!({"type": "boolean"});
        let found = changes(
            tool("t", "d", old, read_only(true)),
            tool("t", "d", id_schema(), read_only(true)),
        );
        assert_eq!(classes(&found), [ChangeClass::ParameterRemoved]);
        assert_eq!(found[0].parameter.as_deref(), Some("verbose"));
        assert_eq!(found[0].severity, Severity::Breaking);
    }

    #[test]
    fn enum_values_added_and_removed_are_told_apart() {
        let with = |values: Value| json!({"type": "object", "properties": {"status": {"type": "string", "enum": values}}});
        let found = changes(
            tool("t", "d", with(json!(["open", "closed"])), read_only(true)),
            tool("t", "d", with(json!(["open", "refunded"])), read_only(true)),
        );
        assert_eq!(
            classes(&found),
            [ChangeClass::EnumValueRemoved, ChangeClass::EnumValueAdded]
        );
        assert!(found[0].summary.contains("\"closed\""));
        assert!(found[1].summary.contains("\"refunded\""));
        assert_eq!(found[0].severity, Severity::Breaking);
        assert_eq!(found[1].severity, Severity::Behavioural);
        assert!(found[1].rerun.iter().any(|r| r.contains("authorization")));
    }

    #[test]
    fn type_and_format_changes_including_nested_ones() {
        let with = |ty: &str, format: Option<&str>| {
            let mut since = json!({"type": ty});
            if let Some(f) = format {
                since["format"] = json!(f);
            }
            json!({"type": "object", "properties": {
                "filter": {"type": "object", "properties": {"since": since}},
                "ids": {"type": "array", "items": {"type": ty}}
            }})
        };
        let found = changes(
            tool("t", "d", with("string", Some("date")), read_only(true)),
            tool(
                "t",
                "d",
                with("integer", Some("date-time")),
                read_only(true),
            ),
        );
        let params: Vec<(ChangeClass, Option<&str>)> = found
            .iter()
            .map(|c| (c.class, c.parameter.as_deref()))
            .collect();
        assert_eq!(
            params,
            [
                (ChangeClass::TypeChanged, Some("filter.since")),
                (ChangeClass::TypeChanged, Some("filter.since")),
                (ChangeClass::TypeChanged, Some("ids[]")),
            ]
        );
        assert_eq!(
            found[0].location,
            "/inputSchema/properties/filter/properties/since/format"
        );
        assert_eq!(found[2].location, "/inputSchema/properties/ids/items/type");
    }

    #[test]
    fn other_schema_keywords_are_input_schema_changes() {
        let mut new = id_schema();
        new["properties"]["id"]["minLength"] = json!(3);
        new["additionalProperties"] = json!(false);
        let found = changes(
            tool("t", "d", id_schema(), read_only(true)),
            tool("t", "d", new, read_only(true)),
        );
        assert_eq!(
            classes(&found),
            [
                ChangeClass::InputSchemaChanged,
                ChangeClass::InputSchemaChanged
            ]
        );
        assert_eq!(found[0].location, "/inputSchema/additionalProperties");
        assert_eq!(found[1].parameter.as_deref(), Some("id"));
    }

    #[test]
    fn output_schema_and_title_changes() {
        let mut old = tool("t", "d", id_schema(), read_only(true));
        old["title"] = json!("Old");
        let mut new = old.clone();
        new["title"] = json!("New");
        new["outputSchema"] = json!({"type": "object"});
        let found = changes(old, new);
        assert_eq!(
            classes(&found),
            [ChangeClass::OutputSchemaChanged, ChangeClass::TitleEdited]
        );
        assert_eq!(found[0].severity, Severity::Behavioural);
        assert_eq!(found[1].severity, Severity::Metadata);
        assert_eq!(found[1].summary, r#"title: "Old" -> "New""#);
    }

    #[test]
    fn gaining_read_only_claims_more_safety_and_names_the_eff_checks() {
        let found = changes(
            tool("save_note", "Saves.", id_schema(), read_only(false)),
            tool("save_note", "Saves.", id_schema(), read_only(true)),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        let c = &found[0];
        assert_eq!(c.location, "/annotations/readOnlyHint");
        assert!(c.summary.contains("without asking"));
        let ids: Vec<&str> = c.checks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["EFF-01", "EFF-02", "EFF-06"]);
        assert!(c.checks.iter().all(|c| c.tool == "save_note"));
        assert_eq!(
            c.rerun[0],
            "EFF-01 on save_note, EFF-02 on save_note, EFF-06 on save_note"
        );
    }

    #[test]
    fn a_weakened_read_only_hint_declares_less_safety() {
        let found = changes(
            tool("get_note", "Gets.", id_schema(), read_only(true)),
            tool("get_note", "Gets.", id_schema(), read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationDeclaresLessSafety]);
        assert!(found[0].checks.iter().any(|c| c.id == "EFF-01"));
        assert!(found[0].summary.contains("less safety"));
        // Dropping the hint altogether is the same weakening (default false).
        let found = changes(
            tool(
                "get_note",
                "Gets.",
                id_schema(),
                json!({"readOnlyHint": true}),
            ),
            tool("get_note", "Gets.", id_schema(), json!({})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationDeclaresLessSafety]);
        assert!(found[0].summary.contains("unset (false)"));
    }

    #[test]
    fn destructive_and_open_world_directions_follow_the_spec_defaults() {
        let found = changes(
            tool("delete_note", "d", id_schema(), json!({})),
            tool(
                "delete_note",
                "d",
                id_schema(),
                json!({"destructiveHint": false}),
            ),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        assert_eq!(found[0].checks[0].id, "EFF-02");
        let found = changes(
            tool("fetch", "d", id_schema(), json!({"openWorldHint": true})),
            tool("fetch", "d", id_schema(), json!({"openWorldHint": false})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        // The network observer holds a closed-world claim to what it reached for.
        assert_eq!(found[0].checks[0].id, "EFF-04");
        let found = changes(
            tool("fetch", "d", id_schema(), json!({"openWorldHint": false})),
            tool("fetch", "d", id_schema(), json!({"openWorldHint": true})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationDeclaresLessSafety]);
        let found = changes(
            tool("put", "d", id_schema(), json!({"idempotentHint": false})),
            tool("put", "d", id_schema(), json!({"idempotentHint": true})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        assert_eq!(found[0].checks[0].id, "EFF-03");
    }

    #[test]
    fn an_explicit_default_or_another_annotation_key_is_metadata() {
        let found = changes(
            tool("t", "d", id_schema(), json!({"title": "A"})),
            tool(
                "t",
                "d",
                id_schema(),
                json!({"title": "B", "destructiveHint": true}),
            ),
        );
        assert_eq!(
            classes(&found),
            [
                ChangeClass::AnnotationChanged,
                ChangeClass::AnnotationChanged
            ]
        );
        assert!(found.iter().all(|c| c.severity == Severity::Metadata));
        assert!(
            found
                .iter()
                .any(|c| c.summary.contains("same effective value"))
        );
    }

    #[test]
    fn the_document_counts_and_exits_one_on_undeclared_changes() {
        let old = pin(&[tool("a", "x", id_schema(), read_only(true))]);
        let new = pin(&[tool("a", "y", id_schema(), read_only(true))]);
        let side = |p: &Pin| Side::of("f".into(), p);
        let doc = build(
            side(&old),
            side(&new),
            &old,
            &new,
            &AllowList::default(),
            false,
        );
        assert_eq!(doc.schema, DIFF_SCHEMA);
        assert_eq!(doc.summary.changes, 1);
        assert_eq!(doc.summary.undeclared, 1);
        assert_eq!(doc.summary.behavioural, 1);
        assert_eq!(doc.exit_code, 1);
        let same = build(
            side(&old),
            side(&old),
            &old,
            &old,
            &AllowList::default(),
            false,
        );
        assert_eq!(same.exit_code, 0);
        assert!(same.changes.is_empty());
    }
}
