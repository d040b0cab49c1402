//! The bash command's processes, killed as a whole.
//!
//! The command starts in a new process group whose id is its own pid, so
//! everything it starts can be killed with one signal. A process can leave
//! the group on purpose (`setsid`, a daemonising server), so every process of
//! the call also inherits a mark in its environment ([`CALL_MARK_ENV`], a
//! value no other call has): killing the call kills the group, then every
//! process of ours whose environment carries the mark, wherever it moved.
//! Only a process that scrubs its own environment after leaving the group
//! escapes; the README's security model says so.
//!
//! [`ProcessGroup`] kills when asked and, while still armed, when dropped:
//! a run loop that drops the tool's future (a cancelled turn, a seri stopped
//! by SIGTERM or SIGHUP) kills the command's whole tree.
//!
//! When the command runs through seri's launcher (see
//! [`crate::sandbox::launcher`]) the launcher leads the group and is a
//! child subreaper: every process the command starts stays below it, and
//! it kills them all when the command exits or when asked
//! ([`END_SIGNAL`]); it is asked rather than killed, since killing it
//! would hand its orphans to init. The call's cgroup, when seri could make
//! one, is killed as a whole besides: nothing in it escapes.

use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};

use crate::sandbox::CallCgroup;
use crate::sandbox::launcher::END_SIGNAL;

/// The environment variable that marks a bash call's processes.
pub(crate) const CALL_MARK_ENV: &str = "SERI_TOOL_CALL_MARK";

/// How many times the marked processes are looked for: a process that
/// forks while it is being killed leaves a child for the next pass.
const KILL_PASSES: usize = 3;

/// A mark no other call of any seri process has: this process's id, a
/// counter, and the time.
pub(crate) fn new_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{}-{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A bash call's processes, to kill once.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    id: Option<Pid>,
    mark: String,
    /// The leader is seri's launcher: asked to end, never killed first.
    launcher: bool,
    cgroup: Option<CallCgroup>,
}

impl ProcessGroup {
    /// The group led by the process `leader`, started with `process_group(0)`
    /// and `mark` in its environment; `launcher` when the leader is seri's
    /// launcher, with the call's `cgroup` if it has one.
    pub(crate) fn led_by(leader: Option<u32>, mark: String, launcher: bool, cgroup: Option<CallCgroup>) -> Self {
        // Never 0 (our own group) or 1 (every process we may signal).
        let id = leader.and_then(|pid| i32::try_from(pid).ok()).filter(|pid| *pid > 1).and_then(Pid::from_raw);
        Self { id, mark, launcher, cgroup }
    }

    /// The leader was reaped. A launcher has ended everything below it
    /// before it exits, and its pid may now be reused: it is never
    /// signalled again.
    pub(crate) fn leader_reaped(&mut self) {
        if self.launcher {
            self.id = None;
        }
    }

    /// Kills every process in the group (or asks the launcher to), the
    /// call's cgroup, and every marked process that left the group.
    /// Processes already gone are not an error.
    pub(crate) fn kill(&mut self) {
        let signalled = match self.id.take() {
            Some(id) if self.launcher => kill_process(id, END_SIGNAL).map(|()| id),
            Some(id) => kill_process_group(id, Signal::KILL).map(|()| id),
            None => Ok(Pid::INIT),
        };
        if let Err(error) = signalled
            && error != rustix::io::Errno::SRCH
        {
            tracing::warn!(%error, "could not end the bash command's process group");
        }
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        for _ in 0..KILL_PASSES {
            if kill_marked(&self.mark) == 0 {
                break;
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends SIGKILL to every process whose environment holds `CALL_MARK_ENV=mark`;
/// returns how many it found. Processes of other users cannot be read and
/// are never ours.
fn kill_marked(mark: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let wanted = format!("{CALL_MARK_ENV}={mark}");
    let mut found = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if !environ.split(|b| *b == 0).any(|var| var == wanted.as_bytes()) {
            continue;
        }
        if let Some(pid) = Pid::from_raw(pid) {
            found += 1;
            if let Err(error) = kill_process(pid, Signal::KILL)
                && error != rustix::io::Errno::SRCH
            {
                tracing::warn!(pid = pid.as_raw_nonzero().get(), %error, "could not kill a process a bash call left");
            }
        }
    }
    found
}
