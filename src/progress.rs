//! Progress on stderr, the one place it is drawn: a bar on a terminal
//! (`indicatif`), plain lines otherwise, nothing when asked.
//!
//! The libraries only say what happened, each through the callback given
//! to it here: the audit ([`witness_engine::progress`]), the lab
//! ([`witness_lab::progress`]), the sweep ([`witness_sweep::progress`]),
//! agent runs (one finished run at a time) and the proxy's notices
//! ([`witness_proxy::Notice`]).
//!
//! Short work shows nothing: in `auto` mode an audit's plain lines start
//! only after two seconds and come at most every two seconds, so a quick
//! audit's stderr stays as it was; a bar is redrawn at most ten times a
//! second and erased when its audit ends. The lab's own lines (what each
//! experiment step found) come with the bar or with `--progress lines`. A
//! sweep's lines come from the start, one per event, since each says how a
//! target ended; `sweep --quiet` (or `--progress off`) silences them. Agent
//! run lines and the proxy's notices are what the command has to say: they
//! are shown whatever `--progress` says.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use witness_engine::progress::{self as audit, Event as AuditEvent};
use witness_lab::progress::{self as lab, Event as LabEvent};
use witness_model::agent::CaseRun;
use witness_sweep::progress::{Event as SweepEvent, Tally};

/// `--progress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// A bar when stderr is a terminal, plain lines (after 2 s) otherwise.
    Auto,
    /// Always a bar.
    Bar,
    /// Always plain lines, from the start.
    Lines,
    /// Nothing.
    Off,
}

/// How progress is shown, decided once from `--progress` and stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Bar,
    /// Lines after `quiet_for`, at most one per `every`.
    Lines {
        quiet_for: Duration,
        every: Duration,
    },
    Off,
}

/// The renderer: hands each library its callback, and draws what comes.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    style: Style,
}

impl Progress {
    pub fn new(mode: ProgressMode) -> Self {
        Self::with_terminal(mode, crate::output::stderr_is_terminal())
    }

    fn with_terminal(mode: ProgressMode, terminal: bool) -> Self {
        let style = match mode {
            ProgressMode::Off => Style::Off,
            ProgressMode::Bar => Style::Bar,
            ProgressMode::Auto if terminal => Style::Bar,
            ProgressMode::Lines => Style::Lines {
                quiet_for: Duration::ZERO,
                every: Duration::from_millis(250),
            },
            ProgressMode::Auto => Style::Lines {
                quiet_for: Duration::from_secs(2),
                every: Duration::from_secs(2),
            },
        };
        Self { style }
    }

    /// What an audit reports to.
    pub fn audit(&self) -> audit::Progress {
        if self.style == Style::Off {
            return audit::Progress::default();
        }
        let view = Mutex::new(AuditView::new(self.style));
        audit::Progress::to(move |event| lock(&view).show(event))
    }

    /// What the lab reports to: its audits as [`Progress::audit`], its
    /// own lines with a bar or `--progress lines` only.
    pub fn lab(&self) -> lab::Progress {
        if self.style == Style::Off {
            return lab::Progress::default();
        }
        let own_lines = match self.style {
            Style::Bar => true,
            Style::Lines { quiet_for, .. } => quiet_for.is_zero(),
            Style::Off => false,
        };
        let audits = Mutex::new(AuditView::new(self.style));
        lab::Progress::to(move |event| match event {
            LabEvent::Audit(event) => lock(&audits).show(event),
            event if own_lines => {
                if let Some(line) = lab_line(event) {
                    errln!("{line}");
                }
            }
            _ => {}
        })
    }

    /// What a sweep reports to; `quiet` (`sweep --quiet`) shows nothing.
    /// Dropping it erases the bar.
    pub fn sweep(&self, quiet: bool) -> SweepView {
        let on = !quiet && self.style != Style::Off;
        let bar = (on && self.style == Style::Bar).then(sweep_bar);
        SweepView { on, bar }
    }

    /// Where the proxy says what it must: shown whatever `--progress` says.
    pub fn proxy(&self) -> witness_proxy::Notify {
        Arc::new(|notice| errln!("mcp-witness proxy: {}", proxy_line(notice)))
    }

    /// One agent run is over: a line whatever `--progress` says (it is
    /// the run's result, not how far the suite is).
    pub fn agent_run(&self, run: &CaseRun) {
        errln!(
            "mcp-witness: {} · {} · run {}: {} (outcome {})",
            witness_text::clip(&run.case, 60),
            witness_text::clip(&run.model, 60),
            run.run,
            run.status.as_str(),
            run.outcome
        );
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A bar drawn on stderr, terminal or not (`--progress bar` asks for one
/// even in a pipe), at most ten times a second.
fn bar(template: &str, fill: &str) -> ProgressBar {
    let target = ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 10);
    let bar = ProgressBar::with_draw_target(None, target);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars(fill));
    }
    bar
}

/// When the next plain line is due.
#[derive(Debug)]
struct Pace {
    started: Instant,
    quiet_for: Duration,
    every: Duration,
    last: Option<Instant>,
}

impl Pace {
    /// Whether a line may be written at `now`; `news` (the catalog) is
    /// shown once the quiet time is over even between two due lines, and
    /// always when there is no quiet time.
    fn due(&mut self, now: Instant, news: bool) -> bool {
        let quiet_over = now.duration_since(self.started) >= self.quiet_for;
        let spaced = self
            .last
            .is_none_or(|last| now.duration_since(last) >= self.every);
        let due = quiet_over && spaced || news && self.quiet_for.is_zero();
        if due {
            self.last = Some(now);
        }
        due
    }
}

/// One audit at a time, as a bar or as lines.
struct AuditView {
    bar: Option<ProgressBar>,
    /// `None` when drawing a bar.
    pace: Option<Pace>,
    style: Style,
}

const STEP_BAR: &str = "[{bar:30}] step {pos}/{len} · {msg}";

impl AuditView {
    fn new(style: Style) -> Self {
        let pace = match style {
            Style::Lines { quiet_for, every } => Some(Pace {
                started: Instant::now(),
                quiet_for,
                every,
                last: None,
            }),
            Style::Bar | Style::Off => None,
        };
        Self {
            bar: None,
            pace,
            style,
        }
    }

    fn show(&mut self, event: &AuditEvent<'_>) {
        if let AuditEvent::Finished = event {
            if let Some(bar) = self.bar.take() {
                bar.finish_and_clear();
            }
            // The next audit (the lab runs many) has its own quiet time.
            *self = Self::new(self.style);
            return;
        }
        match &mut self.pace {
            Some(pace) => {
                let news = matches!(event, AuditEvent::Catalog { .. });
                if pace.due(Instant::now(), news)
                    && let Some(line) = audit_line(event)
                {
                    errln!("mcp-witness: {line}");
                }
            }
            None => self.draw(event),
        }
    }

    fn draw(&mut self, event: &AuditEvent<'_>) {
        match *event {
            AuditEvent::Catalog { tools, pages } => {
                let bar = self.bar.get_or_insert_with(|| bar("{msg}", "#."));
                bar.set_message(format!("catalog: {tools} tools in {pages} page(s)"));
            }
            AuditEvent::Call {
                started,
                planned,
                tool,
            } => {
                let bar = match &self.bar {
                    Some(bar) if bar.length().is_some() => bar,
                    _ => {
                        if let Some(old) = self.bar.take() {
                            old.finish_and_clear();
                        }
                        self.bar.insert(bar(STEP_BAR, "#."))
                    }
                };
                bar.set_length(planned as u64);
                bar.set_position(started as u64);
                bar.set_message(witness_text::clip(tool, 40));
            }
            AuditEvent::Finished => {}
        }
    }
}

/// An audit event as a plain line (after `mcp-witness: `).
fn audit_line(event: &AuditEvent<'_>) -> Option<String> {
    match *event {
        AuditEvent::Catalog { tools, pages } => {
            Some(format!("catalog: {tools} tools in {pages} page(s)"))
        }
        AuditEvent::Call {
            started,
            planned,
            tool,
        } => Some(format!(
            "step {started}/{planned} · {}",
            witness_text::clip(tool, 40)
        )),
        AuditEvent::Finished => None,
    }
}

/// The lab's own events as lines; its audits' events are drawn apart.
fn lab_line(event: &LabEvent<'_>) -> Option<String> {
    Some(match *event {
        LabEvent::Step {
            experiment,
            n,
            of,
            what,
        } => format!("[{experiment} {n}/{of}] {what}"),
        LabEvent::Published {
            experiment,
            name,
            package,
            version,
        } => format!("{experiment} {name}: {package}@{version}"),
        LabEvent::Case(case) => {
            let o = &case.observed;
            let verdicts: Vec<String> = case
                .checks
                .iter()
                .map(|(id, c)| {
                    format!("{id} {}p/{}f/{}s/{}u", c.pass, c.fail, c.skip, c.untestable)
                })
                .collect();
            format!(
                "case {}: {} calls, {}c/{}u/{}d, {} outside the store; {}",
                case.name,
                o.calls,
                o.creates,
                o.updates,
                o.deletes,
                o.outside_stores,
                verdicts.join(" ")
            )
        }
        LabEvent::Coverage(server) => format!(
            "coverage {}: {}/{} tools exercised (target {}), {} failing check(s), {} false; exit {}",
            server.name,
            server.exercised,
            server.tools,
            server.target,
            server.failures.len(),
            server.false_failures,
            server.exit_code
        ),
        LabEvent::Audit(_) => return None,
    })
}

fn proxy_line(notice: &witness_proxy::Notice) -> String {
    use witness_proxy::Notice;
    match notice {
        Notice::Warning(warning) => warning.clone(),
        Notice::Listening(address) => format!("listening on http://{address}/mcp"),
        Notice::TraceFailed(error) => format!("{error}; messages are still forwarded"),
        Notice::TraceUnfinished(error) => error.clone(),
    }
}

/// A sweep's progress: a line per event that tells how a target went (and
/// every start, without a bar), a bar of finished targets on a terminal.
pub struct SweepView {
    on: bool,
    bar: Option<ProgressBar>,
}

fn sweep_bar() -> ProgressBar {
    bar("sweep [{bar:24}] {pos}/{len} · {msg}", "#-")
}

impl SweepView {
    pub fn show(&mut self, event: &SweepEvent, tally: &Tally) {
        if !self.on {
            return;
        }
        if let Some(bar) = &self.bar {
            if let Some(line) = sweep_line(event, tally, false) {
                bar.println(line);
            }
            bar.set_length(tally.total as u64);
            bar.set_position(tally.finished as u64);
            if let Some(name) = sweep_target(event) {
                bar.set_message(format!(
                    "{} running · {}",
                    tally.running,
                    witness_text::clip(name, 40)
                ));
            }
        } else if let Some(line) = sweep_line(event, tally, true) {
            errln!("{line}");
        }
    }
}

impl Drop for SweepView {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

fn sweep_target(event: &SweepEvent) -> Option<&str> {
    match event {
        SweepEvent::Planned { .. } => None,
        SweepEvent::Started { name, .. }
        | SweepEvent::Retrying { name, .. }
        | SweepEvent::Finished { name, .. } => Some(name),
    }
}

/// A sweep event as a line; a start only when there is no bar to show it.
fn sweep_line(event: &SweepEvent, tally: &Tally, starts: bool) -> Option<String> {
    let at = format!("[{}/{}]", tally.finished, tally.total);
    Some(match event {
        SweepEvent::Planned {
            sweep,
            selected,
            targets,
            shard,
            done_earlier,
            to_run,
            jobs,
        } => format!(
            "sweep: {sweep}: {selected} of {targets} targets in this {}, {done_earlier} done earlier, {to_run} to run with {jobs} jobs",
            shard.map_or("run".into(), |s| format!("shard {s}")),
        ),
        SweepEvent::Started { name, attempt } if starts => {
            format!("sweep: {at} {name}: started (attempt {attempt})")
        }
        SweepEvent::Started { .. } => return None,
        SweepEvent::Retrying {
            name,
            attempt,
            status,
            reason,
        } => format!("sweep: {at} {name}: attempt {attempt} {status}: {reason}; retrying"),
        SweepEvent::Finished {
            name,
            status,
            reason,
            verdicts: v,
            attempts,
        } => {
            let what = match reason {
                Some(reason) => format!("{status}: {reason}"),
                None => format!(
                    "{status}: {} pass, {} fail, {} skip, {} untestable",
                    v.pass, v.fail, v.skip, v.untestable
                ),
            };
            let tries = if *attempts > 1 {
                format!(" (attempt {attempts})")
            } else {
                String::new()
            };
            format!("sweep: {at} {name}: {what}{tries}")
        }
    })
}

#[cfg(test)]
mod tests {
    use witness_model::sweep::{TargetStatus, VerdictCounts};

    use super::*;

    #[test]
    fn auto_is_a_bar_on_a_terminal_and_quiet_lines_elsewhere() {
        assert_eq!(
            Progress::with_terminal(ProgressMode::Auto, true).style,
            Style::Bar
        );
        assert_eq!(
            Progress::with_terminal(ProgressMode::Auto, false).style,
            Style::Lines {
                quiet_for: Duration::from_secs(2),
                every: Duration::from_secs(2)
            }
        );
        assert_eq!(
            Progress::with_terminal(ProgressMode::Bar, false).style,
            Style::Bar
        );
        assert_eq!(
            Progress::with_terminal(ProgressMode::Off, true).style,
            Style::Off
        );
    }

    #[test]
    fn quiet_lines_wait_two_seconds_then_come_every_two_seconds() {
        let start = Instant::now();
        let mut pace = Pace {
            started: start,
            quiet_for: Duration::from_secs(2),
            every: Duration::from_secs(2),
            last: None,
        };
        let at = |ms| start + Duration::from_millis(ms);
        // A quick audit: nothing, not even its catalog.
        assert!(!pace.due(at(10), true));
        assert!(!pace.due(at(1_900), false));
        assert!(pace.due(at(2_000), false));
        assert!(!pace.due(at(3_000), false));
        assert!(!pace.due(at(3_500), true));
        assert!(pace.due(at(4_000), false));
    }

    #[test]
    fn asked_for_lines_start_at_once_and_the_catalog_is_never_held_back() {
        let start = Instant::now();
        let mut pace = Pace {
            started: start,
            quiet_for: Duration::ZERO,
            every: Duration::from_millis(250),
            last: None,
        };
        let at = |ms| start + Duration::from_millis(ms);
        assert!(pace.due(at(0), false));
        assert!(pace.due(at(10), true));
        assert!(!pace.due(at(20), false));
        assert!(pace.due(at(300), false));
    }

    #[test]
    fn audit_lines_say_the_catalog_and_each_step() {
        let catalog = AuditEvent::Catalog {
            tools: 10_000,
            pages: 20,
        };
        assert_eq!(
            audit_line(&catalog).as_deref(),
            Some("catalog: 10000 tools in 20 page(s)")
        );
        let call = AuditEvent::Call {
            started: 3,
            planned: 7,
            tool: "add_note",
        };
        assert_eq!(audit_line(&call).as_deref(), Some("step 3/7 · add_note"));
        assert_eq!(audit_line(&AuditEvent::Finished), None);
    }

    #[test]
    fn sweep_lines_count_finished_targets_and_say_how_each_ended() {
        let tally = Tally {
            total: 5,
            finished: 2,
            running: 1,
        };
        let finished = SweepEvent::Finished {
            name: "honest".into(),
            status: TargetStatus::Audited,
            reason: None,
            verdicts: VerdictCounts {
                pass: 4,
                fail: 1,
                skip: 0,
                untestable: 2,
            },
            attempts: 2,
        };
        assert_eq!(
            sweep_line(&finished, &tally, true).as_deref(),
            Some("sweep: [2/5] honest: audited: 4 pass, 1 fail, 0 skip, 2 untestable (attempt 2)")
        );
        let started = SweepEvent::Started {
            name: "honest".into(),
            attempt: 1,
        };
        assert_eq!(
            sweep_line(&started, &tally, true).as_deref(),
            Some("sweep: [2/5] honest: started (attempt 1)")
        );
        assert_eq!(sweep_line(&started, &tally, false), None);
        let planned = SweepEvent::Planned {
            sweep: "example".into(),
            selected: 5,
            targets: 6,
            shard: None,
            done_earlier: 1,
            to_run: 4,
            jobs: 2,
        };
        assert_eq!(
            sweep_line(&planned, &tally, true).as_deref(),
            Some(
                "sweep: example: 5 of 6 targets in this run, 1 done earlier, 4 to run with 2 jobs"
            )
        );
    }
}
