//! `bash`: run a command with `bash -c` in the working directory.
//!
//! The command gets no standard input and runs in its own process group.
//! Its stdout and stderr are captured separately, each capped (see
//! [`capture`]). It ends one of three ways:
//!
//! - it exits: whatever it left running in its process group is killed (so
//!   a stray background job cannot hold the output open or outlive the
//!   call), and the result reports the exit code or signal with the output;
//! - it runs past `timeoutMs` ([`DEFAULT_TIMEOUT_MS`] by default, at most
//!   [`MAX_TIMEOUT_MS`]): the whole group is killed and the call fails with
//!   [`ToolError::TimedOut`], carrying the output so far;
//! - the call's future is dropped (the run was cancelled): the group is
//!   killed by the `Drop` of its process-group guard.
//!
//! A non-zero exit is a result, not an error: the model reads the code.
//! Either way the outcome (or the timeout's error) also carries the exit
//! the duration and the output's last lines as [`ToolFacts::Command`], for
//! clients and the run loop's records.

pub mod capture;
pub(crate) mod group;

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_prompt::text::tools;

use self::capture::Capture;
use self::group::ProcessGroup;
use super::check;
use crate::error::{InputError, ToolError};
use crate::input::Obj;
use seri_core::{CommandExit, CommandRun, ToolFacts};

use crate::outcome::ToolOutcome;
use crate::permissions::ApprovalRequest;
use crate::run::RunContext;
use crate::sandbox::Sandbox;
use crate::secrets::Secrets;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "bash";

/// The timeout when `timeoutMs` is not given: two minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// The longest timeout a call may ask for: ten minutes.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Most bytes of each stream a result shows (its start and its end).
pub const MAX_STREAM_BYTES: usize = capture::HEAD_BYTES + capture::TAIL_BYTES;

/// The `bash` tool.
///
/// `Bash::default()` runs commands with seri's whole environment and no
/// sandbox; [`Bash::new`] takes the secrets to keep out of the
/// environment (the CLI gives them).
#[derive(Debug, Clone, Default)]
pub struct Bash {
    settings: Arc<BashSettings>,
}

/// How `bash` runs its commands.
#[derive(Debug, Clone, Default)]
pub struct BashSettings {
    /// The variables removed from every command's environment
    /// ([`Secrets::removed_from_env`]).
    pub secrets: Secrets,
    /// The sandbox commands run in, and the launcher that applies it.
    pub sandbox: Arc<Sandbox>,
}

impl Bash {
    /// The tool, running its commands as `settings` say.
    pub fn new(settings: BashSettings) -> Self {
        Self { settings: Arc::new(settings) }
    }
}

#[async_trait]
impl Tool for Bash {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        tools::BASH
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command, run with `bash -c` in the working directory."},
                "timeoutMs": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT_MS,
                    "description": format!("Milliseconds before the command and everything it started are killed. Default: {DEFAULT_TIMEOUT_MS}.")
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn availability(&self, run: &RunContext) -> Availability {
        super::availability(run)
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["command", "timeoutMs"], "")?;
        let command = obj.req_str("command")?;
        if command.trim().is_empty() {
            return Err(InputError::new("command", "empty").into());
        }
        let timeout_ms = obj.opt_u64("timeoutMs", 1)?.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms > MAX_TIMEOUT_MS {
            return Err(InputError::new("timeoutMs", format!("{timeout_ms}; at most {MAX_TIMEOUT_MS}")).into());
        }
        check(ctx, &ApprovalRequest::new(NAME, command)).await?;
        let ran =
            run(&self.settings, ctx.run, command, ctx.workspace.root(), Duration::from_millis(timeout_ms)).await?;
        match ran.status {
            Some(status) => {
                let mut text = exit_text(status);
                if ran.output_left_open {
                    text.push_str(
                        " (a process it started outside its process group kept the output open; reading stopped at the timeout)",
                    );
                }
                let facts = CommandRun {
                    command: command.to_owned(),
                    exit: exit_of(status),
                    timeout: timeout_ms,
                    duration: u64::try_from(ran.duration.as_millis()).unwrap_or(u64::MAX),
                    tail: ran.tail,
                    lines: ran.lines,
                };
                Ok(ToolOutcome::text(format!("{text}\n{}", ran.output)).with_facts(ToolFacts::Command(facts)))
            }
            None => Err(ToolError::TimedOut {
                timeout_ms,
                output: ran.output,
                duration: ran.duration,
                command: command.to_owned(),
                tail: ran.tail,
                lines: ran.lines,
            }),
        }
    }
}

/// How a command ended and what it printed.
struct Ran {
    /// The exit status; `None` when it was killed at the timeout.
    status: Option<ExitStatus>,
    /// The exit status came, but the output pipes stayed open until the timeout.
    output_left_open: bool,
    /// Stdout and stderr, capped, in labelled sections.
    output: String,
    /// From the spawn until it exited, or until it was killed.
    duration: Duration,
    /// The last [`TAIL_LINES`] lines of what it printed, stdout then stderr.
    tail: String,
    /// How many lines it printed (of what was captured).
    lines: u64,
}

/// Lines of a command's output its facts keep for a person.
pub const TAIL_LINES: usize = 10;

/// Runs `command` in `cwd` until it exits or `timeout` passes.
async fn run(
    settings: &BashSettings,
    run_ctx: &RunContext,
    command: &str,
    cwd: &Path,
    timeout: Duration,
) -> Result<Ran, ToolError> {
    let mark = group::new_mark();
    let start = settings
        .sandbox
        .start(run_ctx, cwd, (group::CALL_MARK_ENV, &mark), "bash", &["-c", command])
        .map_err(|refused| ToolError::Failed(refused.to_string()))?;
    let mut bash = start.command;
    for variable in settings.secrets.removed_from_env() {
        bash.env_remove(variable);
    }
    let mut child = bash
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // A launcher is asked to end (it kills what is below it first);
        // killing it would hand its orphans to init.
        .kill_on_drop(!start.launched)
        .spawn()
        .map_err(|e| ToolError::io("could not start bash", e))?;
    let started = tokio::time::Instant::now();
    let mut group = ProcessGroup::led_by(child.id(), mark, start.launched, start.cgroup);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (mut out, mut err) = (Capture::default(), Capture::default());
    let mut status = None;
    let finished = tokio::time::timeout(timeout, async {
        let exited = async {
            let exit = child.wait().await;
            group.leader_reaped();
            // The leader is gone; kill what it left in its group so nothing
            // holds the pipes open or outlives the call.
            group.kill();
            status = Some(exit);
        };
        tokio::join!(exited, out.read_all(stdout), err.read_all(stderr));
    })
    .await
    .is_ok();
    let status = match status {
        Some(exit) => Some(exit.map_err(|e| ToolError::io("could not wait for bash", e))?),
        None => {
            group.kill();
            // Reap the leader: SIGKILL cannot be ignored, and a launcher
            // asked to end kills what is below it and exits.
            if tokio::time::timeout(LAUNCHER_GRACE, child.wait()).await.is_err() {
                tracing::warn!("the launcher did not end its command in time; killing it");
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
            group.leader_reaped();
            None
        }
    };
    let duration = started.elapsed();
    let (tail, lines) = tail(&out, &err);
    let mut output = sections(&out, &err);
    if let Some(warning) = start.warning {
        output = format!("{warning}\n{output}");
    }
    Ok(Ran { status, output_left_open: status.is_some() && !finished, output, duration, tail, lines })
}

/// How long a launcher asked to end may take before it is killed.
const LAUNCHER_GRACE: Duration = Duration::from_secs(10);

/// `exit code: N`, or the signal that ended it.
fn exit_text(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}{}", signal_name(signal)),
        (None, None) => "ended without an exit code".to_owned(),
    }
}

/// The same status as a value: what [`exit_text`] says in words.
fn exit_of(status: ExitStatus) -> CommandExit {
    match (status.code(), status.signal()) {
        (Some(code), _) => CommandExit::Code { code },
        (None, Some(signal)) => CommandExit::Signal { signal },
        (None, None) => CommandExit::Unknown,
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        2 => " (SIGINT)",
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// The last [`TAIL_LINES`] lines the command printed (stdout, then
/// stderr), and how many it printed in all.
fn tail(out: &Capture, err: &Capture) -> (String, u64) {
    let (out, err) = (out.render(), err.render());
    let all: Vec<&str> = out.lines().chain(err.lines()).collect();
    let skipped = all.len().saturating_sub(TAIL_LINES);
    (all[skipped..].join("\n"), all.len() as u64)
}

/// The output as the model reads it: a `stdout:` and a `stderr:` section,
/// each only when the stream wrote something.
fn sections(out: &Capture, err: &Capture) -> String {
    let mut text = String::new();
    for (label, capture) in [("stdout", out), ("stderr", err)] {
        if capture.is_empty() {
            continue;
        }
        let body = capture.render();
        text.push_str(&format!("{label}:\n{}\n", body.strip_suffix('\n').unwrap_or(&body)));
    }
    if text.is_empty() {
        return "(no output)".to_owned();
    }
    text.pop();
    text
}
