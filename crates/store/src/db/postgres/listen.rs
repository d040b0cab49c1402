//! Hearing other processes' changes: a connection of its own that
//! `LISTEN`s on the schema's channel, on a thread of its own, reconnecting
//! when the server drops it, until the receiver is dropped.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

use crate::changes::StoreChange;
use crate::db::sql::{Conn, Db};

/// The notification channel of the connection's current schema (channels
/// are per database, so schemas side by side each get their own).
pub(crate) const CHANNEL_SQL: &str = "'seri_changes:' || current_schema()";

/// Sends `change` to listeners when the transaction commits (PostgreSQL
/// only; identical notifications of one transaction are sent once). The
/// notification goes with the `COMMIT`: it costs no round trip of its own.
pub(crate) fn notify(db: Db<'_>, change: &StoreChange) -> crate::Result<()> {
    if let Conn::Postgres(conn) = db.conn {
        conn.notify_on_commit(serde_json::to_string(change).unwrap_or_default());
    }
    Ok(())
}

impl super::Database {
    /// Every change any process commits to this schema, from now on.
    pub(crate) fn listen(&self) -> mpsc::UnboundedReceiver<StoreChange> {
        let (sent, received) = mpsc::unbounded_channel();
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let address = self.address().display().to_string();
        let spawned = std::thread::Builder::new().name("seri-postgres-listen".into()).spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            runtime.block_on(async move {
                while !sent.is_closed() {
                    if let Err(e) = listen_once(&config, &tls, &sent).await {
                        tracing::warn!(database = %address, error = %e, "listening for changes failed; retrying");
                    }
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        () = sent.closed() => {}
                    }
                }
            });
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start listening for changes");
        }
        received
    }
}

/// One connection's worth of listening: returns when it drops or nobody listens.
async fn listen_once(
    config: &tokio_postgres::Config,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
    sent: &mpsc::UnboundedSender<StoreChange>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(tls.clone()).await?;
    let (ready, heard) = (sent.clone(), tokio::sync::oneshot::channel::<()>());
    let (stop, mut stopped) = heard;
    // The connection must be polled for anything to happen, LISTEN included.
    let messages = tokio::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        loop {
            tokio::select! {
                message = stream.next() => match message {
                    Some(Ok(AsyncMessage::Notification(note))) => {
                        match serde_json::from_str::<StoreChange>(note.payload()) {
                            Ok(change) => {
                                if ready.send(change).is_err() {
                                    return;
                                }
                            }
                            Err(e) => tracing::warn!(payload = note.payload(), error = %e, "an unreadable change"),
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "the listening connection failed");
                        return;
                    }
                    None => return,
                },
                _ = &mut stopped => return,
            }
        }
    });
    let channel: String = client.query_one(&format!("SELECT {CHANNEL_SQL}"), &[]).await?.try_get(0)?;
    client.batch_execute(&format!("LISTEN \"{}\"", channel.replace('"', "\"\""))).await?;
    tokio::select! {
        _ = messages => {}
        () = sent.closed() => { let _ = stop.send(()); }
    }
    drop(client);
    Ok(())
}
