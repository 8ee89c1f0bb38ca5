//! The documents the lab writes: `mcp-witness.e1/v1`, `.e2/v1`, `.e3/v1`.
//!
//! Every number on a page or in `summary.md` is read from these. Ratios whose
//! denominator is zero are `null`, never NaN (see docs/effect-aware-conformance.md).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const E1_SCHEMA: &str = "mcp-witness.e1/v1";
pub const E2_SCHEMA: &str = "mcp-witness.e2/v1";
pub const E3_SCHEMA: &str = "mcp-witness.e3/v1";
pub const E2_POSTGRES_SCHEMA: &str = "mcp-witness.e2-postgres/v1";
pub const E3_POSTGRES_SCHEMA: &str = "mcp-witness.e3-postgres/v1";

/// A detector's confusion counts over all variants of E1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DetectorScore {
    pub name: String,
    /// The only channel this detector may read.
    pub channel: String,
    pub tp: u32,
    pub fp: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
    /// tp / (tp + fp); null when the detector flagged nothing.
    pub precision: Option<f64>,
    /// tp / (tp + fn); null when nothing was planted.
    pub recall: Option<f64>,
    /// Harmonic mean of precision and recall; null when either is null, 0 when both are 0.
    pub f1: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct E1Variant {
    pub variant: String,
    /// The tool that lies (null for `honest`), from the testbed's mutation ledger.
    pub lying_tool: Option<String>,
    /// What the annotation claims, and what the tool really does.
    pub declared: Option<String>,
    pub actual: Option<String>,
    /// Whether the lie shows in the tool's response (null for `honest`).
    pub response_visible: Option<bool>,
    /// Tools each detector flagged, by detector name, sorted.
    pub flagged: BTreeMap<String, Vec<String>>,
    /// The failing checks behind the effect-aware flags (`EFF-01 get_note`).
    pub evidence: Vec<String>,
    /// The full audit, relative to the output directory.
    pub audit: String,
    pub audit_exit_code: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct E1Document {
    pub schema: String,
    pub generator: String,
    /// The calls every variant received (plan file, verbatim path).
    pub plan: String,
    pub detectors: Vec<DetectorScore>,
    pub variants: Vec<E1Variant>,
}

/// A classifier's results over the E2 corpus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClassifierScore {
    pub name: String,
    pub definition: String,
    pub accuracy: Option<f64>,
    pub tp: u32,
    pub fp: u32,
    pub tn: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct E2Object {
    /// Observer object id (`api_keys/key_0001`).
    pub object: String,
    /// Present in the final snapshot.
    pub persistent: bool,
    /// Ground truth: the testbed's rule accepts it as a credential while it exists.
    pub authority: bool,
    /// Each classifier's call, by classifier name.
    pub predictions: BTreeMap<String, bool>,
    /// The probe's evidence line and when it was taken.
    pub probe_basis: String,
    pub probed_at: String,
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct E2Document {
    pub schema: String,
    pub generator: String,
    pub plan: String,
    pub classifiers: Vec<ClassifierScore>,
    pub objects: Vec<E2Object>,
    pub audit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LifecycleDetectorScore {
    pub name: String,
    pub definition: String,
    pub accuracy: Option<f64>,
    /// Said effective, truly dead.
    pub false_effective: u32,
    /// Said dead, truly effective: the dangerous error.
    pub false_ineffective: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct E3Scenario {
    pub scenario: String,
    pub description: String,
    /// The out-of-band event applied after the key was minted.
    pub event: String,
    pub variant: String,
    /// Ground truth by construction: `effective` or `dead`.
    pub truth: String,
    /// Each detector's call, `effective` or `dead`.
    pub predictions: BTreeMap<String, String>,
    pub key: String,
    /// `listed` or `absent`.
    pub key_row: String,
    /// `active`, `revoked` or `absent`.
    pub grant: String,
    pub probe_status: crate::vocab::ProbeStatus,
    pub probe_basis: String,
    pub audit: String,
}

/// An audit of the residual-revoke plan against one variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResidualAudit {
    pub variant: String,
    pub eff06_revoke_api_key: String,
    pub reason: String,
    pub probe_evidence: Vec<String>,
    pub audit: String,
    pub audit_exit_code: i32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct E3Document {
    pub schema: String,
    pub generator: String,
    pub plan: String,
    pub detectors: Vec<LifecycleDetectorScore>,
    pub scenarios: Vec<E3Scenario>,
    pub residual_revoke: Vec<ResidualAudit>,
}

/// E2 on PostgreSQL: the corpus minted through a published SQL server's
/// tool, each object classified by the probe and the two baselines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PostgresE2Document {
    pub schema: String,
    pub generator: String,
    /// The server that ran every statement (`@bytebase/dbhub@1.4.0`) and its
    /// tool (`execute_sql`).
    pub server: String,
    pub tool: String,
    /// The plan (its calls, with the corpus's labels beside them) and the
    /// seed the cluster is restored from, as repository paths.
    pub plan: String,
    pub seed: String,
    pub classifiers: Vec<ClassifierScore>,
    /// `authority` is by construction: a session, or a granted action, can
    /// be had through the object while it exists.
    pub objects: Vec<E2Object>,
    pub audit: String,
}

/// One lifecycle scenario of E3 on PostgreSQL: a role minted through the
/// server's tool, an event applied out of band, the role's authority to
/// read `orders` as itself judged three ways.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PostgresE3Scenario {
    pub scenario: String,
    pub description: String,
    /// What the lab did as the cluster's superuser after the plan's calls.
    pub event: String,
    /// The role judged (`catalog/role:bob`) and the relation (`catalog/table:public.orders`).
    pub role: String,
    pub relation: String,
    /// Ground truth by construction: `effective` or `dead`.
    pub truth: String,
    /// Each detector's call, `effective` or `dead`.
    pub predictions: BTreeMap<String, String>,
    /// `present` or `absent` in `pg_roles`.
    pub role_row: String,
    /// The privileges the role's own entry in the relation's ACL grants
    /// (`SELECT`), or `none`.
    pub direct_grant: String,
    pub probe_status: crate::vocab::ProbeStatus,
    /// The probe's two lines: the login, then the granted action.
    pub probe_basis: String,
    pub audit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PostgresE3Document {
    pub schema: String,
    pub generator: String,
    pub server: String,
    pub tool: String,
    pub plan: String,
    pub seed: String,
    pub detectors: Vec<LifecycleDetectorScore>,
    pub scenarios: Vec<PostgresE3Scenario>,
}

/// `num / den`, rounded to six decimals so the JSON stays stable and readable;
/// `None` when `den` is zero.
pub fn ratio(num: u32, den: u32) -> Option<f64> {
    (den > 0).then(|| round6(f64::from(num) / f64::from(den)))
}

pub fn round6(x: f64) -> f64 {
    (x * 1_000_000.0).round() / 1_000_000.0
}

/// F1 from precision and recall; `None` if either is undefined.
pub fn f1(precision: Option<f64>, recall: Option<f64>) -> Option<f64> {
    match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(round6(2.0 * p * r / (p + r))),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_never_nan() {
        assert_eq!(ratio(0, 0), None);
        assert_eq!(ratio(2, 6), Some(0.333333));
        assert_eq!(f1(Some(1.0), Some(0.333333)), Some(0.5));
        assert_eq!(f1(Some(0.0), Some(0.0)), Some(0.0));
        assert_eq!(f1(None, Some(1.0)), None);
    }
}
