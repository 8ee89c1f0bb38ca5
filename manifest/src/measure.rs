//! The commands that measure a diff's changes instead of guessing at them.
//!
//! A description edit is a prompt edit by a third party: what it does to an
//! agent is measured by running the agent's suite with the old definitions
//! and with the new ones — against the live server both times, so the
//! definitions are the only difference — and comparing the runs with their
//! noise floor (`agent compare`). A new declaration of what a tool does is
//! measured by an audit. Each change names its measures (the triage table's
//! `measured_by`); the document carries the commands once per measure,
//! written for the sides as they were given — except what a diff never
//! shows: a URL's query is a digest and credential-shaped words are masked
//! (as in the sides' names), so such a command needs its key put back.

use witness_model::manifest::diff::{ChangeClass, ManifestDiff, Measure, Measurement};

use super::source::{Source, digest_query, join_command, masked};

/// Runs per side the commands ask for: enough for a noise floor, and the
/// number the tutorial uses (docs/weekend-incident.md).
pub const RUNS: &str = "10";

/// Fills `doc.measurements` for the measures its changes name.
pub fn attach(doc: &mut ManifestDiff, old: &Source, new: &Source) {
    let wanted = |measure: Measure| doc.changes.iter().any(|c| c.measure.contains(&measure));
    let mut out = Vec::new();
    if wanted(Measure::AgentCompare) {
        // Annotations reach a model only when the client forwards them.
        let forward = doc.changes.iter().any(|c| {
            matches!(
                c.class,
                ChangeClass::AnnotationClaimsMoreSafety | ChangeClass::AnnotationDeclaresLessSafety
            )
        });
        out.push(agent_compare(old, new, forward));
    }
    if wanted(Measure::Audit) {
        out.push(Measurement {
            measure: Measure::Audit,
            what: "whether the server does what its new declarations claim: the EFF checks \
                   named on each change, on a jailed copy of the store (SERVER: the server \
                   command, with --store NAME=KIND:PATH for each store it writes)"
                .to_owned(),
            commands: vec!["mcp-witness audit -- SERVER".to_owned()],
        });
    }
    doc.measurements = out;
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

/// The suite with the old definitions, with the new ones, and the compare.
fn agent_compare(old: &Source, new: &Source, forward: bool) -> Measurement {
    let mut commands = Vec::new();
    let mut manifest_of = |side: &Source, pinned_as: &str| -> Option<String> {
        match side {
            Source::File(path) => Some(path.display().to_string()),
            Source::Live(command) => {
                let mut pin = words(&["mcp-witness", "manifest", "pin", "--out", pinned_as, "--"]);
                pin.extend(command.iter().cloned());
                commands.push(masked(&join_command(&pin)));
                Some(pinned_as.to_owned())
            }
            Source::Remote(url, _) => {
                let pin = words(&[
                    "mcp-witness",
                    "manifest",
                    "pin",
                    "--out",
                    pinned_as,
                    "--url",
                    &digest_query(url),
                ]);
                commands.push(masked(&join_command(&pin)));
                Some(pinned_as.to_owned())
            }
        }
    };
    // The old side is always handed as a pin; the new one only when it is a
    // file: a live new side is what the server itself hands.
    let before = manifest_of(old, "runs/old-manifest.json");
    let after = match new {
        Source::File(_) => manifest_of(new, "runs/new-manifest.json"),
        Source::Live(_) | Source::Remote(..) => None,
    };
    for (manifest, out) in [(before, "runs/before"), (after, "runs/after")] {
        let mut run = words(&["mcp-witness", "agent", "run"]);
        if let Some(manifest) = manifest {
            run.extend(["--manifest".to_owned(), manifest]);
        }
        if forward {
            run.push("--forward-annotations".to_owned());
        }
        run.extend(words(&[
            "--case", "CASES", "--driver", "DRIVER", "--runs", RUNS, "--out", out, "--", "SERVER",
        ]));
        commands.push(join_command(&run));
    }
    commands.push(join_command(&words(&[
        "mcp-witness",
        "agent",
        "compare",
        "runs/before",
        "runs/after",
        "--out",
        "runs/compare",
    ])));
    Measurement {
        measure: Measure::AgentCompare,
        what: format!(
            "the behaviour delta: your suite with the old definitions and with the new ones, the \
             calls going to the live server both times, compared per case beside the noise \
             floor of reruns (CASES: your golden cases; DRIVER: your model; SERVER: the live \
             server's command with the stores your cases seed; --runs {RUNS} on both sides)"
        ),
        commands,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use witness_model::manifest::diff::{Change, DiffSummary, Side};

    fn doc(classes: &[ChangeClass]) -> ManifestDiff {
        let side = || Side {
            source: String::new(),
            environment: "default".into(),
            fingerprint: String::new(),
            server: None,
            tools: 0,
        };
        ManifestDiff {
            schema: String::new(),
            old: side(),
            new: side(),
            cross_environment: false,
            summary: DiffSummary::default(),
            changes: classes
                .iter()
                .map(|&c| Change::new("lookup_order", c, String::new(), String::new()))
                .collect(),
            notes: Vec::new(),
            unused_allow: Vec::new(),
            measurements: Vec::new(),
            exit_code: 1,
        }
    }

    #[test]
    fn a_description_edit_against_a_live_server_is_measured_by_two_runs_and_a_compare() {
        let mut diff = doc(&[ChangeClass::DescriptionEdited]);
        let old = Source::File("manifests/prod.json".into());
        let new = Source::Live(words(&["node", "my server.js"]));
        attach(&mut diff, &old, &new);
        assert_eq!(diff.changes[0].measure, [Measure::AgentCompare]);
        let [measurement] = &diff.measurements[..] else {
            panic!("one measurement: {:?}", diff.measurements);
        };
        assert_eq!(
            measurement.commands,
            [
                "mcp-witness agent run --manifest manifests/prod.json --case CASES --driver DRIVER --runs 10 --out runs/before -- SERVER",
                "mcp-witness agent run --case CASES --driver DRIVER --runs 10 --out runs/after -- SERVER",
                "mcp-witness agent compare runs/before runs/after --out runs/compare",
            ]
        );
    }

    #[test]
    fn live_old_sides_are_pinned_first_and_annotations_are_forwarded_and_audited() {
        let mut diff = doc(&[ChangeClass::AnnotationClaimsMoreSafety]);
        let old = Source::Live(words(&["node", "old.js"]));
        let new = Source::File("new pin.json".into());
        attach(&mut diff, &old, &new);
        let measures: Vec<Measure> = diff.measurements.iter().map(|m| m.measure).collect();
        assert_eq!(measures, [Measure::AgentCompare, Measure::Audit]);
        let commands = &diff.measurements[0].commands;
        assert_eq!(
            commands[0],
            "mcp-witness manifest pin --out runs/old-manifest.json -- node old.js"
        );
        assert!(commands[1].contains("--manifest runs/old-manifest.json --forward-annotations"));
        assert!(commands[2].contains("--manifest 'new pin.json' --forward-annotations"));
        assert_eq!(commands.len(), 4);
    }

    /// The commands are part of the committed, shared diff: a key in the
    /// old side's command line or URL never reaches them.
    #[test]
    fn a_pin_command_shows_no_key_from_a_command_or_url() {
        let key = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
        let new = Source::File("new.json".into());
        let sides = [
            Source::Live(words(&["server", &format!("--token={key}")])),
            Source::parse_with(&format!("url:http://127.0.0.1:9/mcp?api_key={key}"), false)
                .unwrap(),
        ];
        for old in sides {
            let mut diff = doc(&[ChangeClass::DescriptionEdited]);
            attach(&mut diff, &old, &new);
            let pin = &diff.measurements[0].commands[0];
            assert!(
                pin.starts_with("mcp-witness manifest pin --out runs/old-manifest.json"),
                "{pin}"
            );
            assert!(!pin.contains(key), "{pin}");
        }
    }

    #[test]
    fn metadata_changes_name_no_measure() {
        let mut diff = doc(&[ChangeClass::TitleEdited, ChangeClass::AnnotationChanged]);
        attach(
            &mut diff,
            &Source::File("a.json".into()),
            &Source::File("b.json".into()),
        );
        assert!(diff.measurements.is_empty());
        let mut diff = doc(&[ChangeClass::OutputSchemaChanged]);
        attach(
            &mut diff,
            &Source::File("a.json".into()),
            &Source::File("b.json".into()),
        );
        let measures: Vec<Measure> = diff.measurements.iter().map(|m| m.measure).collect();
        assert_eq!(measures, [Measure::Audit]);
    }
}
