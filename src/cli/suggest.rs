//! `mcp-witness suggest AUDIT.json`: the annotations each tool's observed
//! behaviour supports, for the server's author (the engine's `suggest`),
//! as text or as a JSON patch for its `tools/list` result.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use witness_engine::suggest::{self, Change, Suggestions};
use witness_model::audit::AuditReport;
use witness_model::exit::ExitStatus;

const HELP: &str = "\
AUDIT.json is what `audit --format json` prints, or the audit.json that
`audit --out DIR` writes. Nothing is run: every suggestion rests on a verdict
of the effect lane and names the calls it was observed in.

A suggestion says a hint's value out loud where the behaviour contradicts
the declaration (a write by a tool declared readOnlyHint: true) or where the
hint is unset (a delete by a tool that never says destructiveHint). The safer
value is never suggested (no readOnlyHint: true because nothing was
written); a tool declared destructive that was seen changing existing
content and keeping it, and never deleting or overwriting, gets a note, not
a suggestion. Tools with no successful call, and hints whose check was
untestable, are listed as not judged.

  mcp-witness audit --out audit --store db=sqlite:app.db -- ./server
  mcp-witness suggest audit/audit.json
  mcp-witness suggest --format json-patch audit/audit.json > annotations.patch.json

The JSON patch (RFC 6902) applies to the server's tools/list result
({\"tools\": [...]}, tools by their index in the catalog the audit recorded);
it tests each tool's name and each declared value first, so it refuses a
catalog that changed since. No suggestion: [].

Exit codes: 0 nothing to suggest, 1 at least one suggestion, 2 the file is
missing or not an mcp-witness.audit/v1 document.";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct SuggestArgs {
    /// The audit report (audit.json).
    #[arg(value_name = "AUDIT.json")]
    audit: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = SuggestFormat::Text)]
    format: SuggestFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SuggestFormat {
    /// Per tool, each suggested hint with its basis.
    Text,
    /// An RFC 6902 JSON patch against the server's tools/list result.
    JsonPatch,
}

pub fn run(args: SuggestArgs) -> Result<ExitStatus> {
    let report = suggest::read(&args.audit)?;
    let suggestions = suggest::suggest(&report);
    match args.format {
        SuggestFormat::Text => out!("{}", text(&report, &suggestions)),
        SuggestFormat::JsonPatch => {
            out!(
                "{}",
                serde_json::to_string_pretty(&suggestions.json_patch(&report))? + "\n"
            );
        }
    }
    Ok(if suggestions.is_empty() {
        ExitStatus::Passed
    } else {
        ExitStatus::Failed
    })
}

fn shown(value: Option<bool>) -> String {
    value.map_or_else(|| "unset".to_owned(), |v| v.to_string())
}

/// The text report: a line per suggestion, its basis beneath.
fn text(report: &AuditReport, suggestions: &Suggestions) -> String {
    let mut out = String::new();
    let target = witness_text::clip(&report.target.command.join(" "), 120);
    if suggestions.is_empty() {
        out.push_str(&format!(
            "no suggestion: every judged declaration of {target} agrees with what was observed\n"
        ));
    } else {
        out.push_str(&format!(
            "{} of {} tool(s) of {target} should declare otherwise:\n",
            suggestions.tools.len(),
            report.tools.len()
        ));
    }
    for tool in &suggestions.tools {
        out.push_str(&format!(
            "\n{} (tools/{})\n",
            witness_text::clip(&tool.tool, 80),
            tool.index
        ));
        for s in &tool.suggestions {
            let what = match s.change {
                Change::Contradicted => "contradicted",
                Change::Missing => "unset",
            };
            let judged = if s.recorded {
                "the audit's verdict"
            } else {
                "judged as if claimed"
            };
            let calls: Vec<String> = s.calls.iter().map(u32::to_string).collect();
            let word = if calls.len() == 1 { "call" } else { "calls" };
            out.push_str(&format!(
                "  {}: {} -> {}  ({what}; {} {judged}; {word} {})\n    {}\n",
                s.hint.key(),
                shown(s.declared),
                s.value,
                s.check,
                calls.join(", "),
                s.basis
            ));
        }
    }
    if !suggestions.notes.is_empty() {
        out.push_str("\nobserved, but too narrow to suggest:\n");
        for n in &suggestions.notes {
            let calls: Vec<String> = n.calls.iter().map(u32::to_string).collect();
            out.push_str(&format!(
                "  {} (tools/{}) {}: {} is consistent with {}  (calls {})\n    {}\n",
                witness_text::clip(&n.tool, 80),
                n.index,
                n.hint.key(),
                shown(n.declared),
                n.consistent_with,
                calls.join(", "),
                n.basis
            ));
        }
    }
    if !suggestions.not_judged.is_empty() {
        out.push_str("\nnot judged:\n");
        for n in &suggestions.not_judged {
            let hint = n.hint.map(|h| format!(" {}", h.key())).unwrap_or_default();
            out.push_str(&format!(
                "  {}{hint}: {}\n",
                witness_text::clip(&n.tool, 80),
                witness_text::clip(&n.why, 240)
            ));
        }
    }
    if !suggestions.catalog_complete {
        out.push_str(
            "\nthe catalog never arrived whole: indices are into the part the audit recorded\n",
        );
    }
    out
}
