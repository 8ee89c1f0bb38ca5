//! Progress: a bar on a terminal, plain lines otherwise (logs, CI, a
//! cluster's job output), nothing when asked for quiet.

use std::io::Write;

use witness_model::sweep::{TargetStatus, VerdictCounts};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One line redrawn in place (stderr is a terminal).
    Bar,
    /// One line per event.
    Lines,
    Quiet,
}

impl Mode {
    /// A bar when stderr is a terminal, else lines.
    pub fn detect() -> Self {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// Something that happened to a target.
#[derive(Clone, Debug)]
pub enum Event {
    Started {
        name: String,
        attempt: u32,
    },
    /// An attempt did not conclude and another follows.
    Retrying {
        name: String,
        attempt: u32,
        status: TargetStatus,
        reason: String,
    },
    Finished {
        name: String,
        status: TargetStatus,
        reason: Option<String>,
        verdicts: VerdictCounts,
        attempts: u32,
    },
}

/// Shows a sweep's progress on stderr.
pub struct Progress {
    mode: Mode,
    total: usize,
    finished: usize,
    running: usize,
    width: usize,
}

const BAR: usize = 24;

impl Progress {
    /// `total` targets to run now.
    pub fn new(mode: Mode, total: usize) -> Self {
        Self {
            mode,
            total,
            finished: 0,
            running: 0,
            width: 0,
        }
    }

    /// A line that is not about one target (what the sweep is about to do).
    pub fn say(&mut self, line: &str) {
        if self.mode != Mode::Quiet {
            self.clear();
            eprintln!("sweep: {line}");
        }
    }

    pub fn event(&mut self, event: &Event) {
        // Every attempt starts once and ends once: retrying or finished.
        match event {
            Event::Started { .. } => self.running += 1,
            Event::Retrying { .. } => self.running = self.running.saturating_sub(1),
            Event::Finished { .. } => {
                self.running = self.running.saturating_sub(1);
                self.finished += 1;
            }
        }
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => self.line(event),
            Mode::Bar => {
                if let Event::Finished { .. } | Event::Retrying { .. } = event {
                    self.clear();
                    self.line(event);
                }
                self.draw(event);
            }
        }
    }

    /// Ends the bar's line.
    pub fn done(&mut self) {
        if self.mode == Mode::Bar {
            self.clear();
        }
    }

    fn line(&self, event: &Event) {
        let at = format!("[{}/{}]", self.finished, self.total);
        match event {
            Event::Started { name, attempt } if self.mode == Mode::Lines => {
                eprintln!("sweep: {at} {name}: started (attempt {attempt})");
            }
            Event::Started { .. } => {}
            Event::Retrying {
                name,
                attempt,
                status,
                reason,
            } => eprintln!("sweep: {at} {name}: attempt {attempt} {status}: {reason}; retrying"),
            Event::Finished {
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
                eprintln!("sweep: {at} {name}: {what}{tries}");
            }
        }
    }

    fn draw(&mut self, event: &Event) {
        let filled = (self.finished * BAR).checked_div(self.total).unwrap_or(BAR);
        let name = match event {
            Event::Started { name, .. }
            | Event::Retrying { name, .. }
            | Event::Finished { name, .. } => name.as_str(),
        };
        let text = format!(
            "sweep [{}{}] {}/{} · {} running · {}",
            "#".repeat(filled),
            "-".repeat(BAR - filled.min(BAR)),
            self.finished,
            self.total,
            self.running,
            witness_text::clip(name, 40)
        );
        self.clear();
        eprint!("{text}");
        let _ = std::io::stderr().flush();
        self.width = text.chars().count();
    }

    fn clear(&mut self) {
        if self.mode == Mode::Bar && self.width > 0 {
            eprint!("\r{}\r", " ".repeat(self.width));
            self.width = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_do_not_count_as_running_twice() {
        let mut progress = Progress::new(Mode::Quiet, 1);
        let started = |attempt| Event::Started {
            name: "t".into(),
            attempt,
        };
        progress.event(&started(1));
        progress.event(&Event::Retrying {
            name: "t".into(),
            attempt: 1,
            status: TargetStatus::Incomplete,
            reason: "no session".into(),
        });
        progress.event(&started(2));
        assert_eq!((progress.running, progress.finished), (1, 0));
        progress.event(&Event::Finished {
            name: "t".into(),
            status: TargetStatus::Incomplete,
            reason: Some("no session".into()),
            verdicts: VerdictCounts::default(),
            attempts: 2,
        });
        assert_eq!((progress.running, progress.finished), (0, 1));
    }
}
