//! The relay on PostgreSQL ([`crate::relay`]): one connection of its own,
//! on a thread of its own, that `LISTEN`s on `seri_relay:<schema>` and
//! sends what the process queues with `pg_notify`, everything queued since
//! the last send in one statement. It reconnects when the server drops it,
//! until the receiver is dropped.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

use crate::relay::{Reassembly, Relay, RelaySender, parts};

/// Most parts sent in one statement.
const MAX_BATCH: usize = 512;

impl super::Database {
    /// The relay of this schema: messages to and from the other processes on it.
    pub(crate) fn relay(&self) -> Relay {
        let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
        let (heard, received) = mpsc::unbounded_channel::<String>();
        let (connects, connected) = tokio::sync::watch::channel(0u64);
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let address = self.address().display().to_string();
        let spawned = std::thread::Builder::new().name("seri-postgres-relay".into()).spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
            runtime.block_on(async move {
                let mut next_id = 0u64;
                loop {
                    match relay_once(&config, &tls, &mut outgoing, &heard, &connects, &mut next_id).await {
                        Ok(true) => return,
                        Ok(false) => {}
                        Err(e) => tracing::warn!(database = %address, error = %e, "the relay failed; reconnecting"),
                    }
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        () = heard.closed() => return,
                    }
                }
            });
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the relay");
        }
        Relay { sender: RelaySender { out }, received, connected }
    }
}

/// One connection's worth of relaying: `Ok(true)` when the process stopped
/// listening (stop), `Ok(false)` when the connection ended (reconnect).
async fn relay_once(
    config: &tokio_postgres::Config,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
    outgoing: &mut mpsc::UnboundedReceiver<String>,
    heard: &mpsc::UnboundedSender<String>,
    connects: &tokio::sync::watch::Sender<u64>,
    next_id: &mut u64,
) -> Result<bool, tokio_postgres::Error> {
    let (client, mut connection) = config.connect(tls.clone()).await?;
    let (notes, mut noted) = mpsc::unbounded_channel();
    // The connection must be polled for anything to happen, LISTEN included.
    let driver = tokio::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            match message {
                Ok(AsyncMessage::Notification(note)) => {
                    if notes.send(note).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "the relay's connection failed");
                    return;
                }
            }
        }
    });
    let row = client.query_one("SELECT 'seri_relay:' || current_schema(), pg_backend_pid()", &[]).await?;
    let (channel, me): (String, i32) = (row.try_get(0)?, row.try_get(1)?);
    client.batch_execute(&format!("LISTEN \"{}\"", channel.replace('"', "\"\""))).await?;
    let send = client.prepare("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p").await?;
    // Listening from here on: told only now, so what the process says on
    // hearing it (asking the others to say again what it missed) is
    // answered where it listens.
    connects.send_modify(|n| *n += 1);
    let mut reassembly = Reassembly::default();
    let stop = loop {
        tokio::select! {
            note = noted.recv() => match note {
                None => break false,
                // Its own messages: this process knows them already.
                Some(note) if note.process_id() == me => {}
                Some(note) => {
                    if let Some(message) = reassembly.add(note.process_id(), note.payload())
                        && heard.send(message).is_err()
                    {
                        break true;
                    }
                }
            },
            message = outgoing.recv() => {
                let Some(first) = message else { break true };
                let mut payloads = Vec::new();
                for message in std::iter::once(first).chain(std::iter::from_fn(|| outgoing.try_recv().ok())) {
                    *next_id += 1;
                    payloads.extend(parts(*next_id, &message));
                    if payloads.len() >= MAX_BATCH {
                        break;
                    }
                }
                // A failure loses these messages, as a missed notification would.
                client.query(&send, &[&channel, &payloads]).await?;
            },
            () = heard.closed() => break true,
        }
    };
    driver.abort();
    Ok(stop)
}
