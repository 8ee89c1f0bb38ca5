//! `mcp-witness schema`: the JSON Schema of a versioned document, from the
//! model's registry (the same text as the committed `docs/schemas/` files).

use anyhow::{Result, anyhow};
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser};
use witness_model::exit::ExitStatus;
use witness_model::schema::{DOCUMENTS, find};

const HELP: &str = "\
The same text is committed as docs/schemas/<id with / as .>.json, e.g.
docs/schemas/mcp-witness.audit.v1.json; a test keeps the two in step.

  mcp-witness schema plan > plan.schema.json";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct SchemaArgs {
    /// Which document.
    #[arg(value_name = "DOCUMENT", value_parser = documents())]
    document: String,
}

/// The registry's names, each with its versioned id and what writes it.
fn documents() -> PossibleValuesParser {
    PossibleValuesParser::new(
        DOCUMENTS
            .iter()
            .map(|d| PossibleValue::new(d.name).help(format!("{} ({})", d.id, d.written_by))),
    )
}

/// Prints the schema.
pub fn run(args: SchemaArgs) -> Result<ExitStatus> {
    // The parser admits registry names only; a miss here is a bug, not input.
    let document =
        find(&args.document).ok_or_else(|| anyhow!("no document named {:?}", args.document))?;
    out!("{}", document.schema_text()?);
    Ok(ExitStatus::Passed)
}
