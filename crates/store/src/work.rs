//! [`StoreWork`]: what a store asked of its database server, counted, so a
//! test can hold a flow to a number of transactions, statements, round
//! trips and rows rather than to a time.

use crate::db::Database;
use crate::store::Store;

/// What a PostgreSQL store's connections asked of the server since it was
/// opened (opening included). Subtract two readings to count one flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreWork {
    /// Transactions begun on the server (committed or rolled back); one
    /// that ran no statement never reached it and is not counted.
    pub transactions: u64,
    /// Statements sent: `BEGIN`, locks, queries, inserts, notifications,
    /// `COMMIT`, and each statement prepared (once per connection).
    pub statements: u64,
    /// Times a thread waited for the server's answer: statements sent
    /// without waiting (an append's inserts, a lock) ride along with the
    /// next one that waits.
    pub round_trips: u64,
    /// Rows the server sent, whether or not the store read them all: what
    /// a read with no `LIMIT` costs even when it stops at its first match.
    pub rows: u64,
}

impl std::ops::Sub for StoreWork {
    type Output = StoreWork;

    fn sub(self, earlier: StoreWork) -> StoreWork {
        StoreWork {
            transactions: self.transactions.saturating_sub(earlier.transactions),
            statements: self.statements.saturating_sub(earlier.statements),
            round_trips: self.round_trips.saturating_sub(earlier.round_trips),
            rows: self.rows.saturating_sub(earlier.rows),
        }
    }
}

impl Store {
    /// What this store asked of its PostgreSQL server so far; `None` on
    /// SQLite, which is a library call away rather than a server.
    pub fn work(&self) -> Option<StoreWork> {
        match self.database() {
            Database::Postgres(db) => Some(db.work()),
            Database::Sqlite(_) => None,
        }
    }
}
