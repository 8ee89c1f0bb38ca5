//! The registry of versioned documents: the one list of what mcp-witness
//! writes, how the command line names each document, and its JSON Schema.
//!
//! `mcp-witness schema NAME` prints from here, and the committed files under
//! `docs/schemas/` are checked against it, so a document cannot be added or
//! changed without its schema following.

use schemars::{JsonSchema, Schema};

use crate::agent::compare::{AgentCompareDocument, COMPARE_SCHEMA};
use crate::agent::{AGENT_RUN_SCHEMA, AgentRunDocument};
use crate::audit::{AUDIT_SCHEMA, AuditReport};
use crate::case::{CASE_SCHEMA, CaseReport};
use crate::coverage::{COVERAGE_SCHEMA, CoverageDocument};
use crate::experiments::{
    E1_SCHEMA, E1Document, E2_POSTGRES_SCHEMA, E2_SCHEMA, E2Document, E3_POSTGRES_SCHEMA,
    E3_SCHEMA, E3Document, PostgresE2Document, PostgresE3Document,
};
use crate::field::{FIELD_SCHEMA, FieldDocument};
use crate::guidance::{GUIDANCE_SCHEMA, GuidanceReport};
use crate::manifest::diff::{DIFF_SCHEMA, ManifestDiff};
use crate::manifest::{PIN_SCHEMA, Pin};
use crate::plan::{PLAN_SCHEMA, PlanPreview};
use crate::proxy::{
    CONVERSATION_SCHEMA, ConversationLine, PROXY_TRACE_SCHEMA, TRACE_CHECK_SCHEMA,
    TraceCheckDocument, TraceEntry,
};
use crate::sweep::{
    SWEEP_ROW_SCHEMA, SWEEP_SCHEMA, SWEEP_TARGET_SCHEMA, SweepDocument, SweepRow, TargetResult,
};
use crate::wild::{WILD_SCHEMA, WildDocument};

/// One versioned document.
#[derive(Clone, Copy, Debug)]
pub struct Document {
    /// How the command line spells it: `mcp-witness schema NAME`.
    pub name: &'static str,
    /// The versioned id its `schema` field carries, e.g. `mcp-witness.audit/v1`.
    pub id: &'static str,
    /// What writes it, for `--help`.
    pub written_by: &'static str,
    schema: fn() -> Schema,
}

impl Document {
    /// The document's JSON Schema.
    pub fn schema(&self) -> Schema {
        (self.schema)()
    }

    /// The schema as it is printed and committed: pretty JSON and a final
    /// newline.
    pub fn schema_text(&self) -> Result<String, serde_json::Error> {
        Ok(serde_json::to_string_pretty(&self.schema())? + "\n")
    }

    /// The committed file's name: the versioned id with `/` as `.`, so
    /// `mcp-witness.audit/v1` is `mcp-witness.audit.v1.json`.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.id.replace('/', "."))
    }
}

fn schema_of<T: JsonSchema>() -> Schema {
    schemars::schema_for!(T)
}

/// One line of a proxy trace: one of its entry types, each an object told
/// apart by `type` (so the line itself is always an object).
fn trace_line_schema() -> Schema {
    let mut schema = schema_of::<TraceEntry>();
    schema.insert("type".to_owned(), serde_json::Value::from("object"));
    schema
}

/// Every versioned document, in the order `--help` lists them.
pub const DOCUMENTS: [Document; 22] = [
    Document {
        name: "audit",
        id: AUDIT_SCHEMA,
        written_by: "`audit --format json`, `audit --out`, the lab's audits/",
        schema: schema_of::<AuditReport>,
    },
    Document {
        name: "plan",
        id: PLAN_SCHEMA,
        written_by: "`plan --format json`",
        schema: schema_of::<PlanPreview>,
    },
    Document {
        name: "case",
        id: CASE_SCHEMA,
        written_by: "`lab cases`: case-<name>.json",
        schema: schema_of::<CaseReport>,
    },
    Document {
        name: "e1",
        id: E1_SCHEMA,
        written_by: "`lab e1`: e1.json",
        schema: schema_of::<E1Document>,
    },
    Document {
        name: "e2",
        id: E2_SCHEMA,
        written_by: "`lab e2`: e2.json",
        schema: schema_of::<E2Document>,
    },
    Document {
        name: "e3",
        id: E3_SCHEMA,
        written_by: "`lab e3`: e3.json",
        schema: schema_of::<E3Document>,
    },
    Document {
        name: "e2-postgres",
        id: E2_POSTGRES_SCHEMA,
        written_by: "`lab postgres`: e2-postgres.json",
        schema: schema_of::<PostgresE2Document>,
    },
    Document {
        name: "e3-postgres",
        id: E3_POSTGRES_SCHEMA,
        written_by: "`lab postgres`: e3-postgres.json",
        schema: schema_of::<PostgresE3Document>,
    },
    Document {
        name: "coverage",
        id: COVERAGE_SCHEMA,
        written_by: "`lab coverage`: coverage.json",
        schema: schema_of::<CoverageDocument>,
    },
    Document {
        name: "wild",
        id: WILD_SCHEMA,
        written_by: "`lab wild`: wild.json",
        schema: schema_of::<WildDocument>,
    },
    Document {
        name: "field",
        id: FIELD_SCHEMA,
        written_by: "`lab field`: field.json",
        schema: schema_of::<FieldDocument>,
    },
    Document {
        name: "manifest",
        id: PIN_SCHEMA,
        written_by: "`manifest pin`: a pin file",
        schema: schema_of::<Pin>,
    },
    Document {
        name: "manifest-diff",
        id: DIFF_SCHEMA,
        written_by: "`manifest diff --format json`",
        schema: schema_of::<ManifestDiff>,
    },
    Document {
        name: "guidance",
        id: GUIDANCE_SCHEMA,
        written_by: "`guidance --format json`",
        schema: schema_of::<GuidanceReport>,
    },
    Document {
        name: "agent-run",
        id: AGENT_RUN_SCHEMA,
        written_by: "`agent run --format json`, `agent run --out`: agent-run.json",
        schema: schema_of::<AgentRunDocument>,
    },
    Document {
        name: "agent-compare",
        id: COMPARE_SCHEMA,
        written_by: "`agent compare --format json`, `agent compare --out`: agent-compare.json",
        schema: schema_of::<AgentCompareDocument>,
    },
    Document {
        name: "proxy-trace",
        id: PROXY_TRACE_SCHEMA,
        written_by: "`proxy --trace FILE`: one line of the trace (JSON lines)",
        schema: trace_line_schema,
    },
    Document {
        name: "conversation",
        id: CONVERSATION_SCHEMA,
        written_by: "a host, or `trace import`: one line of a conversation file (JSON lines)",
        schema: schema_of::<ConversationLine>,
    },
    Document {
        name: "trace-check",
        id: TRACE_CHECK_SCHEMA,
        written_by: "`trace check --format json`, `trace check --out`: trace-check.json",
        schema: schema_of::<TraceCheckDocument>,
    },
    Document {
        name: "sweep",
        id: SWEEP_SCHEMA,
        written_by: "`sweep`, `sweep merge`: sweep.json",
        schema: schema_of::<SweepDocument>,
    },
    Document {
        name: "sweep-row",
        id: SWEEP_ROW_SCHEMA,
        written_by: "`sweep`, `sweep merge`: each line of dataset.jsonl",
        schema: schema_of::<SweepRow>,
    },
    Document {
        name: "sweep-target",
        id: SWEEP_TARGET_SCHEMA,
        written_by: "`sweep`: targets/<key>/result.json",
        schema: schema_of::<TargetResult>,
    },
];

/// The document the command line calls `name`.
pub fn find(name: &str) -> Option<&'static Document> {
    DOCUMENTS.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_ids_and_files_are_unique() {
        for (i, a) in DOCUMENTS.iter().enumerate() {
            for b in &DOCUMENTS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.id, b.id);
                assert_ne!(a.file_name(), b.file_name());
            }
            assert_eq!(find(a.name).map(|d| d.id), Some(a.id));
        }
        assert!(find("Audit").is_none());
    }

    #[test]
    fn every_schema_is_an_object_schema_titled_after_its_type() {
        for document in DOCUMENTS {
            let schema = document.schema();
            let value = schema.as_value();
            assert_eq!(value["type"], "object", "{}", document.name);
            assert!(value["title"].is_string(), "{}", document.name);
            let text = document.schema_text().expect("serializes");
            assert!(text.ends_with("}\n"), "{}", document.name);
        }
    }
}
