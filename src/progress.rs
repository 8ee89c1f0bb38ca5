//! Progress on stderr: a bar on a terminal, plain lines otherwise.
//!
//! Short work shows nothing: in `auto` mode plain lines start only after
//! two seconds and come at most every two seconds, so a quick audit's
//! stderr stays as it was. The bar is redrawn at most ten times a second
//! and erased when the conversation ends.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use witness_engine::progress::{self, Event};

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

struct State {
    bar: bool,
    started: Instant,
    quiet_for: Duration,
    every: Duration,
    last: Option<Instant>,
    drawn: bool,
}

/// Installs the progress sink for `mode`.
pub fn install(mode: ProgressMode) {
    let terminal = std::io::stderr().is_terminal();
    let (bar, quiet_for, every) = match mode {
        ProgressMode::Off => return,
        ProgressMode::Bar => (true, Duration::ZERO, Duration::from_millis(100)),
        ProgressMode::Lines => (false, Duration::ZERO, Duration::from_millis(250)),
        ProgressMode::Auto if terminal => (true, Duration::ZERO, Duration::from_millis(100)),
        ProgressMode::Auto => (false, Duration::from_secs(2), Duration::from_secs(2)),
    };
    let state = Mutex::new(State {
        bar,
        started: Instant::now(),
        quiet_for,
        every,
        last: None,
        drawn: false,
    });
    progress::set_sink(Box::new(move |event| {
        let mut state = match state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        show(&mut state, event);
    }));
}

fn show(state: &mut State, event: &Event<'_>) {
    let now = Instant::now();
    if let Event::Finished = event {
        if state.drawn {
            // Erase the bar.
            write(format_args!("\r\x1b[2K"));
            state.drawn = false;
        }
        state.started = now;
        return;
    }
    let due = now.duration_since(state.started) >= state.quiet_for
        && state
            .last
            .is_none_or(|last| now.duration_since(last) >= state.every);
    // The catalog is news once per audit: always shown once quiet time is over.
    if !due && !matches!(event, Event::Catalog { .. } if state.quiet_for.is_zero()) {
        return;
    }
    state.last = Some(now);
    let text = match event {
        Event::Catalog { tools, pages } => format!("catalog: {tools} tools in {pages} page(s)"),
        Event::Call {
            started,
            planned,
            tool,
        } => {
            let tool = witness_text::clip(tool, 40);
            if state.bar {
                let width = 30usize;
                let filled = (started * width)
                    .checked_div(*planned)
                    .unwrap_or(0)
                    .min(width);
                format!(
                    "[{}{}] step {started}/{planned} · {tool}",
                    "#".repeat(filled),
                    ".".repeat(width - filled)
                )
            } else {
                format!("step {started}/{planned} · {tool}")
            }
        }
        Event::Finished => return,
    };
    if state.bar {
        write(format_args!("\r\x1b[2K{text}"));
        state.drawn = true;
    } else {
        write(format_args!("mcp-witness: {text}\n"));
    }
}

fn write(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.flush();
}
