//! Running one hook's command, contained and bounded.
//!
//! - It starts through [`Sandbox::contain`], as `bash` starts the model's
//!   commands: in the run's sandbox, through seri's launcher, without the
//!   secret variables, in a process group (and cgroup) of its own.
//! - One timeout, started before the spawn, covers spawning, writing the
//!   event to its standard input, running and reading its output. The
//!   input is written while the output is read, so a hook that never reads
//!   its input wedges nothing (a broken pipe is not an error).
//! - The run's cancellation ends it at once.
//! - Whichever way it ends (exit, timeout, cancellation, a dropped future),
//!   its guard ends everything it started.
//! - Each output stream is read to its end but only its start and end are
//!   kept, as `bash`'s are ([`Capture`]); standard output is also kept whole
//!   up to [`ANSWER_BYTES`], so that a JSON answer can be read.

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use seri_tools::coding::bash::capture::Capture;
use seri_tools::{Sandbox, Secrets};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::watch;

use super::{ANSWER_BYTES, HookCommand, HookPlace, Said};

/// How one hook's command ended.
#[derive(Debug)]
pub(super) enum Ran {
    /// It exited (`code` is `None` when a signal ended it).
    Exited {
        /// Its exit code.
        code: Option<i32>,
        /// What it printed on standard output.
        stdout: Said,
        /// What it printed on standard error.
        stderr: Said,
    },
    /// It ran past its timeout and was ended, with all it started.
    TimedOut,
    /// The run was cancelled; it was ended, with all it started.
    Cancelled,
    /// It could not be started: the sandbox refused (it cannot be applied
    /// and the policy refuses to run without it), or the spawn failed.
    CouldNotStart(String),
}

/// Runs `hook` with `input` on its standard input, in `cwd`, for the run
/// `place` names, contained by `sandbox`.
pub(super) async fn run_one(
    hook: &HookCommand,
    input: &Value,
    cwd: &Path,
    sandbox: &Sandbox,
    secrets: &Secrets,
    place: &HookPlace<'_>,
) -> Ran {
    // The timeout covers everything from here on, the spawn included.
    let deadline = tokio::time::Instant::now() + hook.timeout;
    let mut contained = match sandbox.contain(place.run, cwd, secrets, "sh", &["-c", &hook.command]) {
        Ok(contained) => contained,
        Err(refused) => return Ran::CouldNotStart(refused.to_string()),
    };
    if let Some(warning) = contained.warning() {
        tracing::warn!(command = %hook.command, warning, "a hook runs without its sandbox, as configured");
    }
    contained
        .command()
        .env("CLAUDE_PROJECT_DIR", cwd)
        .env("SERI_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, mut guard) = match contained.spawn() {
        Ok(started) => started,
        Err(error) => return Ran::CouldNotStart(format!("sh could not be started: {error}")),
    };
    let written = format!("{input}\n").into_bytes();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (mut out, mut err) = (Answer::default(), Capture::default());
    let mut status = None;
    let ended = {
        let work = async {
            let write = async move {
                if let Some(mut stdin) = stdin {
                    // A hook that does not read its input is not an error;
                    // dropping the pipe afterwards is its end of file.
                    let _ = stdin.write_all(&written).await;
                }
            };
            let exited = async {
                let exit = child.wait().await;
                // It is gone: end what it left, so nothing holds the pipes
                // open (the input's included) or outlives it.
                guard.exited();
                status = Some(exit);
            };
            tokio::join!(write, exited, out.read_all(stdout), err.read_all(stderr));
        };
        tokio::select! {
            () = work => Ended::Finished,
            () = tokio::time::sleep_until(deadline) => Ended::TimedOut,
            () = cancelled(place.cancel) => Ended::Cancelled,
        }
    };
    match (ended, status) {
        (Ended::Finished, Some(Ok(status))) => {
            Ran::Exited { code: status.code(), stdout: out.said(), stderr: said(&err) }
        }
        (Ended::Finished, Some(Err(error))) => Ran::CouldNotStart(format!("it could not be waited for: {error}")),
        (Ended::Finished, None) => Ran::CouldNotStart("it ended without an exit status".to_owned()),
        (Ended::TimedOut, _) => {
            guard.end(&mut child).await;
            Ran::TimedOut
        }
        (Ended::Cancelled, _) => {
            // At once: the launcher ends what is below it, and the runtime
            // reaps it (a child started without one is killed on drop).
            guard.end_now();
            Ran::Cancelled
        }
    }
}

/// Which came first.
enum Ended {
    Finished,
    TimedOut,
    Cancelled,
}

/// Resolves when `cancel` turns true; never, without one (or once nobody
/// can cancel any more).
async fn cancelled(cancel: Option<&watch::Receiver<bool>>) {
    if let Some(cancel) = cancel {
        let mut cancel = cancel.clone();
        if cancel.wait_for(|c| *c).await.is_ok() {
            return;
        }
    }
    std::future::pending::<()>().await;
}

/// Standard output: capped as a tool's ([`Capture`]), and kept whole while
/// it fits in [`ANSWER_BYTES`], to be read as JSON.
#[derive(Debug, Default)]
struct Answer {
    shown: Capture,
    whole: Vec<u8>,
    over: bool,
}

impl Answer {
    /// Reads `reader` to its end (stops quietly on a read error).
    async fn read_all(&mut self, reader: Option<impl AsyncRead + Unpin>) {
        let Some(mut reader) = reader else { return };
        let mut buffer = [0u8; 8 * 1024];
        while let Ok(n @ 1..) = reader.read(&mut buffer).await {
            self.shown.push(&buffer[..n]);
            if self.over {
                continue;
            }
            if self.whole.len() + n <= ANSWER_BYTES {
                self.whole.extend_from_slice(&buffer[..n]);
            } else {
                self.over = true;
                self.whole = Vec::new();
            }
        }
    }

    fn said(self) -> Said {
        let whole = (!self.over).then(|| String::from_utf8_lossy(&self.whole).into_owned());
        Said { shown: self.shown.render(), total: self.shown.total(), whole }
    }
}

/// A stream kept only capped.
fn said(capture: &Capture) -> Said {
    Said { shown: capture.render(), total: capture.total(), whole: None }
}
