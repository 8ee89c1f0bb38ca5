//! Time sources for frame timestamps.
//!
//! Audits use the monotonic clock. The lab injects [`StepClock`] so that a
//! rerun writes the same timestamps, byte for byte.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Microseconds since the start of a session.
pub trait Clock: Send + Sync {
    fn now_us(&self) -> u64;
}

/// The monotonic clock, zeroed when the session starts.
pub struct MonotonicClock(Instant);

impl MonotonicClock {
    pub fn start() -> Self {
        Self(Instant::now())
    }
}

impl Clock for MonotonicClock {
    fn now_us(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

/// A fake clock that advances one millisecond per reading: ordering is kept,
/// wall time is not, and reruns agree.
#[derive(Default)]
pub struct StepClock(AtomicU64);

impl Clock for StepClock {
    fn now_us(&self) -> u64 {
        self.0.fetch_add(1_000, Ordering::SeqCst) + 1_000
    }
}
