//! Accepting and serving connections (HTTP/1.1 and WebSocket upgrades on
//! hyper), bounded so that clients cannot wear the server down:
//!
//! - At most [`Limits::max_connections`] connections at once, WebSockets
//!   included (the slot travels with the connection into the upgrade).
//!   Beyond it the server accepts nothing until one closes: new clients
//!   wait in the kernel's backlog, and the descriptors the store needs
//!   stay free.
//! - A request's headers must arrive within [`Limits::header_timeout`],
//!   counted from when the server waits for them, so a kept-alive
//!   connection that sends nothing is closed after the same time: a
//!   client that trickles or holds a connection idle loses it.
//! - A write that the client takes no byte of for [`Limits::stall_timeout`]
//!   fails, and the connection closes: a client that never reads its
//!   response (or its WebSocket frames) frees its slot. (A body that stops
//!   arriving is refused by [`crate::guard::bounded_body`].)
//! - When the stop signal comes, nothing more is accepted, each connection
//!   finishes its request in flight and closes, and the server waits at
//!   most [`crate::SHUTDOWN_GRACE`] for them.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, watch};

/// How long accepting pauses after an error that is not one connection's
/// (out of descriptors): the loop does not spin while it lasts.
const ACCEPT_PAUSE: Duration = Duration::from_millis(250);

/// The bounds of [`run`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// How long a request's headers may take.
    pub(crate) header_timeout: Duration,
    /// How many connections are served at once.
    pub(crate) max_connections: usize,
    /// How long a write may wait for the client to take a byte.
    pub(crate) stall_timeout: Duration,
    /// How long the server waits for its connections to close once stopping.
    pub(crate) grace: Duration,
}

/// Serves `app` on `listener` within `limits` until `stop` completes,
/// then lets each connection finish its request and waits for them.
pub(crate) async fn run(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send + 'static,
) {
    // The receiver dropped is the signal; every connection watches for it.
    let (stopping, stop_heard) = watch::channel(());
    tokio::spawn(async move {
        stop.await;
        drop(stop_heard);
    });
    // Each connection holds a receiver: all dropped, all closed.
    let (closed, open) = watch::channel(());
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut full = false;
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(TryAcquireError::Closed) => break,
            Err(TryAcquireError::NoPermits) => {
                if !full {
                    tracing::warn!(
                        max = limits.max_connections,
                        "the connection cap is reached: new connections wait until one closes"
                    );
                }
                full = true;
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break,
                    },
                    () = stopping.closed() => break,
                }
            }
        };
        if slots.available_permits() > 0 {
            full = false;
        }
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = stopping.closed() => break,
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
        let io = Slotted { stream, _slot: slot, stall: limits.stall_timeout, write_stalled: None };
        tokio::spawn(connection(io, app.clone(), limits.header_timeout, stopping.clone(), open.clone()));
    }
    drop(open);
    drop(listener);
    if tokio::time::timeout(limits.grace, closed.closed()).await.is_err() {
        tracing::warn!(
            still_open = closed.receiver_count(),
            "stopping without waiting longer for connections still open"
        );
    }
}

/// Serves one connection until it closes, or, once `stopping` closes,
/// until its request in flight is answered.
async fn connection(
    io: Slotted,
    app: Router,
    header_timeout: Duration,
    stopping: watch::Sender<()>,
    _open: watch::Receiver<()>,
) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let served = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(app)).with_upgrades();
    let mut served = std::pin::pin!(served);
    let mut stop = std::pin::pin!(stopping.closed());
    let mut asked_to_stop = false;
    loop {
        tokio::select! {
            ended = served.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "a connection ended on an error");
                }
                return;
            }
            () = &mut stop, if !asked_to_stop => {
                asked_to_stop = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
}

/// A refused accept: one connection's trouble is skipped; running out of
/// descriptors (or any other error) pauses accepting for a moment.
async fn accept_failed(e: &io::Error) {
    use io::ErrorKind as K;
    if matches!(e.kind(), K::ConnectionRefused | K::ConnectionAborted | K::ConnectionReset | K::Interrupted) {
        return;
    }
    tracing::error!(error = %e, "cannot accept a connection");
    tokio::time::sleep(ACCEPT_PAUSE).await;
}

/// A connection with its slot under the cap, given back when it drops:
/// after an upgrade too, since the WebSocket owns the stream then. A write
/// the client takes nothing of for `stall` fails with `TimedOut`.
struct Slotted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
    stall: Duration,
    /// Since when a write has waited for the client, as a deadline.
    write_stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Slotted {
    /// Passes a write's poll on, failing it once it has waited `stall`.
    fn bounded<T>(&mut self, cx: &mut Context<'_>, polled: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.write_stalled = None;
            return polled;
        }
        let stall = self.stall;
        let deadline = self.write_stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.write_stalled = None;
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the client took nothing written to it for {}s", stall.as_secs()),
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Slotted {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.bounded(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.bounded(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_flush(cx);
        this.bounded(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
