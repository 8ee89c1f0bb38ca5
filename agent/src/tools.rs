//! The tool definitions a model is handed: a separate input of every run.
//!
//! By default they are the server's own `tools/list` — names, descriptions,
//! input schemas — as any MCP host passes them; [`from_pin`] hands a pinned
//! manifest's instead, while the calls still go to the live server, so two
//! runs can differ in the definitions alone. Whether annotations are
//! forwarded is a choice every client makes; neither model API has a field
//! for them, so forwarding appends a line to the description. The
//! definitions are fingerprinted, so two runs can tell whether their model
//! saw the same tools.

use serde_json::{Value, json};
use witness_model::agent::trace::DeclaredTool;
use witness_model::agent::{HandedManifest, HandedTools, ToolDefinition};
use witness_model::manifest::{Pin, canonical};
use witness_model::vocab::Hint;

/// What a client hands its model, from a served catalog.
pub fn from_catalog(catalog: &[Value], forward_annotations: bool) -> HandedTools {
    let definitions: Vec<ToolDefinition> = catalog
        .iter()
        .map(|tool| definition(tool, forward_annotations))
        .collect();
    HandedTools {
        source: "server".into(),
        manifest: None,
        annotations_forwarded: forward_annotations,
        fingerprint: fingerprint(&definitions),
        definitions,
    }
}

/// What a client would hand its model from a pinned manifest: each pinned
/// tool read exactly as a served one (a pin keeps the wire's field names),
/// in the pin's order (sorted by name) until [`in_served_order`] puts them
/// in the order a server lists its tools.
pub fn from_pin(pin: &Pin, file: &str, forward_annotations: bool) -> HandedTools {
    let catalog: Vec<Value> = pin
        .tools
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .collect();
    HandedTools {
        source: "manifest".into(),
        manifest: Some(HandedManifest {
            file: file.to_owned(),
            environment: pin.environment.clone(),
            fingerprint: pin.fingerprint.short.clone(),
        }),
        ..from_catalog(&catalog, forward_annotations)
    }
}

fn definition(tool: &Value, forward_annotations: bool) -> ToolDefinition {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    if forward_annotations && let Some(line) = annotations_line(tool.get("annotations")) {
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str(&line);
    }
    let input_schema = match tool.get("inputSchema") {
        Some(schema @ Value::Object(_)) => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    };
    ToolDefinition {
        name,
        description,
        input_schema,
    }
}

/// The definitions in the order `catalog` lists its tools, those it does not
/// list after them (in their own order), and the fingerprint recomputed. A
/// pin keeps no listing order, on purpose; a model reads its tools in order,
/// so a pinned manifest compared with the live one is handed in the live
/// order, and the two runs differ in content alone.
pub fn in_served_order(mut handed: HandedTools, catalog: &[Value]) -> HandedTools {
    let position = |name: &str| {
        catalog
            .iter()
            .position(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
            .unwrap_or(usize::MAX)
    };
    // A stable sort: tools the server does not list keep the pin's order.
    handed.definitions.sort_by_key(|d| position(&d.name));
    handed.fingerprint = fingerprint(&handed.definitions);
    handed
}

/// `Annotations: readOnlyHint=false, destructiveHint=true`, for the hints the
/// server declared (booleans only), in the specification's order.
fn annotations_line(annotations: Option<&Value>) -> Option<String> {
    let declared: Vec<String> = Hint::ALL
        .into_iter()
        .filter_map(|h| h.declared(annotations).map(|v| format!("{}={v}", h.key())))
        .collect();
    (!declared.is_empty()).then(|| format!("Annotations: {}", declared.join(", ")))
}

/// `blake3:` and 64 hex digits over the canonical JSON of the definitions.
pub fn fingerprint(definitions: &[ToolDefinition]) -> String {
    let value = serde_json::to_value(definitions).unwrap_or(Value::Null);
    let text = canonical(&value).to_string();
    format!("blake3:{}", blake3::hash(text.as_bytes()).to_hex())
}

/// The catalog as the trace records it: names and annotations as served.
pub fn declared(catalog: &[Value]) -> Vec<DeclaredTool> {
    catalog
        .iter()
        .map(|tool| DeclaredTool {
            name: tool
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            annotations: tool.get("annotations").filter(|a| !a.is_null()).cloned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Vec<Value> {
        vec![json!({
            "name": "delete_contact",
            "description": " Deletes. Confirm first. ",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "title": "x"}
        })]
    }

    #[test]
    fn annotations_are_forwarded_only_when_asked_and_change_the_fingerprint() {
        let plain = from_catalog(&catalog(), false);
        assert_eq!(plain.definitions[0].description, "Deletes. Confirm first.");
        let forwarded = from_catalog(&catalog(), true);
        assert_eq!(
            forwarded.definitions[0].description,
            "Deletes. Confirm first.\n\nAnnotations: readOnlyHint=false, destructiveHint=true"
        );
        assert_ne!(plain.fingerprint, forwarded.fingerprint);
        assert_eq!(
            plain.fingerprint,
            from_catalog(&catalog(), false).fingerprint
        );
        assert!(plain.fingerprint.starts_with("blake3:") && plain.fingerprint.len() == 71);
    }

    #[test]
    fn a_pin_hands_what_the_server_it_pinned_would_have_handed() {
        let mut listed = catalog();
        listed.push(json!({"name": "create_contact", "description": "Creates."}));
        listed.push(json!({"name": "archive", "description": "Archives."}));
        let pin = Pin::from_catalog(&listed, "staging", None);
        let pinned = from_pin(&pin, "manifests/staging.json", true);
        let names = |h: &HandedTools| -> Vec<String> {
            h.definitions.iter().map(|d| d.name.clone()).collect()
        };
        assert_eq!(
            names(&pinned),
            ["archive", "create_contact", "delete_contact"]
        );
        let served = from_catalog(&listed, true);
        let ordered = in_served_order(pinned, &listed);
        assert_eq!(ordered.definitions, served.definitions);
        assert_eq!(ordered.fingerprint, served.fingerprint);
        // A tool the server no longer lists is still handed, after the rest.
        let shorter = in_served_order(ordered.clone(), &listed[1..2]);
        assert_eq!(
            names(&shorter),
            ["create_contact", "delete_contact", "archive"]
        );
        let pinned = ordered;
        assert_eq!(pinned.source, "manifest");
        let recorded = pinned.manifest.expect("the manifest is recorded");
        assert_eq!(recorded.fingerprint, pin.fingerprint.short);
        assert_eq!(
            (recorded.file.as_str(), recorded.environment.as_str()),
            ("manifests/staging.json", "staging")
        );
    }

    #[test]
    fn a_tool_without_a_schema_gets_an_empty_object_schema() {
        let handed = from_catalog(&[json!({"name": "ping"})], true);
        assert_eq!(
            handed.definitions[0].input_schema,
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(handed.definitions[0].description, "");
        assert_eq!(declared(&[json!({"name": "ping"})])[0].annotations, None);
    }
}
