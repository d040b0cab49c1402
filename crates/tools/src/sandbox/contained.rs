//! A command seri runs for the person rather than for the model (a hook),
//! started exactly as `bash` starts the model's commands, because what it
//! runs may be a script the model wrote (`./scripts/check-tests.sh`):
//!
//! - through the launcher, in the run's sandbox ([`Sandbox::start`], the
//!   same policy, session choices and refusal as `bash`);
//! - without the secret variables `bash` runs without
//!   ([`Secrets::removed_from_env`]);
//! - in a process group of its own, with the call's mark in its
//!   environment and, where one can be made, in a cgroup of its own.
//!
//! [`Sandbox::contain`] gives a [`Contained`]: the command to finish
//! setting up (standard streams, extra variables) and spawn. Spawning it
//! gives the child and a [`ContainedGuard`], which ends the command and
//! everything it started (the launcher is asked to end what is below it,
//! the cgroup is killed, marked processes that left the group are killed)
//! when asked, once the command exited (what it left behind), and when
//! dropped. If seri itself is killed, the launcher sees its parent go and
//! ends everything below it.

use std::path::Path;
use std::time::Duration;

use super::{CallCgroup, Refused, Sandbox};
use crate::coding::bash::group::{self, ProcessGroup};
use crate::run::RunContext;
use crate::secrets::Secrets;

/// How long [`ContainedGuard::end`] waits for a launcher asked to end its
/// command before killing the launcher itself.
pub const END_GRACE: Duration = Duration::from_secs(10);

/// A command set up to run in a run's sandbox; see the module docs.
#[derive(Debug)]
pub struct Contained {
    command: tokio::process::Command,
    launched: bool,
    cgroup: Option<CallCgroup>,
    mark: String,
    warning: Option<String>,
}

impl Sandbox {
    /// How to run `program args…` in `cwd` for a call of `run`, contained
    /// as `bash`'s commands are: in the run's sandbox through the launcher,
    /// without the variables `secrets` keeps from commands, in a process
    /// group of its own. A refusal is the sandbox's: it cannot be applied
    /// here and the policy refuses to run without it.
    pub fn contain(
        &self,
        run: &RunContext,
        cwd: &Path,
        secrets: &Secrets,
        program: &str,
        args: &[&str],
    ) -> Result<Contained, Refused> {
        let mark = group::new_mark();
        let start = self.start(run, cwd, (group::CALL_MARK_ENV, &mark), program, args)?;
        let mut command = start.command;
        for variable in secrets.removed_from_env() {
            command.env_remove(variable);
        }
        // A launcher is asked to end (it kills what is below it first);
        // killing it would hand its orphans to init.
        command.process_group(0).kill_on_drop(!start.launched);
        Ok(Contained { command, launched: start.launched, cgroup: start.cgroup, mark, warning: start.warning })
    }
}

impl Contained {
    /// The command, to set its standard streams and extra variables. Its
    /// process group and program are the sandbox's: leave them.
    pub fn command(&mut self) -> &mut tokio::process::Command {
        &mut self.command
    }

    /// Whether it runs through seri's launcher.
    pub fn launched(&self) -> bool {
        self.launched
    }

    /// A warning to pass on: the sandbox could not be applied and the
    /// policy lets the command run without it.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Starts it: the child, and the guard that ends it and everything it
    /// started.
    pub fn spawn(self) -> std::io::Result<(tokio::process::Child, ContainedGuard)> {
        let Contained { mut command, launched, cgroup, mark, .. } = self;
        let child = command.spawn()?;
        let group = ProcessGroup::led_by(child.id(), mark, launched, cgroup);
        Ok((child, ContainedGuard { group }))
    }
}

/// Ends a [`Contained`] command and everything it started: when asked, and
/// when dropped.
#[derive(Debug)]
pub struct ContainedGuard {
    group: ProcessGroup,
}

impl ContainedGuard {
    /// The command exited and was reaped (`Child::wait` returned): ends
    /// whatever it left running, so nothing holds its output open or
    /// outlives it.
    pub fn exited(&mut self) {
        self.group.leader_reaped();
        self.group.kill();
    }

    /// Ends the command and everything it started now, without waiting
    /// (a cancelled run: the launcher ends what is below it, and the
    /// runtime reaps it).
    pub fn end_now(&mut self) {
        self.group.kill();
    }

    /// Ends the command and everything it started, and reaps `child` (its
    /// leader): a launcher that does not end within [`END_GRACE`] is
    /// killed.
    pub async fn end(&mut self, child: &mut tokio::process::Child) {
        self.group.kill();
        if tokio::time::timeout(END_GRACE, child.wait()).await.is_err() {
            tracing::warn!("the launcher did not end its command in time; killing it");
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
        self.group.leader_reaped();
    }
}
