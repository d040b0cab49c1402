//! Where the store's "now" comes from.
//!
//! Core never reads a clock; the store stamps sessions, events and edges with
//! the time its [`Clock`] gives. Tests hand the store a [`ManualClock`] so
//! every timestamp (and every time-ordered id) is under their control.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use seri_core::Timestamp;

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The machine's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        // A clock set before 1970 reads as negative milliseconds rather than failing.
        let ms = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
        };
        Timestamp(ms)
    }
}

/// A clock that stands still until told to move: fixed time for tests.
#[derive(Debug, Default)]
pub struct ManualClock {
    millis: AtomicI64,
}

impl ManualClock {
    /// A clock showing `at`.
    pub fn new(at: Timestamp) -> Self {
        Self { millis: AtomicI64::new(at.millis()) }
    }

    /// Shows `at` from now on.
    pub fn set(&self, at: Timestamp) {
        self.millis.store(at.millis(), Ordering::SeqCst);
    }

    /// Moves forward by `millis` and returns the new time.
    pub fn advance(&self, millis: i64) -> Timestamp {
        Timestamp(self.millis.fetch_add(millis, Ordering::SeqCst) + millis)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.millis.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(Timestamp(1_000));
        assert_eq!(clock.now(), Timestamp(1_000));
        assert_eq!(clock.advance(5), Timestamp(1_005));
        clock.set(Timestamp(7));
        assert_eq!(clock.now(), Timestamp(7));
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now() > Timestamp(1_577_836_800_000));
    }
}
