//! A long-lived program (an MCP stdio server) started through the
//! launcher, so that everything it starts ends with it: when seri drops it,
//! and when seri is killed outright (the launcher sees its parent go).

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::process::{Pid, PidfdFlags, pidfd_open, pidfd_send_signal};

use super::launcher::END_SIGNAL;
use super::{CallCgroup, Launcher};

/// How long dropping a [`Bounded`] waits for its launcher to end what it
/// started, before the caller's own kill.
const END_GRACE: Duration = Duration::from_secs(2);

/// A program started through the launcher, in a cgroup of its own where
/// one can be made; dropping it ends the program and everything below it.
#[derive(Debug)]
pub struct Bounded {
    /// The launcher, as a pidfd: signalling it never reaches a process
    /// that reused its pid.
    launcher: Option<OwnedFd>,
    cgroup: Option<CallCgroup>,
}

impl Launcher {
    /// The command that runs `program args…` through the launcher, under
    /// `sandbox` (the launcher's arguments of
    /// [`SandboxPolicy::launch_args`](super::SandboxPolicy::launch_args);
    /// none: unsandboxed), and its guard; call [`Bounded::started`] with
    /// the spawned pid.
    pub fn bounded<S: AsRef<OsStr>>(
        &self,
        program: &str,
        args: impl IntoIterator<Item = S>,
        sandbox: &[std::ffi::OsString],
    ) -> (tokio::process::Command, Bounded) {
        let cgroup = CallCgroup::create();
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args).arg("--parent").arg(std::process::id().to_string());
        if let Some(cgroup) = &cgroup {
            command.arg("--cgroup").arg(cgroup.path());
        }
        command.args(sandbox);
        command.arg("--").arg(program).args(args);
        (command, Bounded { launcher: None, cgroup })
    }
}

impl Bounded {
    /// The launcher started as `pid`.
    pub fn started(&mut self, pid: Option<u32>) {
        let pid = pid.and_then(|p| i32::try_from(p).ok()).and_then(Pid::from_raw);
        self.launcher = pid.and_then(|pid| match pidfd_open(pid, PidfdFlags::empty()) {
            Ok(fd) => Some(fd),
            Err(error) => {
                tracing::warn!(%error, "cannot hold the launcher's pidfd; its program ends with its process group only");
                None
            }
        });
    }

    /// Asks the launcher to end everything it started, waits a little for
    /// it, and kills the cgroup.
    pub fn end(&mut self) {
        if let Some(launcher) = self.launcher.take()
            && pidfd_send_signal(&launcher, END_SIGNAL).is_ok()
        {
            // A pidfd reads as ready once its process has exited.
            let mut fds = [PollFd::new(&launcher, PollFlags::IN)];
            let timeout = rustix::event::Timespec::try_from(END_GRACE).ok();
            if let Err(error) = poll(&mut fds, timeout.as_ref()) {
                tracing::debug!(%error, "could not wait for a launcher to end");
            }
        }
        if let Some(cgroup) = self.cgroup.take() {
            drop(cgroup);
        }
    }
}

impl Drop for Bounded {
    fn drop(&mut self) {
        self.end();
    }
}
