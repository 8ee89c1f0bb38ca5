//! Plans: which tools to call, in what order, with which arguments.
//!
//! A plan file (TOML) lists calls with literal arguments or arguments taken
//! from an earlier result:
//!
//! ```toml
//! [[call]]
//! tool = "save_note"
//! args = { id = "draft", body = "hello" }
//!
//! [[call]]
//! tool = "mint_api_key"
//! args = { grant_id = "grant_0001" }
//!
//! [[call]]
//! tool = "revoke_api_key"
//! args.key_id = { from = "call 2", path = "json.id" }
//! ```
//!
//! A call may carry checks (seed 000's check types), judged by the response
//! lane: a name, or a table whose `type` is the name and whose other keys
//! are its parameters:
//!
//! ```toml
//! [[call]]
//! tool = "search_notes"
//! args = { query = "a" }
//! checks = ["succeeds", "output_schema", { type = "max_items", limit = 50 }]
//! ```
//!
//! An inline table with exactly the keys `from` and `path` is a reference; any
//! other table is a literal object. `path` is read against a view of the
//! earlier result: `structured` (its `structuredContent`), `text` (its first
//! text content) and `json` (that text parsed as JSON), followed by `.key` and
//! `[index]` steps: `json.items[0].id`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

pub mod cues;
pub mod harvest;
pub mod names;
pub mod preview;
pub mod result;
pub mod rows;
pub mod seeds;
pub mod sql;
pub mod strategy;
pub mod synth;

use witness_model::audit::{
    Argument, ArgumentPart, CallForm, CheckId, Expectation, Origin, Provenance, ToolEntry,
};

use cues::{PathKind, SqlKind, ToolCues};
use harvest::{Harvested, Pool, Source};
use result::{lookup, parse_path, result_view};

/// How one argument's value is obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    Literal(Value),
    From {
        step: u32,
        path: String,
    },
    Synthesized(Value),
    /// A harvested value when one fits at call time, else this synthesized
    /// one. For a structured value, every scalar inside it is looked up the
    /// same way, by the key it sits under.
    Auto(Value),
    /// A value the input schema itself offers (`const`, `enum`, `default`,
    /// `examples`, a value quoted in its description). Recorded as
    /// `synthesized`, but it invents nothing, so it does not keep a
    /// read-only tool out of the harvest pass.
    Pinned(Value),
    /// A fresh name for the thing this tool makes (`witness-<tool>`); for a
    /// path, made under the first directory store's root. Never filled from
    /// the harvest; once a call on it succeeds, later calls that refer to
    /// such a thing use it.
    Fresh(Value),
    /// A SQL statement of this kind, on a real table, written at call time.
    Sql(SqlKind),
    /// A real value a strategy chose for this call (the next object of the
    /// store after one was not found), recorded with its own provenance.
    Chosen(Box<Harvested>),
    /// An optional parameter filled only when a real value fits at call
    /// time (the store's root for an optional `directory`); otherwise left
    /// out, as the schema allows.
    IfReal(Value),
}

/// One planned call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanStep {
    pub tool: String,
    pub args: Vec<(String, ArgSpec)>,
    /// What the planner read from the tool's name and description to fill
    /// its arguments (default for a plan file's steps).
    pub cues: ToolCues,
}

/// A value a call will have made if it succeeds, to be offered to later
/// calls as the plan's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Created {
    /// The argument that named it (`path`, `branch_name`), or `table_name`
    /// for the table a `CREATE TABLE` makes.
    pub key: String,
    pub value: Value,
    pub shape: Option<PathKind>,
}

/// A step's arguments, resolved: the object sent, the ledger's record of
/// each argument, and what the call makes if it succeeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub arguments: Value,
    pub recorded: Vec<Argument>,
    pub creates: Vec<Created>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub steps: Vec<PlanStep>,
    /// Where the plan came from: `file` or `synthesized`.
    pub origin: &'static str,
    /// In a synthesized plan, the step before which tools that failed on
    /// invented arguments get one more try with harvested ones (before any
    /// tool that removes things runs).
    pub retry_at: Option<usize>,
    /// In a synthesized plan, how many leading steps form the harvest pass:
    /// read-only tools, each run only once every required argument can be
    /// filled without inventing anything. The steps after them call every
    /// tool not already called in that pass.
    pub harvest: usize,
    /// The checks a plan file attaches, by plan step (`call N`, from 1).
    pub expect: BTreeMap<u32, Vec<Expectation>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    #[serde(default)]
    call: Vec<CallFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallFile {
    tool: String,
    #[serde(default)]
    args: BTreeMap<String, toml::Value>,
    #[serde(default)]
    checks: Vec<toml::Value>,
}

/// Pages a pagination check may follow at most (the catalog's own bound).
pub const MAX_PAGES: u32 = 20;

/// Why a plan file was refused. One line each, for exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("cannot read plan {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("plan {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

impl Plan {
    /// Reads and validates a plan file (references must point backwards).
    pub fn load(path: &Path) -> Result<Self, PlanError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text).map_err(|message| PlanError::Invalid {
            path: shown,
            message,
        })
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let file: PlanFile = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
        if file.call.is_empty() {
            return Err("it lists no [[call]]".into());
        }
        let mut steps = Vec::new();
        let mut expect = BTreeMap::new();
        for (i, call) in file.call.into_iter().enumerate() {
            let this = i as u32 + 1;
            let checks = call
                .checks
                .iter()
                .enumerate()
                .map(|(n, c)| {
                    expectation(c).map_err(|e| format!("call {this} check {}: {e}", n + 1))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if !checks.is_empty() {
                expect.insert(this, checks);
            }
            let mut args = Vec::new();
            for (name, value) in call.args {
                let spec = match reference(&value) {
                    Some((from, path)) => {
                        let step = parse_call_ref(&from).ok_or_else(|| {
                            format!(
                                "call {this} argument {name}: from = {from:?} must be \"call N\""
                            )
                        })?;
                        if step == 0 || step >= this {
                            return Err(format!(
                                "call {this} argument {name}: from = {from:?} must name an earlier call"
                            ));
                        }
                        parse_path(&path).map_err(|e| {
                            format!("call {this} argument {name}: path {path:?}: {e}")
                        })?;
                        ArgSpec::From { step, path }
                    }
                    None => {
                        ArgSpec::Literal(serde_json::to_value(&value).map_err(|e| e.to_string())?)
                    }
                };
                args.push((name, spec));
            }
            steps.push(PlanStep {
                tool: call.tool,
                args,
                cues: ToolCues::default(),
            });
        }
        Ok(Plan {
            steps,
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect,
        })
    }

    /// Tools the plan names that the server does not list.
    pub fn unknown_tools<'a>(&'a self, tools: &[ToolEntry]) -> Vec<&'a str> {
        self.steps
            .iter()
            .map(|s| s.tool.as_str())
            .filter(|name| !tools.iter().any(|t| t.name == *name))
            .collect()
    }

    /// The planner's plan: a harvest pass, then one call per tool.
    ///
    /// Nothing in it reads the annotations: the plan of a catalog is the
    /// same whatever its tools declare, so a tool that lies is asked exactly
    /// what it would be asked were it honest, and a verdict on the claim
    /// rests on the calls the honest tool got. What orders the calls is what
    /// the tools are named and take.
    ///
    /// The harvest pass lists the tools whose names say they list or read
    /// and nothing that they write ([`reads_by_name`]), list and search
    /// shapes first, then those with fewer required parameters; the audit
    /// runs each of them only once all its required arguments can be filled
    /// from what was harvested so far (or are fixed by the schema), and
    /// repeats until nothing more can run.
    ///
    /// Then every tool not yet called, ordered so that later calls have
    /// something real to act on: listers, then listers of what another
    /// lists, readers, creators, the rest, and tools whose names say they
    /// take things away last. A form that replaces a file that exists (a
    /// writer's overwrite form) waits until after the removers, before
    /// only the tools that bring things back, so that what the store held
    /// is intact for every tool that reads or removes a part of it.
    pub fn synthesized(tools: &[ToolEntry]) -> Self {
        let listed = listed_nouns(tools);
        let mut reads: Vec<&ToolEntry> = tools.iter().filter(|t| reads_by_name(&t.name)).collect();
        reads.sort_by_key(|t| {
            let required = t
                .input_schema
                .as_ref()
                .and_then(|s| s.get("required"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            (!lists_by_name(&t.name), required, t.name.clone())
        });
        let made: Vec<(String, String)> = tools
            .iter()
            .filter(|t| adds_by_name(&t.name))
            .map(|t| (ToolCues::of(t).noun, t.name.clone()))
            .filter(|(noun, _)| !noun.is_empty())
            .collect();
        // A remover of what another tool takes (`delete_project`, whose
        // project `delete_chunk` needs) runs after that one.
        let needed: Vec<String> = tools.iter().flat_map(required_stems).collect();
        let contains_others = |t: &ToolEntry| {
            let noun = ToolCues::of(t).noun;
            let own = required_stems(t);
            !noun.is_empty()
                && needed.iter().filter(|n| **n == noun).count()
                    > own.iter().filter(|n| **n == noun).count()
        };
        let mut ordered: Vec<&ToolEntry> = tools.iter().collect();
        ordered.sort_by_cached_key(|t| {
            let ends = takes_away(&t.name);
            (
                late_phase(&t.name).max(u8::from(relocates_by_path(t))),
                ends && contains_others(t),
                unannotated_phase(t, &listed),
                needs_made(t, &made),
                !adds_by_name(&t.name),
                t.name.clone(),
            )
        });
        let harvest = reads.len();
        // The harvest pass asks reader-shaped; the main pass asks every
        // form a tool's cues name, whatever it declares (a claim probe).
        let reads = reads.into_iter().map(|t| reader_shaped(planned_step(t)));
        let mut main = Vec::new();
        let mut retry_at = None;
        // Forms that replace a file the store holds wait until every tool
        // that reads or changes what is inside it has run, the removers
        // too, and come before only what brings things back: a workbook
        // replaced by a new one leaves `delete_sheet` no sheet to delete.
        let mut replacing: Vec<PlanStep> = Vec::new();
        for tool in ordered {
            if retry_at.is_none() && (takes_away(&tool.name) || relocates_by_path(tool)) {
                retry_at = Some(harvest + main.len());
            }
            if late_phase(&tool.name) == BRINGS_BACK {
                // With no remover or ender before it, the retries come
                // before the replacing forms too, as they do otherwise.
                retry_at.get_or_insert(harvest + main.len());
                main.append(&mut replacing);
            }
            let step = planned_step(tool);
            // A tool with an operation enum is asked each operation.
            let each = strategy::operations::operation_forms(
                &step,
                tool.input_schema.as_ref(),
                tool.description.as_deref(),
            );
            // A tool that writes only when asked is also asked so.
            let switched = strategy::switches::switched_form(&step, tool.input_schema.as_ref());
            let all = if each.is_empty() {
                forms(step)
            } else {
                each.into_iter().flat_map(forms).collect()
            };
            for form in all.into_iter().chain(switched.into_iter().flat_map(forms)) {
                if form.cues.existing_target {
                    replacing.push(form);
                } else {
                    main.push(form);
                }
            }
        }
        let retry_at = retry_at.unwrap_or(harvest + main.len());
        main.append(&mut replacing);
        let steps = reads.chain(main).collect();
        Plan {
            steps,
            origin: "synthesized",
            retry_at: Some(retry_at),
            harvest,
            expect: BTreeMap::new(),
        }
    }

    /// Drops every step of the named tools (the retry point and the harvest
    /// pass shrink with them).
    pub fn without(mut self, tools: &[&str]) -> Self {
        let mut kept = Vec::new();
        let mut harvest = 0;
        let mut retry_at = None;
        for (i, step) in self.steps.into_iter().enumerate() {
            if self.retry_at == Some(i) {
                retry_at = Some(kept.len());
            }
            if tools.contains(&step.tool.as_str()) {
                continue;
            }
            if i < self.harvest {
                harvest += 1;
            }
            kept.push(step);
        }
        if self.retry_at.is_some() && retry_at.is_none() {
            retry_at = Some(kept.len());
        }
        self.steps = kept;
        self.harvest = harvest;
        self.retry_at = retry_at;
        self
    }
}

impl PlanStep {
    /// Gives argument `name` by `spec`, added when the step had none: how a
    /// strategy makes a form of a planned step.
    pub fn set(&mut self, name: &str, spec: ArgSpec) {
        match self.args.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) => *old = spec,
            None => self.args.push((name.to_owned(), spec)),
        }
    }

    /// Whether this step asks the tool to make, change or remove
    /// something: a fresh name or place, a SQL statement that writes, or a
    /// switch thrown to the side its name says writes (`save_to_file:
    /// true`, [`strategy::switches`]). A tool the harvest pass already
    /// called is called again in such a step, since its reader-shaped call
    /// could never have shown a write.
    pub fn writer_shaped(&self) -> bool {
        self.args.iter().any(|(name, spec)| match spec {
            ArgSpec::Fresh(_) => true,
            ArgSpec::Sql(kind) => *kind != SqlKind::Select,
            ArgSpec::Pinned(Value::Bool(on)) => strategy::switches::writing_side(name) == Some(*on),
            _ => false,
        })
    }
}

/// What `step`, resolved, asks its tool to do: the form a verdict on a
/// claim rests on. A SQL statement says it by its first keyword, as sent;
/// otherwise a tool named to change or remove things changes what its
/// arguments name, a fresh name or a creator's name makes something, and
/// the rest reads. A plan file's step (no cues) has no form: what it asks
/// is its author's to say.
pub fn form_of(step: &PlanStep, resolved: &Resolved) -> Option<CallForm> {
    if step.cues.tool.is_empty() {
        return None;
    }
    let statement = step.args.iter().find_map(|(name, spec)| match spec {
        ArgSpec::Sql(_) => Some(
            resolved
                .arguments
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
        _ => None,
    });
    if let Some(statement) = statement {
        return Some(sql::form_of(statement));
    }
    if let Some(form) = strategy::operations::form_of_step(step) {
        return Some(form);
    }
    let fresh = step
        .args
        .iter()
        .any(|(name, spec)| matches!(spec, ArgSpec::Fresh(_)) && !step.cues.new_place(name));
    Some(
        if step.cues.changes() || (step.cues.overwrites() && !fresh) {
            CallForm::Change
        } else if fresh || step.cues.creator {
            CallForm::Create
        } else {
            CallForm::Read
        },
    )
}

/// `step` asked as a reader would ask it: every fresh name but a place to
/// move to becomes a real value when one fits, and no SQL writes.
fn reader_shaped(mut step: PlanStep) -> PlanStep {
    let cues = step.cues.clone();
    for (name, spec) in &mut step.args {
        match spec {
            ArgSpec::Fresh(v) if !cues.new_place(name) => *spec = ArgSpec::Auto(v.clone()),
            ArgSpec::Sql(_) => *spec = ArgSpec::Sql(SqlKind::Select),
            _ => {}
        }
    }
    step.cues.creator = false;
    step
}

/// The overwrite form of a step that writes a file by path (or writes its
/// output to a path it is given: `out_path` of `create_word`, `output` of
/// `pdf_compress`): the same call pointed at a file that exists, one the
/// store held, else the one the create form made. `None` for any other
/// step. Also asked after a retry that first gave such a step its path.
pub(crate) fn overwrite_form(step: &PlanStep) -> Option<PlanStep> {
    let file_write = step.args.iter().any(|(name, spec)| {
        matches!(spec, ArgSpec::Fresh(_))
            && step.cues.path_kind(name) == Some(PathKind::File)
            && ((!step.cues.new_place(name) && step.cues.overwrites())
                || step.cues.output_place(name))
    });
    if !file_write {
        return None;
    }
    let mut overwrite = step.clone();
    for (name, spec) in &mut overwrite.args {
        // New content, so that replacing a file with what it held
        // already (the create form's own bytes) cannot pass for
        // an overwrite that changed nothing.
        if let ArgSpec::Auto(Value::String(text)) | ArgSpec::Synthesized(Value::String(text)) = spec
            && step.cues.path_kind(name).is_none()
        {
            text.push_str(" (overwritten)");
        }
    }
    aim_at_existing(&mut overwrite, |cues, name| {
        !cues.new_place(name) || cues.output_place(name)
    });
    overwrite.cues.creator = false;
    Some(overwrite)
}

/// Points `form` at things that exist: every fresh argument `aims` picks
/// is filled at call time instead, from a file the store held, else one
/// the plan made. Never a name of its own: a server that adds its own
/// extension or folder to a bare name would make a new file, and a form
/// meant to replace would replace nothing.
pub(crate) fn aim_at_existing(form: &mut PlanStep, aims: impl Fn(&ToolCues, &str) -> bool) {
    let cues = form.cues.clone();
    for (name, spec) in &mut form.args {
        if let ArgSpec::Fresh(v) = spec
            && aims(&cues, name)
        {
            *spec = ArgSpec::Auto(v.clone());
        }
    }
    form.cues.store_first = true;
    form.cues.existing_target = true;
}

/// Every form a writer's cues name, in the order that leaves something to
/// act on: `step` itself (the create form), then an overwrite of a real
/// file of the store for a tool that writes files by path (or writes its
/// output to a path it is given: `out_path` of `create_word`, `output` of
/// `pdf_compress`, pointed at a file of that kind the store held), then each
/// further SQL form its text names (a delete of the row its insert made).
/// A declaration never removes a form: a tool that says it only adds is
/// asked to overwrite and delete too, and an honest one refuses or does
/// what it declared.
fn forms(step: PlanStep) -> Vec<PlanStep> {
    let mut out = vec![step.clone()];
    out.extend(overwrite_form(&step)); // A creator whose text says it makes a missing table is also asked to
    // write into a table of its own: the store's tables may not take the
    // row it writes, and a lie about making things would then never show.
    if step.cues.makes_missing_tables() {
        let mut own = step.clone();
        let mut named = false;
        for (name, spec) in &mut own.args {
            if rows::is_table_param(name) && !matches!(spec, ArgSpec::Fresh(_)) {
                *spec = ArgSpec::Fresh(Value::String(sql::fresh_table(&step.tool)));
                named = true;
            }
        }
        if named {
            out.push(own);
        }
    }
    let sql: Vec<(String, Vec<SqlKind>)> = step
        .args
        .iter()
        .filter_map(|(name, spec)| match spec {
            ArgSpec::Sql(_) => Some((name.clone(), step.cues.sql_forms(name))),
            _ => None,
        })
        .collect();
    if let Some((name, kinds)) = sql.into_iter().next() {
        // The first form is the step as planned; each further one its own step.
        let primary = step.args.iter().find_map(|(n, spec)| match spec {
            ArgSpec::Sql(kind) if *n == name => Some(*kind),
            _ => None,
        });
        for kind in kinds.into_iter().filter(|k| Some(*k) != primary) {
            let mut form = step.clone();
            for (n, spec) in &mut form.args {
                if *n == name {
                    *spec = ArgSpec::Sql(kind);
                }
            }
            out.push(form);
        }
    }
    out
}

/// Whether a harvest-pass step can run now without inventing anything: every
/// argument is a literal, fixed by the schema, or filled entirely from the
/// harvest.
pub fn satisfiable(step: &PlanStep, pool: &Pool) -> bool {
    step.args.iter().all(|(name, spec)| match spec {
        ArgSpec::Literal(_) | ArgSpec::Pinned(_) | ArgSpec::Chosen(_) | ArgSpec::IfReal(_) => true,
        ArgSpec::Synthesized(_) | ArgSpec::From { .. } | ArgSpec::Fresh(_) | ArgSpec::Sql(_) => {
            false
        }
        ArgSpec::Auto(fallback) => fill(&step.cues, name, fallback, pool).source.is_real(),
    })
}

/// The planner's step for one tool: every required argument, each with how
/// its value is to be had. What the schema offers is pinned; SQL is written
/// at call time; the name of the thing a creator makes is fresh; anything
/// else is a real value when one fits at call time, else the synthesized one.
fn planned_step(tool: &ToolEntry) -> PlanStep {
    let cues = ToolCues::of(tool);
    let documented = documented_schema(tool, &cues);
    let schema = documented.as_ref().or(tool.input_schema.as_ref());
    let pinned = synth::pinned(schema);
    let mut args: Vec<(String, ArgSpec)> = synth::arguments_for(schema, &tool.name)
        .into_iter()
        .map(|(name, value)| {
            let spec = match cues.sql_kind(&name) {
                _ if pinned.contains(&name) => ArgSpec::Pinned(value),
                Some(kind) if value.is_string() => ArgSpec::Sql(kind),
                _ if value.is_string() && cues.new_name(&name) => {
                    // Plain invention gets the tool's own name; a value the
                    // description shaped is kept.
                    let fresh = match value.as_str() {
                        Some("witness") => Value::String(synth::fresh_name(&tool.name)),
                        // A description's example path is the author's
                        // machine (`/Users/you/Documents/letter.md`): its
                        // name is kept, the place is the store's.
                        Some(text) if cues.path_kind(&name).is_some() && is_foreign_path(text) => {
                            Value::String(foreign_name(text, &tool.name))
                        }
                        _ => value,
                    };
                    ArgSpec::Fresh(fresh)
                }
                _ => ArgSpec::Auto(value),
            };
            (name, spec)
        })
        .collect();
    // Optional parameters that choose where the call acts get the store.
    for (name, placeholder) in strategy::scope::optional_scope(schema) {
        if !args.iter().any(|(n, _)| *n == name) {
            args.push((name, ArgSpec::IfReal(placeholder)));
        }
    }
    // An in-place change by id alone is also told what to change.
    let added = strategy::change_fields::change_fields(&cues, schema, &args);
    args.extend(added);
    PlanStep {
        tool: tool.name.clone(),
        args,
        cues,
    }
}

/// `tool`'s input schema as the planner reads it: each parameter without a
/// description given the line the tool's text writes about it (a
/// docstring's `@param font_name: Font family (e.g. "Calibri")`), and the
/// choices its text writes (`type: fact|decision`). `None` where the text
/// adds nothing. The first plan and the retries after an error read the
/// same schema, so a retry that fills an optional parameter sends the
/// server's own example rather than an invented word.
pub(crate) fn documented_schema(tool: &ToolEntry, cues: &ToolCues) -> Option<Value> {
    let description = tool.description.as_deref().unwrap_or("");
    let described = tool
        .input_schema
        .as_ref()
        .and_then(|schema| synth::with_parameter_docs(schema, description));
    let schema = described.as_ref().or(tool.input_schema.as_ref())?;
    strategy::written_choices::with_written_choices(schema, description, |name| {
        cues.path_kind(name).is_some()
            || cues.new_name(name)
            || cues.sql_kind(name).is_some()
            || harvest::names_an_object(name)
    })
    .or(described)
}

/// The planner's step for `tool` as a synthesized plan would ask it: what
/// is called when an error names it as the step to take first.
pub fn planned_step_for(tool: &ToolEntry) -> PlanStep {
    planned_step(tool)
}

/// Whether `text` is an absolute path of some machine (`/Users/...`,
/// `~/notes`, `C:\\data`) rather than a name or a relative path.
fn is_foreign_path(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.starts_with('/')
        || text.starts_with("~/")
        || (bytes.len() > 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && bytes[2] == b'\\')
}

/// The last part of a foreign path, marked as the audit's
/// (`witness-letter.md`), or the tool's fresh name when it has none.
fn foreign_name(text: &str, tool: &str) -> String {
    text.rsplit(['/', '\\'])
        .find(|part| !part.is_empty() && *part != "~")
        .map_or_else(|| synth::fresh_name(tool), |name| format!("witness-{name}"))
}

/// Names that say a tool lists or searches: harvested from first, and asked
/// again before the retry pass.
pub(crate) fn lists_by_name(name: &str) -> bool {
    let lowered = name.to_ascii_lowercase();
    ["list", "search", "find", "query", "browse", "enumerate"]
        .iter()
        .any(|w| lowered.contains(w))
}

/// The things the tools that list are named for (`list_projects` →
/// `project`), with the tool that lists each.
fn listed_nouns(tools: &[ToolEntry]) -> Vec<(String, String)> {
    tools
        .iter()
        .filter(|t| lists_by_name(&t.name) && !adds_by_name(&t.name))
        .map(|t| (ToolCues::of(t).noun, t.name.clone()))
        .filter(|(noun, _)| !noun.is_empty())
        .collect()
}

/// The things a tool's required parameters name, singular and lowercase:
/// `projectName` and `project_id` both name `project`.
fn required_stems(tool: &ToolEntry) -> Vec<String> {
    required_params(tool).map(required_stem).collect()
}

/// The names of a tool's required parameters, as its schema lists them.
fn required_params(tool: &ToolEntry) -> impl Iterator<Item = &str> {
    tool.input_schema
        .as_ref()
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The thing a parameter names, singular and lowercase: `projectName` and
/// `project_id` both name `project`.
fn required_stem(param: &str) -> String {
    let flat = cues::flat(param);
    let stem = ["names", "name", "ids", "id"]
        .iter()
        .find_map(|suffix| flat.strip_suffix(suffix))
        .unwrap_or(&flat)
        .to_owned();
    harvest::singular(&stem)
}

/// Whether `tool` needs what another tool is named to make: `add_task`
/// takes the `project_id` that `create_project` makes, so it runs after it.
fn needs_made(tool: &ToolEntry, made: &[(String, String)]) -> bool {
    let required = required_stems(tool);
    made.iter()
        .any(|(noun, maker)| *maker != tool.name && required.contains(noun))
}

/// Whether a tool's name says it lists or reads (`list_notes`,
/// `search_items`, `get_task`, `read_file`) and nothing in it says it adds
/// or takes away (`write_query`, `list_and_delete`): the harvest pass's
/// tools, and the tools handed the store's objects first.
pub(crate) fn reads_by_name(name: &str) -> bool {
    let words = cues::words(name);
    let reads = words.iter().any(|w| {
        [
            "get", "read", "show", "describe", "view", "fetch", "open", "info", "inspect",
        ]
        .contains(&w.as_str())
    });
    (lists_by_name(name) || reads) && !adds_by_name(name) && !removes_by_name(name)
}

/// Where a tool runs in the main pass: 0 a lister, 1
/// a lister that needs what another lists (`list_project_files` takes the
/// `projectName` that `list_projects` lists), 2 a reader, 3 a creator, 4
/// the rest.
fn unannotated_phase(tool: &ToolEntry, listed: &[(String, String)]) -> u8 {
    let required = required_stems(tool);
    let needs_listed = listed
        .iter()
        .any(|(noun, lister)| *lister != tool.name && required.contains(noun));
    // A name that also says it writes (`write_query`) is no harvester.
    let writes = adds_by_name(&tool.name) || removes_by_name(&tool.name);
    match (lists_by_name(&tool.name) && !writes, needs_listed) {
        (true, false) => 0,
        (true, true) => 1,
        _ if reads_by_name(&tool.name) => 2,
        _ if adds_by_name(&tool.name) => 3,
        _ => 4,
    }
}

/// Names that say a tool makes something new: called first among writes.
fn adds_by_name(name: &str) -> bool {
    let lowered = name.to_ascii_lowercase();
    cues::CREATE_WORDS.iter().any(|w| lowered.contains(w))
}

/// Names that say a tool takes something away; used only to call such tools
/// after the ones that create what they would remove.
fn removes_by_name(name: &str) -> bool {
    let lowered = name.to_ascii_lowercase();
    [
        "delete", "remove", "revoke", "drop", "destroy", "purge", "clear",
    ]
    .iter()
    .any(|w| lowered.contains(w))
}

/// Names that say a tool ends what its arguments name without removing it
/// (`archive_project`, `complete_task`, `close_issue`, `forget_memory`):
/// called with the removers, after every tool that still needs the thing
/// alive. A project archived early answers every later call on it with
/// `Project 3 is archived`.
fn ends_by_name(name: &str) -> bool {
    cues::words(name).iter().any(|w| {
        [
            "archive",
            "close",
            "complete",
            "finish",
            "cancel",
            "forget",
            "trash",
            "discard",
            "deactivate",
            "disable",
        ]
        .contains(&w.as_str())
    })
}

/// Names that say a tool takes back what another did (`reset_task`,
/// `undo_delete`, `restore_backup`, `reopen_task`): called after the
/// changes, ends and removals they take back ([`late_phase`]). Run first, a reset of a task
/// still pending changes nothing.
fn reverts_by_name(name: &str) -> bool {
    cues::words(name).iter().any(|w| {
        [
            "reset",
            "undo",
            "restore",
            "reopen",
            "revert",
            "rollback",
            "unarchive",
            "undelete",
            "recover",
        ]
        .contains(&w.as_str())
    })
}

/// Whether a tool's name says it removes or ends things: where the retry
/// pass and the first confirmations come, before anything is taken away.
pub(crate) fn takes_away(name: &str) -> bool {
    removes_by_name(name) || ends_by_name(name)
}

/// Whether a tool moves or renames a thing the store holds by its path
/// (`move_folder {old_dir, new_dir}`, `rename_file {path, new_path}`):
/// after it, the thing is no longer where every other tool looks for it.
/// Such a tool runs with the tools that end things ([`late_phase`] 1),
/// after those that act on the thing in place: moved first, a folder
/// left a link converter nothing to convert. Only a tool named for no
/// thing (`rename`) or for a thing kept by its path (a file, folder,
/// note, page, document), with a parameter that names one that exists;
/// a move of a thing named by an id (`move_task {task_id, folder_id}`,
/// `move_email {uid, folder}`) keeps the thing where tools find it, and
/// a rename inside a file (`rename_variable {file_path}`) keeps the file.
fn relocates_by_path(tool: &ToolEntry) -> bool {
    moves_by_path(&ToolCues::of(tool), required_params(tool))
}

/// [`relocates_by_path`] of the tool of `cues` given its parameters.
pub(crate) fn moves_by_path<'a>(cues: &ToolCues, params: impl Iterator<Item = &'a str>) -> bool {
    const PATH_NOUNS: [&str; 9] = [
        "file",
        "folder",
        "directory",
        "dir",
        "note",
        "page",
        "document",
        "doc",
        "path",
    ];
    let moves = cues::words(&cues.tool)
        .iter()
        .any(|w| matches!(w.as_str(), "move" | "mv" | "rename"));
    if !moves || !(cues.noun.is_empty() || PATH_NOUNS.contains(&cues.noun.as_str())) {
        return false;
    }
    params.into_iter().any(|p| {
        let flat = cues::flat(p);
        matches!(cues.path_kind(p), Some(PathKind::File | PathKind::Dir))
            && !cues.new_place(p)
            && !flat.ends_with("id")
            && !flat.ends_with("ids")
    })
}

/// The last phase: tools that bring back what the removers took.
const BRINGS_BACK: u8 = 4;

/// Where a tool runs among the tools that end, remove or take back: 0 not
/// one of them; 1 a tool that ends a thing (`archive`, `complete`); 2 one
/// that takes back a change or an end (`reset`, `revert`, `reopen`), after
/// something was changed or ended and while the thing still exists (a
/// reopen after the delete answers `not found`); 3 a remover; 4 one that
/// brings back what was removed (`undelete`, `restore`, `undo_delete`),
/// last of all.
fn late_phase(name: &str) -> u8 {
    let brings_back = ["undelete", "restore", "recover"];
    if reverts_by_name(name) {
        let words = cues::words(name);
        if removes_by_name(name) || words.iter().any(|w| brings_back.contains(&w.as_str())) {
            BRINGS_BACK
        } else {
            2
        }
    } else if removes_by_name(name) {
        3
    } else if ends_by_name(name) {
        1
    } else {
        0
    }
}

/// One entry of a call's `checks`: a check's plan name, or a table whose
/// `type` is the name and whose other keys are its parameters.
fn expectation(value: &toml::Value) -> Result<Expectation, String> {
    let table = match value {
        toml::Value::String(name) => {
            let mut table = toml::Table::new();
            table.insert("type".into(), toml::Value::String(name.clone()));
            table
        }
        toml::Value::Table(table) => table.clone(),
        _ => return Err("must be a check name or a table with `type`".into()),
    };
    let name = table
        .get("type")
        .and_then(toml::Value::as_str)
        .ok_or("a check table needs `type`")?
        .to_owned();
    let known: Vec<&str> = CheckId::ALL
        .into_iter()
        .filter_map(CheckId::plan_name)
        .collect();
    if !known.contains(&name.as_str()) {
        return Err(format!(
            "unknown check type {name:?} (one of {})",
            known.join(", ")
        ));
    }
    let parsed: Expectation = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| format!("{name}: {}", one_line(e.message())))?;
    validate_expectation(&parsed).map_err(|e| format!("{name}: {e}"))?;
    Ok(parsed)
}

/// Bounds a parsed check's parameters must keep.
fn validate_expectation(expectation: &Expectation) -> Result<(), String> {
    let path_ok = |path: &Option<String>, key: &str| match path {
        Some(p) => parse_path(p)
            .map(|_| ())
            .map_err(|e| format!("{key} {p:?}: {e}")),
        None => Ok(()),
    };
    match expectation {
        Expectation::LatencyUnder { ms } if *ms == 0 => Err("ms must be at least 1".into()),
        Expectation::MaxItems { path, .. } => path_ok(path, "path"),
        Expectation::PaginationTerminates {
            cursor,
            next,
            items,
            max_pages,
        } => {
            if max_pages.is_some_and(|n| !(2..=MAX_PAGES).contains(&n)) {
                return Err(format!("max_pages must be 2 to {MAX_PAGES}"));
            }
            if cursor.as_deref().is_some_and(str::is_empty) {
                return Err("cursor must name a parameter".into());
            }
            path_ok(next, "next")?;
            path_ok(items, "items")
        }
        _ => Ok(()),
    }
}

fn reference(value: &toml::Value) -> Option<(String, String)> {
    let table = value.as_table()?;
    if table.len() != 2 {
        return None;
    }
    let from = table.get("from")?.as_str()?;
    let path = table.get("path")?.as_str()?;
    Some((from.to_owned(), path.to_owned()))
}

fn parse_call_ref(text: &str) -> Option<u32> {
    text.trim().strip_prefix("call")?.trim().parse().ok()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Resolves a step's arguments against earlier results (by plan step), the
/// harvest and the stores. Gives the arguments with provenance, or why one
/// could not be resolved.
pub fn resolve(
    step: &PlanStep,
    results: &BTreeMap<u32, Value>,
    pool: &harvest::Pool,
) -> Result<Resolved, String> {
    let mut object = Map::new();
    let mut recorded = Vec::new();
    let mut creates = Vec::new();
    for (name, spec) in &step.args {
        let argument = match spec {
            ArgSpec::Literal(v) => plain(name, v.clone(), Provenance::Literal),
            ArgSpec::Synthesized(v) | ArgSpec::Pinned(v) => {
                plain(name, v.clone(), Provenance::Synthesized)
            }
            ArgSpec::Fresh(v) => {
                let (value, shape) = fresh(&step.cues, name, v, pool);
                creates.push(Created {
                    key: name.clone(),
                    value: value.clone(),
                    shape,
                });
                plain(name, value, Provenance::Synthesized)
            }
            ArgSpec::Sql(kind) => {
                let (statement, made) = sql::statement(*kind, &step.tool, pool);
                creates.extend(made.map(|made| {
                    let (key, table) = match made {
                        sql::Made::Table(t) => ("table_name", t),
                        sql::Made::Row(t) => (sql::INSERTED_INTO, t),
                    };
                    Created {
                        key: key.into(),
                        value: Value::String(table),
                        shape: None,
                    }
                }));
                plain(name, Value::String(statement), Provenance::Synthesized)
            }
            ArgSpec::Chosen(h) => {
                let (source, from, object) = provenance_of(h);
                Argument {
                    from,
                    object,
                    ..plain(name, h.value.clone(), source)
                }
            }
            ArgSpec::IfReal(fallback) => {
                let filled = fill(&step.cues, name, fallback, pool);
                if !filled.source.is_real() {
                    continue;
                }
                Argument {
                    name: name.clone(),
                    value: filled.value,
                    source: filled.source,
                    from: filled.from,
                    object: filled.object,
                    parts: filled.parts,
                }
            }
            ArgSpec::Auto(fallback) => {
                let filled = fill(&step.cues, name, fallback, pool);
                Argument {
                    name: name.clone(),
                    value: filled.value,
                    source: filled.source,
                    from: filled.from,
                    object: filled.object,
                    parts: filled.parts,
                }
            }
            ArgSpec::From { step: from, path } => {
                let result = results.get(from).ok_or_else(|| {
                    format!("argument {name}: call {from} produced no result to read")
                })?;
                let value = lookup(&result_view(result), path)
                    .ok_or_else(|| format!("argument {name}: call {from} has nothing at {path}"))?;
                Argument {
                    from: Some(Origin {
                        call: format!("call {from}"),
                        path: path.clone(),
                    }),
                    ..plain(name, value, Provenance::Harvested)
                }
            }
        };
        let mut argument = argument;
        if pool.relative_paths()
            && let Some(text) = argument.value.as_str()
            && step.cues.path_kind(name).is_some()
            && let Some(relative) = strategy::store_objects::relative_to_root(pool, text)
        {
            argument.value = Value::String(relative);
        }
        object.insert(name.clone(), argument.value.clone());
        recorded.push(argument);
    }
    cohere_with_files(step, pool, &mut object, &mut recorded);
    cohere_with_asked(step, pool, &mut object, &mut recorded);
    distinct_ends(step, pool, &mut object, &mut recorded);
    distinct_output(step, pool, &mut object, &mut recorded);
    names::name_files(&step.cues, &mut object, &mut recorded, pool);
    // A free-form object of a tool that names a store's table is filled
    // with that table's columns, as a user would fill it (see `rows`).
    if let Some(table) = rows::table_named(&object, pool) {
        for argument in &mut recorded {
            let empty = argument.value.as_object().is_some_and(Map::is_empty);
            if !empty || argument.source != Provenance::Synthesized {
                continue;
            }
            if let Some(value) = rows::row_object(&step.cues, &argument.name, table, pool) {
                object.insert(argument.name.clone(), value.clone());
                argument.value = value;
            }
        }
    }
    Ok(Resolved {
        arguments: Value::Object(object),
        recorded,
        creates,
    })
}

/// Whether argument `name` of `step` is filled at call time (from the
/// harvest where a value fits): only those may be changed after the fact
/// for values that belong together.
fn filled_at_call(step: &PlanStep, name: &str) -> bool {
    step.args
        .iter()
        .any(|(n, spec)| n == name && matches!(spec, ArgSpec::Auto(_) | ArgSpec::IfReal(_)))
}

/// `argument` becomes pool value `h`, with its provenance, in the record
/// and in the object sent.
fn take_pooled(argument: &mut Argument, h: &Harvested, object: &mut Map<String, Value>) {
    let (source, from, held) = provenance_of(h);
    argument.value = h.value.clone();
    argument.source = source;
    argument.from = from;
    argument.object = held;
    argument.parts = Vec::new();
    object.insert(argument.name.clone(), h.value.clone());
}

/// A call that names a store's file is handed that file's own objects: the
/// sheet of the workbook it opens, a row of the database it names. Before,
/// `delete_rows {"path": "budget.xlsx", "sheet": "Sheet1"}` paired the
/// store's workbook with the sheet of one the plan had made.
fn cohere_with_files(
    step: &PlanStep,
    pool: &Pool,
    object: &mut Map<String, Value>,
    recorded: &mut [Argument],
) {
    let files: Vec<String> = recorded
        .iter()
        .filter(|a| step.cues.path_kind(&a.name).is_some())
        .filter_map(|a| a.value.as_str())
        .map(|v| strategy::store_objects::relative_to_root(pool, v).unwrap_or_else(|| v.to_owned()))
        .collect();
    if files.is_empty() {
        return;
    }
    for argument in recorded.iter_mut() {
        if !filled_at_call(step, &argument.name)
            || step.cues.path_kind(&argument.name).is_some()
            || !(argument.value.is_string() || argument.value.is_number())
        {
            continue;
        }
        let Some(h) = pool.candidate_within(&step.cues, &argument.name, &argument.value, &files)
        else {
            continue;
        };
        if h.value == argument.value && argument.object.is_some() {
            continue;
        }
        take_pooled(argument, h, object);
    }
}

/// What an answer gave belongs to what its call named: a chunk id that
/// `list_chunks {"project": "garden-guide"}` answered is sent with that
/// project, not with another the harvest offered (`Chunk "..." not found`
/// in the project the plan had made). Only an argument filled at call time
/// is changed, to the value the answering call was sent.
fn cohere_with_asked(
    step: &PlanStep,
    pool: &Pool,
    object: &mut Map<String, Value>,
    recorded: &mut [Argument],
) {
    let mut fixes: Vec<(String, Value, Origin)> = Vec::new();
    for argument in recorded.iter() {
        if argument.source != Provenance::Harvested || !filled_at_call(step, &argument.name) {
            continue;
        }
        let Some(from) = &argument.from else {
            continue;
        };
        let Some(h) = pool.items().rev().find(|h| {
            h.value == argument.value
                && format!("call {}", h.step) == from.call
                && h.path == from.path
        }) else {
            continue;
        };
        for (key, value) in pool.asked_for(h) {
            let differs = recorded
                .iter()
                .any(|a| a.name == *key && a.value != *value && filled_at_call(step, key));
            if *key != argument.name && differs && !fixes.iter().any(|(k, _, _)| k == key) {
                let origin = Origin {
                    call: from.call.clone(),
                    path: format!("arguments.{key}"),
                };
                fixes.push((key.clone(), value.clone(), origin));
            }
        }
    }
    for (key, value, origin) in fixes {
        if let Some(argument) = recorded.iter_mut().find(|a| a.name == key) {
            argument.value = value.clone();
            argument.source = Provenance::Harvested;
            argument.from = Some(origin);
            argument.object = None;
            argument.parts = Vec::new();
            object.insert(key, value);
        }
    }
}

/// Two ids of one call are two things: `add_dependency {"section_id": 1,
/// "blocked_by_id": 1}` is refused (`A section cannot depend on itself`).
/// An id the harvest could not fill, or that repeats an earlier id of the
/// call, takes another object of the collection the call's real id came
/// from.
fn distinct_ends(
    step: &PlanStep,
    pool: &Pool,
    object: &mut Map<String, Value>,
    recorded: &mut [Argument],
) {
    let id_named = |name: &str| {
        // Each end of a pair (`id_a`, `note2`) is one of two things.
        let paired = harvest::paired_stem(name).is_some();
        let flat = cues::flat(name);
        (paired || flat.ends_with("id")) && step.cues.path_kind(name).is_none()
    };
    let mut taken: Vec<Value> = Vec::new();
    let mut real: Option<Value> = None;
    for argument in recorded.iter_mut() {
        if !id_named(&argument.name) || !(argument.value.is_string() || argument.value.is_number())
        {
            continue;
        }
        let repeats = taken.contains(&argument.value);
        let invented = !argument.source.is_real();
        // `task_id` beside a real `project_id` is another kind of thing:
        // only a name that names no kind the store holds (`blocked_by_id`,
        // `unlocks_id`) is the other end of the same kind.
        let own_kind = required_stem(&argument.name);
        let other_kind = !own_kind.is_empty() && pool.names_collection(&own_kind);
        if (repeats || (invented && !other_kind))
            && filled_at_call(step, &argument.name)
            && let Some(first) = &real
        {
            let mut avoid = taken.clone();
            avoid.push(first.clone());
            if let Some(h) = pool.sibling(first, &avoid) {
                take_pooled(argument, h, object);
            }
        }
        if real.is_none() && argument.source.is_real() {
            real = Some(argument.value.clone());
        }
        taken.push(argument.value.clone());
    }
}

/// A form asked to replace a file writes its output over a file other
/// than the one it reads: `pdf_compress {"input_path": "logo.png",
/// "output": "logo.png"}` is refused (`save to original must be
/// incremental`) or edits in place, and never shows the silent replace of
/// an earlier output that the overwrite form asks about. Such an output
/// takes the latest file this tool made earlier in the audit (its own kind
/// of output, and there), else another file of the store or the plan with
/// the extension the output had.
fn distinct_output(
    step: &PlanStep,
    pool: &Pool,
    object: &mut Map<String, Value>,
    recorded: &mut [Argument],
) {
    if !step.cues.existing_target {
        return;
    }
    let normal = |v: &str| {
        strategy::store_objects::relative_to_root(pool, v).unwrap_or_else(|| v.to_owned())
    };
    for i in 0..recorded.len() {
        let name = recorded[i].name.clone();
        if !step.cues.output_place(&name) || !filled_at_call(step, &name) {
            continue;
        }
        let Some(output) = recorded[i].value.as_str().map(normal) else {
            continue;
        };
        let read: Vec<String> = recorded
            .iter()
            .enumerate()
            .filter(|(j, a)| *j != i && step.cues.path_kind(&a.name).is_some())
            .filter_map(|(_, a)| a.value.as_str().map(normal))
            .collect();
        if !read.contains(&output) {
            continue;
        }
        let extension = |v: &str| {
            std::path::Path::new(v)
                .extension()
                .map(|e| e.to_string_lossy().to_lowercase())
        };
        // Only what the store held or the plan made, never a hidden file
        // (`.obsidian/app.json` is the store's machinery).
        let free = |h: &&Harvested| {
            h.shape == Some(PathKind::File)
                && h.source != Source::Answer
                && !h.hidden()
                && h.value.as_str().is_some_and(|v| !read.contains(&normal(v)))
        };
        let own = pool
            .items()
            .rev()
            .filter(free)
            .find(|h| h.source == Source::Plan && h.tool == step.tool);
        let same_kind = || {
            pool.items().filter(free).find(|h| {
                h.value.as_str().and_then(extension) == extension(&output)
                    && extension(&output).is_some()
            })
        };
        let Some(h) = own.or_else(same_kind) else {
            continue;
        };
        take_pooled_path(&mut recorded[i], h, object, pool);
        // Replacing its own earlier output from the input that made it
        // would write the same bytes, and a replace that changes nothing
        // is not seen: the input is another file of its kind where the
        // store or the plan holds one.
        let first = pool.asked_for(h).to_vec();
        let output = h.value.as_str().map(normal);
        for (j, input) in recorded.iter_mut().enumerate() {
            if j == i
                || !filled_at_call(step, &input.name)
                || step.cues.path_kind(&input.name) != Some(PathKind::File)
            {
                continue;
            }
            let Some(now) = input.value.as_str().map(normal) else {
                continue;
            };
            let same_as_first = first
                .iter()
                .any(|(k, v)| *k == input.name && v.as_str().map(normal).as_ref() == Some(&now));
            if !same_as_first {
                continue;
            }
            let other = pool.items().find(|o| {
                o.shape == Some(PathKind::File)
                    && o.source != Source::Answer
                    && !o.hidden()
                    && o.value.as_str().map(normal).is_some_and(|v| {
                        v != now
                            && Some(&v) != output.as_ref()
                            && extension(&v) == extension(&now)
                            && extension(&now).is_some()
                    })
            });
            if let Some(o) = other {
                take_pooled_path(input, o, object, pool);
            }
        }
    }
}

/// As [`take_pooled`], for a path: sent relative to its store's root
/// where the server was seen to want store paths so.
fn take_pooled_path(
    argument: &mut Argument,
    h: &Harvested,
    object: &mut Map<String, Value>,
    pool: &Pool,
) {
    take_pooled(argument, h, object);
    if pool.relative_paths()
        && let Some(relative) = h
            .value
            .as_str()
            .and_then(|v| strategy::store_objects::relative_to_root(pool, v))
    {
        argument.value = Value::String(relative);
        object.insert(argument.name.clone(), argument.value.clone());
    }
}

fn plain(name: &str, value: Value, source: Provenance) -> Argument {
    Argument {
        name: name.to_owned(),
        value,
        source,
        from: None,
        object: None,
        parts: Vec::new(),
    }
}

/// A fresh name, made a path under the first directory store's root when
/// the parameter asks for a path (a file gets `.txt`), and the kind of
/// path it is.
fn fresh(cues: &ToolCues, name: &str, value: &Value, pool: &Pool) -> (Value, Option<PathKind>) {
    let (Some(kind), Some(text)) = (cues.path_kind(name), value.as_str()) else {
        return (value.clone(), None);
    };
    // A file's name, not its path: bare, and not offered where a path is
    // asked for (it names nothing on its own).
    if names::is_file_name(cues, name) {
        return (Value::String(names::fresh_file_name(text)), None);
    }
    let Some(root) = pool.fresh_root() else {
        return (value.clone(), Some(kind));
    };
    let file = if kind == PathKind::File && !text.contains('.') {
        // Of the kind the tool names, else plain text.
        let ext = cues.file_types_for(name).first().copied().unwrap_or("txt");
        format!("{text}.{ext}")
    } else {
        text.to_owned()
    };
    let kind = if kind == PathKind::Root {
        PathKind::Dir
    } else {
        kind
    };
    let path = root.join(file).to_string_lossy().into_owned();
    (Value::String(path), Some(kind))
}

/// An argument filled from the harvest where a value fits.
struct Filled {
    value: Value,
    source: Provenance,
    from: Option<Origin>,
    object: Option<witness_model::audit::StoreObject>,
    parts: Vec<ArgumentPart>,
}

/// Whether an `Auto` argument `name` would be filled with a real value
/// (the store's, an answer's, the plan's) if the call were made now.
pub(crate) fn fills_real(cues: &ToolCues, name: &str, fallback: &Value, pool: &Pool) -> bool {
    fill(cues, name, fallback, pool).source.is_real()
}

/// Replaces every scalar of `fallback` that a real value fits (by the key
/// it sits under, or the array's singular name) with that value; the name
/// of the thing a creator makes stays invented. The argument is `harvested`
/// (or `store`, when every value came from a store) when every scalar in it
/// was real; otherwise it is `synthesized`, and the real scalars are listed
/// as its parts.
fn fill(cues: &ToolCues, name: &str, fallback: &Value, pool: &Pool) -> Filled {
    if !(fallback.is_object() || fallback.is_array()) {
        let found = (!cues.new_name(name))
            .then(|| pool.candidate_like(cues, name, fallback))
            .flatten();
        // A web address, found or invented, reaches nothing from the jail:
        // a document tool's URL is the store's document instead.
        let web = |v: &Value| v.as_str().is_some_and(|v| v.starts_with("http"));
        if found.is_none_or(|h| web(&h.value))
            && let Some((url, file)) = strategy::local_urls::file_url(cues, name, fallback, pool)
        {
            let (source, from, object) = provenance_of(file);
            return Filled {
                value: Value::String(url),
                source,
                from,
                object,
                parts: Vec::new(),
            };
        }
        return match found {
            Some(h) => {
                let (source, from, object) = provenance_of(h);
                Filled {
                    value: h.value.clone(),
                    source,
                    from,
                    object,
                    parts: Vec::new(),
                }
            }
            None => match strategy::search_terms::is_search_param(cues, name)
                .then(|| strategy::search_terms::term(pool))
                .flatten()
                .filter(|_| fallback.is_string())
            {
                Some((word, object)) => Filled {
                    value: Value::String(word),
                    source: Provenance::Store,
                    from: None,
                    object: Some(object),
                    parts: Vec::new(),
                },
                None => Filled {
                    value: fallback.clone(),
                    source: Provenance::Synthesized,
                    from: None,
                    object: None,
                    parts: Vec::new(),
                },
            },
        };
    }
    let mut parts = Vec::new();
    let mut invented = 0usize;
    let value = fill_inside(cues, name, fallback, pool, "", &mut parts, &mut invented);
    let source = if invented > 0 || parts.is_empty() {
        Provenance::Synthesized
    } else if parts.iter().all(|p| p.object.is_some()) {
        Provenance::Store
    } else {
        Provenance::Harvested
    };
    Filled {
        value,
        source,
        from: None,
        object: None,
        parts,
    }
}

/// The provenance a pool value gives an argument, with its origin.
fn provenance_of(
    h: &Harvested,
) -> (
    Provenance,
    Option<Origin>,
    Option<witness_model::audit::StoreObject>,
) {
    match &h.source {
        Source::Store(object) => (Provenance::Store, None, Some(object.clone())),
        Source::Answer | Source::Plan => (Provenance::Harvested, Some(origin_of(h)), None),
    }
}

fn fill_inside(
    cues: &ToolCues,
    key: &str,
    value: &Value,
    pool: &Pool,
    at: &str,
    parts: &mut Vec<ArgumentPart>,
    invented: &mut usize,
) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let here = format!("{at}.{k}");
                    (
                        k.clone(),
                        fill_inside(cues, k, v, pool, &here, parts, invented),
                    )
                })
                .collect(),
        ),
        Value::Array(items) => {
            let item_key = item_name(key);
            Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let here = format!("{at}[{i}]");
                        fill_inside(cues, &item_key, v, pool, &here, parts, invented)
                    })
                    .collect(),
            )
        }
        Value::String(_) | Value::Number(_) if cues.new_name(key) => {
            // The name of what a creator makes: its own, never an existing one.
            *invented += 1;
            value.clone()
        }
        Value::String(_) | Value::Number(_) => match pool.candidate_like(cues, key, value) {
            Some(h) => {
                let (_, from, object) = provenance_of(h);
                parts.push(ArgumentPart {
                    at: at.trim_start_matches('.').to_owned(),
                    from,
                    object,
                });
                h.value.clone()
            }
            None => {
                *invented += 1;
                value.clone()
            }
        },
        other => {
            *invented += 1;
            other.clone()
        }
    }
}

fn origin_of(h: &harvest::Harvested) -> Origin {
    Origin {
        call: format!("call {}", h.step),
        path: h.path.clone(),
    }
}

/// The name of one element of an array parameter: `entityNames` →
/// `entityName`, `paths` → `path`, `entries` → `entry`. Case is kept.
fn item_name(key: &str) -> String {
    if let Some(stem) = key.strip_suffix("ies") {
        return format!("{stem}y");
    }
    match key.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') && !stem.is_empty() => stem.to_owned(),
        _ => key.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plan_file_with_literal_and_reference() {
        let plan = Plan::parse(
            r#"
            [[call]]
            tool = "mint"
            args = { grant = "g1", opts = { ttl = 5 } }
            [[call]]
            tool = "revoke"
            args.key = { from = "call 1", path = "json.id" }
            "#,
        );
        let plan = match plan {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(plan.steps.len(), 2);
        assert_eq!(
            plan.steps[0].args[1],
            ("opts".into(), ArgSpec::Literal(json!({"ttl": 5})))
        );
        assert_eq!(
            plan.steps[1].args[0],
            (
                "key".into(),
                ArgSpec::From {
                    step: 1,
                    path: "json.id".into()
                }
            )
        );
    }

    #[test]
    fn calls_carry_checks_by_name_or_table_and_bad_ones_are_refused_in_one_line() {
        let plan = Plan::parse(include_str!("../../../experiments/response/plan.toml"));
        let plan = match plan {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            plan.expect.get(&5),
            Some(&vec![
                Expectation::Succeeds,
                Expectation::MaxItems {
                    limit: 2,
                    path: None
                },
                Expectation::PaginationTerminates {
                    cursor: None,
                    next: None,
                    items: None,
                    max_pages: None
                },
            ])
        );
        assert_eq!(
            plan.expect.get(&7),
            Some(&vec![Expectation::ErrorCode { code: -32602 }])
        );
        assert!(!plan.expect.contains_key(&1), "save_note carries none");
        for (bad, says) in [
            ("checks = [\"nope\"]", "unknown check type \"nope\""),
            (
                "checks = [{ type = \"max_items\", limt = 3 }]",
                "unknown field `limt`",
            ),
            (
                "checks = [{ type = \"latency_under\", ms = 0 }]",
                "ms must be at least 1",
            ),
            (
                "checks = [{ type = \"max_items\", limit = 3, path = \"body\" }]",
                "path \"body\"",
            ),
            (
                "checks = [{ type = \"pagination_terminates\", max_pages = 99 }]",
                "max_pages",
            ),
            ("checks = [3]", "a check name or a table"),
        ] {
            let text = format!("[[call]]\ntool = \"t\"\n{bad}\n");
            match Plan::parse(&text) {
                Ok(_) => panic!("accepted {bad}"),
                Err(e) => {
                    assert!(e.contains(says), "{bad}: {e}");
                    assert!(e.starts_with("call 1 check 1: "), "{e}");
                    assert!(!e.contains('\n'), "one line: {e}");
                }
            }
        }
    }

    #[test]
    fn references_must_point_backwards_and_paths_must_parse() {
        let forward =
            "[[call]]\ntool = \"a\"\nargs.x = { from = \"call 1\", path = \"json.id\" }\n";
        assert!(Plan::parse(forward).is_err());
        let bad_path = "[[call]]\ntool = \"a\"\n[[call]]\ntool = \"b\"\nargs.x = { from = \"call 1\", path = \"body.id\" }\n";
        assert!(Plan::parse(bad_path).is_err());
        assert!(Plan::parse("").is_err());
        assert!(Plan::parse("[[call]]\nname = \"x\"\n").is_err());
    }

    #[test]
    fn harvested_values_carry_their_origin() {
        let step = PlanStep {
            tool: "revoke".into(),
            args: vec![(
                "key".into(),
                ArgSpec::From {
                    step: 1,
                    path: "json.items[1].id".into(),
                },
            )],
            ..Default::default()
        };
        let mut results = BTreeMap::new();
        results.insert(
            1,
            json!({"content": [{"type": "text", "text": "{\"items\": [{\"id\": \"a\"}, {\"id\": \"b\"}]}"}]}),
        );
        let pool = harvest::Pool::default();
        let resolved = resolve(&step, &results, &pool);
        let Ok(Resolved {
            arguments: args,
            recorded: record,
            ..
        }) = resolved
        else {
            panic!("not resolved: {resolved:?}");
        };
        assert_eq!(args, json!({"key": "b"}));
        assert_eq!(record[0].source, Provenance::Harvested);
        assert_eq!(
            record[0].from,
            Some(Origin {
                call: "call 1".into(),
                path: "json.items[1].id".into()
            })
        );
        results.insert(1, json!({"content": []}));
        assert!(resolve(&step, &results, &pool).is_err());
    }

    fn tool(name: &str, annotations: Value, schema: Value) -> ToolEntry {
        let hints = witness_model::audit::Hints::from_annotations(Some(&annotations));
        ToolEntry {
            name: name.into(),
            title: None,
            description: None,
            class: hints.class(),
            hints,
            annotations: Some(annotations),
            input_schema: Some(schema),
            execution: None,
            has_output_schema: false,
            output_schema: None,
        }
    }

    #[test]
    fn each_planned_call_has_the_form_it_asks_and_a_plan_files_has_none() {
        let one = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        let tools = [
            tool("read_note", json!({"readOnlyHint": true}), one.clone()),
            tool("createNote", json!({"readOnlyHint": true}), one.clone()),
            tool("deleteNote", json!({"destructiveHint": false}), one.clone()),
            tool("write_file", json!({"destructiveHint": false}), one.clone()),
        ];
        let plan = Plan::synthesized(&tools);
        let pool = Pool::default();
        let forms: Vec<(String, Option<CallForm>)> = plan
            .steps
            .iter()
            .filter_map(|step| {
                let resolved = resolve(step, &BTreeMap::new(), &pool).ok()?;
                Some((step.tool.clone(), form_of(step, &resolved)))
            })
            .collect();
        let of = |tool: &str| -> Vec<Option<CallForm>> {
            forms
                .iter()
                .filter(|(t, _)| t == tool)
                .map(|(_, f)| *f)
                .collect()
        };
        // A reader is planned in the harvest pass and again after it (the
        // audit calls it there only if the harvest pass could not).
        assert_eq!(of("read_note"), vec![Some(CallForm::Read); 2]);
        // A creator is no harvester, whatever it declares: writer-shaped once.
        assert_eq!(of("createNote"), vec![Some(CallForm::Create)]);
        assert_eq!(of("deleteNote"), vec![Some(CallForm::Change)]);
        // A fresh file first, then an overwrite of one that exists.
        assert_eq!(
            of("write_file"),
            vec![Some(CallForm::Create), Some(CallForm::Change)]
        );
        let file = Plan::parse("[[call]]\ntool = \"deleteNote\"\nargs = { path = \"a.md\" }\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let resolved =
            resolve(&file.steps[0], &BTreeMap::new(), &pool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(form_of(&file.steps[0], &resolved), None);
    }

    fn names(steps: &[PlanStep]) -> Vec<&str> {
        steps.iter().map(|s| s.tool.as_str()).collect()
    }

    #[test]
    fn harvest_pass_is_readers_by_name_then_required_count_never_by_declaration() {
        let string = json!({"type": "string"});
        let one = json!({"type": "object", "properties": {"id": string}, "required": ["id"]});
        let none = json!({"type": "object", "properties": {}});
        let tools = [
            tool("get_item", json!({"readOnlyHint": true}), one.clone()),
            tool("stats", json!({"readOnlyHint": true}), none.clone()),
            tool("search_items", json!({}), one.clone()),
            tool("list_items", json!({"destructiveHint": true}), none.clone()),
            // A name that reads and takes away, or makes, is no harvester.
            tool(
                "list_and_delete",
                json!({"readOnlyHint": true}),
                none.clone(),
            ),
            tool(
                "delete_preview",
                json!({"readOnlyHint": true}),
                none.clone(),
            ),
            tool("add_item", json!({"readOnlyHint": true}), one.clone()),
            tool("remove_item", json!({}), one.clone()),
            tool("mystery", json!({}), none.clone()),
        ];
        let plan = Plan::synthesized(&tools);
        assert_eq!(plan.harvest, 3);
        assert_eq!(
            names(&plan.steps[..plan.harvest]),
            ["list_items", "search_items", "get_item"]
        );
        assert_eq!(
            names(&plan.steps[plan.harvest..]),
            [
                "list_items",
                "search_items",
                "get_item",
                "add_item",
                "mystery",
                "stats",
                "delete_preview",
                "list_and_delete",
                "remove_item"
            ]
        );
        assert_eq!(plan.retry_at, Some(plan.harvest + 6));
        let pool = Pool::default();
        // Nothing harvested yet: only tools without invented arguments may run.
        let runnable: Vec<&str> = plan.steps[..plan.harvest]
            .iter()
            .filter(|s| satisfiable(s, &pool))
            .map(|s| s.tool.as_str())
            .collect();
        assert_eq!(runnable, ["list_items"]);
        let without = plan.without(&["remove_item", "list_and_delete"]);
        assert_eq!(without.harvest, 3);
        assert_eq!(without.retry_at, Some(without.steps.len() - 1));
    }

    #[test]
    fn the_planner_never_synthesizes_where_a_harvested_value_fits() {
        let schema = json!({
            "type": "object",
            "properties": {
                "entityNames": {"type": "array", "items": {"type": "string"}},
                "observations": {"type": "array", "items": {"type": "object",
                    "properties": {"entityName": {"type": "string"}, "contents": {"type": "array", "items": {"type": "string"}}},
                    "required": ["entityName", "contents"]}},
                "note_id": {"type": "string"},
                "count": {"type": "integer"},
                "mode": {"enum": ["fast", "slow"]}
            },
            "required": ["entityNames", "observations", "note_id", "count", "mode"]
        });
        let tools = [tool("act", json!({"readOnlyHint": false}), schema)];
        let plan = Plan::synthesized(&tools);
        let step = &plan.steps[plan.harvest];
        let mut pool = Pool::default();
        pool.absorb(
            "create_entities",
            1,
            &json!({"structuredContent": {"entities": [{"name": "Ada"}]}}),
        );
        pool.absorb(
            "list_notes",
            2,
            &json!({"structuredContent": {"note_id": "n-7", "count": "3"}}),
        );
        let resolved = resolve(step, &BTreeMap::new(), &pool);
        let Ok(Resolved {
            arguments: args,
            recorded: record,
            ..
        }) = resolved
        else {
            panic!("{resolved:?}");
        };
        assert_eq!(args["entityNames"], json!(["Ada"]));
        assert_eq!(args["observations"][0]["entityName"], json!("Ada"));
        assert_eq!(args["note_id"], json!("n-7"));
        // `count` was harvested as a string; an integer parameter is not fed it.
        assert_eq!(args["count"], json!(1));
        let by_name = |n: &str| record.iter().find(|a| a.name == n).cloned();
        let names = by_name("entityNames").map(|a| (a.source, a.parts.len()));
        assert_eq!(names, Some((Provenance::Harvested, 1)));
        // Partly harvested: the invented `contents` keeps the argument
        // synthesized, and the harvested part says where it came from.
        let obs = by_name("observations");
        assert_eq!(
            obs.as_ref().map(|a| a.source),
            Some(Provenance::Synthesized)
        );
        assert_eq!(
            obs.map(|a| a.parts),
            Some(vec![ArgumentPart {
                at: "[0].entityName".into(),
                from: Some(Origin {
                    call: "call 1".into(),
                    path: "structured.entities[0].name".into()
                }),
                object: None,
            }])
        );
        assert_eq!(
            by_name("note_id").and_then(|a| a.from),
            Some(Origin {
                call: "call 2".into(),
                path: "structured.note_id".into()
            })
        );
        assert_eq!(
            by_name("count").map(|a| a.source),
            Some(Provenance::Synthesized)
        );
        assert_eq!(
            by_name("mode").map(|a| a.source),
            Some(Provenance::Synthesized)
        );
    }

    /// The tool's first step after the harvest pass: its main form.
    fn step_for(plan: &Plan, tool: &str) -> PlanStep {
        plan.steps[plan.harvest..]
            .iter()
            .find(|s| s.tool == tool)
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn a_declaration_never_changes_the_plan() {
        let path = json!({"type": "object", "properties": {"path": {"type": "string"}},
            "required": ["path"]});
        let none = json!({"type": "object", "properties": {}});
        let catalog = |reader: Value, maker: Value, remover: Value| {
            [
                tool("list_files", reader, none.clone()),
                tool("create_directory", maker, path.clone()),
                tool("delete_file", remover, path.clone()),
                tool("edit_task", json!({}), path.clone()),
            ]
        };
        let honest = Plan::synthesized(&catalog(
            json!({"readOnlyHint": true}),
            json!({"readOnlyHint": false, "destructiveHint": false}),
            json!({"readOnlyHint": false, "destructiveHint": true}),
        ));
        // Every lie the field study plants, and no annotations at all.
        for lies in [
            catalog(
                json!({"readOnlyHint": true}),
                json!({"readOnlyHint": true}),
                json!({"readOnlyHint": false, "destructiveHint": false}),
            ),
            catalog(
                json!({"readOnlyHint": false, "destructiveHint": true}),
                json!({"idempotentHint": true}),
                json!({"readOnlyHint": true}),
            ),
            catalog(json!({}), json!({}), json!({})),
        ] {
            let plan = Plan::synthesized(&lies);
            assert_eq!(plan.harvest, honest.harvest);
            assert_eq!(plan.retry_at, honest.retry_at);
            assert_eq!(plan.steps, honest.steps);
        }
        // A creator declared read-only is still asked to make something.
        assert_eq!(names(&honest.steps[..honest.harvest]), ["list_files"]);
        let writer = step_for(&honest, "create_directory");
        assert!(writer.writer_shaped());
        let pool = seeded_pool();
        let made = resolve(&writer, &BTreeMap::new(), &pool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argument(&made, "path").value,
            json!("/jail/stores/fs/tree/witness-create_directory")
        );
    }

    #[test]
    fn a_switched_form_of_a_reader_is_asked_again_after_the_harvest() {
        let mut step = PlanStep {
            tool: "export_list".into(),
            args: vec![("list".into(), ArgSpec::Auto(json!("witness")))],
            ..PlanStep::default()
        };
        assert!(!step.writer_shaped());
        // A switch thrown to the side its name says writes.
        step.set("save_to_file", ArgSpec::Pinned(json!(true)));
        assert!(step.writer_shaped());
        // A rehearsal switch thrown off writes; left on, it does not.
        let mut rehearsal = step.clone();
        rehearsal.set("save_to_file", ArgSpec::Pinned(json!(false)));
        assert!(!rehearsal.writer_shaped());
        rehearsal.set("dry_run", ArgSpec::Pinned(json!(true)));
        assert!(!rehearsal.writer_shaped());
        rehearsal.set("dry_run", ArgSpec::Pinned(json!(false)));
        assert!(rehearsal.writer_shaped());
    }

    #[test]
    fn a_creator_that_takes_what_another_makes_runs_after_it() {
        let takes = |params: &[&str]| {
            let properties: serde_json::Map<String, Value> = params
                .iter()
                .map(|p| ((*p).to_owned(), json!({"type": "string"})))
                .collect();
            json!({"type": "object", "properties": properties, "required": params})
        };
        let tools = [
            tool(
                "add_project_task",
                Value::Null,
                takes(&["project_id", "title"]),
            ),
            tool("create_todo", Value::Null, takes(&["title"])),
            tool("create_project", Value::Null, takes(&["name"])),
        ];
        let plan = Plan::synthesized(&tools);
        assert_eq!(
            names(&plan.steps[plan.harvest..]),
            ["create_project", "create_todo", "add_project_task"]
        );
    }

    #[test]
    fn unannotated_tools_run_listers_first_and_a_consumer_after_its_producer() {
        let takes = |param: &str| {
            json!({"type": "object", "properties": {param: {"type": "string"}},
                "required": [param]})
        };
        let none = json!({"type": "object", "properties": {}});
        let tools = [
            tool("memory_bank_write", Value::Null, takes("projectName")),
            tool("list_project_files", Value::Null, takes("projectName")),
            tool("memory_bank_read", Value::Null, takes("projectName")),
            tool("list_projects", Value::Null, none.clone()),
            tool("write_query", Value::Null, takes("query")),
            tool("archive", Value::Null, none),
        ];
        let plan = Plan::synthesized(&tools);
        assert_eq!(
            names(&plan.steps[plan.harvest..]),
            [
                "list_projects",
                "list_project_files",
                "memory_bank_read",
                "memory_bank_write",
                "write_query",
                "archive"
            ]
        );
    }

    #[test]
    fn a_creator_that_makes_a_missing_table_is_asked_to_write_into_its_own() {
        let schema = json!({"type": "object", "properties": {
            "table_name": {"type": "string"}, "title": {"type": "string"}},
            "required": ["table_name", "title"]});
        let mut add = tool("add_record", json!({"readOnlyHint": true}), schema);
        add.description =
            Some("Add a record. If the table doesn't exist, it will be created.".into());
        let plain = tool(
            "add_note",
            json!({"readOnlyHint": true}),
            json!({"type": "object", "properties": {"table_name": {"type": "string"}},
                "required": ["table_name"]}),
        );
        let plan = Plan::synthesized(&[add, plain]);
        let tables = |name: &str| -> Vec<ArgSpec> {
            plan.steps
                .iter()
                .filter(|s| s.tool == name)
                .map(|s| s.args[0].1.clone())
                .collect()
        };
        assert!(
            tables("add_record").contains(&ArgSpec::Fresh(json!("witness_add_record"))),
            "{:?}",
            tables("add_record")
        );
        assert!(
            !tables("add_note")
                .iter()
                .any(|spec| matches!(spec, ArgSpec::Fresh(_))),
            "a text that says nothing of missing tables keeps to the store's"
        );
    }

    #[test]
    fn a_tool_that_writes_its_output_to_a_path_is_also_pointed_at_an_existing_file() {
        let schema = json!({"type": "object", "properties": {
            "input_path": {"type": "string"}, "output": {"type": "string"}},
            "required": ["input_path", "output"]});
        let tools = [tool("pdf_compress", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let forms: Vec<&PlanStep> = plan.steps[plan.harvest..].iter().collect();
        assert_eq!(forms.len(), 2, "{forms:#?}");
        let output = |step: &PlanStep| {
            step.args
                .iter()
                .find(|(n, _)| n == "output")
                .map(|(_, spec)| spec.clone())
        };
        assert!(matches!(output(forms[0]), Some(ArgSpec::Fresh(_))));
        assert!(matches!(output(forms[1]), Some(ArgSpec::Auto(_))));
        assert!(forms[1].cues.store_first);
        // A move's destination is no output: its source is the file.
        let mv = json!({"type": "object", "properties": {
            "source": {"type": "string"}, "destination": {"type": "string"}},
            "required": ["source", "destination"]});
        let plan = Plan::synthesized(&[tool("move_file", Value::Null, mv)]);
        assert_eq!(plan.steps[plan.harvest..].len(), 1);
    }

    #[test]
    fn multi_form_writers_are_asked_each_form_on_real_objects() {
        let path = json!({"type": "object", "properties": {"path": {"type": "string"},
            "content": {"type": "string"}}, "required": ["path", "content"]});
        let additive = json!({"readOnlyHint": false, "destructiveHint": false});
        let mut sql = tool(
            "execute_sql",
            additive.clone(),
            json!({"type": "object", "properties": {"sql": {"type": "string"}},
                "required": ["sql"]}),
        );
        sql.description = Some("Execute a statement against the database".into());
        let tools = [tool("write_file", additive, path), sql];
        let plan = Plan::synthesized(&tools);
        let forms: Vec<&PlanStep> = plan
            .steps
            .iter()
            .filter(|s| s.tool == "write_file")
            .collect();
        assert_eq!(forms.len(), 2, "create, then overwrite");
        let mut pool = seeded_pool();
        let results = BTreeMap::new();
        let overwrite = resolve(forms[1], &results, &pool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argument(&overwrite, "path").value,
            json!("/jail/stores/fs/tree/docs/a.txt"),
            "a real file of the store"
        );
        let kinds: Vec<SqlKind> = plan
            .steps
            .iter()
            .filter(|s| s.tool == "execute_sql")
            .filter_map(|s| match s.args[0].1 {
                ArgSpec::Sql(kind) => Some(kind),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, [SqlKind::Select, SqlKind::Insert, SqlKind::Delete]);
        let step = |kind: SqlKind| {
            let mut step = step_for(&plan, "execute_sql");
            step.args[0].1 = ArgSpec::Sql(kind);
            step
        };
        pool.seed(
            vec![harvest::Harvested::seeded(
                "table_name",
                json!("customers"),
                witness_model::audit::StoreObject {
                    store: "db".into(),
                    object: "sqlite_master/table:customers".into(),
                },
                Some("tables"),
            )],
            Vec::new(),
        );
        let statement = |step: &PlanStep, pool: &Pool| {
            let resolved = resolve(step, &results, pool).unwrap_or_else(|e| panic!("{e}"));
            (argument(&resolved, "sql").value, resolved.creates)
        };
        // No insert of the plan's yet: the delete form touches nothing held.
        assert_eq!(
            statement(&step(SqlKind::Delete), &pool).0,
            json!("SELECT 1")
        );
        let (insert, creates) = statement(&step(SqlKind::Insert), &pool);
        assert_eq!(insert, json!("INSERT INTO \"customers\" DEFAULT VALUES"));
        for c in &creates {
            pool.created("execute_sql", 4, &c.key, &c.value, c.shape);
        }
        assert_eq!(
            statement(&step(SqlKind::Delete), &pool).0,
            json!(
                "DELETE FROM \"customers\" WHERE rowid IN (SELECT max(rowid) FROM \"customers\")"
            )
        );
    }

    fn argument(resolved: &Resolved, name: &str) -> Argument {
        resolved
            .recorded
            .iter()
            .find(|a| a.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no argument {name}: {resolved:?}"))
    }

    /// A directory store holding `docs/a.txt`, as the baseline names it.
    fn seeded_pool() -> Pool {
        use witness_jail::{JailedStore, StoreKind, StoreSpec};
        let store = JailedStore {
            spec: StoreSpec {
                name: "fs".into(),
                kind: StoreKind::Fs,
                source: "/src".into(),
                shown: None,
                clock_columns: Vec::new(),
            },
            path: "/jail/stores/fs/tree".into(),
            existed: true,
        };
        let present = [("fs", "dir/docs"), ("fs", "file/docs/a.txt")];
        let (seeds, roots) = seeds::seeds(&[store], &present);
        let mut pool = Pool::default();
        pool.seed(seeds, roots);
        pool
    }

    #[test]
    fn a_form_that_replaces_a_stores_file_waits_for_the_tools_that_read_or_remove_from_it() {
        let output = json!({"type": "object", "properties": {"out_path": {"type": "string"}},
            "required": ["out_path"]});
        let input = json!({"type": "object", "properties": {"input_path": {"type": "string"}},
            "required": ["input_path"]});
        let change = json!({"readOnlyHint": false, "destructiveHint": true});
        let tools = [
            tool("convert_pdf", change.clone(), output),
            tool("stamp_pdf", change.clone(), input.clone()),
            tool("delete_pdf_page", change.clone(), input.clone()),
            tool("restore_pdf", change, input),
        ];
        let plan = Plan::synthesized(&tools);
        let order: Vec<(&str, bool)> = plan
            .steps
            .iter()
            .map(|s| (s.tool.as_str(), s.cues.existing_target))
            .collect();
        // A page remover must still find the store's document, and a
        // restore still has something to bring back after the replace.
        assert_eq!(
            order,
            [
                ("convert_pdf", false),
                ("stamp_pdf", false),
                ("delete_pdf_page", false),
                ("convert_pdf", true),
                ("restore_pdf", false)
            ]
        );
        // The retry pass comes before the removers.
        assert_eq!(plan.retry_at, Some(2));
        // With no remover, before the replacing form all the same.
        let plan = Plan::synthesized(&[tools[0].clone(), tools[1].clone(), tools[3].clone()]);
        assert!(plan.steps[2].cues.existing_target);
        assert_eq!(plan.retry_at, Some(2));
    }

    #[test]
    fn an_output_writers_overwrite_form_names_a_file_that_exists() {
        let schema = json!({"type": "object", "properties": {"out_path": {"type": "string"}},
            "required": ["out_path"]});
        let tools = [tool(
            "save_report",
            json!({"readOnlyHint": false, "destructiveHint": false}),
            schema,
        )];
        let plan = Plan::synthesized(&tools);
        let forms: Vec<&PlanStep> = plan.steps.iter().collect();
        assert_eq!(forms.len(), 2, "create, then overwrite");
        let mut pool = seeded_pool();
        let results = BTreeMap::new();
        let create = resolve(forms[0], &results, &pool).unwrap_or_else(|e| panic!("{e}"));
        let made = argument(&create, "out_path").value.clone();
        assert!(
            made.as_str()
                .is_some_and(|p| p.contains("witness-save_report")),
            "{made}"
        );
        // Before: the bare fallback name, to which a server adds its own
        // extension, making a second new file rather than replacing one.
        let overwrite = resolve(forms[1], &results, &pool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argument(&overwrite, "out_path").value,
            json!("/jail/stores/fs/tree/docs/a.txt"),
            "a real file of the store"
        );
        // With no file of the store left, the one the create form made.
        pool.retain(|h| !matches!(h.source, Source::Store(_)));
        for created in &create.creates {
            pool.created(
                "save_report",
                1,
                &created.key,
                &created.value,
                created.shape,
            );
        }
        let overwrite = resolve(forms[1], &results, &pool).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(argument(&overwrite, "out_path").value, made);
    }

    #[test]
    fn reads_and_edits_get_the_stores_files_and_a_creator_a_fresh_one() {
        let path = json!({"type": "object", "properties": {"path": {"type": "string"}},
            "required": ["path"]});
        let read = json!({"readOnlyHint": true});
        let write = json!({"readOnlyHint": false, "destructiveHint": true});
        let tools = [
            tool("read_file", read.clone(), path.clone()),
            tool("list_directory", read, path.clone()),
            tool("write_file", write.clone(), path.clone()),
            tool("edit_file", write, path),
        ];
        let plan = Plan::synthesized(&tools);
        let mut pool = seeded_pool();
        let results = BTreeMap::new();
        let resolve_ok = |step: &PlanStep, pool: &Pool| {
            resolve(step, &results, pool).unwrap_or_else(|e| panic!("{e}"))
        };
        let file = argument(&resolve_ok(&step_for(&plan, "read_file"), &pool), "path");
        assert_eq!(file.value, json!("/jail/stores/fs/tree/docs/a.txt"));
        assert_eq!(file.source, Provenance::Store);
        assert_eq!(
            file.object.map(|o| (o.store, o.object)),
            Some(("fs".into(), "file/docs/a.txt".into()))
        );
        let dir = argument(
            &resolve_ok(&step_for(&plan, "list_directory"), &pool),
            "path",
        );
        assert_eq!(dir.value, json!("/jail/stores/fs/tree"), "the store's root");
        assert!(
            satisfiable(&step_for(&plan, "read_file"), &pool),
            "real values only"
        );
        // The creator's own file: fresh, under the root, never the store's.
        let made = resolve_ok(&step_for(&plan, "write_file"), &pool);
        let fresh = argument(&made, "path");
        assert_eq!(
            fresh.value,
            json!("/jail/stores/fs/tree/witness-write_file.txt")
        );
        assert_eq!(fresh.source, Provenance::Synthesized);
        assert_eq!(made.creates.len(), 1);
        // Once made, an editor still works on the store's own file: its
        // change shows on data the store held.
        let created = &made.creates[0];
        pool.created("write_file", 3, &created.key, &created.value, created.shape);
        let edited = argument(&resolve_ok(&step_for(&plan, "edit_file"), &pool), "path");
        assert_eq!(edited.value, json!("/jail/stores/fs/tree/docs/a.txt"));
        assert_eq!(edited.source, Provenance::Store);
    }

    /// A directory store holding a workbook with sheets Q1 and Q2 and a
    /// SQLite file with two sections, as the observers name them.
    fn content_pool() -> Pool {
        docs_pool(&[
            ("docs", "file/budget.xlsx"),
            ("docs", "xlsx/budget.xlsx#Q1!A1"),
            ("docs", "xlsx/budget.xlsx#Q1!B2"),
            ("docs", "xlsx/budget.xlsx#Q2!A1"),
            ("docs", "file/app.db"),
            ("docs", "sqlite/app.db#sections/1"),
            ("docs", "sqlite/app.db#sections/2"),
        ])
    }

    /// A directory store `docs` at `/jail/stores/docs/tree` whose baseline
    /// names `present`.
    fn docs_pool(present: &[(&str, &str)]) -> Pool {
        use witness_jail::{JailedStore, StoreKind, StoreSpec};
        let store = JailedStore {
            spec: StoreSpec {
                name: "docs".into(),
                kind: StoreKind::Fs,
                source: "/src".into(),
                shown: None,
                clock_columns: Vec::new(),
            },
            path: "/jail/stores/docs/tree".into(),
            existed: true,
        };
        let (seeds, roots) = seeds::seeds(&[store], present);
        let mut pool = Pool::default();
        pool.seed(seeds, roots);
        pool
    }

    #[test]
    fn a_call_naming_a_workbook_gets_that_workbooks_sheet() {
        let schema = json!({"type": "object", "properties": {
            "sheet": {"type": "string"}, "start_row": {"type": "integer"},
            "path": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}},
            "required": ["sheet", "start_row"]});
        let tools = [tool("delete_rows", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let mut pool = content_pool();
        // A workbook the plan made answered with its own sheet, later.
        pool.absorb(
            "create_workbook",
            2,
            &json!({"content": [{"type": "text",
            "text": "{\"sheets\": [\"Sheet1\"], \"path\": \"/jail/stores/docs/tree/new.xlsx\"}"}]}),
        );
        let resolved = resolve(&step_for(&plan, "delete_rows"), &BTreeMap::new(), &pool)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argument(&resolved, "path").value,
            json!("/jail/stores/docs/tree/budget.xlsx")
        );
        let sheet = argument(&resolved, "sheet");
        assert!(
            sheet.value == json!("Q1") || sheet.value == json!("Q2"),
            "{:?}",
            sheet.value
        );
        assert_eq!(sheet.source, Provenance::Store);
    }

    #[test]
    fn an_overwrite_writes_its_output_over_a_file_it_does_not_read() {
        let schema = json!({"type": "object", "properties": {
            "input_path": {"type": "string"}, "output": {"type": "string"}},
            "required": ["input_path", "output"]});
        let tools = [tool("compress_pdf", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let overwrite = plan
            .steps
            .iter()
            .find(|s| s.tool == "compress_pdf" && s.cues.existing_target)
            .cloned()
            .unwrap_or_else(|| panic!("no overwrite form: {:?}", plan.steps));
        let mut pool = docs_pool(&[("docs", "file/scan.pdf")]);
        let paths = |pool: &Pool| {
            let resolved =
                resolve(&overwrite, &BTreeMap::new(), pool).unwrap_or_else(|e| panic!("{e}"));
            (
                argument(&resolved, "input_path").value,
                argument(&resolved, "output").value,
            )
        };
        // One file held: nothing else exists to replace, so it stays.
        let scan = json!("/jail/stores/docs/tree/scan.pdf");
        assert_eq!(paths(&pool), (scan.clone(), scan.clone()));
        // The create form's output exists now: the overwrite replaces it.
        let made = json!("/jail/stores/docs/tree/witness-compress_pdf.pdf");
        pool.created("compress_pdf", 2, "output", &made, Some(PathKind::File));
        assert_eq!(paths(&pool), (scan.clone(), made.clone()));
        // Made from scan.pdf, it is replaced from another PDF the store
        // holds: the same input would write the same bytes.
        pool.seed(
            vec![harvest::Harvested::seeded_path(
                "/jail/stores/docs/tree/memo.pdf".into(),
                PathKind::File,
                witness_model::audit::StoreObject {
                    store: "docs".into(),
                    object: "file/memo.pdf".into(),
                },
            )],
            Vec::new(),
        );
        pool.absorb_answer(
            "compress_pdf",
            2,
            &json!({"content": [{"type": "text", "text": "ok"}]}),
            &[],
            &[],
            &[("input_path".into(), scan.clone())],
        );
        assert_eq!(
            paths(&pool),
            (json!("/jail/stores/docs/tree/memo.pdf"), made)
        );
    }

    #[test]
    fn two_ids_of_one_call_name_two_things_of_the_kind() {
        let schema = json!({"type": "object", "properties": {
            "section_id": {"type": "integer"}, "blocked_by_id": {"type": "integer"},
            "task_id": {"type": "integer"}},
            "required": ["section_id", "blocked_by_id"]});
        let tools = [tool("add_section_dep", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let pool = content_pool();
        let resolved = resolve(&step_for(&plan, "add_section_dep"), &BTreeMap::new(), &pool)
            .unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = (
            argument(&resolved, "section_id"),
            argument(&resolved, "blocked_by_id"),
        );
        assert_eq!(a.source, Provenance::Store);
        assert_eq!(b.source, Provenance::Store);
        assert_ne!(
            a.value, b.value,
            "two sections, not one depending on itself"
        );
    }

    #[test]
    fn the_two_ends_of_a_link_are_two_memories_the_answers_gave() {
        let schema = json!({"type": "object", "properties": {
            "id_a": {"type": "string"}, "id_b": {"type": "string"}},
            "required": ["id_a", "id_b"]});
        let tools = [tool("memory_link", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let mut pool = harvest::Pool::default();
        for (step, id) in [(1, "m-1"), (2, "m-2")] {
            pool.absorb(
                "memory_write",
                step,
                &json!({"structuredContent": {"memories": [{"id": id}]}}),
            );
        }
        let resolved = resolve(&step_for(&plan, "memory_link"), &BTreeMap::new(), &pool)
            .unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = (argument(&resolved, "id_a"), argument(&resolved, "id_b"));
        assert_eq!(a.source, Provenance::Harvested);
        assert_eq!(b.source, Provenance::Harvested);
        assert_eq!(a.value, json!("m-2"));
        assert_eq!(
            b.value,
            json!("m-1"),
            "two memories, not one linked to itself"
        );
    }

    #[test]
    fn an_id_an_answer_gave_is_sent_with_what_its_call_named() {
        let schema = json!({"type": "object", "properties": {
            "project": {"type": "string"}, "id": {"type": "string"}},
            "required": ["project", "id"]});
        let tools = [tool("update_chunk", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let mut pool = Pool::default();
        let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
        pool.absorb("list_projects", 1, &text(r#"[{"name": "garden-guide"}]"#));
        pool.absorb_answer(
            "list_chunks",
            2,
            &text(r#"{"chunks": [{"id": "c-1"}]}"#),
            &[],
            &[],
            &[("project".into(), json!("garden-guide"))],
        );
        pool.created(
            "create_project",
            3,
            "name",
            &json!("witness-create_project"),
            None,
        );
        let resolved = resolve(&step_for(&plan, "update_chunk"), &BTreeMap::new(), &pool)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(argument(&resolved, "id").value, json!("c-1"));
        let project = argument(&resolved, "project");
        assert_eq!(
            project.value,
            json!("garden-guide"),
            "the chunk's own project"
        );
        assert_eq!(project.from.map(|o| o.call), Some("call 2".to_owned()));
        // What the plan made belongs to what its call named, as well.
        pool.absorb_answer(
            "add_chunk",
            4,
            &text("{}"),
            &[],
            &[],
            &[("project".into(), json!("shop-faq"))],
        );
        pool.created("add_chunk", 4, "id", &json!("c-made"), None);
        let resolved = resolve(&step_for(&plan, "update_chunk"), &BTreeMap::new(), &pool)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argument(&resolved, "id").value,
            json!("c-made"),
            "the newest chunk"
        );
        assert_eq!(argument(&resolved, "project").value, json!("shop-faq"));
    }

    #[test]
    fn tools_that_end_a_thing_run_after_those_that_need_it_alive() {
        let takes = json!({"type": "object", "properties": {"project_id": {"type": "integer"}},
            "required": ["project_id"]});
        let tools = [
            tool("archive_project", Value::Null, takes.clone()),
            tool("pin_add", Value::Null, takes.clone()),
            tool("complete_task", Value::Null, takes.clone()),
            tool("update_project", Value::Null, takes),
        ];
        let plan = Plan::synthesized(&tools);
        let order = names(&plan.steps[plan.harvest..]);
        let at = |n: &str| order.iter().position(|o| *o == n).unwrap_or(usize::MAX);
        assert!(
            at("archive_project") > at("pin_add") && at("archive_project") > at("update_project")
        );
        assert!(at("complete_task") > at("update_project"));
        let tools = [
            tool("reset_task", Value::Null, json!({"type": "object"})),
            tool("cancel_task", Value::Null, json!({"type": "object"})),
            tool("delete_task", Value::Null, json!({"type": "object"})),
            tool("edit_task", Value::Null, json!({"type": "object"})),
            tool("undelete_task", Value::Null, json!({"type": "object"})),
            tool("reopen_task", Value::Null, json!({"type": "object"})),
        ];
        let plan = Plan::synthesized(&tools);
        // What takes back a change or an end runs after them and before the
        // delete (a reopen after it answers `not found`); what brings back
        // a deleted thing runs last.
        assert_eq!(
            names(&plan.steps[plan.harvest..]),
            [
                "edit_task",
                "cancel_task",
                "reopen_task",
                "reset_task",
                "delete_task",
                "undelete_task"
            ]
        );
        let in_project = json!({"type": "object", "properties": {
            "project": {"type": "string"}, "id": {"type": "string"}}, "required": ["project", "id"]});
        let named = json!({"type": "object", "properties": {"name": {"type": "string"}},
            "required": ["name"]});
        let tools = [
            tool("delete_project", Value::Null, named),
            tool("delete_chunk", Value::Null, in_project),
        ];
        let plan = Plan::synthesized(&tools);
        assert_eq!(
            names(&plan.steps[plan.harvest..]),
            ["delete_chunk", "delete_project"],
            "the container goes after what is in it"
        );
    }

    #[test]
    fn a_move_of_a_thing_by_its_path_runs_after_the_tools_that_act_on_it_in_place() {
        let folders = json!({"type": "object", "properties": {
            "old_dir": {"type": "string"}, "new_dir": {"type": "string"}},
            "required": ["old_dir", "new_dir"]});
        let folder = json!({"type": "object", "properties": {"folder": {"type": "string"}},
            "required": ["folder"]});
        let task = json!({"type": "object", "properties": {
            "task_id": {"type": "string"}, "section": {"type": "string"}},
            "required": ["task_id", "section"]});
        let in_folder = json!({"type": "object", "properties": {
            "task_id": {"type": "string"}, "folder_id": {"type": "string"}},
            "required": ["task_id", "folder_id"]});
        let tools = [
            tool("move_folder", Value::Null, folders),
            tool("convert_links", Value::Null, folder.clone()),
            tool("move_task", Value::Null, task),
            tool("move_item", Value::Null, in_folder),
            tool("tag_folder", Value::Null, folder),
        ];
        let plan = Plan::synthesized(&tools);
        let order = names(&plan.steps[plan.harvest..]);
        let at = |n: &str| order.iter().position(|o| *o == n).unwrap_or(usize::MAX);
        // Moved first, the folder would leave the converter nothing to convert.
        assert!(at("move_folder") > at("convert_links"), "{order:?}");
        assert!(at("move_folder") > at("tag_folder"), "{order:?}");
        // A task moved by its id is still where tools find it, and so is
        // one moved into a folder named by its id.
        assert!(at("move_task") < at("tag_folder"), "{order:?}");
        assert!(at("move_item") < at("tag_folder"), "{order:?}");
    }

    #[test]
    fn an_example_path_of_the_authors_machine_keeps_only_its_name() {
        assert!(is_foreign_path("/Users/you/Documents/letter.md"));
        assert!(is_foreign_path("~/notes/a.md") && is_foreign_path("C:\\data\\b.txt"));
        assert!(!is_foreign_path("notes/a.md") && !is_foreign_path("letter"));
        assert_eq!(
            foreign_name("/Users/you/Documents/letter.md", "save"),
            "witness-letter.md"
        );
        assert_eq!(foreign_name("C:\\data\\b.txt", "save"), "witness-b.txt");
        assert_eq!(foreign_name("/", "save"), "witness-save");
    }

    #[test]
    fn once_a_server_took_a_relative_path_every_later_path_goes_relative() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}},
            "required": ["path"]});
        let tools = [tool("read_file", Value::Null, schema)];
        let plan = Plan::synthesized(&tools);
        let step = &plan.steps[0];
        let mut pool = seeded_pool();
        let sent = |pool: &Pool| {
            let made = resolve(step, &BTreeMap::new(), pool).unwrap_or_else(|e| panic!("{e}"));
            argument(&made, "path").value
        };
        assert_eq!(sent(&pool), json!("/jail/stores/fs/tree/docs/a.txt"));
        pool.prefer_relative();
        assert_eq!(sent(&pool), json!("docs/a.txt"));
    }

    #[test]
    fn values_the_description_offers_are_taken_before_inventing() {
        let schema = json!({"type": "object", "properties": {
            "timezone": {"type": "string",
                "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Etc/UTC' if none."},
            "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
            "branch_type": {"type": "string", "description": "local branches ('local') or all ('all')"},
            "name": {"type": "string"}},
            "required": ["timezone", "time", "branch_type", "name"]});
        let tools = [tool("convert_time", json!({"readOnlyHint": true}), schema)];
        let plan = Plan::synthesized(&tools);
        let resolved = resolve(
            &step_for(&plan, "convert_time"),
            &BTreeMap::new(),
            &Pool::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            argument(&resolved, "timezone").value,
            json!("America/New_York")
        );
        assert_eq!(argument(&resolved, "time").value, json!("12:00"));
        assert_eq!(argument(&resolved, "branch_type").value, json!("local"));
        // Still invented, and named for its tool.
        let name = argument(&resolved, "name");
        assert_eq!(name.value, json!("witness-convert_time"));
        assert_eq!(name.source, Provenance::Synthesized);
    }
}
