//! The store's database: the only code of the store that knows SQL or a
//! database driver.
//!
//! It implements the store's contract, [`Reader`] and [`WriteTx`], and
//! [`AgentStore::read`] and [`AgentStore::write`], the two ways into them,
//! over either backend: SQLite (one file per profile, the embedded default)
//! or PostgreSQL (a database many machines share). The queries are written
//! once, in the SQL both speak, and run through [`sql`]; what differs is
//! only how a backend connects, runs a transaction, migrates its schema and
//! names its errors. Everything outside this module is backend-neutral: the
//! value types, the lease liveness rule, legacy-file parsing, elision, the
//! retention rules, the profile layout, ids, the clock and the error type.
//! The same contract suite (`crates/store/tests/it`) runs on both.
//!
//! - [`connection`]: the [`connection::Database`] of either backend and the
//!   transaction kinds.
//! - [`sqlite`] and [`postgres`]: each backend's connections, transactions
//!   and error mapping.
//! - [`schema`]: the migrations of `sqlite-schema.sql` and `postgres-schema.sql`.
//! - [`sql`]: parameters, rows and running statements on either backend.
//! - [`rows`]: how values become rows and back.
//! - [`read`] and [`write`]: sessions, events, edges, runs, attachments;
//!   the other modules add the reads and writes of their own tables.

mod attachment_rows;
mod check;
pub(crate) mod checkpoints;
pub(crate) mod connection;
mod consistency;
mod copy;
pub(crate) mod forks;
mod job_posts;
mod jobs;
pub(crate) mod lease;
pub(crate) mod legacy;
mod pins;
mod pipeline;
pub(crate) mod postgres;
mod prune;
pub(crate) mod read;
mod retention;
pub(crate) mod rows;
mod runs;
pub mod schema;
pub(crate) mod search;
mod settings;
pub(crate) mod snapshot;
pub(crate) mod sql;
pub(crate) mod sqlite;
mod tokens;
mod trajectories;
pub(crate) mod usage;
pub(crate) mod write;

pub(crate) use connection::{Database, OpenSettings};
pub use copy::{CopiedRows, CopyReport};
pub use read::Reader;
pub use write::WriteTx;

use crate::agent::AgentStore;
use crate::attachments;
use crate::error::{Result, StoreError};
use connection::TxKind;

impl AgentStore<'_> {
    /// Runs reads in one transaction, so they all see the same snapshot.
    ///
    /// A read whose connection was lost (the database restarted, its
    /// backend was terminated) changed nothing, so it is run again on a
    /// new connection, for the busy timeout at most: a brief outage delays
    /// a read instead of failing the run or the request that asked.
    pub fn read<T>(&self, mut f: impl FnMut(&Reader<'_>) -> Result<T>) -> Result<T> {
        let (store, agent) = (self.store(), self.agent_id());
        store.read_transaction(|db| f(&Reader::new(db, agent, store)))
    }

    /// Runs writes in one `BEGIN IMMEDIATE` transaction: everything `f` wrote
    /// is committed when it returns `Ok`, and nothing is (attachment links
    /// included) when it returns `Err`, when it panics, or when the commit fails.
    pub fn write<T, E>(&self, f: impl FnOnce(&mut WriteTx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.write_guessing_if(write::Guess::Never, f).0
    }

    /// [`AgentStore::write`] of writes that may run twice: on PostgreSQL an
    /// append in it takes its session's head from this process's view of
    /// it rather than reading it first, so nothing waits before the
    /// `COMMIT` (a one-event append is one round trip). A wrong guess
    /// (another process appended since) fails the transaction whole, and
    /// `f` runs once more, reading the head; any other error is `f`'s.
    pub fn write_again<T>(&self, mut f: impl FnMut(&mut WriteTx<'_>) -> Result<T>) -> Result<T> {
        match self.write_guessing_if(write::Guess::Allowed, &mut f) {
            (Err(e), true) if postgres::error::seq_taken(&e) => {
                tracing::debug!(agent = %self.agent_id(), "a session moved on since this process's view of it; writing again");
                self.write_guessing_if(write::Guess::Never, f).0
            }
            (result, _) => result,
        }
    }

    /// [`AgentStore::write`], guessing heads as `guess` allows; and whether
    /// an append did.
    fn write_guessing_if<T, E>(
        &self,
        guess: write::Guess,
        f: impl FnOnce(&mut WriteTx<'_>) -> Result<T, E>,
    ) -> (Result<T, E>, bool)
    where
        E: From<StoreError>,
    {
        let (store, agent) = (self.store(), self.agent_id());
        let (mut created, mut views, mut announced, mut guessed) = (Vec::new(), Vec::new(), Vec::new(), false);
        let result = store.transaction(TxKind::Write, |db| {
            let mut tx = WriteTx::new(db, agent, store, guess);
            let result = f(&mut tx);
            created = tx.take_created_files();
            views = tx.take_live_views();
            announced = tx.take_announced();
            guessed = tx.guessed();
            result
        });
        match &result {
            // Committed: the views folded in it stand for what is stored.
            Ok(_) => {
                views.into_iter().for_each(|view| store.keep_live_view(view));
                store.tell_committed(announced);
            }
            Err(_) => created.iter().for_each(|path| attachments::remove(path)),
        }
        (result, guessed)
    }
}
