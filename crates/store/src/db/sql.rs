//! The SQL every query of the store runs through, on either backend: a
//! connection handle ([`Db`]), parameters ([`Param`]), rows ([`Row`]) and
//! the four ways to run a statement ([`query_all`], [`query_first`],
//! [`query_each`], [`execute`]).
//!
//! Queries are written once, in the SQL both SQLite and PostgreSQL speak
//! (`INSERT … ON CONFLICT`, `IS NOT DISTINCT FROM`, `LIMIT` with a bound),
//! with SQLite's numbered placeholders `?1, ?2, …`; PostgreSQL gets them as
//! `$1, $2, …`. The types that may be bound or read are the ones both
//! backends store the same way (text, 64-bit integers, bytes, and their
//! optional forms), so a value one backend could not take does not compile.

use std::path::Path;

use crate::db::postgres;
use crate::db::sqlite::error as sqlite_error;
use crate::error::{DataError, StoreError};

/// The open connection a transaction runs on.
#[derive(Clone, Copy)]
pub(crate) enum Conn<'a> {
    Sqlite(&'a rusqlite::Connection),
    Postgres(&'a postgres::Connection),
}

/// A connection and what it is on (the file, or the database's address
/// without its password), for errors that name it.
#[derive(Clone, Copy)]
pub(crate) struct Db<'a> {
    pub(crate) conn: Conn<'a>,
    pub(crate) path: &'a Path,
}

impl<'a> Db<'a> {
    /// Holds the write lock of one thing of the store (see
    /// `postgres::connection`) until the write transaction ends: on
    /// PostgreSQL a per-name advisory lock, taken before the statement that
    /// reads what it guards; on SQLite nothing, whose write transaction
    /// holds the whole database's one write lock from its start.
    pub(crate) fn lock(&self, name: &str) {
        if let Conn::Postgres(conn) = self.conn {
            conn.lock(name);
        }
    }

    /// [`Db::lock`] of one session: what every write transaction holds
    /// before it reads anything of a session (its head, its lease, its
    /// runs), so two writers of one session run one after the other while
    /// writers of different sessions never wait for each other.
    pub(crate) fn lock_session(&self, session: seri_core::SessionId) {
        if let Conn::Postgres(conn) = self.conn {
            conn.lock(&format!("session:{session}"));
        }
    }

    /// The lock of one session's queue of jobs, in a queue transaction:
    /// held by a job's insert, which counts the session's jobs queued
    /// before it and stamps itself after the newest of them, so two posts
    /// to one session at once queue one after the other (on PostgreSQL;
    /// SQLite's queue transaction holds the database's write lock already).
    /// A lock of its own, apart from the session's: queueing a message
    /// never waits for a run's writes.
    pub(crate) fn lock_jobs_of(&self, session: seri_core::SessionId) {
        if let Conn::Postgres(conn) = self.conn {
            conn.lock_in_queue(&format!("jobs:{session}"));
        }
    }

    /// Whether this transaction, or one of the store's that committed,
    /// found already that `agent` has `session` (PostgreSQL, where asking
    /// again is a round trip; never on SQLite). Sessions are never given to
    /// another agent, and deleted only by a prune (`Store::prune`), which
    /// never takes a session a live process holds; a process that knew a
    /// session pruned since finds its next write to it refused by the
    /// session's foreign keys.
    pub(crate) fn session_known(&self, agent: &seri_core::AgentId, session: seri_core::SessionId) -> bool {
        match self.conn {
            Conn::Postgres(conn) => conn.knows(&format!("{agent}/{session}")),
            Conn::Sqlite(_) => false,
        }
    }

    /// Remembers for [`Db::session_known`] that `agent` has `session`.
    pub(crate) fn learn_session(&self, agent: &seri_core::AgentId, session: seri_core::SessionId) {
        if let Conn::Postgres(conn) = self.conn {
            conn.learn(format!("{agent}/{session}"));
        }
    }

    /// Turns a driver error into a store error about `context`.
    pub(crate) fn fail(&self, context: &'static str) -> impl Fn(SqlError) -> StoreError + 'a {
        let path = self.path;
        move |e| match e {
            SqlError::Sqlite(e) => sqlite_error::sqlite(path, context, e),
            SqlError::Postgres(e) => postgres::error::postgres(path, context, e),
        }
    }
}

/// What a driver said.
#[derive(Debug)]
pub(crate) enum SqlError {
    Sqlite(rusqlite::Error),
    Postgres(tokio_postgres::Error),
}

impl From<rusqlite::Error> for SqlError {
    fn from(e: rusqlite::Error) -> Self {
        SqlError::Sqlite(e)
    }
}

impl From<tokio_postgres::Error> for SqlError {
    fn from(e: tokio_postgres::Error) -> Self {
        SqlError::Postgres(e)
    }
}

/// Why a row could not be read: the driver failed, or the row itself is bad.
#[derive(Debug)]
pub(crate) enum RowError {
    Sql(SqlError),
    Store(StoreError),
}

impl From<StoreError> for RowError {
    fn from(e: StoreError) -> Self {
        RowError::Store(e)
    }
}

impl From<SqlError> for RowError {
    fn from(e: SqlError) -> Self {
        RowError::Sql(e)
    }
}

impl From<rusqlite::Error> for RowError {
    fn from(e: rusqlite::Error) -> Self {
        RowError::Sql(SqlError::Sqlite(e))
    }
}

impl From<rusqlite::types::FromSqlError> for RowError {
    fn from(e: rusqlite::types::FromSqlError) -> Self {
        RowError::Sql(SqlError::Sqlite(e.into()))
    }
}

impl From<tokio_postgres::Error> for RowError {
    fn from(e: tokio_postgres::Error) -> Self {
        RowError::Sql(SqlError::Postgres(e))
    }
}

impl RowError {
    pub(crate) fn into_store(self, db: Db<'_>, context: &'static str) -> StoreError {
        match self {
            RowError::Sql(e) => db.fail(context)(e),
            RowError::Store(e) => e,
        }
    }
}

/// A value a statement binds: one both backends store the same way.
pub(crate) trait Param {
    fn sqlite(&self) -> &dyn rusqlite::ToSql;
    fn postgres(&self) -> &(dyn tokio_postgres::types::ToSql + Sync);
}

macro_rules! bindable {
    ($($t:ty),* $(,)?) => {$(
        impl Param for $t {
            fn sqlite(&self) -> &dyn rusqlite::ToSql {
                self
            }
            fn postgres(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
                self
            }
        }
    )*};
}

bindable!(i64, String, &str, &String, Option<String>, Option<&str>, Option<i64>, Vec<u8>, &[u8]);

/// The parameters of a statement, in placeholder order: `params![a, b]`.
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::db::sql::Param]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::db::sql::Param),+] as &[&dyn $crate::db::sql::Param]
    };
}
pub(crate) use params;

/// Any value of a column, for copying rows from one database to another
/// without knowing their types: what SQLite calls a storage class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::Text(text)
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Text(text.to_owned())
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Self {
        value.map_or(Value::Null, Into::into)
    }
}

impl Value {
    /// The value as `db` can store it: PostgreSQL's text cannot hold
    /// U+0000, so there a text's NULs become U+FFFD (what a session's view
    /// shows for them). Only a text column written raw can hold one (a
    /// cached title an older build folded); JSON text escapes it.
    pub(crate) fn storable_in(self, db: Db<'_>) -> Value {
        match (self, db.conn) {
            (Value::Text(text), Conn::Postgres(_)) if text.contains('\0') => {
                Value::Text(text.replace('\0', "\u{fffd}"))
            }
            (value, _) => value,
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(n) => ValueRef::Integer(*n),
            Value::Text(text) => ValueRef::Text(text.as_bytes()),
            Value::Bytes(bytes) => ValueRef::Blob(bytes),
        }))
    }
}

impl tokio_postgres::types::ToSql for Value {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(tokio_postgres::types::IsNull::Yes),
            Value::Int(n) => n.to_sql(ty, out),
            Value::Text(text) => text.to_sql(ty, out),
            Value::Bytes(bytes) => bytes.to_sql(ty, out),
        }
    }

    // Each variant's own impl checks the column's type as it writes.
    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

bindable!(Value);

/// A value a row yields: one both backends store the same way.
pub(crate) trait Column: Sized {
    fn sqlite(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Self>;
    fn postgres(row: &tokio_postgres::Row, at: usize) -> Result<Self, tokio_postgres::Error>;
}

macro_rules! readable {
    ($($t:ty),* $(,)?) => {$(
        impl Column for $t {
            fn sqlite(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Self> {
                row.get(at)
            }
            fn postgres(row: &tokio_postgres::Row, at: usize) -> Result<Self, tokio_postgres::Error> {
                row.try_get(at)
            }
        }
    )*};
}

readable!(i64, f64, String, Option<String>, Option<i64>, Vec<u8>);

/// A column position (the only kind of index the store uses).
pub(crate) trait ColumnIndex: Copy {
    fn at(self) -> usize;
}

impl ColumnIndex for usize {
    fn at(self) -> usize {
        self
    }
}

/// One row of a result, from either backend.
#[derive(Clone, Copy)]
pub(crate) enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r tokio_postgres::Row),
}

impl<'r> Row<'r> {
    /// The value of column `at`.
    pub(crate) fn get<I: ColumnIndex, T: Column>(&self, at: I) -> Result<T, RowError> {
        Ok(match self {
            Row::Sqlite(row) => T::sqlite(row, at.at())?,
            Row::Postgres(row) => T::postgres(row, at.at())?,
        })
    }

    /// The value of column `at`, whatever its type.
    pub(crate) fn value(&self, at: usize) -> Result<Value, RowError> {
        use tokio_postgres::types::Type;
        Ok(match self {
            Row::Sqlite(row) => match row.get_ref(at)? {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(n) => Value::Int(n),
                rusqlite::types::ValueRef::Text(text) => Value::Text(String::from_utf8_lossy(text).into_owned()),
                rusqlite::types::ValueRef::Blob(bytes) => Value::Bytes(bytes.to_vec()),
                rusqlite::types::ValueRef::Real(_) => {
                    return Err(RowError::Store(StoreError::Data(DataError::CorruptRow {
                        table: "(copy)",
                        id: format!("column {at}"),
                        problem: "a REAL value, which no seri table holds".into(),
                    })));
                }
            },
            Row::Postgres(row) => {
                let ty = row.columns().get(at).map(|c| c.type_().clone());
                match ty {
                    Some(Type::INT8) => row.try_get::<_, Option<i64>>(at)?.map_or(Value::Null, Value::Int),
                    Some(Type::BYTEA) => row.try_get::<_, Option<Vec<u8>>>(at)?.map_or(Value::Null, Value::Bytes),
                    _ => row.try_get::<_, Option<String>>(at)?.map_or(Value::Null, Value::Text),
                }
            }
        })
    }

    /// The text of column `at`, borrowed from the row (no copy).
    pub(crate) fn text(&self, at: usize) -> Result<&'r str, RowError> {
        Ok(match self {
            Row::Sqlite(row) => row.get_ref(at)?.as_str()?,
            Row::Postgres(row) => row.try_get::<_, &str>(at)?,
        })
    }

    /// The text of column `at`, borrowed from the row; `None` for NULL.
    pub(crate) fn text_or_null(&self, at: usize) -> Result<Option<&'r str>, RowError> {
        Ok(match self {
            Row::Sqlite(row) => row.get_ref(at)?.as_str_or_null()?,
            Row::Postgres(row) => row.try_get::<_, Option<&str>>(at)?,
        })
    }

    /// The text of column `at` as bytes, borrowed from the row. SQLite's
    /// are not checked for UTF-8 here: for a JSON payload the parser checks
    /// every string as it reads it, so checking first would read it twice.
    pub(crate) fn text_bytes(&self, at: usize) -> Result<&'r [u8], RowError> {
        Ok(match self {
            Row::Sqlite(row) => row.get_ref(at)?.as_bytes()?,
            Row::Postgres(row) => row.try_get::<_, &str>(at)?.as_bytes(),
        })
    }
}

impl<'a> Conn<'a> {
    /// The prepared form of `sql`, prepared once per connection, to run
    /// once or many times (an append's inserts).
    pub(crate) fn prepare_cached(&self, sql: &str) -> Result<Statement<'a>, SqlError> {
        Ok(match *self {
            Conn::Sqlite(conn) => Statement::Sqlite(conn.prepare_cached(sql)?),
            Conn::Postgres(conn) => Statement::Postgres(conn, conn.statement(sql)?),
        })
    }

    /// Prepares and runs `sql` once; the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<u64, SqlError> {
        self.prepare_cached(sql)?.execute(params)
    }
}

/// A prepared statement of either backend.
pub(crate) enum Statement<'a> {
    Sqlite(rusqlite::CachedStatement<'a>),
    Postgres(&'a postgres::Connection, tokio_postgres::Statement),
}

impl Statement<'_> {
    /// Runs the statement, reporting a failure by the time the transaction
    /// commits at the latest: at once on SQLite; on PostgreSQL it is sent
    /// without waiting for its answer, which is read with the next
    /// statement that waits (see `postgres::Connection::send_prepared`).
    pub(crate) fn execute_pipelined(&mut self, params: Vec<Value>) -> Result<(), SqlError> {
        match self {
            Statement::Sqlite(stmt) => {
                let values: Vec<&dyn rusqlite::ToSql> = params.iter().map(|p| p as &dyn rusqlite::ToSql).collect();
                stmt.execute(values.as_slice())?;
            }
            Statement::Postgres(conn, stmt) => conn.send_prepared(stmt, params),
        }
        Ok(())
    }

    /// Runs the statement; the number of rows it changed.
    pub(crate) fn execute(&mut self, params: &[&dyn Param]) -> Result<u64, SqlError> {
        match self {
            Statement::Sqlite(stmt) => {
                let values: Vec<&dyn rusqlite::ToSql> = params.iter().map(|p| p.sqlite()).collect();
                Ok(stmt.execute(values.as_slice())? as u64)
            }
            Statement::Postgres(conn, stmt) => Ok(conn.execute_prepared(stmt, params)?),
        }
    }
}

/// Runs a query and decodes every row with `read`.
pub(crate) fn query_all<T>(
    db: Db<'_>,
    context: &'static str,
    sql: &str,
    params: &[&dyn Param],
    read: impl Fn(&Row<'_>) -> Result<T, RowError>,
) -> crate::Result<Vec<T>> {
    let mut out = Vec::new();
    query_each(db, context, sql, params, |row| {
        out.push(read(row)?);
        Ok(true)
    })?;
    Ok(out)
}

/// Runs a query and decodes its first row, if any.
pub(crate) fn query_first<T>(
    db: Db<'_>,
    context: &'static str,
    sql: &str,
    params: &[&dyn Param],
    read: impl Fn(&Row<'_>) -> Result<T, RowError>,
) -> crate::Result<Option<T>> {
    let mut first = None;
    query_each(db, context, sql, params, |row| {
        first = Some(read(row)?);
        Ok(false)
    })?;
    Ok(first)
}

/// Runs a query and hands its rows to `each` in order until it returns
/// `false`; the rows after that are never decoded (nor, on SQLite, read).
pub(crate) fn query_each(
    db: Db<'_>,
    context: &'static str,
    sql: &str,
    params: &[&dyn Param],
    mut each: impl FnMut(&Row<'_>) -> Result<bool, RowError>,
) -> crate::Result<()> {
    let fail = db.fail(context);
    match db.conn {
        Conn::Sqlite(conn) => {
            let mut stmt = conn.prepare_cached(sql).map_err(|e| fail(e.into()))?;
            let values: Vec<&dyn rusqlite::ToSql> = params.iter().map(|p| p.sqlite()).collect();
            let mut rows = stmt.query(values.as_slice()).map_err(|e| fail(e.into()))?;
            while let Some(row) = rows.next().map_err(|e| fail(e.into()))? {
                if !each(&Row::Sqlite(row)).map_err(|e| e.into_store(db, context))? {
                    break;
                }
            }
            drop(rows);
            #[cfg(test)]
            steps::add(stmt.reset_status(rusqlite::StatementStatus::VmStep));
        }
        Conn::Postgres(conn) => {
            let mut go_on = true;
            conn.query_each(sql, params, |row| {
                go_on = each(&Row::Postgres(row))?;
                Ok(go_on)
            })
            .map_err(|e| e.into_store(db, context))?;
        }
    }
    Ok(())
}

/// The SQLite virtual machine steps this thread's queries ran, for the
/// tests that hold a read to an amount of work rather than to a time.
#[cfg(test)]
pub(crate) mod steps {
    thread_local! {
        static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    pub(crate) fn add(n: i32) {
        STEPS.with(|s| s.set(s.get() + u64::try_from(n).unwrap_or_default()));
    }

    /// The steps run so far on this thread.
    pub(crate) fn so_far() -> u64 {
        STEPS.with(std::cell::Cell::get)
    }
}

/// Runs a statement that returns no rows; the number of rows it changed.
pub(crate) fn execute(db: Db<'_>, context: &'static str, sql: &str, params: &[&dyn Param]) -> crate::Result<u64> {
    db.conn.execute(sql, params).map_err(db.fail(context))
}

/// The SQL for the text at `keys` inside the JSON text of `column`
/// (`NULL` where there is none), in the backend's own dialect.
///
/// PostgreSQL's JSON types refuse the escape `\u0000` (its text cannot
/// hold U+0000), so there the JSON is read with each escaped backslash
/// spelt `\u005c` and each NUL's escape `\ufffd`: the same document but
/// for NULs, which read as U+FFFD. A JSON text holding a NUL is read,
/// never an error (migration 6 of `postgres-schema.sql`).
pub(crate) fn json_text(db: Db<'_>, column: &str, keys: &[&str]) -> String {
    match db.conn {
        Conn::Sqlite(_) => format!("json_extract({column}, '$.{}')", keys.join(".")),
        Conn::Postgres(_) => format!(
            r"(replace(replace({column}, E'\\\\', E'\\u005c'), E'\\u0000', E'\\ufffd')::jsonb #>> '{{{}}}')",
            keys.join(",")
        ),
    }
}

/// `sql` with SQLite's numbered placeholders `?N` written as PostgreSQL's `$N`.
/// The store's statements hold no `?` anywhere else.
pub(crate) fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::numbered_placeholders;

    #[test]
    fn numbered_placeholders_become_dollar_placeholders() {
        assert_eq!(
            numbered_placeholders("SELECT a FROM t WHERE b = ?1 AND c IS NOT DISTINCT FROM ?12 LIMIT ?3"),
            "SELECT a FROM t WHERE b = $1 AND c IS NOT DISTINCT FROM $12 LIMIT $3"
        );
        assert_eq!(numbered_placeholders("SELECT '?' || ?"), "SELECT '?' || ?");
    }
}
