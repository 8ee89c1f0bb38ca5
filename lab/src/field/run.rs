//! The runner: per server, its package from the cache, a fresh store, the
//! honest audit, one audit per lie the ground truth calls for; then the
//! document, the dataset and the audits on disk.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use witness_engine::audit;
use witness_engine::audit::stable::{ClockText, stable};
use witness_jail::StoreSpec;
use witness_model::audit::AuditReport;
use witness_model::exit::ExitStatus;
use witness_model::field::*;
use witness_sweep::Shard;
use witness_sweep::server_json::Given;

use super::entry::{FieldEntry, Half, Split};
use super::install::{ensure_installed, program, python3, relay};
use super::lies::{Lie, plan};
use super::tally::{HONEST, hint_tallies, summarize, totals};
use super::{AUDIT_PREFIX, CSV, DOCUMENT, FieldError, JSONL, store};
use crate::progress::{Event, Progress};

/// The name a seed's temporary directory starts with.
const SEED_PREFIX: &str = "mcp-witness-field-";

/// What to run, and from where.
#[derive(Clone, Debug)]
pub struct FieldOptions {
    /// `experiments/field`: the split and the servers' entries.
    pub field: PathBuf,
    /// Where `<id>.toml` ground truths are (`experiments/field/truth`).
    pub truth: PathBuf,
    /// The install cache.
    pub cache: PathBuf,
    pub half: Half,
    /// `--server`: only these (each must be in the half).
    pub servers: Vec<String>,
    /// `--shard I/N`: only the I-th of N parts of the servers chosen.
    pub shard: Option<Shard>,
}

/// The document and the exit status it adds up to.
#[derive(Clone, Debug)]
pub struct FieldOutcome {
    pub document: FieldDocument,
    pub rows: Vec<FieldRow>,
    /// Failed when a lie escaped or a false failure showed; else
    /// incomplete when a server could not run or an audit not finish; else
    /// passed.
    pub status: ExitStatus,
}

/// The servers a run takes: the half's, or the `--server`s, each of which
/// must be in the half (the evaluation half is held out until it is asked
/// for by name).
pub fn chosen(split: &Split, half: Half, servers: &[String]) -> Result<Vec<String>, FieldError> {
    let ids = half.ids(split);
    if servers.is_empty() {
        return Ok(ids);
    }
    let mut chosen = BTreeSet::new();
    for id in servers {
        if !ids.contains(id) {
            let elsewhere = Half::All.ids(split).contains(id);
            return Err(FieldError::Invalid(if elsewhere {
                format!(
                    "--server {id}: it is not in the {} half; add --half all (or its half) to run it",
                    half.as_str()
                )
            } else {
                format!("--server {id}: no such server in experiments/field/split.json")
            }));
        }
        chosen.insert(id.clone());
    }
    Ok(chosen.into_iter().collect())
}

/// Shard `I/N` of the servers chosen: in id order, the I-th, the (I+N)-th
/// and so on. Dealt round, not hashed as a sweep's targets are, so that the
/// shards of a short list (the CI slice) are even; a shard keeps no state
/// between runs that a server moving to another shard would lose. Empty
/// when N is larger than the list, which writes a document of no servers.
pub fn sharded(ids: Vec<String>, shard: Option<Shard>) -> Vec<String> {
    let Some(shard) = shard else {
        return ids;
    };
    let (index, count) = (shard.index as usize, shard.count as usize);
    ids.into_iter()
        .enumerate()
        .filter(|(n, _)| n % count == index)
        .map(|(_, id)| id)
        .collect()
}

/// Runs the study and writes `out/field.json`, `field.jsonl`, `field.csv`
/// and `out/audits/field-*.json`.
pub fn run_field(
    options: &FieldOptions,
    out: &Path,
    progress: &Progress,
) -> Result<FieldOutcome, FieldError> {
    let split = read_split(&options.field)?;
    let ids = sharded(
        chosen(&split, options.half, &options.servers)?,
        options.shard,
    );
    let cache = crate::cases::absolute_dir(&options.cache);
    let relay = relay(&cache).map_err(FieldError::Invalid)?;
    let python = python3().map_err(FieldError::Invalid)?;
    let tools = Tools {
        cache: &cache,
        relay: &relay,
        python: &python,
    };
    let mut servers = Vec::new();
    let mut rows = Vec::new();
    let mut statuses = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        // Interrupted: every later audit would stop at once and be counted
        // as a server that did not finish. The document holds the servers
        // done so far.
        if witness_jail::interrupt::signal().is_some() {
            statuses.push(ExitStatus::Incomplete);
            break;
        }
        let entry = FieldEntry::read(&options.field, &options.truth, id, &split)
            .map_err(FieldError::Invalid)?;
        let (server, server_rows, status) = match run_server(&entry, options, &tools, out, progress)
        {
            Ok((server, server_rows, complete)) => {
                let lie_missed = server.lies.iter().any(|l| !l.caught);
                let false_failure = server.failures.iter().any(|f| f.judged == "false");
                let status = if lie_missed || false_failure {
                    ExitStatus::Failed
                } else if !complete {
                    ExitStatus::Incomplete
                } else {
                    ExitStatus::Passed
                };
                (server, server_rows, status)
            }
            Err(why) => (
                FieldServer {
                    error: Some(machine_paths_out(&why, &cache)),
                    ..base(&entry)
                },
                Vec::new(),
                ExitStatus::Incomplete,
            ),
        };
        progress.step(
            "field",
            n + 1,
            ids.len(),
            &match &server.error {
                Some(e) => format!("{id}: not run: {e}"),
                None => format!(
                    "{id}: {}/{} tools exercised, {} annotated, {}/{} lies caught, {} false failures",
                    server.exercised,
                    server.tools,
                    server.annotated,
                    server.lies.iter().filter(|l| l.caught).count(),
                    server.lies.len(),
                    server.failures.iter().filter(|f| f.judged == "false").count()
                ),
            },
        );
        servers.push(server);
        rows.extend(server_rows);
        statuses.push(status);
        // After every server, so that a run stopped part way leaves a
        // document of the servers it finished.
        write_all(out, &document(options, &servers, &rows), &rows)?;
    }
    let document = document(options, &servers, &rows);
    write_all(out, &document, &rows)?;
    Ok(FieldOutcome {
        document,
        rows,
        status: ExitStatus::across(statuses),
    })
}

/// Merges the documents and datasets of runs on parts of the study (shards,
/// or a server rerun alone) into `out`: their servers in id order, each
/// server's rows with it, the tallies counted again. A server in two parts
/// is refused. The merge of parts that cover a half is that half's
/// document, byte for byte as one run writes it.
pub fn merge_field(
    parts: &[PathBuf],
    half: Half,
    field: &Path,
    out: &Path,
) -> Result<FieldDocument, FieldError> {
    let split = read_split(field)?;
    let mut servers: Vec<FieldServer> = Vec::new();
    let mut rows: Vec<FieldRow> = Vec::new();
    let mut timing = None;
    for part in parts {
        let read = |name: &str| {
            std::fs::read_to_string(part.join(name)).map_err(|e| {
                FieldError::Invalid(format!(
                    "--merge {}: cannot read {name}: {e}",
                    part.display()
                ))
            })
        };
        let document: FieldDocument = serde_json::from_str(&read(DOCUMENT)?).map_err(|e| {
            FieldError::Invalid(format!("--merge {}: {DOCUMENT}: {e}", part.display()))
        })?;
        if document.schema != FIELD_SCHEMA {
            return Err(FieldError::Invalid(format!(
                "--merge {}: {DOCUMENT} is {:?}, not {FIELD_SCHEMA}",
                part.display(),
                document.schema
            )));
        }
        let settings = (
            document.plan.clone(),
            document.timeout_ms,
            document.settle_ms,
        );
        if timing.get_or_insert_with(|| settings.clone()) != &settings {
            return Err(FieldError::Invalid(format!(
                "--merge {}: its audits ran with other settings than the first part's",
                part.display()
            )));
        }
        for line in read(JSONL)?.lines().filter(|l| !l.trim().is_empty()) {
            let row: FieldRow = serde_json::from_str(line).map_err(|e| {
                FieldError::Invalid(format!("--merge {}: {JSONL}: {e}", part.display()))
            })?;
            // A server taken out of a part's document by hand (to merge its
            // rerun instead) leaves its rows behind unless they go too:
            // merged, they would count twice.
            if !document
                .servers
                .iter()
                .any(|s| s.id == row.server && s.error.is_none())
            {
                return Err(FieldError::Invalid(format!(
                    "--merge {}: {JSONL} has rows of {}, which its {DOCUMENT} does not list as run \
                     (take a server out of a part from {DOCUMENT}, {JSONL}, {CSV} and audits/ alike)",
                    part.display(),
                    row.server
                )));
            }
            rows.push(row);
        }
        for server in document.servers {
            match servers.iter().position(|s| s.id == server.id) {
                // A server that did not run (it has no rows) is a place
                // held for its rerun.
                Some(at) if servers[at].error.is_some() => servers[at] = server,
                Some(_) if server.error.is_some() => {}
                Some(_) => {
                    return Err(FieldError::Invalid(format!(
                        "--merge: {} ran in more than one part",
                        server.id
                    )));
                }
                None => servers.push(server),
            }
        }
    }
    // Every part read and found consistent before anything is written.
    for part in parts {
        copy_audits(&part.join("audits"), &out.join("audits"))?;
    }
    servers.sort_by(|a, b| a.id.cmp(&b.id));
    let order = |id: &str| servers.iter().position(|s| s.id == id);
    rows.sort_by_key(|r| order(&r.server));
    let ids: Vec<String> = servers.iter().map(|s| s.id.clone()).collect();
    let options = FieldOptions {
        field: PathBuf::new(),
        truth: PathBuf::new(),
        cache: PathBuf::new(),
        half,
        servers: if ids == half.ids(&split) {
            Vec::new()
        } else {
            ids
        },
        shard: None,
    };
    let mut document = document(&options, &servers, &rows);
    if let Some((plan, timeout_ms, settle_ms)) = timing {
        document.plan = plan;
        document.timeout_ms = timeout_ms;
        document.settle_ms = settle_ms;
    }
    write_all(out, &document, &rows)?;
    Ok(document)
}

/// The exit status a document adds up to: failed when a lie escaped or a
/// check failed on a claim the truth says holds, else incomplete when a
/// server did not run or an audit did not finish, else passed.
pub fn status_of(document: &FieldDocument) -> ExitStatus {
    ExitStatus::across(document.servers.iter().map(|s| {
        if s.lies.iter().any(|l| !l.caught) || s.failures.iter().any(|f| f.judged == "false") {
            ExitStatus::Failed
        } else if s.error.is_some() || !s.complete {
            ExitStatus::Incomplete
        } else {
            ExitStatus::Passed
        }
    }))
}

fn read_split(field: &Path) -> Result<Split, FieldError> {
    let path = field.join("split.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| FieldError::Invalid(format!("cannot read {}: {e}", path.display())))?;
    Split::parse(&text).map_err(FieldError::Invalid)
}

/// A part's audits (`field-*.json`) into the merged directory.
fn copy_audits(from: &Path, to: &Path) -> Result<(), FieldError> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(|source| FieldError::Write {
        path: to.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with(AUDIT_PREFIX) && text.ends_with(".json") {
            std::fs::copy(entry.path(), to.join(&name)).map_err(|source| FieldError::Write {
                path: to.join(&name),
                source,
            })?;
        }
    }
    Ok(())
}

fn write_all(out: &Path, document: &FieldDocument, rows: &[FieldRow]) -> Result<(), FieldError> {
    write(&out.join(DOCUMENT), document)?;
    write_rows(out, rows)
}

fn document(options: &FieldOptions, servers: &[FieldServer], rows: &[FieldRow]) -> FieldDocument {
    FieldDocument {
        schema: FIELD_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        plan: "none".into(),
        timeout_ms: u64::try_from(crate::PUBLISHED_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
        settle_ms: u64::try_from(crate::PUBLISHED_SETTLE.as_millis()).unwrap_or(u64::MAX),
        half: if options.servers.is_empty() && options.shard.is_none() {
            options.half.as_str().into()
        } else {
            "subset".into()
        },
        hints: hint_tallies(servers, rows),
        totals: totals(servers),
        servers: servers.to_vec(),
    }
}

struct Tools<'a> {
    cache: &'a Path,
    relay: &'a Path,
    python: &'a Path,
}

fn base(entry: &FieldEntry) -> FieldServer {
    let package = entry.entry.packages.first();
    FieldServer {
        id: entry.id.clone(),
        kind: entry.kind.clone(),
        registry: package.map(|p| p.registry_type.clone()).unwrap_or_default(),
        package: package.map(|p| p.identifier.clone()).unwrap_or_default(),
        version: package.and_then(|p| p.version.clone()).unwrap_or_default(),
        stores: entry
            .witness
            .stores
            .iter()
            .map(|s| format!("{}={}", s.name, s.kind))
            .collect(),
        store: entry.witness.seed.description.clone(),
        truth: entry.truth.is_some(),
        ..FieldServer::default()
    }
}

/// One server: installed, seeded, audited honest and once per lie.
/// Gives its summary, its rows and whether every audit finished.
fn run_server(
    entry: &FieldEntry,
    options: &FieldOptions,
    tools: &Tools<'_>,
    out: &Path,
    progress: &Progress,
) -> Result<(FieldServer, Vec<FieldRow>, bool), String> {
    let package = entry.package()?;
    let version = package.version.clone().unwrap_or_default();
    progress.report(Event::Published {
        experiment: "field",
        name: &entry.id,
        package: &package.identifier,
        version: &version,
    });
    let dir = ensure_installed(tools.cache, &options.field, package, &entry.witness)?;
    let program = program(&dir, package, &entry.witness)?;
    let given = Given {
        stores: entry
            .witness
            .stores
            .iter()
            .map(|s| s.name.clone())
            .collect(),
        ..Given::default()
    };
    let resolved = entry
        .entry
        .resolve(Some(0), &given)
        .map_err(|e| format!("server.json: {e}"))?;
    let bin_dir = program
        .last()
        .and_then(|p| Path::new(p).parent())
        .map(Path::to_path_buf);
    let mut command = program;
    command.extend(resolved.args);
    let seed_dir = tempfile::Builder::new()
        .prefix(SEED_PREFIX)
        .tempdir()
        .map_err(|e| format!("cannot make a seed directory: {e}"))?;
    let seeded = store::make(
        &entry.witness.stores,
        &entry.witness.seed.calls,
        &entry.kind,
        &entry.witness.seed.description,
        &store::Launch {
            command: command.clone(),
            bin_dir,
            env: resolved.env.clone(),
            init: &entry.witness.seed.init,
            timeout: crate::PUBLISHED_TIMEOUT,
        },
        seed_dir.path(),
    )?;
    let variant = Variant {
        entry,
        version: &version,
        command: &command,
        env: &resolved.env,
        stores: &seeded.stores,
        seed_dir: seed_dir.path(),
        tools,
        out,
        progress,
    };
    let honest = variant.audit(None)?;
    if let Some(signal) = witness_jail::interrupt::signal() {
        return Err(witness_jail::interrupt::reason(signal));
    }
    let listed: Vec<String> = honest.tools.iter().map(|t| t.name.clone()).collect();
    let lies = entry
        .truth
        .as_ref()
        .map(|t| plan(t, &listed))
        .unwrap_or_default();
    let mut audited = Vec::new();
    for lie in lies {
        if let Some(signal) = witness_jail::interrupt::signal() {
            return Err(witness_jail::interrupt::reason(signal));
        }
        let report = variant.audit(Some(&lie))?;
        audited.push((lie, report));
    }
    let complete = honest.complete && audited.iter().all(|(_, r)| r.complete);
    let server = FieldServer {
        seed_calls: seeded.calls,
        ..base(entry)
    };
    let (server, rows) = summarize(server, entry.truth.as_ref(), &honest, &audited);
    Ok((without_clock(server), without_clock(rows), complete))
}

/// Why a server did not run, without this machine's paths: an install or
/// a seed that failed names the cache (`{field}`, as the audits have it)
/// or the seed's temporary directory (`{seed}`).
fn machine_paths_out(why: &str, cache: &Path) -> String {
    let cache = cache.to_string_lossy();
    let mut text = if cache.is_empty() {
        why.to_owned()
    } else {
        why.replace(cache.as_ref(), "{field}")
    };
    let seed = std::env::temp_dir().join(SEED_PREFIX);
    let seed = seed.to_string_lossy();
    while let Some(at) = text.find(seed.as_ref()) {
        let rest = &text[at + seed.len()..];
        let end = rest
            .find(|c: char| c == '/' || c.is_whitespace() || c == ':' || c == '\'')
            .unwrap_or(rest.len());
        text.replace_range(at..at + seed.len() + end, "{seed}");
    }
    text
}

/// `value` with every date-time a server wrote (ISO 8601 and SQLite text,
/// JavaScript Date strings) as `{clock}`. The document's reasons quote
/// servers' answers ("call 4: File Info … modified: 2026-12-06T02:13:14"),
/// and `field.json` is held to the same bytes on a rerun; the audits keep
/// the full answers. A date alone (a note named `2026-01-05.md`) stays.
fn without_clock<T: serde::Serialize + serde::de::DeserializeOwned>(value: T) -> T {
    let Ok(mut json) = serde_json::to_value(&value) else {
        return value;
    };
    let replaced = audit::stable::replace_clock_values(
        &mut json,
        &[ClockText::SqlDateTime, ClockText::JsDate],
    );
    if replaced.is_empty() {
        return value;
    }
    serde_json::from_value(json).unwrap_or(value)
}

/// The audit file's name: `field-<id>` for the honest audit,
/// `field-<id>-<tool>-<kind>` for a lie.
pub fn audit_name(id: &str, lie: Option<&Lie>) -> String {
    audit_stem(id, lie.map(|l| (l.tool.as_str(), l.kind.as_str())))
}

/// The command a variant runs: the server behind the relay, its lies on
/// the relay's command line.
pub fn relayed(python: &Path, relay: &Path, lie: Option<&Lie>, server: &[String]) -> Vec<String> {
    let mut command = vec![
        python.to_string_lossy().into_owned(),
        relay.to_string_lossy().into_owned(),
    ];
    if let Some(lie) = lie {
        command.push("--lie".into());
        command.push(lie.variant());
    }
    command.push("--".into());
    command.extend(server.iter().cloned());
    command
}

struct Variant<'a> {
    entry: &'a FieldEntry,
    version: &'a str,
    command: &'a [String],
    env: &'a [(String, String)],
    stores: &'a [StoreSpec],
    seed_dir: &'a Path,
    tools: &'a Tools<'a>,
    out: &'a Path,
    progress: &'a Progress,
}

impl Variant<'_> {
    /// Audits the server (behind the relay, with `lie` planted) on a copy
    /// of the seeded store, and writes the audit, machine paths replaced.
    fn audit(&self, lie: Option<&Lie>) -> Result<AuditReport, String> {
        let name = lie.map_or_else(|| HONEST.to_owned(), Lie::variant);
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let package = self.entry.package()?;
        let options = crate::PublishedRun {
            command: relayed(self.tools.python, self.tools.relay, lie, self.command),
            stores: self.stores.to_vec(),
            env: &env,
            plan: None,
            label: format!(
                "field {} ({name}): {}@{}",
                self.entry.id, package.identifier, self.version
            ),
            version: self.version,
        }
        .options();
        let options = audit::AuditOptions {
            progress: self.progress.audit(),
            ..options
        };
        let run = audit::run(options).map_err(|e| format!("audit ({name}): {e}"))?;
        let cache = self.tools.cache.to_string_lossy().into_owned();
        let seed = self.seed_dir.to_string_lossy().into_owned();
        let path = std::env::var("PATH").unwrap_or_default();
        let report = stable(
            &run.report,
            &[(&cache, "{field}"), (&seed, "{seed}"), (&path, "{PATH}")],
            &[],
        )
        .map_err(|e| e.to_string())?;
        write(
            &self
                .out
                .join(format!("audits/{}.json", audit_name(&self.entry.id, lie))),
            &report,
        )
        .map_err(|e| e.to_string())?;
        Ok(report)
    }
}

fn write(path: &Path, value: &impl serde::Serialize) -> Result<(), FieldError> {
    crate::write_json_file(path, value).map_err(|source| FieldError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// `field.jsonl` (one row a line) and `field.csv` (the same columns).
fn write_rows(out: &Path, rows: &[FieldRow]) -> Result<(), FieldError> {
    let mut jsonl = String::new();
    for row in rows {
        let line = serde_json::to_string(row).map_err(|e| FieldError::Write {
            path: out.join(JSONL),
            source: std::io::Error::other(e),
        })?;
        jsonl.push_str(&line);
        jsonl.push('\n');
    }
    let put = |name: &str, text: &str| {
        std::fs::write(out.join(name), text).map_err(|source| FieldError::Write {
            path: out.join(name),
            source,
        })
    };
    put(JSONL, &jsonl)?;
    put(CSV, &csv(rows))
}

/// The rows as CSV (RFC 4180: a field with a comma, quote or line break is
/// quoted, its quotes doubled); an absent value is an empty field.
pub fn csv(rows: &[FieldRow]) -> String {
    fn field(text: &str) -> String {
        if text.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", text.replace('"', "\"\""))
        } else {
            text.to_owned()
        }
    }
    let flag = |b: Option<bool>| b.map_or(String::new(), |b| b.to_string());
    let mut text = String::from(
        "server,tool,hint,declared,truth,honest,why_untested,lie_planted,caught,why_missed,suggestion,suggested,suggestion_why\n",
    );
    for r in rows {
        let cells = [
            field(&r.server),
            field(&r.tool),
            field(&r.hint),
            flag(r.declared),
            flag(r.truth),
            field(r.honest.as_deref().unwrap_or("")),
            field(r.why_untested.as_deref().unwrap_or("")),
            r.lie_planted.to_string(),
            flag(r.caught),
            field(r.why_missed.as_deref().unwrap_or("")),
            field(r.suggestion.as_deref().unwrap_or("")),
            flag(r.suggested),
            field(r.suggestion_why.as_deref().unwrap_or("")),
        ];
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::lies::LieKind;

    fn split() -> Split {
        Split::parse(
            r#"{"development": ["b", "a"], "evaluation": ["c"],
                "kinds": {"notes": {"development": ["a", "b"], "evaluation": ["c"]}}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_evaluation_half_is_held_out_unless_asked_for() {
        let s = split();
        assert_eq!(
            chosen(&s, Half::Development, &[]).unwrap_or_default(),
            ["a", "b"]
        );
        let Err(e) = chosen(&s, Half::Development, &["c".to_owned()]) else {
            panic!("c is in the evaluation half");
        };
        assert!(e.to_string().contains("not in the development half"), "{e}");
        assert_eq!(
            chosen(&s, Half::All, &["c".to_owned()]).unwrap_or_default(),
            ["c"]
        );
        assert!(chosen(&s, Half::All, &["zz".to_owned()]).is_err());
        assert_eq!(s.kind_of("c"), Some("notes"));
    }

    #[test]
    fn a_servers_clock_in_a_reason_is_kept_out_of_the_document() {
        let lie = FieldLie {
            tool: "get_file_info".into(),
            missed_why: Some(
                "pass: no change (call 3: modified: 2026-12-06T02:13:14.383980, \
                 Mon Nov 30 2026 19:21:47 GMT+0000 (Coordinated Universal Time); \
                 Daily/2026-01-05.md)"
                    .into(),
            ),
            ..FieldLie::default()
        };
        let server = without_clock(FieldServer {
            id: "x".into(),
            lies: vec![lie],
            ..FieldServer::default()
        });
        assert_eq!(
            server.lies[0].missed_why.as_deref(),
            Some("pass: no change (call 3: modified: {clock}, {clock}; Daily/2026-01-05.md)")
        );
        assert_eq!(server.id, "x");
    }

    #[test]
    fn a_server_that_did_not_run_says_why_without_this_machines_paths() {
        let seed = std::env::temp_dir().join("mcp-witness-field-Ab12Cd");
        let why = format!(
            "install of x@1.0 failed: fail /home/u/.cache/f/pypi-x-1.0: exit 1; seed: {}/stores/vault: no such file",
            seed.display()
        );
        assert_eq!(
            machine_paths_out(&why, Path::new("/home/u/.cache/f")),
            "install of x@1.0 failed: fail {field}/pypi-x-1.0: exit 1; seed: {seed}/stores/vault: no such file"
        );
    }

    #[test]
    fn shards_deal_the_servers_round_and_cover_them_once() {
        let ids: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let shard = |text: &str| Shard::parse(text, "--shard").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sharded(ids.clone(), Some(shard("0/2"))), ["a", "c", "e"]);
        assert_eq!(sharded(ids.clone(), Some(shard("1/2"))), ["b", "d"]);
        let mut all: Vec<String> = (0..3)
            .flat_map(|i| sharded(ids.clone(), Some(shard(&format!("{i}/3")))))
            .collect();
        all.sort();
        assert_eq!(all, ids, "every server in exactly one of the shards");
        assert!(sharded(ids.clone(), Some(shard("6/7"))).is_empty());
        assert_eq!(sharded(ids.clone(), None), ids);
    }

    #[test]
    fn a_lie_runs_behind_the_relay_and_names_its_audit() {
        let lie = Lie {
            tool: "add_task".into(),
            kind: LieKind::Idempotent,
        };
        assert_eq!(
            relayed(
                Path::new("/usr/bin/python3"),
                Path::new("/c/relay.py"),
                Some(&lie),
                &["/c/venv/bin/tasker".to_owned(), "mcp".to_owned()]
            ),
            [
                "/usr/bin/python3",
                "/c/relay.py",
                "--lie",
                "add_task=idempotent",
                "--",
                "/c/venv/bin/tasker",
                "mcp"
            ]
        );
        assert_eq!(audit_name("x", Some(&lie)), "field-x-add_task-idempotent");
        assert_eq!(audit_name("x", None), "field-x");
    }

    fn part(dir: &Path, ids: &[&str], half: &str) {
        let servers: Vec<FieldServer> = ids
            .iter()
            .map(|id| FieldServer {
                id: (*id).into(),
                tools: 1,
                complete: true,
                lies: vec![FieldLie {
                    tool: "t".into(),
                    lie: "read-only".into(),
                    caught: true,
                    ..FieldLie::default()
                }],
                ..FieldServer::default()
            })
            .collect();
        let rows: Vec<FieldRow> = ids
            .iter()
            .map(|id| FieldRow {
                server: (*id).into(),
                tool: "t".into(),
                hint: "readOnlyHint".into(),
                lie_planted: true,
                caught: Some(true),
                ..FieldRow::default()
            })
            .collect();
        let options = FieldOptions {
            field: PathBuf::new(),
            truth: PathBuf::new(),
            cache: PathBuf::new(),
            half: Half::Development,
            servers: Vec::new(),
            shard: None,
        };
        let mut doc = document(&options, &servers, &rows);
        doc.half = half.into();
        std::fs::create_dir_all(dir.join("audits")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("audits/field-x.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        write_all(dir, &doc, &rows).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn parts_merge_into_the_document_one_run_writes() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let field = root.path().join("field");
        std::fs::create_dir_all(&field).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            field.join("split.json"),
            r#"{"development": ["a", "b"], "evaluation": ["c"], "kinds": {}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (one, p1, p2, merged) = (
            root.path().join("one"),
            root.path().join("p1"),
            root.path().join("p2"),
            root.path().join("merged"),
        );
        part(&one, &["a", "b"], "development");
        part(&p1, &["b"], "subset");
        part(&p2, &["a"], "subset");
        let doc = merge_field(
            &[p1.clone(), p2.clone()],
            Half::Development,
            &field,
            &merged,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(doc.totals.lies_planted, 2);
        assert_eq!(status_of(&doc), ExitStatus::Passed);
        for name in [DOCUMENT, JSONL, CSV] {
            assert_eq!(
                std::fs::read(merged.join(name)).unwrap_or_default(),
                std::fs::read(one.join(name)).unwrap_or_default(),
                "{name}: the merge of the parts is the one run's"
            );
        }
        assert!(merged.join("audits/field-x.json").is_file());
        let Err(e) = merge_field(&[p1.clone(), p1], Half::Development, &field, &merged) else {
            panic!("b twice");
        };
        assert!(e.to_string().contains("ran in more than one part"), "{e}");
        let only = merge_field(
            std::slice::from_ref(&p2),
            Half::Development,
            &field,
            &merged,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(only.half, "subset");

        // A server that could not run in one part is replaced by its rerun.
        let failed = root.path().join("failed");
        part(&failed, &["a", "b"], "development");
        let path = failed.join(DOCUMENT);
        let mut doc: FieldDocument =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}"));
        doc.servers[0] = FieldServer {
            id: "a".into(),
            error: Some("seed: no".into()),
            ..FieldServer::default()
        };
        let rows: Vec<FieldRow> = std::fs::read_to_string(failed.join(JSONL))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<FieldRow>(l).ok())
            .filter(|r| r.server != "a")
            .collect();
        write_all(&failed, &doc, &rows).unwrap_or_else(|e| panic!("{e}"));
        merge_field(
            &[failed.clone(), p2.clone()],
            Half::Development,
            &field,
            &merged,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            std::fs::read(merged.join(DOCUMENT)).unwrap_or_default(),
            std::fs::read(one.join(DOCUMENT)).unwrap_or_default(),
            "the rerun of a takes the place of its failed run"
        );

        // A server dropped from a part's document but not from its rows
        // would count twice: refused, naming it.
        let stale = root.path().join("stale");
        part(&stale, &["a", "b"], "development");
        let path = stale.join(DOCUMENT);
        let mut doc: FieldDocument =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}"));
        doc.servers.retain(|s| s.id != "a");
        std::fs::write(&path, serde_json::to_string(&doc).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
        let Err(e) = merge_field(&[stale, p2], Half::Development, &field, &merged) else {
            panic!("a's rows counted twice");
        };
        assert!(e.to_string().contains("has rows of a, which its"), "{e}");
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let row = FieldRow {
            server: "s".into(),
            tool: "t".into(),
            hint: "readOnlyHint".into(),
            declared: Some(true),
            why_untested: Some("untestable: a, \"b\"".into()),
            ..FieldRow::default()
        };
        let text = csv(&[row]);
        assert_eq!(
            text.lines().nth(1),
            Some("s,t,readOnlyHint,true,,,\"untestable: a, \"\"b\"\"\",false,,,,,")
        );
    }
}
