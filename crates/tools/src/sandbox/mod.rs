//! What bounds the commands `bash` runs and the MCP servers seri starts,
//! once the permission layer has let them run.
//!
//! - [`SandboxPolicy`]: the mode ([`SandboxMode`]: `read-only`,
//!   `workspace-write`, the default, or `full-access`), whether the network
//!   is on, the extra writable paths, the hidden (secret) places, and what
//!   to do on a kernel that cannot enforce it ([`WhenUnavailable`]).
//! - [`Sandbox`]: the policy of a runtime, with each session's own mode
//!   and network (the REPL's `/sandbox`, the API's `PUT …/sandbox`: a
//!   `sandbox_changed` event, read back from the store through a
//!   [`ChoiceLookup`]), and the [`Launcher`] that runs commands under it.
//! - [`launcher`]: the process seri starts in front of a command (seri
//!   re-executing itself, `seri __launch`), which joins the call's cgroup,
//!   becomes a child subreaper, applies the Landlock rules ([`rules`]) to
//!   itself, and runs the command; whatever the command starts ends with
//!   it.
//! - [`Contained`]: a command of the person's (a hook) started as `bash`'s
//!   are, in the run's sandbox, with its [`ContainedGuard`].
//!
//! A sandbox is never dropped silently: on a kernel without Landlock (or
//! without its network rules, when the network is off) a call is refused
//! saying why, or, when the configuration chose
//! [`WhenUnavailable::Unsandboxed`], runs with a warning in its result.

mod bounded;
mod cgroup;
mod contained;
pub mod launcher;
mod reap;
pub mod rules;
mod syscalls;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use seri_core::{AgentId, RunId, SessionId, SessionInfo};

use crate::run::{RunContext, RunKind};

pub use self::bounded::Bounded;
pub(crate) use self::cgroup::CallCgroup;
pub use self::contained::{Contained, ContainedGuard, END_GRACE};
pub use self::rules::{Unenforceable, probe};
pub use seri_core::SandboxMode;

/// A name that is not a choice, with the names that are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not one of: {known}")]
pub struct UnknownName {
    /// What was given (cut).
    pub given: String,
    /// The names known, comma-separated.
    pub known: &'static str,
}

/// What to do when the kernel cannot enforce the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenUnavailable {
    /// Refuse the call, saying why (the default).
    #[default]
    Refuse,
    /// Run it without a sandbox, with a warning in its result and the log.
    Unsandboxed,
}

impl WhenUnavailable {
    /// `refuse` or `unsandboxed`.
    pub fn as_str(self) -> &'static str {
        match self {
            WhenUnavailable::Refuse => "refuse",
            WhenUnavailable::Unsandboxed => "unsandboxed",
        }
    }
}

impl FromStr for WhenUnavailable {
    type Err = UnknownName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "refuse" => Ok(WhenUnavailable::Refuse),
            "unsandboxed" => Ok(WhenUnavailable::Unsandboxed),
            other => Err(UnknownName { given: crate::error::bounded(other.to_owned()), known: "refuse, unsandboxed" }),
        }
    }
}

/// What a command may reach.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxPolicy {
    /// How much it may touch.
    pub mode: SandboxMode,
    /// Whether it may open TCP connections and listeners.
    pub network: bool,
    /// Folders it may write besides the workspace and the temporary folder
    /// (`workspace-write` only).
    pub writable: Vec<PathBuf>,
    /// Places it may neither read nor write (`~/.ssh`, `~/.aws`, …).
    pub hidden: Vec<PathBuf>,
    /// Places it may read but never write, even inside a writable folder
    /// (the profile's `hooks/`, when the profile is in the workspace).
    pub read_only: Vec<PathBuf>,
    /// What to do on a kernel that cannot enforce it.
    pub when_unavailable: WhenUnavailable,
}

/// How seri runs its launcher: the program (seri itself) and the
/// arguments that select the launcher (`__launch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    /// The program.
    pub program: PathBuf,
    /// The arguments before the launcher's own.
    pub args: Vec<OsString>,
}

/// One session's choices over the runtime's policy, as its events left
/// them (`SessionInfo.sandboxMode` and `sandboxNetwork`, folded from its
/// `sandbox_changed` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionSandbox {
    /// Its mode, when it chose one.
    pub mode: Option<SandboxMode>,
    /// Its network, when it chose.
    pub network: Option<bool>,
}

impl SessionSandbox {
    /// The choices `info`, a session's view, holds.
    pub fn of(info: &SessionInfo) -> Self {
        Self { mode: info.sandbox_mode, network: info.sandbox_network }
    }
}

/// Where a run of an agent belongs: its session, and the run that
/// delegated it (for a child). The caller reads it from its store.
pub type RunLookup = dyn Fn(&AgentId, RunId) -> Option<(SessionId, Option<RunId>)> + Send + Sync;

/// A session's choices as stored: the caller reads them from its store (the
/// session's view, [`SessionSandbox::of`]), so every process on the
/// database, a restarted one too, applies the same. A session the store
/// does not hold has none; an error says why they could not be read.
pub type ChoiceLookup = dyn Fn(&AgentId, SessionId) -> Result<SessionSandbox, String> + Send + Sync;

/// How many delegations up a child looks for a session's choices.
const MAX_ANCESTRY: usize = 16;

/// A runtime's sandbox: the policy, where each session's choices are read,
/// and the launcher. `Sandbox::default()` is no sandbox and no launcher
/// (commands run as the user, as a library embedding the tools gets them).
/// It keeps no choice of its own: without a [`ChoiceLookup`] every session
/// runs under the runtime's policy.
pub struct Sandbox {
    policy: SandboxPolicy,
    launcher: Option<Launcher>,
    choices: Option<Arc<ChoiceLookup>>,
    runs: Option<Arc<RunLookup>>,
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sandbox")
            .field("policy", &self.policy)
            .field("launcher", &self.launcher)
            .finish_non_exhaustive()
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new(SandboxPolicy { mode: SandboxMode::FullAccess, network: true, ..SandboxPolicy::default() }, None)
    }
}

impl Sandbox {
    /// `policy` for every session, run through `launcher`.
    pub fn new(policy: SandboxPolicy, launcher: Option<Launcher>) -> Self {
        Self { policy, launcher, choices: None, runs: None }
    }

    /// The same sandbox, reading each session's choices (`/sandbox`, the
    /// API's `PUT …/sandbox`) through `choices`, from the store that holds
    /// them.
    pub fn with_choice_lookup(mut self, choices: Arc<ChoiceLookup>) -> Self {
        self.choices = Some(choices);
        self
    }

    /// The same sandbox, finding through `runs` the session a delegated
    /// child's parent run belongs to: a child session with no choice of its
    /// own takes its parent session's (a `/sandbox read-only` session's
    /// children are read-only too).
    pub fn with_run_lookup(mut self, runs: Arc<RunLookup>) -> Self {
        self.runs = Some(runs);
        self
    }

    /// The policy a call of `run` runs under: for the mode and for the
    /// network each, its session's choice, else that of the nearest session
    /// up its delegations that made one, else the runtime's. Refused when a
    /// choice cannot be read: a call never runs under a policy its session
    /// did not choose.
    pub fn policy_for_run(&self, run: &RunContext) -> Result<SandboxPolicy, Refused> {
        let agent = &run.agent_id;
        let mut session = run.session_id;
        let mut parent = run.run.and_then(|r| match r.kind {
            RunKind::DelegatedChild { parent_run_id, .. } | RunKind::TypedChild { parent_run_id, .. } => {
                Some(parent_run_id)
            }
            RunKind::Interactive | RunKind::Script => None,
        });
        let mut chosen = SessionSandbox::default();
        for _ in 0..MAX_ANCESTRY {
            let here = self.chosen(agent, session).map_err(|why| Refused::Unread { why })?;
            chosen = SessionSandbox { mode: chosen.mode.or(here.mode), network: chosen.network.or(here.network) };
            if chosen.mode.is_some() && chosen.network.is_some() {
                break;
            }
            let Some((above, next)) = parent.zip(self.runs.as_ref()).and_then(|(p, runs)| runs(agent, p)) else {
                break;
            };
            session = above;
            parent = next;
        }
        Ok(self.policy_for(chosen))
    }

    /// `session`'s own choices, as stored; none without a lookup.
    fn chosen(&self, agent: &AgentId, session: SessionId) -> Result<SessionSandbox, String> {
        match &self.choices {
            Some(choices) => choices(agent, session),
            None => Ok(SessionSandbox::default()),
        }
    }

    /// The policy every session starts with.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The launcher, if commands run through one.
    pub fn launcher(&self) -> Option<&Launcher> {
        self.launcher.as_ref()
    }

    /// The policy of a session that made the choices `chosen` (read from its
    /// view, [`SessionSandbox::of`]): the runtime's, with those choices.
    pub fn policy_for(&self, chosen: SessionSandbox) -> SandboxPolicy {
        SandboxPolicy {
            mode: chosen.mode.unwrap_or(self.policy.mode),
            network: chosen.network.unwrap_or(self.policy.network),
            ..self.policy.clone()
        }
    }

    /// The sandbox of a session that made the choices `chosen`, in words,
    /// for `/status`: the mode, the network, and whether this kernel
    /// enforces it.
    pub fn describe(&self, chosen: SessionSandbox) -> String {
        let policy = self.policy_for(chosen);
        if policy.mode == SandboxMode::FullAccess {
            return "full-access (no sandbox)".to_owned();
        }
        let network = if policy.network { "network on" } else { "network off" };
        let enforced = match (&self.launcher, enforceable(policy.network)) {
            (None, _) => {
                format!("not enforced: seri runs commands without its launcher ({})", policy.when_unavailable.as_str())
            }
            (Some(_), Ok(())) => "Landlock".to_owned(),
            (Some(_), Err(e)) => format!("not enforced: {e} ({})", policy.when_unavailable.as_str()),
        };
        format!("{}, {network} ({enforced})", policy.mode)
    }
}

/// [`probe`], asked of the kernel once per network setting.
pub(crate) fn enforceable(network: bool) -> Result<(), String> {
    static WITH: OnceLock<Result<(), String>> = OnceLock::new();
    static WITHOUT: OnceLock<Result<(), String>> = OnceLock::new();
    let cell = if network { &WITH } else { &WITHOUT };
    cell.get_or_init(|| probe(network).map_err(|e| e.to_string())).clone()
}

/// How a command is started: through the launcher or straight, and what
/// the call must say about it.
#[derive(Debug)]
pub(crate) struct Start {
    /// The command to spawn.
    pub(crate) command: tokio::process::Command,
    /// Whether it is the launcher (signalled with
    /// [`launcher::END_SIGNAL`] rather than killed).
    pub(crate) launched: bool,
    /// The call's cgroup, when one could be made.
    pub(crate) cgroup: Option<CallCgroup>,
    /// A warning for the result: the sandbox could not be applied.
    pub(crate) warning: Option<String>,
}

/// Why a command was not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The sandbox could not be applied and the policy refuses to run
    /// without.
    #[error(
        "nothing ran: commands run sandboxed ({mode}) and {why}. Run it in full-access (`/sandbox full-access`, `--sandbox full-access`), or set sandbox.whenUnavailable to \"unsandboxed\" in config.json to run commands without a sandbox, with a warning"
    )]
    Unenforceable {
        /// The mode that could not be applied.
        mode: SandboxMode,
        /// Why.
        why: String,
    },
    /// The session's sandbox choices could not be read from the store: the
    /// command would not know what it may touch.
    #[error("nothing ran: the session's sandbox could not be read ({why}); try again")]
    Unread {
        /// What the store said.
        why: String,
    },
}

impl Sandbox {
    /// How to start `program args…` in `cwd` for a call of `run`, with
    /// `mark` (`NAME=VALUE`) in its environment.
    pub(crate) fn start(
        &self,
        run: &RunContext,
        cwd: &Path,
        mark: (&str, &str),
        program: &str,
        args: &[&str],
    ) -> Result<Start, Refused> {
        let policy = self.policy_for_run(run)?;
        let sandboxed = policy.mode != SandboxMode::FullAccess;
        let unavailable = match (&self.launcher, sandboxed) {
            (_, false) => None,
            (None, true) => Some("seri runs commands without its launcher".to_owned()),
            (Some(_), true) => enforceable(policy.network).err(),
        };
        let warning = match (unavailable, policy.when_unavailable) {
            (None, _) => None,
            (Some(why), WhenUnavailable::Refuse) => return Err(Refused::Unenforceable { mode: policy.mode, why }),
            (Some(why), WhenUnavailable::Unsandboxed) => {
                tracing::warn!(mode = %policy.mode, %why, "running a command without its sandbox, as configured");
                Some(format!("warning: this ran without a sandbox ({} was asked): {why}", policy.mode))
            }
        };
        let Some(launcher) = &self.launcher else {
            let mut command = tokio::process::Command::new(program);
            command.args(args).current_dir(cwd).env(mark.0, mark.1);
            return Ok(Start { command, launched: false, cgroup: None, warning });
        };
        let cgroup = CallCgroup::create();
        let mut command = tokio::process::Command::new(&launcher.program);
        command.args(&launcher.args).current_dir(cwd);
        command.arg("--parent").arg(std::process::id().to_string());
        command.arg("--mark").arg(format!("{}={}", mark.0, mark.1));
        if let Some(cgroup) = &cgroup {
            command.arg("--cgroup").arg(cgroup.path());
        }
        if warning.is_none() {
            command.args(policy.launch_args(cwd));
        }
        command.arg("--").arg(program).args(args);
        Ok(Start { command, launched: true, cgroup, warning })
    }

    /// The launcher's arguments for an MCP stdio server started in `cwd`:
    /// the runtime's mode with the network on (a server's work is often
    /// over the network; its environment is only what its configuration
    /// gives, and the hidden places stay hidden). Empty in `full-access`,
    /// or when the sandbox cannot be applied and the policy runs such
    /// programs unsandboxed; refused when it refuses them.
    pub fn server_args(&self, cwd: &Path) -> Result<Vec<OsString>, Refused> {
        let policy = SandboxPolicy { network: true, ..self.policy.clone() };
        if policy.mode == SandboxMode::FullAccess {
            return Ok(Vec::new());
        }
        let unavailable = match &self.launcher {
            None => Some("seri runs commands without its launcher".to_owned()),
            Some(_) => enforceable(true).err(),
        };
        match (unavailable, policy.when_unavailable) {
            (None, _) => Ok(policy.launch_args(cwd)),
            (Some(why), WhenUnavailable::Refuse) => Err(Refused::Unenforceable { mode: policy.mode, why }),
            (Some(why), WhenUnavailable::Unsandboxed) => {
                tracing::warn!(mode = %policy.mode, %why, "starting an MCP server without its sandbox, as configured");
                Ok(Vec::new())
            }
        }
    }
}

impl SandboxPolicy {
    /// The launcher's arguments that put a program started in `cwd` under
    /// this policy: `--sandbox`, each `--write` root (the workspace, the
    /// temporary folder and the configured ones, in `workspace-write`),
    /// each `--hide` and `--read-only` place, and `--network` when it is on. Empty in
    /// `full-access`.
    pub fn launch_args(&self, cwd: &Path) -> Vec<OsString> {
        if self.mode == SandboxMode::FullAccess {
            return Vec::new();
        }
        let mut out = vec![OsString::from("--sandbox")];
        if self.mode == SandboxMode::WorkspaceWrite {
            let temp = std::env::temp_dir();
            for path in [cwd, temp.as_path()].into_iter().chain(self.writable.iter().map(PathBuf::as_path)) {
                out.extend([OsString::from("--write"), path.as_os_str().to_owned()]);
            }
        }
        for path in &self.hidden {
            out.extend([OsString::from("--hide"), path.as_os_str().to_owned()]);
        }
        for path in &self.read_only {
            out.extend([OsString::from("--read-only"), path.as_os_str().to_owned()]);
        }
        if self.network {
            out.push(OsString::from("--network"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunRef;

    fn run(session: u8, id: u8, kind: RunKind) -> RunContext {
        RunContext {
            session_id: SessionId::from_bytes([session; 16]),
            agent_id: seri_core::AgentId::local(),
            strategy: Default::default(),
            run: Some(RunRef { id: RunId::from_bytes([id; 16]), kind, parked_children: 0 }),
        }
    }

    #[test]
    fn a_child_takes_the_nearest_choice_up_its_delegations() {
        // Session 1 runs run 1, which delegates run 2 (session 2), which
        // delegates run 3 (session 3).
        let lookup: Arc<RunLookup> = Arc::new(|_: &AgentId, id: RunId| match id.as_bytes()[0] {
            1 => Some((SessionId::from_bytes([1; 16]), None)),
            2 => Some((SessionId::from_bytes([2; 16]), Some(RunId::from_bytes([1; 16])))),
            _ => None,
        });
        // The store's choices, as a map the test changes.
        let stored: Arc<std::sync::Mutex<std::collections::HashMap<u8, SessionSandbox>>> = Arc::default();
        let read = stored.clone();
        let choices: Arc<ChoiceLookup> = Arc::new(move |_: &AgentId, session: SessionId| {
            Ok(read.lock().unwrap().get(&session.as_bytes()[0]).copied().unwrap_or_default())
        });
        let choose = |session: u8, change: fn(&mut SessionSandbox)| {
            change(stored.lock().unwrap().entry(session).or_default());
        };
        let sandbox = Sandbox::new(SandboxPolicy::default(), None).with_run_lookup(lookup).with_choice_lookup(choices);
        let grandchild = run(3, 3, RunKind::DelegatedChild { parent_run_id: RunId::from_bytes([2; 16]), depth: 2 });
        let policy = |run: &RunContext| sandbox.policy_for_run(run).unwrap();
        assert_eq!(policy(&grandchild).mode, SandboxMode::WorkspaceWrite, "nobody chose");
        choose(1, |c| c.mode = Some(SandboxMode::ReadOnly));
        assert_eq!(policy(&grandchild).mode, SandboxMode::ReadOnly, "the top session's choice");
        choose(2, |c| c.network = Some(true));
        let both = policy(&grandchild);
        assert_eq!((both.mode, both.network), (SandboxMode::ReadOnly, true), "the nearest choice of each");
        choose(3, |c| c.mode = Some(SandboxMode::FullAccess));
        assert_eq!(policy(&grandchild).mode, SandboxMode::FullAccess, "its own choice first");
        let top = run(1, 1, RunKind::Interactive);
        assert_eq!(policy(&top).mode, SandboxMode::ReadOnly);
    }

    #[test]
    fn a_choice_that_cannot_be_read_refuses_the_call() {
        let choices: Arc<ChoiceLookup> = Arc::new(|_: &AgentId, _| Err("the database is out of reach".to_owned()));
        let sandbox = Sandbox::default().with_choice_lookup(choices);
        let refused = sandbox.policy_for_run(&run(1, 1, RunKind::Interactive)).unwrap_err();
        assert_eq!(refused, Refused::Unread { why: "the database is out of reach".to_owned() });
        let started = sandbox.start(&run(1, 1, RunKind::Interactive), Path::new("/"), ("M", "1"), "true", &[]);
        assert!(started.is_err(), "nothing starts");
        // Without a lookup there are no choices: the runtime's policy.
        assert_eq!(
            Sandbox::default().policy_for_run(&run(1, 1, RunKind::Interactive)).unwrap().mode,
            SandboxMode::FullAccess
        );
    }
}
