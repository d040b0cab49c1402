//! seri's persistence: sessions, their append-only events, continuation
//! edges and attachment files, in one SQLite database per profile (the
//! embedded default) or in a PostgreSQL database many machines share.
//!
//! # Tour
//!
//! - [`Profile`] finds the profile root (`$SERI_HOME`, else `~/.seri`) and
//!   the paths inside it; [`Profile::open_store`] opens its `seri.db`.
//! - [`Store`] is one open database. [`Store::open`] identifies the file
//!   before touching it (not SQLite, another application's database, or a
//!   newer seri's are each refused with a typed [`StoreError`]), switches it
//!   to WAL and runs the migrations of `sqlite-schema.sql` ([`schema`]).
//!   [`Store::open_postgres`] does the same for a PostgreSQL database
//!   (`postgres-schema.sql`, in the connection's current schema), and
//!   [`Store::open_url`] picks by the URL ([`StoreUrl`]: `store.url` in
//!   `config.json`, or `SERI_STORE_URL`).
//! - [`Store::agent`] gives an [`AgentStore`]: the only way to read or write
//!   sessions. Every query names the agent, so another agent's session is
//!   never selected; asking for one is [`LookupError::UnknownSession`], the
//!   same as for an id that does not exist.
//! - [`AgentStore::write`] runs a closure in one `BEGIN IMMEDIATE`
//!   transaction with a [`WriteTx`]: create sessions, append events (the
//!   store assigns seq 1, 2, 3, … with no gaps), insert continuation edges,
//!   link attachments. All of it commits, or none of it.
//! - [`AgentStore::read`] runs a closure over a [`Reader`] in one snapshot:
//!   events by seq range, the newest user message, the most recent session,
//!   a session by unique id prefix, [`seri_core::SessionInfo`] as the fold of
//!   seed and events, and the continuation edges.
//! - [`trajectories`]: each run's local recording (a header of the
//!   settings in force, then numbered records, large values elided), and
//!   [`AgentStore::prune_trajectories`], which ages them out.
//! - [`checkpoints`]: what a file held before a tool changed it, by
//!   content hash, for `/rewind`; the 20 most recently touched sessions
//!   per project keep theirs.
//! - [`AgentStore::setting`] and [`AgentStore::set_setting`]: toggles seri
//!   is asked to remember (`/trajectory on|off`).
//! - [`Store::check_cached_columns`] refolds every session and compares the
//!   cached title columns of `sessions` with the fold.
//! - The records of an import ([`ImportRecord`], [`WriteTx::record_legacy_import`],
//!   [`Reader::legacy_import_records`]) and dated appends
//!   ([`WriteTx::append_dated`]): the write API the `seri-import` crate
//!   reads other agents' and older seri files through. The store knows no
//!   file format.
//!
//! The store stamps everything with its [`Clock`] and makes every id (UUIDv7)
//! itself; tests pass a [`ManualClock`]. The one exception is an import:
//! its sessions and events keep the times the files recorded, so an old
//! conversation does not look like today's.
//!
//! # One contract, two backends
//!
//! Only the private `db` module knows SQL or a database driver:
//! connections, transactions, the schemas, the row codecs and every query.
//! The queries are written once, in the SQL SQLite and PostgreSQL both
//! speak, and bind and read only the types both store alike (text, 64-bit
//! integers, bytes), so one that only one backend could run does not
//! compile. What differs per backend is how it connects, runs a
//! transaction, migrates and names its errors. Everything else here is
//! backend-neutral (the value types, the lease liveness rule, elision, the retention rules, the profile, ids, the clock,
//! [`StoreError`]). `AgentStore`'s one-step shorthands are declared once
//! over [`Reader`] and [`WriteTx`], and the integration tests are a
//! contract suite that runs once per backend.
//!
//! # Example
//!
//! A store in memory ([`Store::open`] takes a file path the same way);
//! `cargo run -p seri-store --example store_tour` also creates a
//! continuation:
//!
//! ```
//! use seri_core::{AgentId, EventBody, Message, Seq};
//! use seri_store::{SeqRange, SessionQuery, Store};
//!
//! let store = Store::open_in_memory()?;
//! let agent = store.agent(&AgentId::local());
//! let seed = agent.new_seed("/repo");
//! agent.create_session(&seed)?;
//! let user = |text: &str| EventBody::Message(Message::user(text));
//! let appended = agent.append(seed.id, [user("Plan the migration"), user("And the deploy?")])?;
//! assert_eq!(appended[1].seq, Seq(2));
//!
//! // `SessionInfo::fold` of the seed and the events.
//! let info = agent.info(seed.id)?;
//! assert_eq!((info.title.as_str(), info.last_seq), ("Plan the migration", 2));
//! assert_eq!(agent.events(seed.id, SeqRange::between(Seq(2), Seq(2)))?.len(), 1);
//!
//! // One transaction: all of it commits, or, as here, none of it.
//! let failed = agent.write(|tx| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//!     let other = tx.new_seed("/tmp");
//!     tx.create_session(&other)?;
//!     tx.append(other.id, [user("never kept")])?;
//!     Err("changed my mind".into())
//! });
//! assert!(failed.is_err());
//! assert_eq!(agent.list_sessions(&SessionQuery::default())?.len(), 1);
//! # Ok::<(), seri_store::StoreError>(())
//! ```
//!
//! # What it must never do
//!
//! - Update or delete an event or an edge. There is no such code path, and
//!   triggers in the schema refuse one from anywhere else.
//! - Let one agent read another's sessions.
//! - Write to a file before knowing it is a seri database this build
//!   understands; downgrade a newer database.
//! - Derive state any other way than by folding events: the cached title
//!   columns are a fold's result, checked by [`Store::check_cached_columns`].
//! - Leave half a transaction behind: a failure at any step, a full disk
//!   included, rolls the whole transaction back.
//! - Write, move or delete a legacy session file.
//! - Store a large trajectory value whole, or let retention delete anything
//!   but trajectories: conversations, runs and legacy files stay.
//!
//! # Payload encoding: JSON text
//!
//! Event payloads are stored as JSON text ([`seri_core::EventBody::to_payload`]),
//! not CBOR. Measured with `cargo bench -p seri-store` on the 2-core
//! development machine, over 100,000 events of a typical turn mix (user and
//! assistant messages with usage, thinking, tool calls and 1 KB results,
//! status and plan changes):
//!
//! | per event        | JSON (chosen)  | CBOR          |
//! |------------------|----------------|---------------|
//! | encode           | 489,000 /s     | 445,000 /s    |
//! | decode           | 928,000 /s     | 762,000 /s    |
//! | size             | 389 bytes      | 375 bytes     |
//!
//! That is one run; over five runs on the shared machine CBOR encoded at
//! 0.76–1.03× JSON's speed and decoded at 0.62–0.82×. CBOR was decoded
//! straight into the typed bodies, its best case; JSON through core's own
//! `from_payload`. So JSON encodes as fast, decodes faster, is only 4%
//! larger (payloads are mostly text), is readable with `sqlite3` and
//! `json_extract`, and is what core already decodes. Manifests on edges are
//! CBOR (`manifest_cbor`), as the continuation design fixes.
//!
//! # What an append writes
//!
//! Only its event rows. A session's head (newest seq and time) is read from
//! the events through their `(session_id, seq)` index, never cached; the
//! cached title columns of `sessions` are rewritten only when an event
//! changes them. With the query planner stability guarantee on (so cached
//! statements are never re-prepared for a new session id), appending reaches
//! the speed of a hand-written SQLite insert loop: in the same benchmark,
//! 0.86–0.98 of it with one transaction per event and 0.89–1.11 in batches
//! of 100 (the raw loop reads the clock once per row, the store once per batch).

//! # Concurrency
//!
//! A [`Store`] is `Send + Sync` and serialises its own use of its one
//! connection. Any number of stores, in any number of processes (on any
//! number of machines, for PostgreSQL), may write to the same database.
//! SQLite has one writer by nature: a write takes the file's write lock up
//! front (`BEGIN IMMEDIATE`). On PostgreSQL writers of different sessions
//! never wait for each other: a write transaction takes a
//! transaction-level advisory lock per session as it first touches one
//! (and the schema's lock shared; exclusively only for migrations, the
//! cached-column check and a copy into the store). Writers of one session
//! wait for each other up to [`StoreOptions::busy_timeout`] and assign
//! seqs inside the transaction, so every event lands and seqs stay
//! gapless. Reads never wait for writers (WAL; PostgreSQL's `REPEATABLE
//! READ` snapshots).

mod agent;
mod attachments;
pub mod changes;
mod check;
pub mod checkpoints;
mod clock;
mod db;
mod error;
mod ids;
pub mod jobs;
mod lease;
mod prefix;
mod profile;
pub mod prune;
pub mod relay;
mod runs;
pub mod search;
mod sessions;
mod store;
pub mod trajectories;
pub mod usage;
mod work;

pub use db::schema;

pub use agent::AgentStore;
pub use attachments::{ATTACHMENT_SCHEME, LinkOutcome};
pub use changes::{ChangeKind, StoreChange};
pub use check::{CacheMismatch, CheckMode, CheckOutcome, CheckReport, ConsistencyReport, Inconsistency};
pub use checkpoints::{
    CHECKPOINT_SESSIONS_PER_PROJECT, CheckpointFile, CheckpointHistory, CheckpointRecorded, FileState,
    MAX_CHECKPOINT_FILE_BYTES, NewCheckpoint,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use db::legacy::{FolderImport, ImportHead, ImportRecord};
pub use db::search::IndexProgress;
pub use db::{CopiedRows, CopyReport, Reader, WriteTx};
pub use error::{
    AttachmentError, CopyError, DataError, DatabaseError, EngineError, ImportError, LookupError, MAX_LISTED_CANDIDATES,
    OpenError, ProfileError, Result, StoreError, StoreErrorKind, WriteError,
};
pub use jobs::{
    Enqueued, JOB_RETENTION, JobClaim, JobKey, JobOutcome, JobRenewal, JobState, JobStatus, LAST_LOOKS,
    MAX_JOB_ATTEMPTS, RunJob, given_up,
};
pub use lease::{LeaseAttempt, LeaseOwner, LeaseRequest, SessionLease};
pub use profile::{Profile, SERI_HOME};
pub use prune::{PruneOptions, PrunePolicy, PruneReason, PrunedLineage, SpaceReturned, StorePruneReport};
pub use relay::{Relay, RelaySender};
pub use runs::{RunContinuedTo, RunRecord, RunResult};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use sessions::{
    DECODE_BESIDE_FROM_ROWS, SHORT_ID_MIN_LEN, SNAPSHOT_EVERY_EVENTS, SeqRange, SessionQuery, SessionSummary,
};
pub use store::{DEFAULT_BUSY_TIMEOUT, Store, StoreOptions, StoreUrl};
pub use trajectories::elide::{ELIDE_THRESHOLD_BYTES, elided_bytes, hex_sha256 as sha256_hex};
pub use trajectories::retention::{DEFAULT_RETENTION_DAYS, LegacyTrajectory, PruneReport, RetentionPolicy};
pub use trajectories::{EditOutcome, StoredRecord, Trajectory, TrajectoryHeader, TrajectoryRecord};
pub use usage::{DatabaseSpace, Sizes, StoreUsage, UsageRow};
pub use work::StoreWork;
