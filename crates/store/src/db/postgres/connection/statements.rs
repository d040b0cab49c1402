//! A connection's statements: transactions begun lazily and pipelined,
//! advisory locks, prepared statements, `COPY` in, and the caches of known
//! keys and session heads.

use super::*;

impl Connection {
    /// Waits for `op`: on a connection polled by the thread that waits, it
    /// polls the socket meanwhile; on one with a thread of its own, it
    /// blocks until that thread brings the answer.
    pub(super) fn wait<T>(&self, op: impl std::future::Future<Output = T>) -> T {
        match &self.io {
            Some(io) => io.wait(op),
            None => futures_executor::block_on(op),
        }
    }

    /// Runs statements with no parameters and no results (the simple
    /// protocol), after the open transaction's `BEGIN` if it is still to go.
    pub(crate) fn batch(&self, sql: &str) -> std::result::Result<(), tokio_postgres::Error> {
        Work::add(&self.work.statements, statements_in(sql));
        self.run(self.client.batch_execute(sql))
    }

    /// Sends the open transaction's `BEGIN` (and, for a write, the
    /// schema's lock: shared, or exclusive for [`TxKind::Exclusive`] and
    /// before the schema exists) if it is still to go, without waiting for
    /// the answer.
    pub(super) fn flush_begin(&self) {
        let Some(kind) = self.begin.take() else { return };
        // A single statement is its own transaction (autocommit).
        if matches!(kind, TxKind::Single | TxKind::ReadOne) {
            return;
        }
        self.send_begin(kind);
        if matches!(kind, TxKind::Write | TxKind::Exclusive) {
            let client = self.client.clone();
            match &self.keys {
                Some(keys) => {
                    let stmt = if kind == TxKind::Write { &keys.lock_shared_stmt } else { &keys.lock_stmt };
                    let (stmt, key) = (stmt.clone(), keys.lock);
                    self.send(Box::pin(async move { client.execute(&stmt, &[&key]).await.map(drop) }));
                }
                None => self.send(Box::pin(async move { client.batch_execute(LOCK_SQL).await })),
            }
        }
    }

    /// Takes the lock named `name` (`session:ID`, `checkpoints`, …) until
    /// the open write transaction ends, if it does not hold it already:
    /// sent without waiting, so the statement that reads what it guards
    /// waits for it, in the same round trip. A writer holding the schema's
    /// lock alone (an exclusive transaction, or the first open) needs none,
    /// nor does a read or a queue transaction.
    pub(crate) fn lock(&self, name: &str) {
        if self.kind.get() == Some(TxKind::Write) {
            self.take_lock(name);
        }
    }

    /// [`Connection::lock`] in a queue transaction, which holds no lock of
    /// the schema: for the few queue writes that read what they then write
    /// (a job's insert counts the session's jobs before it).
    pub(crate) fn lock_in_queue(&self, name: &str) {
        if self.kind.get() == Some(TxKind::Queue) {
            self.take_lock(name);
        }
    }

    pub(super) fn take_lock(&self, name: &str) {
        let Some(keys) = &self.keys else { return };
        if self.locked.borrow().iter().any(|held| held == name) {
            return;
        }
        self.locked.borrow_mut().push(name.to_owned());
        let key = format!("{}{name}", keys.lock_prefix);
        // A write whose first statement is this lock (one of a session, as
        // most are): the schema's shared lock and this one are one statement.
        if self.begin.get() == Some(TxKind::Write) {
            self.begin.set(None);
            self.send_begin(TxKind::Write);
            let (client, stmt, schema) = (self.client.clone(), keys.lock_shared_named_stmt.clone(), keys.lock);
            self.send(Box::pin(async move { client.execute(&stmt, &[&schema, &key]).await.map(drop) }));
            return;
        }
        self.flush_begin();
        let (client, stmt) = (self.client.clone(), keys.lock_named_stmt.clone());
        self.send(Box::pin(async move { client.execute(&stmt, &[&key]).await.map(drop) }));
    }

    /// Sends the `BEGIN` of a transaction of `kind`, without waiting.
    pub(super) fn send_begin(&self, kind: TxKind) {
        let begin = match kind {
            TxKind::Read | TxKind::ReadOne => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            TxKind::Write | TxKind::Exclusive | TxKind::Queue | TxKind::Single => {
                "BEGIN ISOLATION LEVEL READ COMMITTED"
            }
        };
        let client = self.client.clone();
        self.send(Box::pin(async move { client.batch_execute(begin).await }));
    }

    /// Runs `op` and waits for its answer, sending the open transaction's
    /// `BEGIN` just before it if it is still to go, and reading the answers
    /// of the statements sent before it (their failure is the one reported:
    /// a statement after a failed one fails only because it came after).
    pub(super) fn run<T, E>(
        &self,
        op: impl std::future::Future<Output = std::result::Result<T, E>>,
    ) -> std::result::Result<T, E>
    where
        E: From<tokio_postgres::Error>,
    {
        self.flush_begin();
        Work::add(&self.work.round_trips, 1);
        let earlier = settle(std::mem::take(&mut *self.sent.borrow_mut()));
        self.wait(async {
            let (earlier, done) = futures_util::future::join(earlier, op).await;
            earlier?;
            done
        })
    }

    /// Sends a prepared statement without waiting for its answer: the next
    /// statement that waits (or the `COMMIT`) reads it, in the same round
    /// trip. For the inserts of an append, whose answers say nothing the
    /// store needs but whether they failed.
    pub(crate) fn send_prepared(&self, stmt: &Statement, params: Vec<crate::db::sql::Value>) {
        self.flush_begin();
        let (client, stmt) = (self.client.clone(), stmt.clone());
        self.send(Box::pin(async move {
            let values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                params.iter().map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
            client.execute(&stmt, &values).await.map(drop)
        }));
    }

    /// [`Connection::send_prepared`] with values of any type PostgreSQL
    /// takes (an append's arrays of columns).
    pub(crate) fn send_prepared_boxed(
        &self,
        stmt: &Statement,
        params: Vec<Box<dyn tokio_postgres::types::ToSql + Send + Sync>>,
    ) {
        self.flush_begin();
        let (client, stmt) = (self.client.clone(), stmt.clone());
        self.send(Box::pin(async move {
            let values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                params.iter().map(|v| v.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
            client.execute(&stmt, &values).await.map(drop)
        }));
    }

    /// Starts `COPY table (columns) FROM STDIN (FORMAT binary)` in the open
    /// transaction (after the statements sent before it): the rows written
    /// to the [`CopyIn`] it returns stream to the server as they come, and
    /// go in with [`CopyIn::finish`]. A `CopyIn` dropped unfinished aborts
    /// the copy, and so the transaction.
    pub(crate) fn copy_in(&self, table: &str, columns: &[&str]) -> std::result::Result<CopyIn, tokio_postgres::Error> {
        let columns = columns.join(", ");
        // Each value is encoded for its column's type, as the table has it.
        Work::add(&self.work.statements, 2);
        let probe = self.run(self.client.prepare(&format!("SELECT {columns} FROM {table} LIMIT 0")))?;
        let types: Vec<tokio_postgres::types::Type> = probe.columns().iter().map(|c| c.type_().clone()).collect();
        let copy = format!("COPY {table} ({columns}) FROM STDIN (FORMAT binary)");
        let sink = self.run(self.client.copy_in::<_, bytes::Bytes>(&copy))?;
        let writer = Box::pin(tokio_postgres::binary_copy::BinaryCopyInWriter::new(sink, &types));
        Ok(CopyIn { writer, io: self.io.clone() })
    }

    /// Polls `statement` once, which puts it on the wire, and keeps it for its answer.
    pub(super) fn send(&self, mut statement: Sent) {
        Work::add(&self.work.statements, 1);
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        match statement.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(Ok(())) => {}
            std::task::Poll::Ready(Err(e)) => self.sent.borrow_mut().push(Box::pin(futures_util::future::err(e))),
            std::task::Poll::Pending => self.sent.borrow_mut().push(statement),
        }
    }

    /// Whether the open transaction, or one of the store's that committed,
    /// already found `key` (see [`Connection::learn`]).
    pub(crate) fn knows(&self, key: &str) -> bool {
        self.known.borrow().iter().any(|k| k == key) || self.store_known.borrow().knows(key)
    }

    /// Remembers that `key` exists: for what is never changed and deleted
    /// only by a prune, which never takes what a live process holds (a
    /// session and its agent; see `Db::session_known`), so neither this transaction
    /// nor, once it commits, any later one of the store asks the server
    /// again.
    pub(crate) fn learn(&self, key: String) {
        if !self.knows(&key) {
            self.known.borrow_mut().push(key);
        }
    }

    /// The head of `session` as the open transaction's appends, or else the
    /// store's committed ones, left it ([`Connection::leave_head`]), taken:
    /// a guess of it, which an append that uses it has the server check.
    /// Taken, so a wrong one (its transaction fails) is not guessed again.
    pub(crate) fn take_head(&self, session: seri_core::SessionId) -> Option<seri_core::SessionInfo> {
        let mut heads = self.heads.borrow_mut();
        match heads.iter().position(|v| v.id == session) {
            Some(at) => Some(heads.swap_remove(at)),
            None => self.store_heads.borrow().take(session),
        }
    }

    /// Leaves `view` as its session's head once the open transaction
    /// commits (an append's view after its events).
    pub(crate) fn leave_head(&self, view: seri_core::SessionInfo) {
        let mut heads = self.heads.borrow_mut();
        heads.retain(|v| v.id != view.id);
        heads.push(view);
    }

    /// Sends `payload` on the schema's change channel when the open transaction commits.
    pub(crate) fn notify_on_commit(&self, payload: String) {
        let mut notifies = self.notifies.borrow_mut();
        if !notifies.contains(&payload) {
            notifies.push(payload);
        }
    }

    /// Commits the open transaction, sending its notifications with it and
    /// reading the answers of what was sent before. One that ran no
    /// statement was never begun on the server.
    pub(super) fn commit(&self) -> std::result::Result<(), tokio_postgres::Error> {
        let notifies = std::mem::take(&mut *self.notifies.borrow_mut());
        if self.begin.take().is_some() {
            return Ok(());
        }
        Work::add(&self.work.transactions, 1);
        // A single statement committed as it ran (it was waited for); only
        // its notifications, if any, go after it.
        if matches!(self.kind.get(), Some(TxKind::Single | TxKind::ReadOne)) {
            let sent = std::mem::take(&mut *self.sent.borrow_mut());
            if !sent.is_empty() {
                self.wait(settle(sent))?;
            }
            if notifies.is_empty() {
                return Ok(());
            }
            let sql: Vec<String> = notifies
                .iter()
                .map(|p| {
                    format!(
                        "SELECT pg_notify({}, '{}')",
                        crate::db::postgres::listen::CHANNEL_SQL,
                        p.replace('\'', "''")
                    )
                })
                .collect();
            return self.batch(&sql.join("; "));
        }
        // A read's statements were all answered (a read waits for each), so
        // its COMMIT can only end it: it goes out without waiting, and its
        // answer is read with the connection's next statement, in the same
        // round trip, instead of costing one of its own.
        // (A socket polled by the thread that waits is written to now;
        // where this thread cannot poll it, the COMMIT waits for its answer.)
        if self.kind.get() == Some(TxKind::Read)
            && notifies.is_empty()
            && self.io.as_ref().is_none_or(|io| io.can_flush())
        {
            let client = self.client.clone();
            self.send(Box::pin(async move { client.batch_execute("COMMIT").await }));
            if let Some(io) = &self.io {
                io.flush();
            }
            return Ok(());
        }
        let mut sql = String::new();
        for payload in notifies {
            match &self.keys {
                Some(keys) => {
                    let (client, stmt, channel) = (self.client.clone(), keys.notify_stmt.clone(), keys.channel.clone());
                    self.send(Box::pin(async move { client.execute(&stmt, &[&channel, &payload]).await.map(drop) }));
                }
                None => {
                    let literal = payload.replace('\'', "''");
                    sql.push_str(&format!(
                        "SELECT pg_notify({}, '{literal}'); ",
                        crate::db::postgres::listen::CHANNEL_SQL
                    ));
                }
            }
        }
        sql.push_str("COMMIT");
        Work::add(&self.work.statements, statements_in(&sql));
        // After a failed statement the server answers COMMIT with a
        // rollback; `run` reports that statement's failure instead.
        self.run(self.client.batch_execute(&sql))
    }

    /// Rolls the open transaction back, and forgets its notifications.
    pub(super) fn rollback(&self) -> std::result::Result<(), tokio_postgres::Error> {
        self.notifies.borrow_mut().clear();
        if self.begin.take().is_some() {
            self.sent.borrow_mut().clear();
            return Ok(());
        }
        Work::add(&self.work.transactions, 1);
        // A single statement that ran was its own transaction: nothing is open.
        if matches!(self.kind.get(), Some(TxKind::Single | TxKind::ReadOne)) {
            self.sent.borrow_mut().clear();
            return Ok(());
        }
        Work::add(&self.work.statements, 1);
        Work::add(&self.work.round_trips, 1);
        let earlier = settle(std::mem::take(&mut *self.sent.borrow_mut()));
        self.wait(async {
            let (_, done) = futures_util::future::join(earlier, self.client.batch_execute("ROLLBACK")).await;
            done
        })
    }

    /// The prepared form of `sql`, prepared once per connection.
    pub(crate) fn statement(&self, sql: &str) -> std::result::Result<Statement, tokio_postgres::Error> {
        if let Some(stmt) = self.statements.borrow().get(sql) {
            return Ok(stmt.clone());
        }
        Work::add(&self.work.statements, 1);
        Work::add(&self.work.round_trips, 1);
        // With the answers of what was sent before it: in a transaction a
        // statement before it failed, the server refuses the prepare too,
        // and that statement's failure is the one to report.
        let earlier = settle(std::mem::take(&mut *self.sent.borrow_mut()));
        let stmt = self.wait(async {
            let (earlier, done) =
                futures_util::future::join(earlier, self.client.prepare(&numbered_placeholders(sql))).await;
            earlier?;
            done
        })?;
        self.statements.borrow_mut().insert(sql.to_owned(), stmt.clone());
        Ok(stmt)
    }

    pub(crate) fn execute_prepared(
        &self,
        stmt: &Statement,
        params: &[&dyn Param],
    ) -> std::result::Result<u64, tokio_postgres::Error> {
        let values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params.iter().map(|p| p.postgres()).collect();
        Work::add(&self.work.statements, 1);
        self.run(self.client.execute(stmt, &values))
    }

    /// Streams the rows of a query to `each` until it returns `false`.
    pub(crate) fn query_each(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut each: impl FnMut(&tokio_postgres::Row) -> std::result::Result<bool, RowError>,
    ) -> std::result::Result<(), RowError> {
        let stmt = self.statement(sql)?;
        let values = params.iter().map(|p| p.postgres());
        Work::add(&self.work.statements, 1);
        self.run(async {
            let rows = self.client.query_raw(&stmt, values).await?;
            pin_mut!(rows);
            let (mut received, mut wanted) = (0, true);
            // The rows after the last one wanted are read too, only to be
            // counted: the server sends every row a query selects, and the
            // connection's next answer comes only after them anyway.
            while let Some(row) = rows.next().await {
                received += 1;
                if wanted && !each(&row?)? {
                    wanted = false;
                }
            }
            Work::add(&self.work.rows, received);
            Ok(())
        })
    }
}

/// The rows of a `COPY … FROM STDIN` on their way (see [`Connection::copy_in`]).
pub(crate) struct CopyIn {
    writer: std::pin::Pin<Box<tokio_postgres::binary_copy::BinaryCopyInWriter>>,
    /// The connection's socket, when the thread that waits polls it.
    io: Option<Arc<crate::db::postgres::io::Io>>,
}

impl CopyIn {
    /// Adds one row, a value per column in the order the copy named them:
    /// buffered, and sent as the buffer fills.
    pub(crate) fn write(&mut self, row: &[crate::db::sql::Value]) -> std::result::Result<(), tokio_postgres::Error> {
        let values: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
            row.iter().map(|v| v as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
        let write = self.writer.as_mut().write(&values);
        match &self.io {
            Some(io) => io.wait(write),
            None => futures_executor::block_on(write),
        }
    }

    /// Ends the copy; the number of rows the server took.
    pub(crate) fn finish(mut self) -> std::result::Result<u64, tokio_postgres::Error> {
        let finish = self.writer.as_mut().finish();
        match &self.io {
            Some(io) => io.wait(finish),
            None => futures_executor::block_on(finish),
        }
    }
}
