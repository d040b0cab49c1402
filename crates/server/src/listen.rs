//! Accepting and serving connections (HTTP/1.1 and WebSocket upgrades on
//! hyper), bounded so that clients cannot wear the server down:
//!
//! - At most [`Limits::max_connections`] connections at once, WebSockets
//!   included (the slot travels with the connection into the upgrade);
//!   by default as many as the process's descriptor limit leaves room for
//!   (see [`connection_budget`]). Beyond it a new connection is answered
//!   503 with `Retry-After` and closed at once, never left waiting in the
//!   kernel's backlog, and the cap being reached is logged (a warning, at
//!   most once a minute).
//! - At most [`Limits::max_unauthenticated_per_client`] of them from one
//!   address (the peer's IP) that have not yet presented a valid token
//!   (a [`Visitor`] not yet vouched for, see [`crate::gate`]). Beyond it a
//!   new connection from that address is answered 429 with `Retry-After`
//!   and closed at once: one client cannot take the cap's slots with
//!   connections that say nothing, or nothing true, while others and
//!   `/api/health` are still served.
//! - A request's headers must arrive within [`Limits::header_timeout`],
//!   counted from when the server waits for them, however steadily they
//!   trickle, and be at most [`crate::limits::MAX_HEADER_BYTES`] (431
//!   beyond). A request cut off mid-headers is answered 408; a kept-alive
//!   connection that sends nothing is closed after the same time, quietly.
//! - A write that the client takes no byte of for [`Limits::stall_timeout`]
//!   fails, and the connection closes: a client that never reads its
//!   response (or its WebSocket frames) frees its slot. (A body's bounds
//!   are [`crate::gate`]'s.)
//! - A connection closed with a request body unread (a refusal that did
//!   not read it) first says so with a FIN and then reads, and discards,
//!   what still comes for at most [`LINGER`]: the client reads its answer
//!   rather than a reset, and nothing is kept.
//! - When the stop signal comes, nothing more is accepted, each connection
//!   finishes its request in flight and closes, and the server waits at
//!   most [`crate::SHUTDOWN_GRACE`] for them.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, watch};

use crate::limits::MAX_HEADER_BYTES;

/// How long accepting pauses after an error that is not one connection's
/// (out of descriptors): the loop does not spin while it lasts.
const ACCEPT_PAUSE: Duration = Duration::from_millis(250);

/// How long a connection closed with a request body unread goes on
/// reading (and dropping) what the client still sends, so that its answer
/// is read rather than lost to a reset.
pub(crate) const LINGER: Duration = Duration::from_secs(2);

/// The most a lingering connection reads before it closes anyway.
const LINGER_BYTES: usize = 1024 * 1024;

/// What `Retry-After` tells a client refused for holding too many
/// connections without a token, in seconds.
const RETRY_AFTER_SECS: u64 = 5;

/// What `Retry-After` tells a client refused because the server serves
/// as many connections as it may, in seconds.
const BUSY_RETRY_AFTER_SECS: u64 = 1;

/// How often, at most, reaching the connection cap is logged.
const CAP_WARNING_EVERY: Duration = Duration::from_secs(60);

/// Descriptors kept for what is not a connection: the store's files and
/// connections, the log, MCP servers' pipes, the processes tools run.
pub const RESERVED_DESCRIPTORS: u64 = 256;

/// The fewest connections a server serves, whatever its descriptor limit.
const MIN_CONNECTIONS: u64 = 16;

/// How many connections this process can serve at once: its descriptor
/// limit (the soft `RLIMIT_NOFILE`) less [`RESERVED_DESCRIPTORS`], at
/// least 16. Without a limit, 1,048,576.
pub fn connection_budget() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current.unwrap_or(1 << 20);
    usize::try_from(limit.saturating_sub(RESERVED_DESCRIPTORS).max(MIN_CONNECTIONS)).unwrap_or(usize::MAX)
}

/// Raises this process's soft descriptor limit to its hard limit (at most
/// 1,048,576), as a server that serves many connections does at start;
/// returns the soft limit in force after. A limit that cannot be raised
/// stays as it was.
pub fn raise_descriptor_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let ceiling = limit.maximum.unwrap_or(1 << 20).min(1 << 20);
    if limit.current.is_some_and(|current| current < ceiling)
        && let Err(e) = setrlimit(Resource::Nofile, Rlimit { current: Some(ceiling), maximum: limit.maximum })
    {
        tracing::debug!(error = %e, "cannot raise the descriptor limit");
    }
    getrlimit(Resource::Nofile).current
}

/// The bounds of [`run`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// How long a request's headers may take.
    pub(crate) header_timeout: Duration,
    /// How many connections are served at once.
    pub(crate) max_connections: usize,
    /// How many connections one address may hold before any presented a token.
    pub(crate) max_unauthenticated_per_client: usize,
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
    let strangers = Arc::new(Strangers::new(limits.max_unauthenticated_per_client));
    let answers = Arc::new(Answers::new(&limits));
    let mut warned: Option<tokio::time::Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = stopping.closed() => break,
        };
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(TryAcquireError::Closed) => break,
            Err(TryAcquireError::NoPermits) => {
                if warned.is_none_or(|at| at.elapsed() >= CAP_WARNING_EVERY) {
                    tracing::warn!(
                        max = limits.max_connections,
                        "the connection cap is reached: new connections are answered 503 until one closes \
                         (raise it with --max-connections, and the descriptor limit with it)"
                    );
                    warned = Some(tokio::time::Instant::now());
                }
                // Not a byte is read: the answer goes out, if the socket
                // takes it at once, and the connection closes.
                let _ = stream.try_write(&answers.busy);
                continue;
            }
        };
        let Some(visitor) = strangers.admit(peer.ip()) else {
            // Not a byte is read: the answer goes out, if the socket takes
            // it at once, and the connection closes with its slot freed.
            tracing::debug!(peer = %peer.ip(), "refused a connection: its address holds too many without a token");
            let _ = stream.try_write(&answers.too_many);
            continue;
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
        let visitor = Arc::new(visitor);
        let io = Slotted {
            stream: Some(stream),
            slot: Some(slot),
            visitor: visitor.clone(),
            answers: answers.clone(),
            stall: limits.stall_timeout,
            write_stalled: None,
            read_since_write: false,
        };
        tokio::spawn(connection(io, visitor, app.clone(), limits.header_timeout, stopping.clone(), open.clone()));
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
    visitor: Arc<Visitor>,
    app: Router,
    header_timeout: Duration,
    stopping: watch::Sender<()>,
    _open: watch::Receiver<()>,
) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(header_timeout).max_buf_size(MAX_HEADER_BYTES);
    // Each request carries its connection's visitor, for the gate to vouch for.
    let vouchee = visitor.clone();
    let app = tower::ServiceExt::map_request(app, move |mut request: axum::http::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(vouchee.clone());
        request
    });
    let served = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(app)).with_upgrades();
    let mut served = std::pin::pin!(served);
    let mut stop = std::pin::pin!(stopping.closed());
    let mut asked_to_stop = false;
    loop {
        tokio::select! {
            ended = served.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "a connection ended on an error");
                    if e.is_timeout() {
                        // Answered 408 as the connection drops, if a request had begun.
                        visitor.headers_timed_out.store(true, Ordering::Relaxed);
                    }
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

/// The connections each address holds that have not yet presented a
/// valid token, and how many it may.
#[derive(Debug)]
struct Strangers {
    held: Mutex<HashMap<IpAddr, usize>>,
    cap: usize,
}

impl Strangers {
    fn new(cap: usize) -> Self {
        Self { held: Mutex::new(HashMap::new()), cap: cap.max(1) }
    }

    /// A new connection from `ip`, unless that address holds the most.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Visitor> {
        // An IPv4 client on a dual-stack socket is the same client.
        let ip = ip.to_canonical();
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(ip).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(Visitor {
            ip,
            strangers: self.clone(),
            vouched: AtomicBool::new(false),
            left_unread: AtomicBool::new(false),
            headers_timed_out: AtomicBool::new(false),
        })
    }

    fn release(&self, ip: IpAddr) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(&ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(&ip);
            }
        }
    }
}

/// One connection's standing: counted against its address until a
/// request on it presents a valid token ([`Visitor::vouch`]).
#[derive(Debug)]
pub(crate) struct Visitor {
    ip: IpAddr,
    strangers: Arc<Strangers>,
    vouched: AtomicBool,
    /// A refusal left a request body unread: the connection lingers as it closes.
    left_unread: AtomicBool,
    /// The connection ended waiting for a request's headers.
    headers_timed_out: AtomicBool,
}

impl Visitor {
    /// A request on this connection presented a valid token: it no longer
    /// counts against its address.
    pub(crate) fn vouch(&self) {
        if !self.vouched.swap(true, Ordering::AcqRel) {
            self.strangers.release(self.ip);
        }
    }

    /// A request's body was refused unread: the connection closes after
    /// the answer, lingering (see [`LINGER`]).
    pub(crate) fn leave_unread(&self) {
        self.left_unread.store(true, Ordering::Relaxed);
    }
}

impl Drop for Visitor {
    fn drop(&mut self) {
        if !self.vouched.load(Ordering::Acquire) {
            self.strangers.release(self.ip);
        }
    }
}

/// The answers the listener writes itself, on the socket, outside hyper.
#[derive(Debug)]
struct Answers {
    /// 429, to a connection from an address that holds too many without a token.
    too_many: Vec<u8>,
    /// 408, to a connection whose request's headers did not arrive in time.
    headers_late: Vec<u8>,
    /// 503, to a connection past the cap of connections served at once.
    busy: Vec<u8>,
}

impl Answers {
    fn new(limits: &Limits) -> Self {
        let too_many = error_answer(
            "429 Too Many Requests",
            &[("Retry-After", RETRY_AFTER_SECS.to_string())],
            "too_many_connections",
            &format!(
                "this address holds {} connections that have not presented a valid token: \
                 send the token on them, or close some, and try again",
                limits.max_unauthenticated_per_client.max(1)
            ),
        );
        let headers_late = error_answer(
            "408 Request Timeout",
            &[],
            "header_timeout",
            &format!("the request's headers did not arrive within {}s", limits.header_timeout.as_secs()),
        );
        let busy = error_answer(
            "503 Service Unavailable",
            &[("Retry-After", BUSY_RETRY_AFTER_SECS.to_string())],
            "too_busy",
            &format!(
                "the server serves {} connections at once, its most: try again in a moment",
                limits.max_connections.max(1)
            ),
        );
        Self { too_many, headers_late, busy }
    }
}

/// A whole HTTP/1.1 answer that closes its connection, with the usual
/// `{"error": {"code", "message"}}` body.
fn error_answer(status: &str, headers: &[(&str, String)], code: &str, message: &str) -> Vec<u8> {
    let body = serde_json::json!({ "error": { "code": code, "message": message } }).to_string();
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut answer = head.into_bytes();
    answer.extend_from_slice(body.as_bytes());
    answer
}

/// A connection with its slot under the cap, given back when it drops:
/// after an upgrade too, since the WebSocket owns the stream then. A write
/// the client takes nothing of for `stall` fails with `TimedOut`.
struct Slotted {
    /// Always there until the connection drops.
    stream: Option<TcpStream>,
    slot: Option<OwnedSemaphorePermit>,
    visitor: Arc<Visitor>,
    answers: Arc<Answers>,
    stall: Duration,
    /// Since when a write has waited for the client, as a deadline.
    write_stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Bytes arrived since the last answer was written: a request has begun.
    read_since_write: bool,
}

/// An I/O call on a connection whose stream is already gone.
fn gone<T>() -> Poll<io::Result<T>> {
    Poll::Ready(Err(io::ErrorKind::NotConnected.into()))
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

impl Slotted {
    /// Notes that an answer went out: what arrives next is a new request.
    fn wrote(&mut self, polled: &Poll<io::Result<usize>>) {
        if matches!(polled, Poll::Ready(Ok(n)) if *n > 0) {
            self.read_since_write = false;
        }
    }
}

impl Drop for Slotted {
    fn drop(&mut self) {
        let Some(stream) = self.stream.take() else { return };
        if self.read_since_write && self.visitor.headers_timed_out.load(Ordering::Relaxed) {
            // Nothing of an answer was written: the whole 408 fits in the
            // socket's buffer, or the client is gone anyway.
            let _ = stream.try_write(&self.answers.headers_late);
        }
        if self.visitor.left_unread.load(Ordering::Relaxed)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // The slot and the visitor stay taken while it lingers.
            runtime.spawn(linger(stream, self.slot.take(), self.visitor.clone()));
        }
    }
}

/// Closes a connection whose request body was left unread: says it is
/// done writing, then drops what the client still sends, for at most
/// [`LINGER`] or [`LINGER_BYTES`], so the answer reaches it before the
/// close.
async fn linger(mut stream: TcpStream, _slot: Option<OwnedSemaphorePermit>, _visitor: Arc<Visitor>) {
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 8192];
    let mut read = 0;
    let _ = tokio::time::timeout(LINGER, async {
        while read < LINGER_BYTES {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read += n,
            }
        }
    })
    .await;
}

impl AsyncRead for Slotted {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(stream) = this.stream.as_mut() else { return gone() };
        let before = buf.filled().len();
        let polled = Pin::new(stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.read_since_write = true;
        }
        polled
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(stream) = this.stream.as_mut() else { return gone() };
        let polled = Pin::new(stream).poll_write(cx, buf);
        this.wrote(&polled);
        this.bounded(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(stream) = this.stream.as_mut() else { return gone() };
        let polled = Pin::new(stream).poll_write_vectored(cx, bufs);
        this.wrote(&polled);
        this.bounded(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(TcpStream::is_write_vectored)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(stream) = this.stream.as_mut() else { return gone() };
        let polled = Pin::new(stream).poll_flush(cx);
        this.bounded(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(stream) = self.get_mut().stream.as_mut() else { return gone() };
        Pin::new(stream).poll_shutdown(cx)
    }
}
