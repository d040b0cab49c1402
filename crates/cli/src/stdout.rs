//! Standard output that may be closed under seri: `seri sessions list | head
//! -1`, `seri -p … --output-format stream-json | head -1`. Rust ignores
//! SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, and
//! `println!` would panic on it. Writes go through here instead: a closed
//! stdout is remembered, the run in flight (if any) is cancelled so its
//! calls are settled, and seri ends quietly with status 0, as a program
//! whose reader stopped reading should.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Writes `text` and a newline to standard output. On a closed pipe it
/// records that, wakes [`closed`], and writes nothing more; other errors
/// (a full disk behind a redirect) are reported on stderr once.
pub(crate) fn line(text: &str) {
    write_with(|out| writeln!(out, "{text}"));
}

/// Writes `value` as pretty JSON and a newline to standard output as it is
/// encoded, through a buffer: a 10,000-session list is megabytes, never
/// held whole. A closed or failing stdout is handled as by [`line()`].
pub(crate) fn json_line(value: &impl serde::Serialize) {
    write_with(|out| {
        let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
        serde_json::to_writer_pretty(&mut buffered, value).map_err(std::io::Error::from)?;
        writeln!(buffered)?;
        buffered.flush()
    });
}

fn write_with(write: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>) {
    if CLOSED.load(Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = write(&mut out).and_then(|()| out.flush());
    if let Err(error) = written {
        CLOSED.store(true, Ordering::SeqCst);
        NOTIFY.notify_waiters();
        NOTIFY.notify_one();
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            report(&error);
        }
    }
}

#[allow(clippy::print_stderr)]
fn report(error: &std::io::Error) {
    eprintln!("seri: cannot write to standard output: {error}");
}

/// Whether standard output was found closed.
pub(crate) fn is_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

/// Resolves once standard output is found closed.
pub(crate) async fn closed() {
    loop {
        let notified = NOTIFY.notified();
        if is_closed() {
            return;
        }
        notified.await;
    }
}
