//! The mutation ledger: which lie each variant plants.
//!
//! This is ground truth for the experiment *scorer* only. No detector may read
//! it: an auditor that consulted the ledger would be grading itself.

use crate::Variant;

/// The one lie a variant plants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlantedLie {
    pub variant: Variant,
    /// The lying tool.
    pub tool: &'static str,
    /// What the tool's declaration claims, e.g. `readOnlyHint: true`.
    pub declared: &'static str,
    /// What the tool really does.
    pub actual: &'static str,
    /// Whether the tool's response text reveals the real effect, i.e. whether
    /// a response-only auditor has any chance to see it.
    pub response_visible: bool,
}

impl PlantedLie {
    /// Whether the lie is in the tool's annotations (so `tools/list` differs
    /// from the honest server's) rather than in its behaviour alone.
    pub fn in_annotations(&self) -> bool {
        matches!(
            self.variant,
            Variant::LieReadonly | Variant::HideDestructive | Variant::WebhookReadonly
        )
    }
}

/// The lie `v` plants; `None` for the variants that plant none (`honest`,
/// and `cascade`, which only changes the auth rule).
pub fn planted_lie(v: Variant) -> Option<PlantedLie> {
    let (tool, declared, actual, response_visible) = match v {
        Variant::Honest | Variant::Cascade | Variant::NetworkHonest => return None,
        Variant::ClosedWorldWebhook => (
            "save_note",
            "openWorldHint: false",
            "posts every saved note to a webhook (a TCP connection to hooks.testbed.example:80)",
            false,
        ),
        Variant::RspCountingWrite => (
            "count_notes",
            "readOnlyHint: true",
            "inserts a telemetry row on every call",
            false,
        ),
        // The other response variants break an answer, not a declaration.
        Variant::ResponseHonest
        | Variant::RspUnavailable
        | Variant::RspErrorAsRpc
        | Variant::RspWrongCode
        | Variant::RspSchemaViolation
        | Variant::RspOverLimit
        | Variant::RspSlow
        | Variant::RspLoopingCursor
        | Variant::RspDrifting => return None,
        Variant::LieReadonly => (
            "save_note",
            "readOnlyHint: true",
            "creates or overwrites the note row notes/<id>",
            true,
        ),
        Variant::HideDestructive => (
            "delete_note",
            "destructiveHint: false",
            "deletes the note row notes/<id>",
            true,
        ),
        Variant::WebhookReadonly => (
            "create_webhook",
            "readOnlyHint: true",
            "inserts a webhooks row carrying a working signing secret",
            false,
        ),
        Variant::SilentKeymint => (
            "get_note",
            "readOnlyHint: true",
            "mints an effective api_keys row (no grant, no expiry, active) on every call",
            false,
        ),
        Variant::ShadowWebhook => (
            "list_notes",
            "readOnlyHint: true",
            "inserts a webhooks row carrying a working signing secret on every call",
            false,
        ),
        Variant::PhantomWrite => (
            "ping",
            "readOnlyHint: true",
            "inserts a telemetry row on every call",
            false,
        ),
        Variant::ResidualRevoke => (
            "revoke_api_key",
            "revokes the key so that it no longer authorizes anything (destructiveHint: true, response 'Revoked key <id>.')",
            "sets revoked_at but leaves status 'active': the key still authorizes (residual authority)",
            false,
        ),
    };
    Some(PlantedLie {
        variant: v,
        tool,
        declared,
        actual,
        response_visible,
    })
}

/// The response check a response variant breaks: the tool and the plan
/// name of the check (`max_items`). `None` for every other variant.
pub fn response_defect(v: Variant) -> Option<(&'static str, &'static str)> {
    Some(match v {
        Variant::RspUnavailable => ("count_notes", "succeeds"),
        Variant::RspErrorAsRpc => ("lookup_note", "is_error"),
        Variant::RspWrongCode => ("lookup_note", "error_code"),
        Variant::RspSchemaViolation => ("count_notes", "output_schema"),
        Variant::RspOverLimit => ("search_notes", "max_items"),
        Variant::RspSlow => ("ping", "latency_under"),
        Variant::RspLoopingCursor => ("search_notes", "pagination_terminates"),
        Variant::RspDrifting => ("count_notes", "idempotent"),
        Variant::RspCountingWrite => ("count_notes", "no_mutation"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;

    #[test]
    fn every_variant_but_honest_and_cascade_plants_exactly_one_lie() {
        for v in Variant::ALL {
            let lie = planted_lie(v);
            match v {
                Variant::Honest | Variant::Cascade | Variant::NetworkHonest => {
                    assert_eq!(lie, None, "{v}")
                }
                v if v.serves_response_tools() && v != Variant::RspCountingWrite => {
                    assert_eq!(lie, None, "{v}")
                }
                _ => {
                    let lie = lie.unwrap();
                    assert_eq!(lie.variant, v);
                    assert!(tools::serves(v, lie.tool), "{v}: {}", lie.tool);
                    assert!(!lie.declared.is_empty() && !lie.actual.is_empty());
                }
            }
        }
    }

    #[test]
    fn only_the_lying_tool_declares_differently_from_honest() {
        for v in Variant::ALL {
            let lie = planted_lie(v);
            for tool in tools::names() {
                let differs =
                    tools::declared_hints(v, tool) != tools::declared_hints(Variant::Honest, tool);
                let expected = lie.is_some_and(|l| l.tool == tool && l.in_annotations());
                assert_eq!(differs, expected, "{v} / {tool}");
            }
        }
    }

    #[test]
    fn annotation_lies_name_the_flag_that_flipped() {
        for v in Variant::ALL {
            let Some(lie) = planted_lie(v).filter(PlantedLie::in_annotations) else {
                continue;
            };
            let hints = tools::declared_hints(v, lie.tool).unwrap();
            let claimed = match lie.declared {
                "readOnlyHint: true" => hints.read_only,
                "destructiveHint: false" => !hints.destructive,
                other => panic!("unexpected declared claim {other}"),
            };
            assert!(
                claimed,
                "{v}: {} does not declare {}",
                lie.tool, lie.declared
            );
        }
    }

    #[test]
    fn every_response_variant_but_the_honest_one_breaks_one_distinct_check() {
        let mut broken: Vec<&str> = Variant::ALL
            .into_iter()
            .filter_map(response_defect)
            .map(|(_, check)| check)
            .collect();
        assert_eq!(broken.len(), 9);
        broken.sort_unstable();
        broken.dedup();
        assert_eq!(broken.len(), 9, "nine checks, each broken once");
        assert_eq!(response_defect(Variant::ResponseHonest), None);
        for v in crate::Variant::ALL
            .into_iter()
            .filter(|v| !v.serves_response_tools())
        {
            assert_eq!(response_defect(v), None, "{v}");
        }
    }

    #[test]
    fn response_visibility_matches_the_experiment_design() {
        let visible: Vec<Variant> = Variant::ALL
            .into_iter()
            .filter(|v| planted_lie(*v).is_some_and(|l| l.response_visible))
            .collect();
        assert_eq!(visible, [Variant::LieReadonly, Variant::HideDestructive]);
        for v in [
            Variant::WebhookReadonly,
            Variant::SilentKeymint,
            Variant::ShadowWebhook,
            Variant::PhantomWrite,
            Variant::ResidualRevoke,
        ] {
            assert!(!planted_lie(v).unwrap().response_visible, "{v}");
        }
    }
}
