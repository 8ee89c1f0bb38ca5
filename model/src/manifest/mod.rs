//! Manifest pins (`mcp-witness.manifest/v1`): the tool catalog an agent is
//! handed, frozen and fingerprinted; [`diff`] holds the drift document.
//!
//! A `tools/list` answer is prompt text written by someone else and fetched at
//! run time, so it can change without any commit of ours. A *pin* is that
//! catalog normalized into a stable, reviewable file (`mcp-witness.manifest/v1`)
//! with a fingerprint over its content; [`diff`] classifies what changed
//! between two of them.
//!
//! Normalization, precisely (it decides what a pin can and cannot see):
//! - tools are sorted by name, so the order a server lists them in (or how it
//!   pages them) never shows up as a change;
//! - `description` is trimmed of leading and trailing whitespace and otherwise
//!   kept verbatim; a blank or absent description is omitted;
//! - `title`, `inputSchema`, `outputSchema` and `annotations` are kept
//!   verbatim (object keys sorted, values untouched); an empty `annotations`
//!   object is the same as none;
//! - volatile wire metadata is removed **by location only**: the tool's own
//!   top-level `_meta` and the `_meta` directly inside `annotations`. A
//!   property called `_meta` inside a schema is content and is kept. Page
//!   level data (`nextCursor`, the result's `_meta`) never enters a tool;
//! - other top-level tool fields (`icons`, `execution`, future ones) are not
//!   pinned: they are not part of what the model reads. This is a stated
//!   limit, listed in `docs/manifest-ci.md`.
//!
//! Everything is sorted and nothing is timestamped, so pinning an unchanged
//! server twice gives byte-identical files.

pub mod diff;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use witness_text::clip;

/// The versioned name of a pin document.
pub const PIN_SCHEMA: &str = "mcp-witness.manifest/v1";
/// The environment a pin belongs to when none is named.
pub const DEFAULT_ENVIRONMENT: &str = "default";
/// Hex digits of the fingerprint shown to people (the file keeps all 64).
pub const SHORT_HEX: usize = 16;

/// Why a text is not a usable pin.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    #[error("not a usable manifest pin: {0}")]
    Unusable(String),
    #[error(
        "the stored fingerprint {stored} does not match its tools ({computed}); a pin is \
         generated, so re-pin the server instead of editing the file"
    )]
    FingerprintMismatch { stored: String, computed: String },
}

/// Who served the catalog, as its `serverInfo` said. Informational: it is not
/// part of the fingerprint, because a version bump with the same tools hands
/// the agent the same prompt.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerId {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl ServerId {
    /// Reads `name` and `version` from a `serverInfo` object, when they are strings.
    pub fn from_server_info(info: Option<&Value>) -> Option<Self> {
        let get = |key: &str| {
            info.and_then(|i| i.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let id = Self {
            name: get("name"),
            version: get("version"),
        };
        (id.name.is_some() || id.version.is_some()).then_some(id)
    }
}

/// A blake3 digest of the canonical JSON of the normalized tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fingerprint {
    /// All 64 hex digits.
    pub blake3: String,
    /// `blake3:` and the first 16 hex digits: what release notes record.
    pub short: String,
}

impl Fingerprint {
    /// The fingerprint of a list of tools that is already normalized and sorted.
    pub fn of(tools: &[PinnedTool]) -> Self {
        let value = tools_value(tools);
        let hex = blake3::hash(value.to_string().as_bytes())
            .to_hex()
            .to_string();
        let short = format!("blake3:{}", &hex[..SHORT_HEX]);
        Self { blake3: hex, short }
    }
}

/// One tool as pinned. Field names are the wire's, so a pin reads like the
/// `tools/list` entry it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PinnedTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Trimmed, otherwise verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// As served, minus its own `_meta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl PinnedTool {
    /// Normalizes one `tools/list` entry; `None` when it has no string name
    /// (the wire client already refuses such catalogs as incomplete).
    pub fn from_wire(tool: &Value) -> Option<Self> {
        let name = tool.get("name")?.as_str()?.to_owned();
        let annotations = match tool.get("annotations") {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => {
                let mut map = map.clone();
                // Location-based: only the annotations object's own `_meta`.
                map.remove("_meta");
                (!map.is_empty()).then(|| canonical(&Value::Object(map)))
            }
            Some(other) => Some(canonical(other)),
        };
        let kept = |key: &str| match tool.get(key) {
            None | Some(Value::Null) => None,
            Some(value) => Some(canonical(value)),
        };
        Some(Self {
            name,
            title: text_field(tool.get("title")),
            description: text_field(tool.get("description"))
                .map(|d| d.trim().to_owned())
                .filter(|d| !d.is_empty()),
            input_schema: kept("inputSchema"),
            output_schema: kept("outputSchema"),
            annotations,
        })
    }

    /// The same tool with every JSON value in canonical key order, so
    /// equality and hashing never depend on the order keys were written in.
    fn canonicalized(mut self) -> Self {
        for value in [
            &mut self.input_schema,
            &mut self.output_schema,
            &mut self.annotations,
        ]
        .into_iter()
        .flatten()
        {
            *value = canonical(value);
        }
        self
    }
}

/// A text field as served: a string verbatim; anything else that is not
/// null as its compact JSON, so a malformed value still shows up in a diff
/// instead of vanishing.
fn text_field(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(canonical(other).to_string()),
    }
}

/// A pinned manifest: the document `manifest pin` writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Always `mcp-witness.manifest/v1`.
    pub schema: String,
    /// Which environment this pin describes (`default` unless named).
    pub environment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerId>,
    pub fingerprint: Fingerprint,
    /// Sorted by name.
    pub tools: Vec<PinnedTool>,
}

impl Pin {
    /// Builds a pin from the tools exactly as served (a complete catalog).
    pub fn from_catalog(tools: &[Value], environment: &str, server: Option<ServerId>) -> Self {
        let tools: Vec<PinnedTool> = tools.iter().filter_map(PinnedTool::from_wire).collect();
        Self::from_tools(tools, environment, server)
    }

    /// Builds a pin from normalized tools in any order.
    pub fn from_tools(
        mut tools: Vec<PinnedTool>,
        environment: &str,
        server: Option<ServerId>,
    ) -> Self {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let fingerprint = Fingerprint::of(&tools);
        Self {
            schema: PIN_SCHEMA.to_owned(),
            environment: environment.to_owned(),
            server,
            fingerprint,
            tools,
        }
    }

    /// The file's text: canonical JSON (every object's keys sorted by code
    /// point), two-space indentation, one trailing newline.
    pub fn to_file_text(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text =
            serde_json::to_string_pretty(&canonical(&value)).unwrap_or_else(|_| "null".into());
        text.push('\n');
        text
    }

    /// Parses and verifies a pin: known schema, valid environment name, tools
    /// sorted by name without duplicates, and a fingerprint that matches.
    pub fn parse(text: &str) -> Result<Self, PinError> {
        let bad = PinError::Unusable;
        let value: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        match value.get("schema").and_then(Value::as_str) {
            Some(PIN_SCHEMA) => {}
            Some(other) => {
                return Err(bad(format!(
                    "schema {:?}, expected {PIN_SCHEMA:?}",
                    clip(other, 60)
                )));
            }
            None => return Err(bad(format!("no \"schema\": {PIN_SCHEMA:?}"))),
        }
        let pin: Pin = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
        validate_environment(&pin.environment).map_err(bad)?;
        let tools: Vec<PinnedTool> = pin
            .tools
            .iter()
            .cloned()
            .map(PinnedTool::canonicalized)
            .collect();
        for pair in tools.windows(2) {
            if pair[0].name >= pair[1].name {
                return Err(bad(format!(
                    "tools are not sorted by name or {:?} is listed twice",
                    clip(&pair[1].name, 80)
                )));
            }
        }
        let computed = Fingerprint::of(&tools);
        if computed != pin.fingerprint {
            return Err(PinError::FingerprintMismatch {
                stored: clip(&pin.fingerprint.short, 40),
                computed: computed.short,
            });
        }
        Ok(Pin { tools, ..pin })
    }

    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&PinnedTool> {
        self.tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.tools.get(i))
    }
}

/// An environment name: 1–64 of letters, digits, `.`, `_`, `-`. Kept strict so
/// that `manifests/<env>.json` is always a plain file name, and so that a
/// mistyped `--env KEY=VALUE` (the audit command's server variable syntax) is
/// refused instead of becoming an environment called `KEY=VALUE`.
pub fn validate_environment(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else if name.contains('=') {
        Err(format!(
            "environment name {:?} looks like a variable; pass server variables with --server-env K=V",
            clip(name, 40)
        ))
    } else {
        Err(format!(
            "environment name {:?}: use 1-64 letters, digits, '.', '_' or '-' (not starting with '.')",
            clip(name, 40)
        ))
    }
}

/// The tools as one canonical JSON value (what the fingerprint hashes).
fn tools_value(tools: &[PinnedTool]) -> Value {
    canonical(&serde_json::to_value(tools).unwrap_or(Value::Null))
}

/// A copy of `value` with every object's keys in code-point order. The
/// workspace builds serde_json with `preserve_order`, so order is otherwise
/// whatever the server sent; canonical form must not depend on it.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                if let Some(v) = map.get(key) {
                    out.insert(key.clone(), canonical(v));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn served() -> Vec<Value> {
        vec![
            json!({
                "name": "zeta",
                "description": "  Second tool.\n",
                "_meta": {"fetchedAt": "2026-01-01T00:00:00Z"},
                "inputSchema": {"type": "object", "properties": {"_meta": {"type": "string"}}},
                "annotations": {"readOnlyHint": true, "_meta": {"trace": "abc"}},
                "icons": [{"src": "https://example.invalid/x.png"}]
            }),
            json!({
                "inputSchema": {"properties": {"b": {"type": "string"}, "a": {"type": "integer"}}, "type": "object"},
                "name": "alpha",
                "title": "Alpha",
                "description": "First tool.",
                "outputSchema": {"type": "object"},
                "annotations": {"_meta": {"only": "meta"}}
            }),
        ]
    }

    #[test]
    fn normalization_sorts_trims_and_drops_meta_only_where_it_is_wire_metadata() {
        let pin = Pin::from_catalog(&served(), "default", None);
        let names: Vec<&str> = pin.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
        let zeta = pin.tool("zeta").unwrap();
        assert_eq!(zeta.description.as_deref(), Some("Second tool."));
        assert_eq!(zeta.annotations, Some(json!({"readOnlyHint": true})));
        // A schema property literally named `_meta` is content, not metadata.
        assert_eq!(
            zeta.input_schema.as_ref().unwrap()["properties"]["_meta"],
            json!({"type": "string"})
        );
        let alpha = pin.tool("alpha").unwrap();
        assert_eq!(
            alpha.annotations, None,
            "an annotations object of only _meta is none"
        );
        assert_eq!(alpha.title.as_deref(), Some("Alpha"));
        assert_eq!(alpha.output_schema, Some(json!({"type": "object"})));
        let text = pin.to_file_text();
        assert!(!text.contains("fetchedAt") && !text.contains("trace") && !text.contains("icons"));
    }

    #[test]
    fn a_pinned_schema_keeps_every_json_schema_2020_12_keyword() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object"}},
            "properties": {"address": {"$ref": "#/$defs/address"}, "phone": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["address"]}]}],
            "if": {"required": ["phone"]}, "then": {"required": ["address"]}, "else": {},
            "additionalProperties": false
        });
        let pin = Pin::from_catalog(
            &[json!({"name": "rich", "inputSchema": schema})],
            "default",
            None,
        );
        let read = Pin::parse(&pin.to_file_text()).unwrap();
        // Keys sorted (the pin is canonical), none lost or changed.
        assert_eq!(read.tool("rich").unwrap().input_schema, Some(schema));
    }

    #[test]
    fn the_file_is_canonical_and_independent_of_listing_and_key_order() {
        let mut reversed = served();
        reversed.reverse();
        let a = Pin::from_catalog(&served(), "default", None);
        let b = Pin::from_catalog(&reversed, "default", None);
        assert_eq!(a.to_file_text(), b.to_file_text());
        assert_eq!(a.fingerprint, b.fingerprint);
        let text = a.to_file_text();
        // Keys inside a schema come out sorted even though "b" was served first.
        let a_at = text.find("\"a\"").unwrap();
        let b_at = text.find("\"b\"").unwrap();
        assert!(a_at < b_at);
        assert!(text.ends_with("}\n"));
        assert!(a.fingerprint.short.starts_with("blake3:"));
        assert_eq!(a.fingerprint.short.len(), "blake3:".len() + SHORT_HEX);
        assert_eq!(a.fingerprint.blake3.len(), 64);
    }

    #[test]
    fn a_pin_round_trips_and_verifies_its_fingerprint() {
        let pin = Pin::from_catalog(&served(), "staging", None);
        let back = Pin::parse(&pin.to_file_text()).unwrap();
        assert_eq!(back, pin);
        let edited = pin
            .to_file_text()
            .replace("First tool.", "First tool, edited.");
        assert!(matches!(
            Pin::parse(&edited),
            Err(PinError::FingerprintMismatch { .. })
        ));
        let wrong = pin
            .to_file_text()
            .replace(PIN_SCHEMA, "mcp-witness.manifest/v9");
        assert!(matches!(Pin::parse(&wrong), Err(PinError::Unusable(_))));
    }

    #[test]
    fn the_fingerprint_covers_tools_but_not_server_or_environment() {
        let a = Pin::from_catalog(&served(), "default", None);
        let b = Pin::from_catalog(
            &served(),
            "prod",
            Some(ServerId {
                name: Some("x".into()),
                version: Some("2".into()),
            }),
        );
        assert_eq!(a.fingerprint, b.fingerprint);
        let mut changed = served();
        changed[0]["description"] = json!("Second tool!");
        assert_ne!(
            Pin::from_catalog(&changed, "default", None).fingerprint,
            a.fingerprint
        );
    }

    #[test]
    fn environment_names_are_plain_file_names() {
        for ok in ["default", "staging", "prod-eu.1", "a_b"] {
            assert!(validate_environment(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "a/b", "KEY=VALUE", "sp ace", &"x".repeat(65)] {
            assert!(validate_environment(bad).is_err(), "{bad}");
        }
        assert!(
            validate_environment("API_KEY=1")
                .unwrap_err()
                .contains("--server-env")
        );
    }
}
