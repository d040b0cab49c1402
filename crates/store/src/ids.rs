//! Fresh ids for sessions, events, continuations, runs and attachments.
//!
//! Ids are UUIDv7: 48 bits of the store's clock in milliseconds, then a
//! counter and random bits. One [`uuid::ContextV7`] per store keeps the
//! counter, so ids made by one store strictly increase even within a
//! millisecond (and under a [`crate::ManualClock`] that stands still).

use std::sync::{Mutex, PoisonError};

use seri_core::Timestamp;
use uuid::{ContextV7, Uuid};

/// The store's id generator.
#[derive(Debug, Default)]
pub(crate) struct IdGen {
    context: Mutex<ContextV7>,
}

impl IdGen {
    /// The 16 bytes of a new UUIDv7 stamped with `now`.
    pub(crate) fn next(&self, now: Timestamp) -> [u8; 16] {
        // Times before 1970 cannot be written into a v7 id; they clamp to the epoch.
        let millis = u64::try_from(now.millis()).unwrap_or(0);
        let context = self.context.lock().unwrap_or_else(PoisonError::into_inner);
        let ts = uuid::Timestamp::from_unix(&*context, millis / 1000, (millis % 1000) as u32 * 1_000_000);
        Uuid::new_v7(ts).into_bytes()
    }

    /// A new id as lowercase hyphenated text, for attachment ids.
    pub(crate) fn next_text(&self, now: Timestamp) -> String {
        Uuid::from_bytes(self.next(now)).hyphenated().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_increase_within_one_millisecond() {
        let ids = IdGen::default();
        let a = ids.next(Timestamp(1_700_000_000_000));
        let b = ids.next(Timestamp(1_700_000_000_000));
        assert!(a < b);
        let uuid = Uuid::from_bytes(a);
        assert_eq!(uuid.get_version_num(), 7);
        let (secs, _) = uuid.get_timestamp().map(|t| t.to_unix()).unwrap();
        assert_eq!(secs, 1_700_000_000);
    }
}
