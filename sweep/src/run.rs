//! Running a sweep: the targets of this shard, `--jobs` at a time, each
//! installed, audited by a worker process within its time, and retried while
//! it does not conclude, up to the sweep's `max_attempts`.
//!
//! Resuming is reading: a target whose `result.json` says it was audited, or
//! that used up its attempts, is done; any other target runs (again). A
//! rerun after a kill therefore redoes only the targets that had not
//! finished an attempt, and never one that had concluded.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::Sender;
use std::time::Instant;

use witness_model::audit::AuditReport;
use witness_model::exit::ExitStatus;
use witness_model::sweep::{
    SWEEP_TARGET_SCHEMA, SweepDocument, TargetResult, TargetStatus, TargetVolatile, VerdictCounts,
};

use crate::SweepError;
use crate::dataset::{Scope, verdicts};
use crate::install::Installs;
use crate::layout::{AUDIT_JSON, Layout, Scratch, write_json};
use crate::process::{self, Ended};
use crate::progress::{Event, OnProgress, Tally};
use crate::shard::Shard;
use crate::spec::{Sweep, Target};
use crate::worker::Job;

/// How to run a sweep.
pub struct RunOptions {
    pub out: PathBuf,
    /// Where packages are installed (shared between sweeps and shards on one
    /// machine).
    pub installs: PathBuf,
    pub jobs: usize,
    pub shard: Option<Shard>,
    /// The program and arguments that start a worker; the job file's path
    /// is added last (`mcp-witness sweep worker`).
    pub worker: Vec<OsString>,
}

/// What a run did.
pub struct RunOutcome {
    pub document: SweepDocument,
    /// Targets of this run's slice.
    pub selected: usize,
    /// Of those, done before this run (skipped).
    pub done_earlier: usize,
    /// The exit status the slice's targets add up to.
    pub status: ExitStatus,
}

/// What every worker thread shares.
struct Context<'a> {
    sweep: &'a Sweep,
    options: &'a RunOptions,
    layout: Layout,
    installs: Installs,
}

/// Runs the sweep's slice and writes its dataset, telling `on_progress`
/// what happens to each target as it happens.
pub fn run(
    sweep: &Sweep,
    options: &RunOptions,
    on_progress: &mut OnProgress<'_>,
) -> Result<RunOutcome, SweepError> {
    if options.worker.is_empty() {
        return Err(SweepError::Output {
            path: options.out.clone(),
            message: "no worker program".into(),
        });
    }
    let layout = Layout::new(&options.out);
    let _lock = layout.claim()?;
    // Where the kernel refuses, orphans go to init as usual: the sweep
    // still runs.
    let _ = witness_process::become_subreaper();
    let selected: Vec<&Target> = sweep
        .targets
        .iter()
        .filter(|t| options.shard.is_none_or(|s| s.contains(&t.key)))
        .collect();
    let mut todo = VecDeque::new();
    for target in &selected {
        if let Some(attempts) = pending(&layout, target, sweep.max_attempts) {
            todo.push_back((*target, attempts));
        }
    }
    let done_earlier = selected.len() - todo.len();
    let mut tally = Tally::default();
    let mut progress = |event: Event| {
        tally.count(&event);
        on_progress(&event, &tally);
    };
    progress(Event::Planned {
        sweep: sweep.name.clone(),
        selected: selected.len(),
        targets: sweep.targets.len(),
        shard: options.shard,
        done_earlier,
        to_run: todo.len(),
        jobs: options.jobs.max(1),
    });
    let context = Context {
        sweep,
        options,
        layout: layout.clone(),
        installs: Installs {
            root: options.installs.clone(),
        },
    };
    pool(&context, todo, &mut progress)?;
    witness_process::reap_orphans();
    // Every attempt removed its own scratch; the directory goes too.
    let _ = std::fs::remove_dir(layout.work());
    let all_keys: Vec<String> = sweep.targets.iter().map(|t| t.key.clone()).collect();
    let keys: Vec<String> = selected.iter().map(|t| t.key.clone()).collect();
    let scope = Scope {
        name: &sweep.name,
        all_keys: &all_keys,
        keys: &keys,
        shard: options.shard,
    };
    let (document, status) = crate::dataset::write(&layout, &scope)?;
    Ok(RunOutcome {
        document,
        selected: selected.len(),
        done_earlier,
        status,
    })
}

/// `None` when the target is done (audited, or out of attempts; and its
/// audit is still there); else the attempts it has had.
fn pending(layout: &Layout, target: &Target, max_attempts: u32) -> Option<u32> {
    let Some(result) = layout.read_result(&target.key) else {
        return Some(0);
    };
    let audit_there = result
        .audit
        .as_ref()
        .is_none_or(|a| layout.target_dir(&target.key).join(a).is_file());
    let concluded = result.status == TargetStatus::Audited;
    let attempts = result.volatile.attempts;
    if result.key == target.key && audit_there && (concluded || attempts >= max_attempts) {
        None
    } else {
        Some(if audit_there { attempts } else { 0 })
    }
}

/// `jobs` threads take targets from the queue; this thread shows progress.
fn pool(
    context: &Context<'_>,
    todo: VecDeque<(&Target, u32)>,
    progress: &mut dyn FnMut(Event),
) -> Result<(), SweepError> {
    let threads = context.options.jobs.max(1).min(todo.len());
    let queue = Mutex::new(todo);
    let failure: Mutex<Option<SweepError>> = Mutex::new(None);
    let (sender, events) = std::sync::mpsc::channel::<Event>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let sender = sender.clone();
            let (queue, failure) = (&queue, &failure);
            scope.spawn(move || {
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some((target, attempts)) = next else {
                        break;
                    };
                    if let Err(e) = run_target(context, target, attempts, &sender) {
                        // Writing failed: stop taking targets; report once.
                        queue.lock().unwrap_or_else(|e| e.into_inner()).clear();
                        failure
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert(e);
                    }
                }
            });
        }
        drop(sender);
        for event in events {
            progress(event);
        }
    });
    match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Attempts `target` until it concludes or has had `max_attempts`, writing
/// its result after every attempt.
fn run_target(
    context: &Context<'_>,
    target: &Target,
    mut attempts: u32,
    events: &Sender<Event>,
) -> Result<(), SweepError> {
    let name = target.definition.name.clone();
    loop {
        attempts += 1;
        let _ = events.send(Event::Started {
            name: name.clone(),
            attempt: attempts,
        });
        let started = Instant::now();
        let outcome = attempt(context, target)?;
        let result = TargetResult {
            schema: SWEEP_TARGET_SCHEMA.into(),
            generator: witness_model::GENERATOR.into(),
            key: target.key.clone(),
            definition: target.definition.clone(),
            status: outcome.status,
            reason: outcome.reason.clone(),
            audit: outcome.report.as_ref().map(|_| AUDIT_JSON.to_owned()),
            volatile: TargetVolatile {
                attempts,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            },
        };
        let path = context.layout.result(&target.key);
        write_json(&path, &result).map_err(SweepError::io(&path))?;
        let last =
            outcome.status == TargetStatus::Audited || attempts >= context.sweep.max_attempts;
        let event = if last {
            Event::Finished {
                name: name.clone(),
                status: outcome.status,
                reason: outcome.reason,
                verdicts: outcome
                    .report
                    .as_ref()
                    .map(verdicts)
                    .unwrap_or(VerdictCounts::default()),
                attempts,
            }
        } else {
            Event::Retrying {
                name: name.clone(),
                attempt: attempts,
                status: outcome.status,
                reason: outcome.reason.unwrap_or_default(),
            }
        };
        let _ = events.send(event);
        if last {
            return Ok(());
        }
    }
}

/// How one attempt ended.
struct Outcome {
    status: TargetStatus,
    reason: Option<String>,
    report: Option<AuditReport>,
}

impl Outcome {
    fn without_audit(status: TargetStatus, reason: String) -> Self {
        Self {
            status,
            reason: Some(reason),
            report: None,
        }
    }
}

/// One attempt: install, then a worker audits; its audit lands in the
/// target's directory. `Err` only when the sweep's own files cannot be
/// written.
fn attempt(context: &Context<'_>, target: &Target) -> Result<Outcome, SweepError> {
    let work = context.layout.work();
    let scratch = Scratch::new(&context.layout, &target.key).map_err(SweepError::io(&work))?;
    let dir = context.layout.target_dir(&target.key);
    std::fs::create_dir_all(&dir).map_err(SweepError::io(&dir))?;
    // An audit of an earlier attempt must not stand for this one.
    let kept = dir.join(AUDIT_JSON);
    if kept.exists() {
        std::fs::remove_file(&kept).map_err(SweepError::io(&kept))?;
    }
    let install = match target.definition.package {
        Some(_) => match context
            .installs
            .ensure(target, context.sweep.install_timeout)
        {
            Ok(dir) => Some(dir),
            Err(reason) => return Ok(Outcome::without_audit(TargetStatus::InstallFailed, reason)),
        },
        None => None,
    };
    let outcome = audit_in_worker(context, target, install, scratch.path())?;
    if let Some(report) = &outcome.report {
        write_json(&kept, report).map_err(SweepError::io(&kept))?;
    }
    Ok(outcome)
}

/// Starts the worker on a job file in `scratch` and waits for it within the
/// sweep's audit time.
fn audit_in_worker(
    context: &Context<'_>,
    target: &Target,
    install: Option<PathBuf>,
    scratch: &Path,
) -> Result<Outcome, SweepError> {
    let tmp = scratch.join("tmp");
    let own = scratch.join("scratch");
    for dir in [&tmp, &own] {
        std::fs::create_dir_all(dir).map_err(SweepError::io(dir))?;
    }
    let audit_out = scratch.join(AUDIT_JSON);
    let job = Job::new(target, install, &context.sweep.dir, own, audit_out.clone());
    let job_path = scratch.join("job.json");
    write_json(&job_path, &job).map_err(SweepError::io(&job_path))?;
    let log_path = scratch.join("worker.log");
    let log = std::fs::File::create(&log_path).map_err(SweepError::io(&log_path))?;
    let worker = &context.options.worker;
    let mut command = Command::new(&worker[0]);
    command
        .args(&worker[1..])
        .arg(&job_path)
        // The jail is made under TMPDIR: inside the scratch, which is
        // removed whatever happens to the worker (by this run, or, after a
        // kill, by the next).
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    let mut child = match process::spawn(command) {
        Ok(child) => child,
        Err(e) => {
            return Ok(Outcome::without_audit(
                TargetStatus::Error,
                format!("cannot start the worker: {e}"),
            ));
        }
    };
    let deadline = Instant::now() + context.sweep.audit_timeout;
    let ended = process::wait(&mut child, deadline).map_err(SweepError::io(&log_path))?;
    Ok(match ended {
        Ended::TimedOut => Outcome::without_audit(
            TargetStatus::TimedOut,
            format!(
                "the audit did not finish within {} s (audit_timeout_s)",
                context.sweep.audit_timeout.as_secs()
            ),
        ),
        Ended::Exited(status) if status.success() => read_audit(&audit_out),
        Ended::Exited(status) => Outcome::without_audit(
            TargetStatus::Error,
            worker_error(&log_path).unwrap_or_else(|| format!("the worker failed ({status})")),
        ),
    })
}

fn read_audit(path: &Path) -> Outcome {
    let report = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<AuditReport>(&text).ok());
    match report {
        Some(report) => match not_concluded(&report) {
            None => Outcome {
                status: TargetStatus::Audited,
                reason: None,
                report: Some(report),
            },
            Some(reason) => Outcome {
                status: TargetStatus::Incomplete,
                reason: Some(reason),
                report: Some(report),
            },
        },
        None => Outcome::without_audit(
            TargetStatus::Error,
            "the worker wrote no readable audit".into(),
        ),
    }
}

/// Why an audit did not conclude, by the audit's own word: a session that
/// could not finish (`complete: false`), or one that finished and that no
/// check could rest on (its coverage says why); `None` when it concluded.
fn not_concluded(report: &AuditReport) -> Option<String> {
    if !report.complete {
        return Some(
            report
                .incomplete_reason
                .clone()
                .unwrap_or_else(|| "the audit could not conclude".into()),
        );
    }
    report.coverage.as_ref().filter(|c| !c.concluded).map(|c| {
        c.not_concluded
            .clone()
            .unwrap_or_else(|| "the audit could not conclude".into())
    })
}

/// The worker's last words (`mcp-witness: ...`), one line.
fn worker_error(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let line = line.trim().trim_start_matches("mcp-witness: ");
    Some(witness_text::clip(line, 300))
}
