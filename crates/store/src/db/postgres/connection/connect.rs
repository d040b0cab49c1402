//! Opening a connection: TLS or not, on a thread of its own when the
//! caller is inside a runtime, and the schema's keys read once.

use super::*;

/// Opens a connection whose I/O is polled by the threads that wait for it
/// (`inline`), or runs on a thread of its own.
pub(super) fn connect(
    config: &Config,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
    address: &Path,
    busy_timeout: Duration,
    work: &Arc<Work>,
    inline: bool,
) -> Result<Connection> {
    let open_failed = |source: std::io::Error| {
        StoreError::Open(OpenError::Open { path: address.to_path_buf(), source: DatabaseError::new(source) })
    };
    let (client, io) = if inline {
        let (config, tls) = (config.clone(), tls.clone());
        let connecting = async move {
            let (client, connection) = config.connect(tls).await?;
            Ok((client, Box::pin(connection) as crate::db::postgres::io::Socket))
        };
        match crate::db::postgres::io::Io::connect(connecting) {
            Ok((client, io)) => (client, Some(Arc::new(io))),
            Err(ConnectError::Postgres(e)) => return Err(error::postgres(address, "connecting", e)),
            Err(ConnectError::Runtime(e)) => return Err(open_failed(e)),
        }
    } else {
        (connect_on_a_thread(config, tls, address)?, None)
    };
    let conn = Connection {
        client: Arc::new(client),
        statements: RefCell::new(HashMap::new()),
        begin: std::cell::Cell::new(None),
        keys: None,
        notifies: RefCell::new(Vec::new()),
        kind: std::cell::Cell::new(None),
        locked: RefCell::new(Vec::new()),
        known: RefCell::new(Vec::new()),
        store_known: RefCell::default(),
        heads: RefCell::new(Vec::new()),
        store_heads: RefCell::default(),
        sent: RefCell::new(Vec::new()),
        work: work.clone(),
        io,
    };
    // A writer waits for another writer's lock this long, then gives up
    // with `Locked`, as SQLite's busy timeout does.
    let millis = busy_timeout.as_millis().max(1);
    let mut conn = conn;
    conn.batch(&format!("SET lock_timeout = {millis}; SET statement_timeout = 0"))
        .map_err(|e| error::postgres(address, "configuring the connection", e))?;
    conn.keys = schema_keys(&conn).map_err(|e| error::postgres(address, "configuring the connection", e))?;
    Ok(conn)
}

/// Opens a connection whose I/O runs on a thread of its own.
pub(super) fn connect_on_a_thread(
    config: &Config,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
    address: &Path,
) -> Result<Client> {
    let (sent, received) = std::sync::mpsc::channel();
    let (config, tls) = (config.clone(), tls.clone());
    let spawned = std::thread::Builder::new().name("seri-postgres".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => {
                let _ = sent.send(Err(ConnectError::Runtime(e)));
                return;
            }
        };
        runtime.block_on(async move {
            match config.connect(tls).await {
                Ok((client, connection)) => {
                    let _ = sent.send(Ok(client));
                    if let Err(e) = connection.await {
                        tracing::warn!(error = %e, "the PostgreSQL connection ended");
                    }
                }
                Err(e) => {
                    let _ = sent.send(Err(ConnectError::Postgres(e)));
                }
            }
        });
    });
    let open_failed = |source: std::io::Error| {
        StoreError::Open(OpenError::Open { path: address.to_path_buf(), source: DatabaseError::new(source) })
    };
    spawned.map_err(open_failed)?;
    let client = match received.recv() {
        Ok(Ok(client)) => client,
        Ok(Err(ConnectError::Postgres(e))) => return Err(error::postgres(address, "connecting", e)),
        Ok(Err(ConnectError::Runtime(e))) => return Err(open_failed(e)),
        Err(_) => return Err(open_failed(std::io::Error::other("the connection thread stopped"))),
    };
    Ok(client)
}

/// The keys of the connection's schema, if it exists yet.
pub(super) fn schema_keys(conn: &Connection) -> std::result::Result<Option<SchemaKeys>, tokio_postgres::Error> {
    let row = conn.wait(conn.client.query_one(
        "SELECT hashtextextended('seri:' || current_schema(), 0), 'seri_changes:' || current_schema(), \
         'seri:' || current_schema() || ':'",
        &[],
    ))?;
    let (Some(lock), Some(channel), Some(lock_prefix)) =
        (row.try_get::<_, Option<i64>>(0)?, row.try_get::<_, Option<String>>(1)?, row.try_get::<_, Option<String>>(2)?)
    else {
        return Ok(None);
    };
    let prepare = |sql| conn.wait(conn.client.prepare(sql));
    Ok(Some(SchemaKeys {
        lock,
        lock_stmt: prepare("SELECT pg_advisory_xact_lock($1)")?,
        lock_shared_stmt: prepare("SELECT pg_advisory_xact_lock_shared($1)")?,
        lock_named_stmt: prepare("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")?,
        // A target list is evaluated in its order: the schema's lock first,
        // as when they go one by one.
        lock_shared_named_stmt: prepare(
            "SELECT pg_advisory_xact_lock_shared($1), pg_advisory_xact_lock(hashtextextended($2, 0))",
        )?,
        lock_prefix,
        channel,
        notify_stmt: prepare("SELECT pg_notify($1, $2)")?,
    }))
}

use crate::db::postgres::io::ConnectError;
