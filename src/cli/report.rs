//! `mcp-witness report`: the pages re-rendered from JSON already written.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use witness_model::exit::ExitStatus;

use super::PagesArgs;
use crate::exit::invalid;

const HELP: &str = "\
Reads DIR/e1.json, e2.json, e3.json, case-*.json and DIR/audits/*.json, and
writes DIR/summary.md, PAGES/index.html and PAGES/effect-report-<audit>.html
(PAGES is --pages, or DIR). Nothing is run: the pages are exactly what the
JSON says. `lab` renders the same pages at the end of its run.

  mcp-witness report experiments/results --pages reports";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct ReportArgs {
    /// The results directory holding the JSON documents.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    pages: PagesArgs,
}

/// Renders the pages; nothing is judged, so a rendered set passes.
pub fn run(args: ReportArgs) -> Result<ExitStatus> {
    if !args.dir.is_dir() {
        return Err(invalid(format!(
            "{}: not a results directory",
            args.dir.display()
        )));
    }
    let pages = args.pages.dir(&args.dir)?;
    render_pages(&args.dir, &pages)?;
    Ok(ExitStatus::Passed)
}

/// Renders every page of the results in `data` into `pages` (also what `lab`
/// ends with).
pub fn render_pages(data: &Path, pages: &Path) -> Result<()> {
    let rendered = witness_pages::render_all(data, pages)?;
    for warning in &rendered.warnings {
        errln!("mcp-witness: {warning}");
    }
    errln!(
        "mcp-witness: results in {} (summary.md, *.json, audits/); open {} in a browser",
        data.display(),
        pages.join("index.html").display()
    );
    Ok(())
}
