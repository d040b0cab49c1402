//! The bash command's process group, killed as a whole.
//!
//! The command starts in a new process group whose id is its own pid, so
//! everything it starts (unless it leaves the group on purpose, with
//! `setsid`) can be killed with one signal. [`ProcessGroup`] sends SIGKILL
//! when asked and, while still armed, when dropped: a run loop that drops
//! the tool's future on cancellation kills the command's whole tree.

use rustix::process::{Pid, Signal, kill_process_group};

/// A process group to kill once.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    id: Option<Pid>,
}

impl ProcessGroup {
    /// The group led by the process `leader`, started with `process_group(0)`.
    pub(crate) fn led_by(leader: Option<u32>) -> Self {
        // Never 0 (our own group) or 1 (every process we may signal).
        let id = leader.and_then(|pid| i32::try_from(pid).ok()).filter(|pid| *pid > 1).and_then(Pid::from_raw);
        Self { id }
    }

    /// Kills every process in the group, once. A group that is already
    /// gone is not an error.
    pub(crate) fn kill(&mut self) {
        if let Some(id) = self.id.take()
            && let Err(error) = kill_process_group(id, Signal::KILL)
            && error != rustix::io::Errno::SRCH
        {
            tracing::warn!(group = id.as_raw_nonzero().get(), %error, "could not kill the bash command's process group");
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
