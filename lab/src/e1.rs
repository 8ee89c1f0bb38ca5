//! E1 — the detection experiment: can effect observation catch annotation
//! lies that a response-only auditor and a name heuristic miss?
//!
//! One audit per variant (honest plus the six single-lie variants), the same
//! plan each time. A flag is a (variant, tool) pair; it is a true positive when
//! the testbed's mutation ledger names that tool as the variant's liar.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Result;
use witness_testbed::{Variant, auth::AuthRule, oracle, probe::CredentialProbe};

use witness_model::audit::Verdict;
use witness_model::experiments::{DetectorScore, E1_SCHEMA, E1Document, E1Variant, f1, ratio};

use crate::detectors::{self, EFFECT_AWARE, NAME_HEURISTIC, RESPONSE_LEVEL};
use crate::{Progress, TestbedRun, audit_path, audit_testbed, write_json};

pub const PLAN: &str = include_str!("../../experiments/e1/plan.toml");
pub const PLAN_NAME: &str = "experiments/e1/plan.toml";

/// The variants E1 covers, in table order.
pub const VARIANTS: [Variant; 7] = [
    Variant::Honest,
    Variant::LieReadonly,
    Variant::HideDestructive,
    Variant::WebhookReadonly,
    Variant::SilentKeymint,
    Variant::ShadowWebhook,
    Variant::PhantomWrite,
];

const DETECTORS: [(&str, &str); 3] = [
    (EFFECT_AWARE, "out-of-band state observation"),
    (RESPONSE_LEVEL, "tool responses only"),
    (NAME_HEURISTIC, "tool names and descriptions only"),
];

/// Runs E1, writes `DIR/e1.json` and `DIR/audits/<variant>.json`.
pub fn run(out: &Path, progress: &Progress) -> Result<E1Document> {
    let mut variants = Vec::new();
    for (i, variant) in VARIANTS.iter().enumerate() {
        let report = audit_testbed(TestbedRun {
            variant: variant.name(),
            plan: PLAN,
            plan_name: PLAN_NAME,
            probe: CredentialProbe {
                now: witness_testbed::DEFAULT_NOW,
                rule: AuthRule::Plain,
            },
            events: BTreeMap::new(),
            progress,
        })?;
        let (path, relative) = audit_path(out, variant.name());
        write_json(&path, &report)?;
        let mut flagged = BTreeMap::new();
        flagged.insert(
            EFFECT_AWARE.to_string(),
            sorted(detectors::effect_aware(&report)),
        );
        flagged.insert(
            RESPONSE_LEVEL.to_string(),
            sorted(detectors::response_level(&report)),
        );
        flagged.insert(
            NAME_HEURISTIC.to_string(),
            sorted(detectors::name_heuristic(&report)),
        );
        let lie = oracle::planted_lie(*variant);
        let evidence = report
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .map(|c| format!("{} {}", c.id, c.tool))
            .collect();
        progress.step(
            "e1",
            i + 1,
            VARIANTS.len(),
            &format!(
                "{}: effect-aware {:?}, response-level {:?}, name-heuristic {:?}",
                variant.name(),
                flagged[EFFECT_AWARE],
                flagged[RESPONSE_LEVEL],
                flagged[NAME_HEURISTIC]
            ),
        );
        variants.push(E1Variant {
            variant: variant.name().to_owned(),
            lying_tool: lie.as_ref().map(|l| l.tool.to_owned()),
            declared: lie.as_ref().map(|l| l.declared.to_owned()),
            actual: lie.as_ref().map(|l| l.actual.to_owned()),
            response_visible: lie.as_ref().map(|l| l.response_visible),
            flagged,
            evidence,
            audit: relative,
            audit_exit_code: report.exit_code,
        });
    }
    let detectors = DETECTORS
        .iter()
        .map(|(name, channel)| score(name, channel, &variants))
        .collect();
    let document = E1Document {
        schema: E1_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        plan: PLAN_NAME.into(),
        detectors,
        variants,
    };
    write_json(&out.join("e1.json"), &document)?;
    Ok(document)
}

fn sorted(set: BTreeSet<String>) -> Vec<String> {
    set.into_iter().collect()
}

/// Confusion counts of one detector over every variant.
pub fn score(name: &str, channel: &str, variants: &[E1Variant]) -> DetectorScore {
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    for v in variants {
        let flagged = v.flagged.get(name).cloned().unwrap_or_default();
        for tool in &flagged {
            if v.lying_tool.as_deref() == Some(tool.as_str()) {
                tp += 1;
            } else {
                fp += 1;
            }
        }
        if let Some(liar) = &v.lying_tool
            && !flagged.contains(liar)
        {
            fn_ += 1;
        }
    }
    let precision = ratio(tp, tp + fp);
    let recall = ratio(tp, tp + fn_);
    DetectorScore {
        name: name.into(),
        channel: channel.into(),
        tp,
        fp,
        fn_,
        precision,
        recall,
        f1: f1(precision, recall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(liar: Option<&str>, flagged: &[&str]) -> E1Variant {
        let mut map = BTreeMap::new();
        map.insert(
            "d".to_string(),
            flagged.iter().map(|s| s.to_string()).collect(),
        );
        E1Variant {
            variant: "v".into(),
            lying_tool: liar.map(str::to_owned),
            declared: None,
            actual: None,
            response_visible: None,
            flagged: map,
            evidence: vec![],
            audit: String::new(),
            audit_exit_code: 0,
        }
    }

    #[test]
    fn flags_on_the_liar_are_tp_elsewhere_fp_and_misses_fn() {
        let variants = [
            variant(None, &["x"]),
            variant(Some("a"), &["a"]),
            variant(Some("b"), &[]),
            variant(Some("c"), &["c", "d"]),
        ];
        let s = score("d", "", &variants);
        assert_eq!((s.tp, s.fp, s.fn_), (2, 2, 1));
        assert_eq!(s.precision, Some(0.5));
        assert_eq!(s.recall, Some(0.666667));
        let none = score("d", "", &[variant(Some("a"), &[])]);
        assert_eq!(none.precision, None);
        assert_eq!(none.f1, None);
    }
}
