//! Case studies: the instrument on published servers we did not build.
//!
//! Three servers from the npm registry, at exactly the versions pinned in
//! `experiments/cases/package.json`, each audited against a throwaway copy of
//! its own kind of store with a plan from `experiments/cases/plans/`:
//!
//! | case | package | store | observer |
//! |---|---|---|---|
//! | `memory` | `@modelcontextprotocol/server-memory@2026.8.31` | JSONL file at `MEMORY_FILE_PATH` | `jsonl` (entities, relations) |
//! | `filesystem` | `@modelcontextprotocol/server-filesystem@2026.8.31` | a directory tree, its argument | `fs` (files, directories) |
//! | `sqlite` | `@executeautomation/database-server@1.1.0` | a SQLite file, its argument | `sqlite` (rows, schema) |
//!
//! Each case writes `case-<name>.json` (`mcp-witness.case/v1`: the server's
//! own annotations summarised, what was observed, the verdicts and notes
//! generated from the observations) and the full audit beside it in
//! `audits/case-<name>.json`. Nothing in a case file is written by hand: every
//! count and every note is computed from the audit.
//!
//! The packages are installed by `experiments/cases/install.sh`; when they
//! are missing, [`run_cases`] says how to install them and runs nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use witness_engine::audit::{self, AuditOptions, EraChoice};
use witness_engine::jail::{JailSpec, StoreKind, StoreSpec};
use witness_engine::plan::Plan;
use witness_model::audit::{
    AuditReport, CallStatus, CheckId, Effect, FindingKind, Op, ToolEntry, Verdict,
};
use witness_model::case::*;
use witness_model::exit::ExitStatus;

/// Where the pinned packages live, relative to the repository.
pub const CASES_DIR: &str = "experiments/cases";

/// The environment variable that points at another cases directory.
pub const CASES_DIR_ENV: &str = "MCP_WITNESS_CASES_DIR";

/// One published server and how it is audited.
#[derive(Clone, Copy, Debug)]
pub struct CaseSpec {
    /// `memory`, `filesystem`, `sqlite`: names the output files.
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    /// The executable under `node_modules/.bin`.
    pub bin: &'static str,
    pub publisher: &'static str,
    pub store_kind: StoreKind,
    /// The store's name in the audit (`{NAME}` in arguments and the plan).
    pub store_name: &'static str,
    /// The store's file name inside the jail (directory trees have none).
    pub store_file: &'static str,
    /// How the server is told where its store is.
    pub store_how: &'static str,
    /// Arguments after the executable.
    pub args: &'static [&'static str],
    /// Environment for the server.
    pub env: &'static [(&'static str, &'static str)],
    pub plan: &'static str,
}

/// The three case studies, in the order they run.
pub const CASES: [CaseSpec; 3] = [
    CaseSpec {
        name: "memory",
        package: "@modelcontextprotocol/server-memory",
        version: "2026.8.31",
        bin: "mcp-server-memory",
        publisher: "modelcontextprotocol (official reference server)",
        store_kind: StoreKind::Jsonl,
        store_name: "mem",
        store_file: "memory.jsonl",
        store_how: "MEMORY_FILE_PATH, an absolute path inside the jail",
        args: &[],
        env: &[("MEMORY_FILE_PATH", "{mem}")],
        plan: include_str!("../../experiments/cases/plans/memory.toml"),
    },
    CaseSpec {
        name: "filesystem",
        package: "@modelcontextprotocol/server-filesystem",
        version: "2026.8.31",
        bin: "mcp-server-filesystem",
        publisher: "modelcontextprotocol (official reference server)",
        store_kind: StoreKind::Fs,
        store_name: "fs",
        store_file: "",
        store_how: "the jailed tree, as the server's only allowed directory (argument)",
        args: &["{fs}"],
        env: &[],
        plan: include_str!("../../experiments/cases/plans/filesystem.toml"),
    },
    CaseSpec {
        name: "sqlite",
        package: "@executeautomation/database-server",
        version: "1.1.0",
        bin: "ea-database-server",
        publisher: "ExecuteAutomation (community)",
        store_kind: StoreKind::Sqlite,
        store_name: "db",
        store_file: "database.db",
        store_how: "the jailed database file (argument)",
        args: &["{db}"],
        env: &[],
        plan: include_str!("../../experiments/cases/plans/sqlite.toml"),
    },
];

/// Why the case studies could not run.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    #[error(
        "the case-study servers are not installed in {dir}: {problem}.\n\
         Install them (Node 20+ and npm needed) with:\n    bash {script}\n\
         or point {CASES_DIR_ENV} at a directory where that script has run."
    )]
    NotInstalled {
        dir: PathBuf,
        script: PathBuf,
        problem: String,
    },
    #[error("case {case}: {message}")]
    Case { case: String, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The outcome of all cases: their summaries and the exit code they add up to.
#[derive(Clone, Debug)]
pub struct CasesOutcome {
    pub cases: Vec<CaseReport>,
    /// Failed when a check failed in any case (evidence outranks a case that
    /// could not conclude); else incomplete when a case could not conclude.
    pub status: ExitStatus,
}

/// The cases directory: `$MCP_WITNESS_CASES_DIR`, else `experiments/cases`
/// under the working directory, else the one in the source tree this binary
/// was built from.
pub fn cases_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CASES_DIR_ENV) {
        return absolute_dir(Path::new(&dir));
    }
    let here = PathBuf::from(CASES_DIR);
    if here.join("package.json").is_file() {
        return std::env::current_dir().map_or(here.clone(), |cwd| cwd.join(here));
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CASES_DIR)
}

/// `dir` made absolute against the working directory. A case's server script
/// is an argument resolved inside the jail, whose working directory is not
/// ours, so a relative `--cases-dir` would name nothing there.
pub fn absolute_dir(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Whether every case's package is installed at its pinned version.
pub fn check_installed(dir: &Path) -> Result<(), CasesError> {
    let missing = |problem: String| CasesError::NotInstalled {
        dir: dir.to_path_buf(),
        script: dir.join("install.sh"),
        problem,
    };
    for case in CASES {
        let bin = dir.join("node_modules/.bin").join(case.bin);
        if !bin.exists() {
            return Err(missing(format!(
                "{} has no {}",
                case.package,
                bin.display()
            )));
        }
        let found = installed_package(dir, case.package)
            .and_then(|p| p.get("version").and_then(Value::as_str).map(str::to_owned));
        if found.as_deref() != Some(case.version) {
            return Err(missing(format!(
                "{} is {} but the case pins {}",
                case.package,
                found.as_deref().unwrap_or("unreadable"),
                case.version
            )));
        }
    }
    Ok(())
}

/// Whether the case studies can run here (for `lab all`).
pub fn installed() -> bool {
    check_installed(&cases_dir()).is_ok()
}

fn installed_package(dir: &Path, package: &str) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json"))
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// Runs every case against the packages in [`cases_dir`].
pub fn run_cases(out: &Path, progress: bool) -> Result<CasesOutcome, CasesError> {
    run_cases_in(&cases_dir(), out, progress)
}

/// Runs every case against the packages in `dir`, writing into `out`.
pub fn run_cases_in(dir: &Path, out: &Path, progress: bool) -> Result<CasesOutcome, CasesError> {
    let dir = &absolute_dir(dir);
    check_installed(dir)?;
    let audits = out.join("audits");
    std::fs::create_dir_all(&audits).map_err(|source| CasesError::Write {
        path: audits.clone(),
        source,
    })?;
    let mut cases = Vec::new();
    for case in CASES {
        if progress {
            eprintln!("case {}: {}@{}", case.name, case.package, case.version);
        }
        let (report, audit) = run_case(dir, &case)?;
        let audit_rel = format!("audits/case-{}.json", case.name);
        write_json(&out.join(&audit_rel), &audit)?;
        let summary = summarize(dir, &case, &report, audit_rel);
        write_json(&out.join(format!("case-{}.json", case.name)), &summary)?;
        if progress {
            let o = &summary.observed;
            eprintln!(
                "case {}: {} calls, {}c/{}u/{}d, {} outside the store; {}",
                case.name,
                o.calls,
                o.creates,
                o.updates,
                o.deletes,
                o.outside_stores,
                verdict_line(&summary)
            );
        }
        cases.push(summary);
    }
    // A code outside the rule cannot claim a concluded case.
    let status = ExitStatus::across(
        cases
            .iter()
            .map(|c| ExitStatus::from_code(c.exit_code.into()).unwrap_or(ExitStatus::Incomplete)),
    );
    Ok(CasesOutcome { cases, status })
}

fn verdict_line(case: &CaseReport) -> String {
    case.checks
        .iter()
        .map(|(id, c)| format!("{id} {}p/{}f/{}s/{}u", c.pass, c.fail, c.skip, c.untestable))
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), CasesError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CasesError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    })? + "\n";
    std::fs::write(path, text).map_err(|source| CasesError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The tree the filesystem case starts from.
const SEED_TREE: [(&str, &str); 2] = [
    (
        "docs/readme.md",
        "# Field notes\n\nThe lab keeps its notes here.\n",
    ),
    ("notes/todo.txt", "buy milk\nfix the gate\n"),
];

/// Audits one case. Returns the report and the audit document as written
/// (machine-specific paths replaced by placeholders).
fn run_case(dir: &Path, case: &CaseSpec) -> Result<(AuditReport, Value), CasesError> {
    let fail = |message: String| CasesError::Case {
        case: case.name.to_owned(),
        message,
    };
    let plan = Plan::parse(case.plan).map_err(|e| fail(format!("its plan is not valid: {e}")))?;
    let seed = tempfile::Builder::new()
        .prefix("mcp-witness-case-")
        .tempdir()
        .map_err(|e| fail(format!("cannot make a seed directory: {e}")))?;
    let source = match case.store_kind {
        StoreKind::Fs => {
            let tree = seed.path().join("tree");
            for (path, content) in SEED_TREE {
                let file = tree.join(path);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| fail(format!("cannot seed the tree: {e}")))?;
                }
                std::fs::write(&file, content)
                    .map_err(|e| fail(format!("cannot seed the tree: {e}")))?;
            }
            tree
        }
        // Not created: the store starts empty in the jail.
        StoreKind::Jsonl | StoreKind::Sqlite => seed.path().join(case.store_file),
    };
    let bin = dir.join("node_modules/.bin").join(case.bin);
    let mut command = vec!["node".to_owned(), bin.to_string_lossy().into_owned()];
    command.extend(case.args.iter().map(|a| (*a).to_owned()));
    let options = AuditOptions {
        jail: JailSpec {
            command,
            stores: vec![StoreSpec {
                name: case.store_name.to_owned(),
                kind: case.store_kind,
                source: source.clone(),
                shown: Some(format!("case seed for {}", case.name)),
            }],
            env: case
                .env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            keep: false,
            isolate_network: true,
        },
        era: EraChoice::Auto,
        plan: Some(plan),
        timeout: Duration::from_secs(20),
        settle: Duration::from_millis(100),
        deterministic: true,
        probe: Box::new(witness_probes::NullProbe),
        label: Some(format!(
            "case {}: {}@{}",
            case.name, case.package, case.version
        )),
        pinned_version: Some(case.version.to_owned()),
        events: Default::default(),
        include_destructive: true,
    };
    let run = audit::run(options).map_err(|e| fail(e.to_string()))?;
    let mut report = run.report;
    for store in &mut report.stores {
        store.path = initial_state(case).to_owned();
    }
    // The cases directory and the seed differ per machine and run.
    let mut value = serde_json::to_value(&report).map_err(|e| fail(e.to_string()))?;
    let dir_text = dir.to_string_lossy().into_owned();
    let seed_text = seed.path().to_string_lossy().into_owned();
    replace_strings(
        &mut value,
        &[(&dir_text, "{cases}"), (&seed_text, "{seed}")],
    );
    let report = serde_json::from_value(value.clone()).map_err(|e| fail(e.to_string()))?;
    Ok((report, value))
}

fn initial_state(case: &CaseSpec) -> &'static str {
    match case.store_kind {
        StoreKind::Fs => "seed tree: docs/readme.md, notes/todo.txt",
        StoreKind::Jsonl => "empty (no file; the server creates it on its first change)",
        StoreKind::Sqlite => "empty (no file; the server creates it at start)",
    }
}

fn replace_strings(value: &mut Value, pairs: &[(&str, &str)]) {
    match value {
        Value::String(s) => {
            for (from, to) in pairs {
                if !from.is_empty() && s.contains(from) {
                    *s = s.replace(from, to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, pairs)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, pairs)),
        _ => {}
    }
}

/// Counts, verdicts and notes of one case, all read from its audit.
pub fn summarize(dir: &Path, case: &CaseSpec, report: &AuditReport, audit: String) -> CaseReport {
    let description = installed_package(dir, case.package)
        .and_then(|p| {
            p.get("description")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    CaseReport {
        schema: CASE_SCHEMA.into(),
        name: case.name.into(),
        server: CaseServer {
            package: case.package.into(),
            version: case.version.into(),
            bin: case.bin.into(),
            publisher: case.publisher.into(),
            description,
            server_info: report.era.server_info.clone(),
            protocol_version: report.era.protocol_version.clone(),
        },
        store: CaseStore {
            kind: case.store_kind.as_str().into(),
            observer: observer_description(case.store_kind).into(),
            how: case.store_how.into(),
            initial: initial_state(case).into(),
        },
        annotations: annotation_summary(&report.tools),
        observed: observed_summary(report),
        checks: check_summary(report),
        complete: report.complete,
        incomplete_reason: report.incomplete_reason.clone(),
        exit_code: report.exit_code,
        notes: notes(report),
        audit,
    }
}

fn observer_description(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Jsonl => {
            "jsonl: one object per line, entity/<name> and relation/<from>-><to>:<type>, canonical JSON digests"
        }
        StoreKind::Fs => {
            "fs: file/<path> (blake3 of content), dir/<path>, link/<path> (never followed)"
        }
        StoreKind::Sqlite => {
            "sqlite: <table>/<key> per row and sqlite_master/<type>:<name> per schema entry, read from a private copy"
        }
    }
}

pub fn annotation_summary(tools: &[ToolEntry]) -> AnnotationSummary {
    AnnotationSummary {
        tools: tools.len(),
        declared: tools.iter().filter(|t| t.hints.declares_anything()).count(),
        read_only: tools
            .iter()
            .filter(|t| t.hints.read_only == Some(true))
            .count(),
        destructive: tools
            .iter()
            .filter(|t| t.hints.destructive == Some(true))
            .count(),
        idempotent: tools
            .iter()
            .filter(|t| t.hints.idempotent == Some(true))
            .count(),
    }
}

fn observed_summary(report: &AuditReport) -> ObservedSummary {
    let mut by_tool: BTreeMap<String, ToolObserved> = BTreeMap::new();
    for call in &report.calls {
        let entry = by_tool.entry(call.tool.clone()).or_default();
        if call.outcome.status != CallStatus::NotSent {
            entry.calls += 1;
        }
        if !call.succeeded() {
            entry.failed += 1;
        }
        for effect in call.effects.iter().filter(|e| !e.outside_stores()) {
            match effect.op.as_str() {
                "create" => entry.creates += 1,
                "update" => entry.updates += 1,
                _ => entry.deletes += 1,
            }
        }
    }
    ObservedSummary {
        calls: report
            .calls
            .iter()
            .filter(|c| c.outcome.status != CallStatus::NotSent)
            .count(),
        creates: report.summary.creates,
        updates: report.summary.updates,
        deletes: report.summary.deletes,
        outside_stores: report.summary.outside_stores,
        at_startup: report.startup_effects.len(),
        by_tool,
    }
}

fn check_summary(report: &AuditReport) -> BTreeMap<String, CheckSummary> {
    let mut out: BTreeMap<String, CheckSummary> = BTreeMap::new();
    for check in &report.checks {
        let entry = out.entry(check.id.to_string()).or_default();
        match check.verdict {
            Verdict::Pass => entry.pass += 1,
            Verdict::Fail => entry.fail += 1,
            Verdict::Skip => entry.skip += 1,
            Verdict::Untestable => entry.untestable += 1,
        }
        entry.tools.insert(check.tool.clone(), check.verdict);
    }
    out
}

/// `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn verdict_tools(report: &AuditReport, id: CheckId, verdict: Verdict) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| c.id == id && c.verdict == verdict)
        .map(|c| c.tool.clone())
        .collect()
}

fn effect_list(effects: &[&Effect]) -> String {
    let items: Vec<String> = effects
        .iter()
        .map(|e| format!("{} of {}", e.op, e.object))
        .collect();
    list(&items)
}

/// Sentences a reader can check against the audit, generated from it.
pub fn notes(report: &AuditReport) -> Vec<String> {
    let mut notes = Vec::new();
    let a = annotation_summary(&report.tools);
    if !report.complete {
        notes.push(format!(
            "The audit did not conclude: {}. Nothing below is evidence against the server.",
            report
                .incomplete_reason
                .as_deref()
                .unwrap_or("no reason recorded")
        ));
    }
    if a.declared == 0 {
        notes.push(format!(
            "None of the {} tools declares any annotation, so EFF-01 and EFF-03 skip for every tool: there is no claim to hold to what was observed.",
            a.tools
        ));
    } else {
        notes.push(format!(
            "{} of {} tools declare annotations: {} readOnlyHint true, {} destructiveHint true, {} idempotentHint true.",
            a.declared,
            a.tools,
            a.read_only,
            a.destructive,
            a.idempotent
        ));
    }
    let ro_pass = verdict_tools(report, CheckId::Eff01, Verdict::Pass);
    if !ro_pass.is_empty() {
        notes.push(format!(
            "{} declared read-only ({}) caused no observed change: EFF-01 holds against the server's own declarations.",
            plural(ro_pass.len(), "tool", "tools"),
            list(&ro_pass)
        ));
    }
    for check in report.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
        notes.push(format!(
            "{} fails for {}: {}.",
            check.id, check.tool, check.reason
        ));
    }
    let idem_pass = verdict_tools(report, CheckId::Eff03, Verdict::Pass);
    if !idem_pass.is_empty() {
        notes.push(format!(
            "Declared idempotent and repeated with identical arguments, {} changed nothing on the repeat: the claim held under an actual repeat, not by trust.",
            list(&idem_pass)
        ));
    }
    for call in &report.calls {
        let inside: Vec<&Effect> = call
            .effects
            .iter()
            .filter(|e| !e.outside_stores())
            .collect();
        let creates: Vec<&Effect> = inside
            .iter()
            .copied()
            .filter(|e| e.op == Op::Create)
            .collect();
        let deletes: Vec<&Effect> = inside
            .iter()
            .copied()
            .filter(|e| e.op == Op::Delete)
            .collect();
        let updates: Vec<&Effect> = inside
            .iter()
            .copied()
            .filter(|e| e.op == Op::Update)
            .collect();
        if !creates.is_empty() && !deletes.is_empty() {
            let eff02 = report
                .check(CheckId::Eff02, &call.tool)
                .map(|c| {
                    format!(
                        "EFF-02 reads every target, so the delete is judged: {} ({})",
                        c.verdict.as_str(),
                        c.reason
                    )
                })
                .unwrap_or_default();
            notes.push(format!(
                "Call {} ({}) was observed as {} together with {}. {eff02}.",
                call.id,
                call.tool,
                effect_list(&creates),
                effect_list(&deletes)
            ));
        }
        if !updates.is_empty() && creates.is_empty() && deletes.is_empty() {
            let kinds: Vec<String> = updates
                .iter()
                .map(|e| {
                    let how = if e.is_destructive() {
                        "content changed or removed"
                    } else {
                        "content only added"
                    };
                    format!("{} ({how})", e.object)
                })
                .collect();
            notes.push(format!(
                "Call {} ({}) changed objects in place: an update of {}, not a create or delete.",
                call.id,
                call.tool,
                list(&kinds)
            ));
        }
        for table in creates
            .iter()
            .filter_map(|e| e.object.strip_prefix("sqlite_master/table:"))
        {
            let prefix = format!("{table}/");
            if !inside.iter().any(|e| e.object.starts_with(&prefix)) {
                notes.push(format!(
                    "Call {} ({}) created table {table} with no row in it; the observer sees it as the schema object sqlite_master/table:{table}, so an empty table is still an observed effect.",
                    call.id, call.tool
                ));
            }
        }
    }
    // Declared writes that, this time, changed nothing (a duplicate create, a
    // refused drop): the absence of an effect is an observation too.
    for call in report
        .calls
        .iter()
        .filter(|c| c.repeat_of.is_none() && c.succeeded() && c.effects.is_empty())
    {
        let declared_write = report
            .tool(&call.tool)
            .is_some_and(|t| t.hints.read_only == Some(false));
        if declared_write {
            notes.push(format!(
                "Call {} ({}), a tool declared to write, succeeded and changed no object.",
                call.id, call.tool
            ));
        }
    }
    // Tools that declare nothing yet changed the store: observation does not
    // depend on annotations.
    for tool in report.tools.iter().filter(|t| !t.hints.declares_anything()) {
        let effects: Vec<&Effect> = report
            .calls
            .iter()
            .filter(|c| c.tool == tool.name)
            .flat_map(|c| c.effects.iter())
            .collect();
        if !effects.is_empty() {
            notes.push(format!(
                "{} declares nothing, and its calls made {}.",
                tool.name,
                effect_list(&effects)
            ));
        }
    }
    let destructive_undeclared: Vec<String> = report
        .checks
        .iter()
        .filter(|c| c.id == CheckId::Eff02 && c.verdict == Verdict::Pass)
        .filter(|c| c.reason.contains("default for an unset destructiveHint"))
        .map(|c| c.tool.clone())
        .collect();
    if !destructive_undeclared.is_empty() {
        notes.push(format!(
            "The deletes or overwrites of {} are covered by the specification's default for an unset destructiveHint (true): consistent, not a contradiction.",
            list(&destructive_undeclared)
        ));
    }
    let outside: Vec<String> = report
        .calls
        .iter()
        .flat_map(|c| {
            c.effects
                .iter()
                .filter(|e| e.outside_stores())
                .map(move |e| format!("call {} {} {}", c.id, e.op, e.object))
        })
        .collect();
    if outside.is_empty() {
        notes.push(
            "Nothing changed in the jail outside the declared store (HOME, TMPDIR, working directory) during any call: EFF-05 passes where a tool changed the store and skips where it changed nothing.".into(),
        );
    } else {
        notes.push(format!(
            "Changes outside the declared store: {}.",
            list(&outside)
        ));
    }
    if !report.startup_effects.is_empty() {
        let effects: Vec<&Effect> = report.startup_effects.iter().collect();
        notes.push(format!(
            "At start, before any call, the server made {}.",
            effect_list(&effects)
        ));
    }
    let failed: Vec<String> = report
        .calls
        .iter()
        .filter(|c| !c.succeeded())
        .map(|c| {
            format!(
                "call {} ({}, {})",
                c.id,
                c.tool,
                status_name(c.outcome.status)
            )
        })
        .collect();
    if !failed.is_empty() {
        notes.push(format!(
            "{} did not succeed: {}.",
            plural(failed.len(), "call", "calls"),
            list(&failed)
        ));
    }
    let warnings = report
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::ObserverWarning)
        .count();
    if warnings > 0 {
        notes.push(format!(
            "The observer reported {} (see the audit's findings); none stopped the observation.",
            plural(warnings, "warning", "warnings")
        ));
    }
    if report.probe == "null" {
        notes.push(
            "No probe exercises this store's objects (NullProbe): authority is unknown and EFF-06 skips.".into(),
        );
    }
    notes
}

fn status_name(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Ok => "ok",
        CallStatus::ToolError => "tool error",
        CallStatus::RpcError => "JSON-RPC error",
        CallStatus::TransportError => "transport error",
        CallStatus::NotSent => "not sent",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_relative_cases_dir_is_made_absolute_against_the_working_directory() {
        let cwd = std::env::current_dir().unwrap_or_default();
        let dir = absolute_dir(Path::new("experiments/cases"));
        assert!(dir.is_absolute(), "{}", dir.display());
        assert_eq!(dir, cwd.join("experiments/cases"));
        let dir = absolute_dir(Path::new("./some/cases"));
        assert!(dir.is_absolute());
        assert!(dir.starts_with(&cwd));
        assert!(dir.ends_with("some/cases"));
        assert_eq!(
            absolute_dir(Path::new("/abs/cases")),
            Path::new("/abs/cases")
        );
    }

    use super::*;

    #[test]
    fn every_case_plan_parses_and_names_a_pinned_version() {
        for case in CASES {
            let plan = Plan::parse(case.plan);
            assert!(plan.is_ok(), "{}: {:?}", case.name, plan.err());
            assert!(!case.version.is_empty());
        }
        let pins = include_str!("../../experiments/cases/package.json");
        let pins: Value = serde_json::from_str(pins).unwrap_or_default();
        for case in CASES {
            assert_eq!(
                pins["dependencies"][case.package].as_str(),
                Some(case.version),
                "{} is pinned in experiments/cases/package.json",
                case.package
            );
        }
    }

    #[test]
    fn a_missing_install_says_how_to_install() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(dir) = dir else {
            panic!("tempdir");
        };
        let err = check_installed(dir.path()).err().map(|e| e.to_string());
        let text = err.unwrap_or_default();
        assert!(text.contains("install.sh"), "{text}");
        assert!(text.contains("not installed"), "{text}");
    }
}
