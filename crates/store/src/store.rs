//! [`Store`]: one open database, its clock, its id generator and its
//! attachments directory. Reads and writes go through an agent's handle,
//! [`Store::agent`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seri_core::{AgentId, ContinuationId, EventId, RunId, SessionId, SessionInfo, SessionSeed, Timestamp};

use crate::agent::AgentStore;
use crate::clock::{Clock, SystemClock};
use crate::db::{Database, OpenSettings, postgres, sqlite};
use crate::error::Result;
use crate::ids::IdGen;

/// How long a writer waits for another writer before giving up, by default.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How a store is opened.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Where timestamps (and the time part of ids) come from.
    pub clock: Arc<dyn Clock>,
    /// How long a write waits for another process's write before it fails
    /// with [`crate::EngineError::Locked`].
    pub busy_timeout: Duration,
    /// Where attachment files live. `None`: `attachments/` beside the
    /// database file, which is the profile layout; an in-memory store then
    /// has no attachments.
    pub attachments_dir: Option<PathBuf>,
    /// Refuse writes that would grow the database past this many bytes, as
    /// a full disk would: the transaction fails with
    /// [`crate::EngineError::DiskFull`] and rolls back.
    pub size_limit_bytes: Option<u64>,
    /// Told how far the migration that makes the search index got, as it
    /// indexes the events an older build wrote (done, of total): a
    /// terminal draws a progress bar with it.
    pub index_progress: Option<crate::IndexProgress>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            attachments_dir: None,
            size_limit_bytes: None,
            index_progress: None,
        }
    }
}

impl StoreOptions {
    /// The default options with another clock.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self { clock, ..Self::default() }
    }
}

/// An open seri database.
///
/// A `Store` is `Send + Sync`; its one connection is used by one thread at a
/// time. Several stores (in one process or several) may open the same file
/// and write to it at once.
#[derive(Debug)]
pub struct Store {
    /// The backend: the one place that knows how the data is kept.
    db: Database,
    path: PathBuf,
    clock: Arc<dyn Clock>,
    ids: IdGen,
    attachments_dir: Option<PathBuf>,
    /// Events decoded by reads since the store was opened: the work a
    /// read costs, for tests that count it.
    events_read: std::sync::atomic::AtomicU64,
    /// The folded views of sessions this store appended to lately, each as
    /// of its session's head when it was kept; see `WriteTx::append`.
    live_views: std::sync::Mutex<std::collections::HashMap<SessionId, SessionInfo>>,
    /// This process's listeners to its own commits (SQLite: see
    /// [`Store::subscribe_changes`]).
    listeners: std::sync::Mutex<Vec<tokio::sync::mpsc::UnboundedSender<crate::StoreChange>>>,
}

/// How many sessions' live views a store keeps.
const LIVE_VIEWS: usize = 64;

impl Store {
    /// Opens (creating if needed) the database at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, StoreOptions::default())
    }

    /// Opens (creating if needed) the database at `path`.
    ///
    /// The file is identified before anything is written to it: a file that
    /// is not SQLite, an SQLite database of another application and a seri
    /// database newer than this build are each refused with their own error.
    /// Then it is switched to WAL and migrated to [`crate::SCHEMA_VERSION`].
    pub fn open_with(path: impl AsRef<Path>, options: StoreOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let settings = OpenSettings {
            busy_timeout: options.busy_timeout,
            size_limit_bytes: options.size_limit_bytes,
            index_progress: options.index_progress.clone(),
        };
        let db = Database::Sqlite(sqlite::Database::open_file(&path, settings)?);
        let attachments_dir =
            options.attachments_dir.or_else(|| Some(path.parent().unwrap_or(Path::new(".")).join("attachments")));
        Ok(Self::from_parts(db, path, options.clock, attachments_dir))
    }

    /// A private database in memory, with default options.
    pub fn open_in_memory() -> Result<Self> {
        Self::open_in_memory_with(StoreOptions::default())
    }

    /// A private database in memory. It has attachments only if
    /// `options.attachments_dir` names a directory.
    pub fn open_in_memory_with(options: StoreOptions) -> Result<Self> {
        let path = PathBuf::from(":memory:");
        let settings = OpenSettings {
            busy_timeout: options.busy_timeout,
            size_limit_bytes: options.size_limit_bytes,
            index_progress: options.index_progress.clone(),
        };
        let db = Database::Sqlite(sqlite::Database::open_memory(&path, settings)?);
        Ok(Self::from_parts(db, path, options.clock, options.attachments_dir))
    }

    /// Opens the PostgreSQL database `url` names (`postgres://user:password@host:port/db`,
    /// or the key=value form libpq takes), creating seri's tables in the
    /// connection's current schema and migrating them, as [`Store::open_with`]
    /// does a file. A schema holding another application's tables, or a
    /// newer seri's, is refused before anything is written.
    ///
    /// Attachments stay files: `options.attachments_dir` names their
    /// directory (the profile's `attachments/`, when opened through
    /// [`crate::Profile`]). `options.size_limit_bytes` is SQLite's alone.
    pub fn open_postgres(url: &str, options: StoreOptions) -> Result<Self> {
        let db = postgres::Database::open(url, options.busy_timeout, options.index_progress.clone())?;
        let path = db.address().to_path_buf();
        Ok(Self::from_parts(Database::Postgres(Box::new(db)), path, options.clock, options.attachments_dir))
    }

    /// Opens the store `url` names: absent, empty or `sqlite:` the SQLite
    /// file `default_file`; `sqlite:PATH` that file; `postgres://…` or
    /// `postgresql://…` a PostgreSQL database ([`Store::open_postgres`]).
    pub fn open_url(url: Option<&str>, default_file: &Path, options: StoreOptions) -> Result<Self> {
        match StoreUrl::parse(url)? {
            StoreUrl::Sqlite(None) => Self::open_with(default_file, options),
            StoreUrl::Sqlite(Some(path)) => Self::open_with(path, options),
            StoreUrl::Postgres(url) => Self::open_postgres(url, options),
        }
    }

    /// Every session change committed to this store from now on
    /// ([`crate::changes`]): on PostgreSQL any process's, this one's
    /// included; on SQLite, which has no channel between processes, this
    /// process's. One feed for both, so a listener never asks which. The
    /// listening stops when the receiver is dropped.
    pub fn subscribe_changes(&self) -> tokio::sync::mpsc::UnboundedReceiver<crate::StoreChange> {
        match &self.db {
            Database::Postgres(db) => db.listen(),
            Database::Sqlite(_) => {
                let (sent, received) = tokio::sync::mpsc::unbounded_channel();
                self.listeners.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(sent);
                received
            }
        }
    }

    /// Tells this process's listeners what a transaction committed (a
    /// listener that went away is dropped). PostgreSQL's own feed carries
    /// these, and has no listeners here.
    pub(crate) fn tell_committed(&self, changes: Vec<crate::StoreChange>) {
        if changes.is_empty() {
            return;
        }
        let mut listeners = self.listeners.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        listeners.retain(|listener| changes.iter().all(|change| listener.send(change.clone()).is_ok()));
    }

    /// The relay between the processes on this store ([`crate::relay`]):
    /// what a run streams and asks, for a server other than the one that
    /// runs it; `None` on SQLite. It stops when its receiver is dropped.
    pub fn relay(&self) -> Option<crate::Relay> {
        match &self.db {
            Database::Postgres(db) => Some(db.relay()),
            Database::Sqlite(_) => None,
        }
    }

    /// On SQLite, lets the store keep up to `bytes` of the file's pages in
    /// memory (SQLite's default is 2 MiB): a long-running process (`seri
    /// serve`) reads the same index pages for search after search. Nothing on
    /// PostgreSQL, whose server keeps its own cache.
    pub fn keep_pages_cached(&self, bytes: u64) -> Result<()> {
        self.db.keep_pages_cached(bytes)
    }

    /// Whether this store is on PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.db.is_postgres()
    }

    fn from_parts(db: Database, path: PathBuf, clock: Arc<dyn Clock>, attachments_dir: Option<PathBuf>) -> Self {
        Self {
            db,
            path,
            clock,
            ids: IdGen::default(),
            attachments_dir,
            events_read: Default::default(),
            live_views: Default::default(),
            listeners: Default::default(),
        }
    }

    /// The handle through which `agent` reads and writes its sessions. No
    /// read through it can see another agent's sessions.
    pub fn agent(&self, agent: &AgentId) -> AgentStore<'_> {
        AgentStore::new(self, agent.clone())
    }

    /// The database file (`:memory:` for an in-memory store), or a
    /// PostgreSQL database's address without its password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where attachment files live, if this store has any.
    pub fn attachments_dir(&self) -> Option<&Path> {
        self.attachments_dir.as_deref()
    }

    /// The store clock's current time.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// How many events reads have decoded since the store was opened: what
    /// a read costs, counted (a test of "reads only what is sent" counts
    /// this rather than timing anything).
    pub fn events_read(&self) -> u64 {
        self.events_read.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes the kept view of `session`, if any (the caller checks it is current).
    pub(crate) fn take_live_view(&self, session: SessionId) -> Option<SessionInfo> {
        self.live_views.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&session)
    }

    /// A copy of the kept view of `session`, if any, left kept (the caller
    /// checks it is current).
    pub(crate) fn live_view(&self, session: SessionId) -> Option<SessionInfo> {
        self.live_views.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&session).cloned()
    }

    /// Keeps `view`, folded by a read of committed events, unless a view
    /// of the session as of a newer head is kept already (a read's snapshot
    /// may be older than this process's latest append).
    pub(crate) fn keep_read_view(&self, view: SessionInfo) {
        let newer_kept = self
            .live_views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&view.id)
            .is_some_and(|kept| kept.last_seq >= view.last_seq);
        if !newer_kept {
            self.keep_live_view(view);
        }
    }

    /// Keeps `view` for its session's next append; the oldest kept goes
    /// when there are too many (any one will do: it is only a shortcut).
    pub(crate) fn keep_live_view(&self, view: SessionInfo) {
        let mut views = self.live_views.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if views.len() >= LIVE_VIEWS
            && let Some(evicted) = views.keys().next().copied()
        {
            views.remove(&evicted);
        }
        views.insert(view.id, view);
    }

    pub(crate) fn count_events_read(&self, n: usize) {
        self.events_read.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// A fresh session id.
    pub fn new_session_id(&self) -> SessionId {
        SessionId::from_bytes(self.ids.next(self.now()))
    }

    /// A fresh continuation id (the successor's projection names it before the edge exists).
    pub fn new_continuation_id(&self) -> ContinuationId {
        ContinuationId::from_bytes(self.ids.next(self.now()))
    }

    /// A fresh run id.
    pub fn new_run_id(&self) -> RunId {
        RunId::from_bytes(self.ids.next(self.now()))
    }

    /// A seed for a new, untitled session of `agent` in `cwd`, stamped now.
    /// Fill in what else it starts with, then create it.
    pub fn new_seed(&self, agent: &AgentId, cwd: impl Into<String>) -> SessionSeed {
        SessionSeed::new(self.new_session_id(), agent.clone(), cwd, self.now())
    }

    pub(crate) fn new_event_id(&self, now: Timestamp) -> EventId {
        EventId::from_bytes(self.ids.next(now))
    }

    pub(crate) fn new_attachment_id(&self) -> String {
        self.ids.next_text(self.now())
    }

    /// A fresh id for a row of a table that keeps records (legacy imports).
    pub(crate) fn new_record_id(&self) -> String {
        self.ids.next_text(self.now())
    }

    /// The backend behind this store.
    pub(crate) fn database(&self) -> &Database {
        &self.db
    }
}

/// What a store URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl<'a> {
    /// An SQLite file: the profile's own (`None`) or the one named.
    Sqlite(Option<&'a str>),
    /// A PostgreSQL database, by its connection URL.
    Postgres(&'a str),
}

impl<'a> StoreUrl<'a> {
    /// Reads a store URL (`store.url` in `config.json`, or `SERI_STORE_URL`).
    pub fn parse(url: Option<&'a str>) -> Result<Self> {
        let url = url.map(str::trim).filter(|u| !u.is_empty());
        let Some(url) = url else { return Ok(StoreUrl::Sqlite(None)) };
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(url));
        }
        if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            return Ok(StoreUrl::Sqlite((!path.is_empty()).then_some(path)));
        }
        let problem = match scheme(url) {
            Some(scheme) => format!("seri cannot keep sessions in `{scheme}:`; {SUPPORTED_STORE_URLS}"),
            None => format!("it names no kind of store; {SUPPORTED_STORE_URLS}"),
        };
        Err(crate::StoreError::Open(crate::OpenError::BadStoreUrl { url: shown_url(url), problem }))
    }
}

/// What a store URL may be, for errors.
const SUPPORTED_STORE_URLS: &str =
    "expected `sqlite:` (the profile's seri.db), `sqlite:PATH` or `postgres://…` (`postgresql://…`)";

/// The scheme `url` starts with (`mysql` of `mysql://…`), if it has one.
fn scheme(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    well_formed.then_some(scheme)
}

/// `url` as an error may show it: the scheme, user, host and path it
/// gave, never a password (of `user:password@`) or a query (which may hold
/// one). Text that is not a URL is shown only when it cannot be holding
/// credentials.
fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return if url.contains(['@', '=']) || url.chars().any(char::is_whitespace) {
            "…".to_owned()
        } else {
            url.to_owned()
        };
    };
    let (rest, query) = match rest.split_once(['?', '#']) {
        Some((rest, _)) => (rest, "?…"),
        None => (rest, ""),
    };
    // Everything before the last `@` is taken for the user and password,
    // even a password holding a `/` a person did not escape.
    match rest.rsplit_once('@') {
        Some((userinfo, place)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            format!("{scheme}://{user}@{place}{query}")
        }
        None => format!("{scheme}://{rest}{query}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(url: &str) -> String {
        match StoreUrl::parse(Some(url)) {
            Err(error) => error.to_string(),
            Ok(parsed) => panic!("{url} parsed as {parsed:?}"),
        }
    }

    #[test]
    fn an_unusable_url_names_the_scheme_it_gave_and_no_password() {
        assert_eq!(
            problem("mysql://root:hunter2@db:3306/seri"),
            "store URL `mysql://root@db:3306/seri` is not usable: seri cannot keep sessions in `mysql:`; expected \
             `sqlite:` (the profile's seri.db), `sqlite:PATH` or `postgres://…` (`postgresql://…`)"
        );
        for (url, shown) in [
            ("redis://x", "`redis://x`"),
            ("mysql://root:p@ss/w@rd@db/seri?password=hunter2", "`mysql://root@db/seri?…`"),
            ("mongodb+srv://db.example/seri#hunter2", "`mongodb+srv://db.example/seri?…`"),
            ("mysql:seri.db", "`mysql:seri.db`"),
        ] {
            let text = problem(url);
            assert!(text.starts_with(&format!("store URL {shown} is not usable")), "{url}: {text}");
            assert!(!text.contains("hunter2") && !text.contains("ss/w"), "{url}: {text}");
        }
        assert!(problem("mysql:seri.db").contains("cannot keep sessions in `mysql:`"));
        let no_scheme = problem("host=db password=hunter2");
        assert!(no_scheme.starts_with("store URL `…` is not usable: it names no kind of store"), "{no_scheme}");
        assert!(problem("seri.db").starts_with("store URL `seri.db` is not usable: it names no kind of store"));
    }

    #[test]
    fn usable_urls_parse() {
        assert_eq!(StoreUrl::parse(None).unwrap(), StoreUrl::Sqlite(None));
        assert_eq!(StoreUrl::parse(Some("sqlite:")).unwrap(), StoreUrl::Sqlite(None));
        assert_eq!(StoreUrl::parse(Some("sqlite:/x.db")).unwrap(), StoreUrl::Sqlite(Some("/x.db")));
        assert_eq!(StoreUrl::parse(Some("postgresql://db/seri")).unwrap(), StoreUrl::Postgres("postgresql://db/seri"));
    }
}
