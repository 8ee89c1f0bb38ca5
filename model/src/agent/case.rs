//! A golden case: one request to an AI client, the world it starts in, and
//! everything its run is held to.
//!
//! Cases are written in TOML (`experiments/agent/cases/`) and copied whole
//! into every run document, so a run can be re-judged and replayed from the
//! document alone. The budget is fixed here, when the case is written, and
//! never per run or per model: a cross-model comparison is only fair when
//! every model had the same budget (seed 000).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One golden case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoldenCase {
    /// A short name: letters, digits, `-` and `_`.
    pub id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// Tool calls the request deserves, fixed when the case was written.
    pub budget: u32,
    /// The seeded stores the server starts from, copied into a fresh jail for
    /// every run.
    #[serde(default, rename = "store", skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<CaseStore>,
    /// Variables for the server: who the client is (a tenant's token, say).
    /// These are part of the case and recorded with it: pass real secrets
    /// with `--env` instead, whose values are never recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The user's turns, in order; a follow-up such as "Yes, delete her." is
    /// its own turn.
    #[serde(rename = "turn")]
    pub turns: Vec<CaseTurn>,
    #[serde(default)]
    pub expect: Expectations,
    /// Columns read out of band for every changed row (the owner's view):
    /// what scope, accountability and the side-effect conditions compare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<FactsSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accountability: Option<AccountabilitySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<ClaimsSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSpec>,
}

/// A store the case seeds: SQL files run in order on an empty database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseStore {
    /// The store's name: `{NAME}` in the server command is its jailed path.
    pub name: String,
    /// Only `sqlite` today.
    pub kind: String,
    /// SQL files, relative to the case file.
    pub seed: Vec<String>,
}

/// One user turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseTurn {
    pub user: String,
    /// This turn agrees to what the assistant asked in the turn before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub consent: bool,
}

/// What the calls and the store must show.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ExpectedCall>,
    /// Tools that must never be called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<OrderRule>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<ExpectedEffect>,
}

/// A tool the client is expected to call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub tool: String,
    /// Arguments every call of this tool must carry: each key equal (strings
    /// compared trimmed and without regard to case). Others may be present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<BTreeMap<String, Value>>,
    /// Fewest calls (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    /// Most calls (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
}

impl ExpectedCall {
    pub fn min(&self) -> u32 {
        self.min.unwrap_or(1)
    }
}

/// Every call of `then` must come after a call of `first`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderRule {
    pub first: String,
    pub then: String,
}

/// Which operation an expected effect counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EffectOp {
    Create,
    Update,
    Delete,
    /// Any change at all (for "untouched": `count = 0`).
    Any,
}

impl EffectOp {
    pub fn as_str(self) -> &'static str {
        match self {
            EffectOp::Create => "create",
            EffectOp::Update => "update",
            EffectOp::Delete => "delete",
            EffectOp::Any => "any",
        }
    }
}

/// Effects that must (or must not) be observed, counted over the whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedEffect {
    /// `STORE:OBJECT`, where `*` in OBJECT matches any run of characters:
    /// `db:contacts/*`, `db:contacts/c_150`.
    pub object: String,
    pub op: EffectOp,
    /// Exactly this many (when neither `min` nor `max` is given, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// Row facts the effect's row must have (after the change; before it for
    /// a delete), compared like expected arguments.
    #[serde(default, rename = "where", skip_serializing_if = "BTreeMap::is_empty")]
    pub conditions: BTreeMap<String, Value>,
}

impl ExpectedEffect {
    /// The inclusive range of counts that satisfies this expectation.
    pub fn bounds(&self) -> (u32, Option<u32>) {
        match (self.count, self.min, self.max) {
            (Some(n), _, _) => (n, Some(n)),
            (None, None, None) => (1, Some(1)),
            (None, min, max) => (min.unwrap_or(0), max),
        }
    }
}

/// Columns of one table to read for every changed row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FactsSpec {
    pub store: String,
    pub table: String,
    pub columns: Vec<String>,
}

/// What the client may change at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeSpec {
    /// Object patterns that may change (empty: any object of a declared store).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<String>,
    /// A row fact naming the owner of a row, e.g. `tenant_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The owners whose rows may change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<String>,
}

/// Where the store keeps its audit log, and how a row names its call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountabilitySpec {
    /// The audit rows' object pattern, e.g. `db:audit_log/*`.
    pub audit: String,
    /// The row fact holding the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_column: Option<String>,
    /// The row fact holding the call's arguments (JSON text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_column: Option<String>,
}

/// What a reply's claims about adding and deleting speak of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimsSpec {
    /// Object patterns (default: every object of a declared store but the
    /// audit rows).
    pub objects: Vec<String>,
}

/// What a correct answer says, for the judge only: the model under test
/// never sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeSpec {
    pub expect: String,
}

/// Whether `object` (`STORE:OBJECT`) matches `pattern`, where `*` matches
/// any run of characters (including none) and everything else itself.
pub fn object_matches(pattern: &str, object: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == object;
    };
    if parts.len() == 1 {
        return pattern == object;
    }
    let Some(mut rest) = object.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether an observed value equals an expected one: strings trimmed and
/// without regard to case (`Dana Kim` is `dana kim `), numbers by value,
/// anything else exactly.
pub fn value_matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(a), Value::String(b)) => a.trim().to_lowercase() == b.trim().to_lowercase(),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_match_with_stars_only() {
        assert!(object_matches("db:contacts/*", "db:contacts/c_150"));
        assert!(object_matches("db:contacts/c_150", "db:contacts/c_150"));
        assert!(!object_matches("db:contacts/c_150", "db:contacts/c_1500"));
        assert!(!object_matches("db:contacts/*", "db:audit_log/1"));
        assert!(object_matches("*:contacts/*", "other:contacts/x"));
        assert!(object_matches("db:*", "db:"));
        assert!(!object_matches("db:a*b", "db:ab-c"));
        assert!(object_matches("db:a*b*c", "db:a-b-c"));
    }

    #[test]
    fn values_match_loosely_only_for_strings_and_numbers() {
        assert!(value_matches(&json!("Dana Kim"), &json!(" dana kim")));
        assert!(value_matches(&json!(1), &json!(1.0)));
        assert!(!value_matches(&json!("1"), &json!(1)));
        assert!(!value_matches(&json!(true), &json!("true")));
    }

    #[test]
    fn effect_bounds_default_to_exactly_one() {
        let effect = |count, min, max| ExpectedEffect {
            object: "db:x/*".into(),
            op: EffectOp::Any,
            count,
            min,
            max,
            conditions: BTreeMap::new(),
        };
        assert_eq!(effect(None, None, None).bounds(), (1, Some(1)));
        assert_eq!(effect(Some(0), None, None).bounds(), (0, Some(0)));
        assert_eq!(effect(None, Some(2), None).bounds(), (2, None));
        assert_eq!(effect(None, None, Some(3)).bounds(), (0, Some(3)));
    }

    #[test]
    fn a_case_round_trips_and_refuses_unknown_keys() {
        let case = GoldenCase {
            id: "add".into(),
            title: String::new(),
            budget: 4,
            stores: Vec::new(),
            env: BTreeMap::new(),
            turns: vec![CaseTurn {
                user: "Add Dana.".into(),
                consent: false,
            }],
            expect: Expectations::default(),
            facts: Vec::new(),
            scope: None,
            accountability: None,
            claims: None,
            judge: None,
        };
        let round: Result<GoldenCase, _> =
            serde_json::to_value(&case).and_then(serde_json::from_value);
        assert_eq!(round.ok(), Some(case));
        let unknown = json!({"id": "x", "budget": 1, "turn": [], "bogus": 1});
        assert!(serde_json::from_value::<GoldenCase>(unknown).is_err());
    }
}
