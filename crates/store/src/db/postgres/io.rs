//! A connection's socket, driven by the thread that waits for its answer.
//!
//! tokio-postgres splits a connection into a `Client`, whose calls are
//! futures, and the socket's side, a future that must be polled for
//! anything to reach the server. Polled on a thread of its own, every round
//! trip costs two hand-offs between threads (the request to that thread,
//! the answer back), each a wake-up the scheduler may be slow to serve:
//! on a busy machine most of a one-event append's time. [`Io`] instead
//! keeps the socket with a one-thread runtime of its own, and the thread
//! that waits for an answer polls both the socket and its request on it:
//! no hand-off, as a single-threaded tokio-postgres client has none.
//!
//! A runtime cannot be entered from inside another's (a tokio task). On a
//! multi-threaded runtime's thread (`seri serve`, the CLI) the wait steps
//! out of it first with `block_in_place`, which hands the thread's other
//! tasks to another thread (off the round trip's path; on a thread of
//! `spawn_blocking` it costs nothing). Only inside a current-thread
//! runtime, which cannot step out, a thread started for the wait polls the
//! socket while the caller waits. Statements sent without waiting ride
//! with the next wait, which is when the socket is next polled;
//! [`Io::flush`] writes them out at once.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// The socket's side of a connection, as tokio-postgres gives it.
pub(crate) type Socket = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send>>;

/// A connection's socket and the runtime it is registered with.
pub(crate) struct Io {
    /// `None` only while dropping (shut down without blocking).
    runtime: Option<tokio::runtime::Runtime>,
    /// `None` once the connection ended: the client's calls fail as closed.
    socket: Mutex<Option<Socket>>,
}

impl std::fmt::Debug for Io {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Io").finish_non_exhaustive()
    }
}

/// Whether this thread may block on the connection's runtime: outside
/// any runtime, or on a multi-threaded one's thread, stepping out of it
/// ([`blocking`]). Inside a current-thread runtime it cannot tell a thread
/// that may block (one of `spawn_blocking`) from one running its tasks.
pub(crate) fn may_block() -> bool {
    match tokio::runtime::Handle::try_current() {
        Err(_) => true,
        Ok(handle) => handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread,
    }
}

/// Runs `f`, which blocks, where [`may_block`]: on a multi-threaded
/// runtime's thread, stepped out of it (its tasks move to another thread
/// meanwhile), so `f` may block on another runtime.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    if tokio::runtime::Handle::try_current().is_ok() { tokio::task::block_in_place(f) } else { f() }
}

/// Polls the socket once; drops it once the connection ended.
fn poll_socket(socket: &mut Option<Socket>, cx: &mut Context<'_>) {
    if let Some(io) = socket.as_mut()
        && let Poll::Ready(ended) = io.as_mut().poll(cx)
    {
        if let Err(e) = ended {
            tracing::warn!(error = %e, "the PostgreSQL connection ended");
        }
        *socket = None;
    }
}

impl Io {
    /// Connects with `connect` on a new one-thread runtime.
    pub(crate) fn connect<C>(
        connect: impl Future<Output = Result<(C, Socket), tokio_postgres::Error>> + Send,
    ) -> Result<(C, Io), ConnectError>
    where
        C: Send,
    {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ConnectError::Runtime)?;
        let connected = if may_block() {
            blocking(|| runtime.block_on(connect))
        } else {
            std::thread::scope(|scope| scope.spawn(|| runtime.block_on(connect)).join())
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        match connected {
            Ok((client, socket)) => Ok((client, Io { runtime: Some(runtime), socket: Mutex::new(Some(socket)) })),
            Err(e) => {
                // Dropped inside a tokio task too (a server out of reach is
                // tried again from there), where a runtime may not block.
                runtime.shutdown_background();
                Err(ConnectError::Postgres(e))
            }
        }
    }

    fn socket(&self) -> MutexGuard<'_, Option<Socket>> {
        // The socket is never left half-changed by a panic.
        self.socket.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        // Taken only by `drop`.
        self.runtime.as_ref().unwrap_or_else(|| unreachable!("the runtime is there until the connection drops"))
    }

    /// Waits for `op`, polling the socket meanwhile.
    pub(crate) fn wait<T>(&self, op: impl Future<Output = T>) -> T {
        let mut guard = self.socket();
        let socket: &mut Option<Socket> = &mut guard;
        let mut op = pin!(op);
        if may_block() {
            let runtime = self.runtime();
            return blocking(|| {
                runtime.block_on(std::future::poll_fn(|cx| {
                    if let Poll::Ready(value) = op.as_mut().poll(cx) {
                        return Poll::Ready(value);
                    }
                    // The socket's progress (an answer, or its end) wakes
                    // this task again, and the request is polled again.
                    poll_socket(socket, cx);
                    Poll::Pending
                }))
            });
        }
        let (done, waker) = (AtomicBool::new(false), Mutex::new(None::<Waker>));
        let runtime = self.runtime();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                runtime.block_on(std::future::poll_fn(|cx| {
                    *waker.lock().unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
                    if done.load(Ordering::SeqCst) {
                        return Poll::Ready(());
                    }
                    poll_socket(socket, cx);
                    if socket.is_none() { Poll::Ready(()) } else { Poll::Pending }
                }));
            });
            let value = futures_executor::block_on(op);
            done.store(true, Ordering::SeqCst);
            if let Some(waker) = waker.lock().unwrap_or_else(PoisonError::into_inner).take() {
                waker.wake();
            }
            value
        })
    }

    /// Whether this thread can [`Io::flush`] (see [`may_block`]).
    pub(crate) fn can_flush(&self) -> bool {
        may_block()
    }

    /// Writes out what was sent without waiting (a read's `COMMIT`), so the
    /// server has it now rather than with the connection's next wait; its
    /// answer is read then. Only where [`Io::can_flush`].
    pub(crate) fn flush(&self) {
        let mut guard = self.socket();
        let socket: &mut Option<Socket> = &mut guard;
        let runtime = self.runtime();
        blocking(|| {
            runtime.block_on(std::future::poll_fn(|cx| {
                poll_socket(socket, cx);
                Poll::Ready(())
            }))
        });
    }

    /// Reads what the server sent since the last wait, so a connection it
    /// closed meanwhile (a restart) is known to be closed before it is used.
    pub(crate) fn probe(&self) {
        if !may_block() {
            return;
        }
        let mut guard = self.socket();
        let socket: &mut Option<Socket> = &mut guard;
        let mut polls = 0;
        let runtime = self.runtime();
        blocking(|| {
            runtime.block_on(std::future::poll_fn(|cx| {
                poll_socket(socket, cx);
                polls += 1;
                if polls == 3 || socket.is_none() {
                    return Poll::Ready(());
                }
                // Once more after the runtime looked at the socket's events.
                cx.waker().wake_by_ref();
                Poll::Pending
            }))
        });
    }
}

impl Drop for Io {
    fn drop(&mut self) {
        self.socket().take();
        // Dropped inside a tokio task too, where a runtime may not block.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Why a connection could not be made.
pub(crate) enum ConnectError {
    Postgres(tokio_postgres::Error),
    Runtime(std::io::Error),
}
