//! `mcp-witness testbed`: the built-in planted-lie notes server.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Subcommand;
use serde::Serialize;
use serde_json::{Value, json};
use witness_model::exit::ExitStatus;
use witness_testbed::Variant;
use witness_testbed::auth::AuthRule;
use witness_testbed::oracle::planted_lie;

use super::{Format, FormatArgs};
use crate::exit::invalid;

const VARIANTS_HELP: &str = "\
Text: one line per variant, its name and the lie it plants. JSON: an array
with every variant's full record — its name, summary and authorization rule,
and for a variant that plants a lie the lying tool, what it declares (in words
and as the annotations it serves), what it really does, whether the lie is in
its annotations or only in its behaviour, and whether its response shows the
real effect. `honest` and `cascade` plant no lie (`lie: null`).

This is the experiments' ground truth: the auditor never reads it.";

/// The `testbed` subcommands.
#[derive(Subcommand)]
pub enum TestbedCommand {
    /// Serve the testbed over stdio (what an audit launches).
    Serve {
        /// Which variant: see `mcp-witness testbed variants`.
        #[arg(long, default_value = "honest")]
        variant: String,
        /// The SQLite store (created with its schema if missing).
        #[arg(long, value_name = "PATH")]
        store: PathBuf,
        /// The injected clock, in Unix seconds (the server never reads the wall clock).
        #[arg(long, default_value_t = witness_testbed::DEFAULT_NOW)]
        now: i64,
    },
    /// List the variants and the lie each one plants.
    #[command(after_help = VARIANTS_HELP)]
    Variants {
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Create a store with the fixtures the experiments start from.
    Seed {
        /// The SQLite store to seed (created with its schema if missing; its
        /// directory must exist). Fixtures already there are left as they are.
        #[arg(long, value_name = "PATH")]
        store: PathBuf,
    },
}

/// Runs one `testbed` subcommand.
pub fn run(command: TestbedCommand) -> Result<ExitStatus> {
    match command {
        TestbedCommand::Serve {
            variant,
            store,
            now,
        } => {
            let variant = Variant::from_name(&variant).ok_or_else(|| {
                invalid(format!(
                    "unknown variant {variant:?}; `mcp-witness testbed variants` lists them"
                ))
            })?;
            witness_testbed::serve_stdio(witness_testbed::ServeOptions {
                variant,
                store,
                now,
            })
            .context("the testbed server stopped")?;
        }
        TestbedCommand::Variants { format } => match format.format {
            Format::Text => {
                for variant in Variant::ALL {
                    outln!("{:18} {}", variant.name(), variant.summary());
                }
            }
            Format::Json => {
                let records: Vec<VariantRecord> = Variant::ALL.into_iter().map(record).collect();
                outln!("{}", serde_json::to_string_pretty(&records)?);
            }
        },
        TestbedCommand::Seed { store } => {
            witness_testbed::store::seed_fixtures(&store)
                .with_context(|| format!("cannot seed {}", store.display()))?;
        }
    }
    Ok(ExitStatus::Passed)
}

/// Everything the testbed knows about one variant.
#[derive(Serialize)]
struct VariantRecord {
    name: &'static str,
    summary: &'static str,
    /// `plain`: a key outlives its grant; `cascade`: it dies with it.
    auth_rule: &'static str,
    lie: Option<LieRecord>,
}

#[derive(Serialize)]
struct LieRecord {
    tool: &'static str,
    declared: &'static str,
    /// The annotations the lying tool serves in this variant.
    annotations: Value,
    actual: &'static str,
    /// `annotations` when `tools/list` differs from the honest server's,
    /// `behaviour` when the declaration is honest-looking and the tool is not.
    lie_in: &'static str,
    response_visible: bool,
}

fn record(variant: Variant) -> VariantRecord {
    VariantRecord {
        name: variant.name(),
        summary: variant.summary(),
        auth_rule: match variant.auth_rule() {
            AuthRule::Plain => "plain",
            AuthRule::Cascade => "cascade",
        },
        lie: planted_lie(variant).map(|lie| LieRecord {
            tool: lie.tool,
            declared: lie.declared,
            annotations: witness_testbed::tools::declared_hints(variant, lie.tool).map_or(
                Value::Null,
                |h| {
                    json!({
                        "readOnlyHint": h.read_only,
                        "destructiveHint": h.destructive,
                        "idempotentHint": h.idempotent,
                        "openWorldHint": h.open_world,
                    })
                },
            ),
            actual: lie.actual,
            lie_in: if lie.in_annotations() {
                "annotations"
            } else {
                "behaviour"
            },
            response_visible: lie.response_visible,
        }),
    }
}
