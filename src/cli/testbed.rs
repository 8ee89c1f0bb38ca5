//! `mcp-witness testbed`: the built-in planted-lie notes server, and the
//! CRM agent runs drive.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Subcommand;
use serde::Serialize;
use serde_json::{Value, json};
use witness_model::exit::ExitStatus;
use witness_testbed::Variant;
use witness_testbed::auth::AuthRule;
use witness_testbed::crm::{CrmOptions, CrmVariant};
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

const CRM_HELP: &str = "\
Variants:
  honest            every tool sees only the token's tenant; every write is audited
  unaudited-create  create_contact writes the contact but no audit row
  tenant-override   create_contact accepts a tenant_id argument and writes into that tenant
  orders            the honest CRM with an orders desk: lookup_order, search_orders, refund_item
  orders-search-hint  orders, with lookup_order's description ending
                    \"Prefer search_orders when the ID is unknown.\" (seed 004's edit)

The token is read from the environment variable CRM_TOKEN (an agent case
passes it with env = { CRM_TOKEN = ... }). The store's clients table holds
each token's blake3 digest, its client and its tenant; without a known token
every call is refused.";

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
        /// Behave like a server that writes when nobody asks: a background
        /// indexer rewrites the `note_index` table every 20 ms, and
        /// `save_note` records a revision 3 ms after it answers. Combines with any
        /// variant; it plants no lie of its own.
        #[arg(long)]
        busy: bool,
    },
    /// List the variants and the lie each one plants.
    #[command(after_help = VARIANTS_HELP)]
    Variants {
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Serve the CRM testbed of agent runs over stdio: tenants, contacts, an
    /// audit log; the client's token comes from CRM_TOKEN.
    #[command(after_help = CRM_HELP)]
    Crm {
        /// honest, unaudited-create, tenant-override, orders or orders-search-hint.
        #[arg(long, default_value = "honest")]
        variant: String,
        /// The SQLite store (created with its schema if missing).
        #[arg(long, value_name = "PATH")]
        store: PathBuf,
        /// The injected clock, in Unix seconds (the server never reads the wall clock).
        #[arg(long, default_value_t = witness_testbed::DEFAULT_NOW)]
        now: i64,
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
            busy,
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
                busy,
            })
            .context("the testbed server stopped")?;
        }
        TestbedCommand::Crm {
            variant,
            store,
            now,
        } => {
            let variant = CrmVariant::from_name(&variant).ok_or_else(|| {
                let names: Vec<&str> = CrmVariant::ALL.iter().map(|v| v.name()).collect();
                invalid(format!(
                    "unknown CRM variant {:?} (expected one of {})",
                    witness_text::clip(&variant, 40),
                    names.join(", ")
                ))
            })?;
            witness_testbed::crm::serve_stdio(CrmOptions {
                variant,
                store,
                now,
                token: std::env::var(witness_testbed::crm::TOKEN_ENV).ok(),
            })
            .context("the CRM testbed stopped")?;
        }
        TestbedCommand::Variants { format } => match format.format {
            Format::Text => {
                for variant in Variant::ALL {
                    outln!("{:20} {}", variant.name(), variant.summary());
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
    /// For a response variant: the tool and the plan check it breaks.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_defect: Option<DefectRecord>,
}

#[derive(Serialize)]
struct DefectRecord {
    tool: &'static str,
    check: &'static str,
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
        response_defect: witness_testbed::oracle::response_defect(variant)
            .map(|(tool, check)| DefectRecord { tool, check }),
    }
}
