//! One connection to PostgreSQL, used synchronously.
//!
//! The store's API is synchronous and is called from inside tokio tasks
//! and from plain threads alike. tokio-postgres splits a connection in two:
//! the socket's I/O (a future that must be polled for anything to happen)
//! and a `Client` whose calls are futures talking to it over channels. A
//! store opened outside any tokio runtime, or on a multi-threaded one's
//! thread (`seri`, `seri serve`), polls the socket on the thread that
//! waits for the answer, with a one-thread runtime of the connection's own
//! ([`super::io`]): a round trip hands nothing between threads. A store
//! opened inside a current-thread runtime runs each connection's I/O on a
//! thread of its own with a one-thread runtime, and the client's futures
//! are awaited with `futures_executor::block_on`, which needs no runtime.
//! Either way a call blocks its thread exactly as an SQLite call does and
//! never nests one runtime in another.
//!
//! Writers of different sessions never wait for each other. Every write
//! transaction takes the schema's transaction-level advisory lock in
//! *shared* mode with its `BEGIN`, and then, as it first touches a session
//! (reads its head, its lease, its runs), that session's own advisory lock
//! ([`Connection::lock`]), before the statement that reads it: seqs are
//! assigned by reading the head and inserting after it, and a lease is
//! taken by reading who holds it, both safely, because a second writer of
//! the same session waits at that lock until the first commits, and its
//! next statement (`READ COMMITTED`) sees what the first wrote. A few other
//! things read and then written across sessions have a lock of their own
//! the same way (the checkpoint tables, a legacy file's import, a run's
//! trajectory). The schema's lock is taken exclusively only by what must
//! see the whole store hold still ([`TxKind::Exclusive`]: migrations, the
//! cached-column check, a copy into the store), and by the first open,
//! before the schema exists. A seri older than this one takes it
//! exclusively for every write, which still excludes every writer here.
//! Reads run in `REPEATABLE READ` snapshots and never wait for writers.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::{StreamExt, pin_mut};
use tokio_postgres::{Client, Config, Statement};

use crate::db::connection::TxKind;
use crate::db::postgres::{error, schema};
use crate::db::sql::{Conn, Db, Param, RowError, numbered_placeholders};
use crate::error::{DatabaseError, EngineError, OpenError, Result, StoreError};

mod connect;
mod statements;

use connect::*;

/// How many connections one store opens at most: transactions of several
/// threads (a server's concurrent runs) proceed at once, each on its own;
/// writers of one session still take its lock one at a time.
pub(crate) const MAX_CONNECTIONS: usize = 8;

/// One open PostgreSQL database: a small pool of connections (each used by
/// one transaction at a time; one the server closed is replaced) and how it
/// was reached.
pub(crate) struct Database {
    pool: Mutex<Pool>,
    /// Signalled when a connection goes back to the pool.
    returned: std::sync::Condvar,
    pub(crate) config: Config,
    /// TLS as the URL's `sslmode` and `sslrootcert` ask (see `tls`), made once.
    pub(crate) tls: tokio_postgres_rustls::MakeRustlsConnect,
    /// The address without its password, for errors and `Store::path`.
    address: PathBuf,
    busy_timeout: Duration,
    /// What every connection of the store asked of the server, counted.
    work: Arc<Work>,
    /// What committed transactions found to exist and to stay (see
    /// [`Connection::knows`]): shared by the store's connections, so a
    /// session looked up once is not looked up again.
    known: Arc<Known>,
    /// The heads of sessions as this store's committed appends left them
    /// (see [`Connection::take_head`]), shared by its connections.
    heads: Arc<Heads>,
    /// Whether connections are polled by the threads that wait for them
    /// (the store was opened where a thread may block on the connection's
    /// runtime; see [`super::io::may_block`]).
    inline: bool,
}

/// The heads of sessions as the store's committed appends left them, at
/// most [`KNOWN_MAX`] (all forgotten at once past that: each is only a
/// guess the server checks).
#[derive(Debug, Default)]
pub(crate) struct Heads(Mutex<HashMap<seri_core::SessionId, seri_core::SessionInfo>>);

impl Heads {
    fn take(&self, session: seri_core::SessionId) -> Option<seri_core::SessionInfo> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&session)
    }

    fn leave(&self, views: Vec<seri_core::SessionInfo>) {
        if views.is_empty() {
            return;
        }
        let mut heads = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if heads.len() + views.len() > KNOWN_MAX {
            heads.clear();
        }
        // Of two transactions' heads of one session, the newer stands
        // (their commits may be told here in either order).
        for view in views {
            if heads.get(&view.id).is_none_or(|kept| kept.last_seq < view.last_seq) {
                heads.insert(view.id, view);
            }
        }
    }
}

/// What a store's connections asked of the server so far, counted (see
/// [`crate::StoreWork`]).
#[derive(Debug, Default)]
pub(crate) struct Work {
    transactions: std::sync::atomic::AtomicU64,
    statements: std::sync::atomic::AtomicU64,
    round_trips: std::sync::atomic::AtomicU64,
    rows: std::sync::atomic::AtomicU64,
}

impl Work {
    fn add(counter: &std::sync::atomic::AtomicU64, n: u64) {
        counter.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> crate::StoreWork {
        let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        crate::StoreWork {
            transactions: get(&self.transactions),
            statements: get(&self.statements),
            round_trips: get(&self.round_trips),
            rows: get(&self.rows),
        }
    }
}

/// How many statements a simple-protocol batch holds.
fn statements_in(sql: &str) -> u64 {
    sql.split(';').filter(|s| !s.trim().is_empty()).count() as u64
}

/// What the store's committed transactions found to exist and to stay
/// ([`Connection::learn`]), at most [`KNOWN_MAX`] keys (all forgotten at
/// once past that: it is only a shortcut).
#[derive(Debug, Default)]
pub(crate) struct Known(Mutex<std::collections::HashSet<String>>);

/// How many keys [`Known`] holds at most.
const KNOWN_MAX: usize = 65_536;

impl Known {
    fn knows(&self, key: &str) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).contains(key)
    }

    fn learn(&self, keys: Vec<String>) {
        if keys.is_empty() {
            return;
        }
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if known.len() + keys.len() > KNOWN_MAX {
            known.clear();
        }
        known.extend(keys);
    }
}

/// A client and the statements it has prepared.
///
/// Round trips are what a transaction costs here, so none is spent that
/// can be shared: a transaction's `BEGIN` (and write lock) goes out with its
/// first statement, an append's inserts go out without waiting for their
/// answers (read with the next statement that waits, or the `COMMIT`), and
/// notifications go with the `COMMIT`. A one-event append is two round
/// trips (`BEGIN` + lock + head read; insert + notify + `COMMIT`), a
/// 100-event one the same two; a transaction that runs no statement, none.
pub(crate) struct Connection {
    client: Arc<Client>,
    statements: RefCell<HashMap<String, Statement>>,
    /// The kind of the open transaction, until its `BEGIN` goes out with
    /// its first statement.
    begin: std::cell::Cell<Option<TxKind>>,
    /// The write lock's key and the change channel of this connection's
    /// schema, with their prepared statements: `None` while the schema did
    /// not exist when the connection opened (its first open), when the
    /// same are spelled out in SQL instead.
    keys: Option<SchemaKeys>,
    /// `pg_notify` payloads to send when the open transaction commits.
    notifies: RefCell<Vec<String>>,
    /// The kind of the open transaction, for as long as it is open.
    kind: std::cell::Cell<Option<TxKind>>,
    /// The locks ([`Connection::lock`]) the open transaction took so far.
    locked: RefCell<Vec<String>>,
    /// What the open transaction found to exist and to stay
    /// ([`Connection::knows`]): a session of an agent, looked up once.
    known: RefCell<Vec<String>>,
    /// What the store's committed transactions found (set as each
    /// transaction begins).
    store_known: RefCell<Arc<Known>>,
    /// The heads the open transaction's appends left ([`Connection::leave_head`]).
    heads: RefCell<Vec<seri_core::SessionInfo>>,
    /// The heads the store's committed appends left (set as each
    /// transaction begins).
    store_heads: RefCell<Arc<Heads>>,
    /// Statements of the open transaction sent without waiting for their
    /// answers (an append's inserts): read with the next statement that
    /// waits, or the `COMMIT`, in the same round trip.
    sent: RefCell<Vec<Sent>>,
    /// The store's count of what its connections asked.
    work: Arc<Work>,
    /// The socket, polled by the thread that waits; `None` when a thread
    /// of its own polls it.
    io: Option<Arc<super::io::Io>>,
}

/// What a connection's schema needs on every transaction, computed once.
struct SchemaKeys {
    /// The schema's lock: shared by writers, exclusive for [`TxKind::Exclusive`].
    lock: i64,
    lock_stmt: Statement,
    lock_shared_stmt: Statement,
    /// The lock of one thing of the schema (a session): its key is the hash
    /// of `seri:SCHEMA:NAME`, so every server computes the same one.
    lock_named_stmt: Statement,
    /// The schema's shared lock, then a named one, in one statement: a
    /// write's first lock (see [`Connection::lock`]).
    lock_shared_named_stmt: Statement,
    /// `seri:SCHEMA:`, the prefix of every named lock's key.
    lock_prefix: String,
    channel: String,
    notify_stmt: Statement,
}

/// The schema's lock, spelled out, taken exclusively: one per schema (or,
/// before the schema exists, per the search_path that will name it).
const LOCK_SQL: &str = "SELECT pg_advisory_xact_lock(hashtextextended('seri:' || coalesce(current_schema(), current_setting('search_path')), 0))";

/// A statement on its way: polled once (which puts it on the wire), its
/// answer read later.
type Sent = std::pin::Pin<Box<dyn std::future::Future<Output = std::result::Result<(), tokio_postgres::Error>> + Send>>;

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("statements", &self.statements.borrow().len()).finish()
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("address", &self.address).finish_non_exhaustive()
    }
}

impl Database {
    /// Connects to the database `url` names, identifies it and migrates it.
    pub(crate) fn open(
        url: &str,
        busy_timeout: Duration,
        progress: Option<crate::db::search::IndexProgress>,
    ) -> Result<Self> {
        let (config, tls) = super::tls::configure(url)?;
        let address = PathBuf::from(describe(&config));
        // A server restarting as seri starts is waited for, like one that
        // restarts under a running seri (see `checkout`).
        let deadline = std::time::Instant::now() + busy_timeout;
        loop {
            // Identifying and migrating read and write nothing a retry
            // could double: the whole open is tried again.
            let work = Arc::new(Work::default());
            let inline = super::io::may_block();
            let opened = connect(&config, &tls, &address, busy_timeout, &work, inline).and_then(|conn| {
                let pool = Mutex::new(Pool { idle: vec![conn], open: 1 });
                let db = Self {
                    pool,
                    returned: std::sync::Condvar::new(),
                    config: config.clone(),
                    tls: tls.clone(),
                    address: address.clone(),
                    busy_timeout,
                    work,
                    known: Arc::default(),
                    heads: Arc::default(),
                    inline,
                };
                db.transaction(TxKind::Exclusive, |db| schema::migrate(db, progress.as_ref()))?;
                // A connection opened before its schema existed spelled the
                // schema's lock out, exclusively, for every write: now
                // that the schema exists, it takes the shared one and the
                // sessions' locks as every other connection does.
                for conn in &mut db.lock().idle {
                    if conn.keys.is_none() {
                        conn.keys = schema_keys(conn)
                            .map_err(|e| error::postgres(&address, "configuring the connection", e))?;
                    }
                }
                Ok(db)
            });
            match opened {
                Err(e)
                    if e.kind() == crate::StoreErrorKind::Unavailable
                        && std::time::Instant::now() + RECONNECT_PAUSE < deadline =>
                {
                    tracing::info!(database = %address.display(), error = %e, "PostgreSQL is out of reach; trying again");
                    std::thread::sleep(RECONNECT_PAUSE);
                }
                opened => return opened,
            }
        }
    }

    /// How long a transaction waits for a server out of reach.
    pub(crate) fn outage_patience(&self) -> Duration {
        self.busy_timeout
    }

    /// What the store's connections asked of the server so far.
    pub(crate) fn work(&self) -> crate::StoreWork {
        self.work.snapshot()
    }

    /// Where the database is, without the password.
    pub(crate) fn address(&self) -> &Path {
        &self.address
    }

    /// Runs `f` in a transaction of the given kind. It commits when `f`
    /// returns `Ok` and rolls back otherwise (and when `f` panics).
    pub(crate) fn transaction<T, E>(
        &self,
        kind: TxKind,
        f: impl FnOnce(Db<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E>
    where
        E: From<StoreError>,
    {
        let conn = tracing::debug_span!("pg.checkout").in_scope(|| self.checkout())?;
        // Until it is back in the pool, the connection counts as open; one
        // lost to a panic (dropped as the stack unwinds) stops counting.
        let mut slot = Slot { db: self, held: true };
        let result = self.run_on(&conn, kind, f);
        slot.held = false;
        self.checkin(conn);
        result
    }

    fn run_on<T, E>(
        &self,
        conn: &Connection,
        kind: TxKind,
        f: impl FnOnce(Db<'_>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E>
    where
        E: From<StoreError>,
    {
        conn.begin.set(Some(kind));
        conn.kind.set(Some(kind));
        conn.locked.borrow_mut().clear();
        conn.known.borrow_mut().clear();
        *conn.store_known.borrow_mut() = self.known.clone();
        conn.heads.borrow_mut().clear();
        *conn.store_heads.borrow_mut() = self.heads.clone();
        conn.notifies.borrow_mut().clear();
        let tx = Tx { conn, open: true, address: &self.address };
        let value = f(Db { conn: Conn::Postgres(conn), path: &self.address });
        let committed = value.and_then(|value| tx.commit().map(|()| value).map_err(E::from));
        conn.kind.set(None);
        // What it found stays true once it committed (a session it created
        // exists only then).
        if committed.is_ok() {
            self.known.learn(conn.known.take());
            self.heads.leave(conn.heads.take());
        }
        committed
    }

    fn lock(&self) -> MutexGuard<'_, Pool> {
        // The pool's list is never left half-changed by a panic.
        self.pool.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle connection, a new one while fewer than [`MAX_CONNECTIONS`]
    /// are open, or the next one returned (waiting at most the busy timeout).
    fn checkout(&self) -> Result<Connection> {
        let deadline = std::time::Instant::now() + self.busy_timeout;
        let mut pool = self.lock();
        loop {
            if let Some(conn) = pool.idle.pop() {
                if let Some(io) = &conn.io {
                    io.probe();
                }
                if conn.client.is_closed() {
                    tracing::info!(database = %self.address.display(), "dropping a closed PostgreSQL connection");
                    pool.open -= 1;
                    continue;
                }
                return Ok(conn);
            }
            if pool.open < MAX_CONNECTIONS {
                pool.open += 1;
                drop(pool);
                match connect(&self.config, &self.tls, &self.address, self.busy_timeout, &self.work, self.inline) {
                    Ok(conn) => return Ok(conn),
                    Err(e) => {
                        self.lock().open -= 1;
                        // A server restarting (or a network blip) is waited
                        // out like a busy writer: a brief outage delays a
                        // transaction instead of failing it.
                        let now = std::time::Instant::now();
                        if e.kind() != crate::StoreErrorKind::Unavailable || now >= deadline {
                            return Err(e);
                        }
                        tracing::info!(database = %self.address.display(), error = %e, "PostgreSQL is out of reach; trying again");
                        std::thread::sleep(RECONNECT_PAUSE.min(deadline - now));
                        pool = self.lock();
                        continue;
                    }
                }
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Err(StoreError::Engine(EngineError::Locked {
                    path: self.address.clone(),
                    context: "waiting for a free connection",
                    waited: self.busy_timeout,
                }));
            }
            pool = self.returned.wait_timeout(pool, deadline - now).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

/// How long a checkout waits before connecting again to a server it could
/// not reach.
const RECONNECT_PAUSE: Duration = Duration::from_millis(250);

/// The connections of a store: the idle ones, and how many are open.
struct Pool {
    idle: Vec<Connection>,
    open: usize,
}

/// A connection taken from the pool: while `held`, dropping this means the
/// connection was lost (a panic), so the pool may open another.
struct Slot<'d> {
    db: &'d Database,
    held: bool,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.held {
            self.db.lock().open -= 1;
            self.db.returned.notify_one();
        }
    }
}

impl Database {
    /// Puts a connection back for the next transaction.
    fn checkin(&self, conn: Connection) {
        self.lock().idle.push(conn);
        self.returned.notify_one();
    }
}

/// An open transaction. Dropping it without [`Tx::commit`] rolls it back.
struct Tx<'c> {
    conn: &'c Connection,
    open: bool,
    address: &'c Path,
}

impl Tx<'_> {
    fn commit(mut self) -> Result<()> {
        self.open = false;
        self.conn.commit().map_err(|e| {
            // The server answered the COMMIT (a statement before it failed,
            // or the COMMIT itself): the transaction is over either way, and
            // a ROLLBACK would only cost a round trip more.
            if e.as_db_error().is_none() {
                let _ = self.conn.rollback();
            }
            error::postgres(self.address, "committing a transaction", e)
        })
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open
            && let Err(e) = self.conn.rollback()
        {
            tracing::warn!(database = %self.address.display(), error = %e, "rollback failed");
        }
    }
}

/// The answers of statements sent earlier, in order; the first failure.
async fn settle(sent: Vec<Sent>) -> std::result::Result<(), tokio_postgres::Error> {
    for statement in sent {
        statement.await?;
    }
    Ok(())
}

/// `url` without its password.
pub(crate) fn redact(url: &str) -> String {
    match super::tls::split(url).map_err(drop).and_then(|(rest, _)| rest.parse::<Config>().map_err(drop)) {
        Ok(config) => describe(&config),
        Err(_) => match url.split_once('@') {
            Some((_, rest)) => format!("postgres://…@{rest}"),
            None => url.to_owned(),
        },
    }
}

/// `postgres://user@host:port/dbname`, from a parsed configuration.
fn describe(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let db = config.get_dbname().unwrap_or("");
    // The options name the schema (search_path), which tells two stores of one database apart.
    let options = config.get_options().map(|o| format!("?options={o}")).unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}{options}")
}

#[cfg(test)]
mod tests;
