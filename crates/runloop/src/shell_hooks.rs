//! Hooks: commands a person configured to run before and after a tool
//! call (`PreToolUse`, `PostToolUse`), on a submitted prompt
//! (`UserPromptSubmit`) and when the agent ends its turn (`Stop`), in the
//! shape Claude Code's hook scripts speak, so theirs run unchanged.
//!
//! ```json
//! "hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30}]}]}
//! ```
//!
//! Each command runs with `sh -c` in the session's working directory
//! (`CLAUDE_PROJECT_DIR` and `SERI_PROJECT_DIR` name it), the event as one
//! JSON object on its standard input (`hook_event_name`, `session_id`,
//! `cwd`, `permission_mode`, and `tool_name` / `tool_input` /
//! `tool_response` / `prompt` / `stop_hook_active` as the event has them).
//! Exit code 2 blocks, with the command's standard error as the words;
//! exit 0 with `{"decision": "block", "reason": …}` (or
//! `hookSpecificOutput.permissionDecision: "deny"`) on standard output
//! blocks too. Any other exit or a timeout is logged and changes nothing.
//! What a block means is the event's: a tool call refused, a result
//! followed by the words, a prompt not sent, a turn that goes on.
//!
//! A hook is contained and bounded like a `bash` call, because what it runs
//! may be a script the model wrote (`./scripts/check-tests.sh`):
//!
//! - **Sandbox.** It runs through seri's launcher in the run's sandbox
//!   ([`Hooks::contained_in`], the same policy and `/sandbox` choices as
//!   `bash`): in `workspace-write` it writes only the workspace, the
//!   temporary folder and the configured writable paths, in `read-only`
//!   nothing, and it never reads the hidden places; the provider keys are
//!   not in its environment. In `full-access` it runs as the person, as
//!   `bash` does. When the sandbox cannot be applied and the policy
//!   refuses to run without it, the hook does not run: that is logged, and
//!   a `PreToolUse` hook, a guard, then fails closed (the call is refused,
//!   saying why); the other events go on as for a hook that failed. So
//!   does a hook that cannot be started at all.
//! - **Timeout.** One timeout (`timeout`, [`DEFAULT_HOOK_TIMEOUT`] when not
//!   given) covers starting it, writing its input, running it and reading
//!   its output; its input is written while its output is read, so a hook
//!   that never reads its input wedges nothing.
//! - **Cancellation.** Cancelling the run ends a running hook at once; the
//!   run ends `cancelled`.
//! - **Everything it started ends with it**: at its exit, its timeout, the
//!   run's cancellation, and when seri exits (the launcher ends what is
//!   below it when its parent goes).
//! - **Cap.** Each output stream keeps what a tool result keeps
//!   ([`MAX_STREAM_BYTES`]: its start and its end, the middle named by its
//!   size, as `bash` says it), and so does every text a hook's answer gives
//!   (a block's words, added context). A JSON answer is read only when
//!   standard output fits in [`ANSWER_BYTES`]; a longer one cannot be
//!   read: a `PreToolUse` hook's then refuses the call, the others' is
//!   logged and ignored.
//!
//! Deciding what a hook said ([`verdict`]) and which hooks match
//! ([`Hooks::matching`]) are pure; only [`Hooks::run`] starts processes
//! (in `process`).

pub mod claude;
mod process;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use seri_tools::coding::bash::MAX_STREAM_BYTES;
use seri_tools::coding::bash::capture::Capture;
use seri_tools::{RunContext, Sandbox, Secrets};
use tokio::sync::watch;

use self::process::Ran;

/// How long a hook may run when its `timeout` does not say (Claude Code's).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest standard output read as a JSON answer (the output is still
/// read to its end, and capped, beyond it).
pub const ANSWER_BYTES: usize = 1024 * 1024;

/// The points of a session a hook runs at: Claude Code's events that seri
/// reaches, and `PreContinue`, seri's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// Before a tool call runs; a block refuses it.
    PreToolUse,
    /// After a tool call succeeded; a block puts the words after its result.
    PostToolUse,
    /// A person's message, before it is recorded; a block drops it.
    UserPromptSubmit,
    /// The agent ended its turn; a block gives it the words and a next turn.
    Stop,
    /// A child run (`delegate`) ended its turn; a block gives it the words
    /// and a next turn.
    SubagentStop,
    /// A session starts or is resumed in the REPL, `seri -p` or an editor;
    /// what the hook prints is added to the session for the model to read.
    SessionStart,
    /// The REPL or `seri -p` is done with a session; it blocks nothing.
    SessionEnd,
    /// Before the working context is compacted; it blocks nothing.
    PreCompact,
    /// Before `continue_session` starts a successor; a block refuses the
    /// call, and the model reads the words.
    PreContinue,
    /// seri waits for a person (a question before a tool acts), sent by the
    /// clients that ask people (`Runtime::notification_hooks`); it blocks nothing.
    Notification,
    /// A tool call is about to ask a person (there is one to ask): the hook
    /// may answer for them, allowing or denying the call.
    PermissionRequest,
}

impl HookEvent {
    /// Every event, in the order `config.json` lists them.
    pub const ALL: [HookEvent; 11] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
        HookEvent::PreContinue,
        HookEvent::Notification,
        HookEvent::PermissionRequest,
    ];

    /// Its name, as in `config.json` and `hook_event_name`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PreContinue => "PreContinue",
            HookEvent::Notification => "Notification",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }

    /// Whether a hook of this event can block what comes next.
    pub const fn can_block(self) -> bool {
        !matches!(
            self,
            HookEvent::SessionStart | HookEvent::SessionEnd | HookEvent::PreCompact | HookEvent::Notification
        )
    }
}

/// One configured command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// Run with `sh -c`.
    pub command: String,
    /// Killed, and ignored, after this long.
    pub timeout: Duration,
}

/// Commands and the tools they run for.
#[derive(Debug, Clone)]
struct Matcher {
    /// As written; empty or `*`: every tool.
    written: String,
    /// `written` anchored at both ends, when it is a pattern.
    pattern: Option<regex::Regex>,
    commands: Vec<HookCommand>,
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written && self.commands == other.commands
    }
}

impl Matcher {
    fn matches(&self, tool: Option<&str>) -> bool {
        let (Some(pattern), Some(tool)) = (&self.pattern, tool) else { return true };
        pattern.is_match(tool) || claude_name(tool).is_some_and(|name| pattern.is_match(name))
    }
}

/// The name Claude Code gives seri's tool, so matchers and scripts written
/// for it (`Bash`, `Edit|Write`) work unchanged.
pub fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "bash" => "Bash",
        "edit" => "Edit",
        "write_file" => "Write",
        "read_file" => "Read",
        "grep" => "Grep",
        "list" => "Glob",
        _ => return None,
    })
}

/// A `hooks` setting that cannot be used, naming its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {problem}")]
pub struct HookConfigError {
    /// Where: `hooks.PreToolUse[0].matcher`.
    pub field: String,
    /// What was wrong.
    pub problem: String,
}

/// The configured hooks, by event, and what contains them.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    by_event: Vec<(HookEvent, Vec<Matcher>)>,
    /// The sandbox and secrets of `bash`; `None`: [`Sandbox::default`] (no
    /// sandbox and no launcher, as a library embedding the tools gets
    /// `bash`) and no secrets.
    contained: Option<Containment>,
}

/// [`Hooks::contained_in`].
#[derive(Debug, Clone)]
struct Containment {
    sandbox: Arc<Sandbox>,
    secrets: Secrets,
}

impl PartialEq for Hooks {
    fn eq(&self, other: &Self) -> bool {
        let same_containment = match (&self.contained, &other.contained) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(&a.sandbox, &b.sandbox),
            _ => false,
        };
        self.by_event == other.by_event && same_containment
    }
}

/// Where a round of hooks runs: the run (or the session, before a run)
/// whose sandbox contains them, and the switch that cancels it.
#[derive(Debug, Clone, Copy)]
pub struct HookPlace<'a> {
    /// The run; its sandbox policy is the one `bash` gets.
    pub run: &'a RunContext,
    /// Turns true when the run is cancelled: a running hook is ended at
    /// once. `None`: nothing cancels it but its timeout.
    pub cancel: Option<&'a watch::Receiver<bool>>,
}

/// The run was cancelled while a hook ran; the hook was ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the run was cancelled while a hook ran")]
pub struct HookCancelled;

impl Hooks {
    /// Reads `config.json`'s `hooks` object. Every mistake names its key.
    pub fn from_config(value: &Value) -> Result<Self, HookConfigError> {
        let bad = |field: String, problem: String| HookConfigError { field, problem };
        let Value::Object(events) = value else {
            return Err(bad("hooks".into(), format!("expected an object of events, got {value}")));
        };
        let mut hooks = Hooks::default();
        for (name, matchers) in events {
            let field = format!("hooks.{name}");
            let Some(event) = HookEvent::ALL.into_iter().find(|e| e.as_str() == name) else {
                let names: Vec<&str> = HookEvent::ALL.iter().map(|e| e.as_str()).collect();
                return Err(bad(field, format!("not an event seri runs hooks on; those are {}", names.join(", "))));
            };
            let Value::Array(matchers) = matchers else {
                return Err(bad(field, format!("expected a list of {{\"matcher\", \"hooks\"}}, got {matchers}")));
            };
            let mut parsed = Vec::new();
            for (n, entry) in matchers.iter().enumerate() {
                let field = format!("{field}[{n}]");
                let written = match entry.get("matcher") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(text)) => text.trim().to_owned(),
                    Some(other) => {
                        return Err(bad(format!("{field}.matcher"), format!("expected a string, got {other}")));
                    }
                };
                let pattern =
                    if written.is_empty() || written == "*" {
                        None
                    } else {
                        let anchored = format!("^(?:{written})$");
                        Some(regex::Regex::new(&anchored).map_err(|e| {
                            bad(format!("{field}.matcher"), format!("`{written}` is not a pattern: {e}"))
                        })?)
                    };
                let Some(Value::Array(list)) = entry.get("hooks") else {
                    return Err(bad(
                        format!("{field}.hooks"),
                        "expected a list of {\"type\": \"command\", \"command\"}".into(),
                    ));
                };
                let mut commands = Vec::new();
                for (k, hook) in list.iter().enumerate() {
                    let field = format!("{field}.hooks[{k}]");
                    match hook.get("type").and_then(Value::as_str) {
                        Some("command") => {}
                        other => {
                            return Err(bad(
                                format!("{field}.type"),
                                format!("only \"command\" hooks run in seri, got {}", other.unwrap_or("nothing")),
                            ));
                        }
                    }
                    let Some(command) = hook.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty())
                    else {
                        return Err(bad(format!("{field}.command"), "expected the command to run".into()));
                    };
                    let timeout = match hook.get("timeout") {
                        None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
                        Some(seconds) => match seconds.as_f64().filter(|s| *s > 0.0 && s.is_finite()) {
                            Some(s) => Duration::from_secs_f64(s),
                            None => {
                                return Err(bad(
                                    format!("{field}.timeout"),
                                    format!("expected seconds above 0, got {seconds}"),
                                ));
                            }
                        },
                    };
                    commands.push(HookCommand { command: command.to_owned(), timeout });
                }
                parsed.push(Matcher { written, pattern, commands });
            }
            hooks.by_event.push((event, parsed));
        }
        Ok(hooks)
    }

    /// These hooks and `other`'s, all of them run (as Claude Code runs the
    /// hooks of every settings file): `other`'s after these, event by event.
    #[must_use]
    pub fn merged(mut self, other: Hooks) -> Self {
        self.by_event.extend(other.by_event);
        self
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.by_event.iter().all(|(_, matchers)| matchers.iter().all(|m| m.commands.is_empty()))
    }

    /// The commands that run for `event` (and `tool`, for the tool events),
    /// in the order configured.
    pub fn matching(&self, event: HookEvent, tool: Option<&str>) -> Vec<&HookCommand> {
        self.by_event
            .iter()
            .filter(|(e, _)| *e == event)
            .flat_map(|(_, matchers)| matchers.iter())
            .filter(|m| m.matches(tool))
            .flat_map(|m| m.commands.iter())
            .collect()
    }

    /// The sandbox and secrets hooks run with; `bare` when none was given.
    fn containment<'a>(&'a self, bare: &'a (Sandbox, Secrets)) -> (&'a Sandbox, &'a Secrets) {
        match &self.contained {
            Some(c) => (c.sandbox.as_ref(), &c.secrets),
            None => (&bare.0, &bare.1),
        }
    }

    /// Runs one command outside any event (the status line), contained as
    /// a hook is, with `input` on its standard input: its standard output
    /// (capped as a hook's) when it exited 0, else `None` (logged).
    pub async fn run_command(
        &self,
        command: &HookCommand,
        input: &Value,
        cwd: &Path,
        place: HookPlace<'_>,
    ) -> Option<String> {
        let bare = (Sandbox::default(), Secrets::default());
        let (sandbox, secrets) = self.containment(&bare);
        match Box::pin(process::run_one(command, input, cwd, sandbox, secrets, &place)).await {
            Ran::Exited { code: Some(0), stdout, .. } => Some(stdout.shown),
            Ran::Exited { code, stderr, .. } => {
                tracing::warn!(command = %command.command, ?code, stderr = stderr.shown.trim(), "a command failed");
                None
            }
            Ran::TimedOut => {
                tracing::warn!(command = %command.command, "a command ran past its timeout and was ended");
                None
            }
            Ran::Cancelled => None,
            Ran::CouldNotStart(why) => {
                tracing::warn!(command = %command.command, %why, "a command could not run");
                None
            }
        }
    }

    /// The same hooks, run in `sandbox` (the one `bash` runs in) without
    /// the variables `secrets` keeps from commands.
    pub fn contained_in(mut self, sandbox: Arc<Sandbox>, secrets: Secrets) -> Self {
        self.contained = Some(Containment { sandbox, secrets });
        self
    }

    /// Runs the commands that match, one after another, each with `input`
    /// on its standard input, in `cwd`, contained as the module docs say;
    /// the first that blocks ends the round. Nothing configured: nothing
    /// runs. A cancellation of the run ends the hook running and the round.
    pub async fn run(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        input: &Value,
        cwd: &Path,
        place: HookPlace<'_>,
    ) -> Result<Verdict, HookCancelled> {
        let hooks = self.matching(event, tool);
        if hooks.is_empty() {
            return Ok(Verdict::proceed());
        }
        let bare = (Sandbox::default(), Secrets::default());
        let (sandbox, secrets) = self.containment(&bare);
        let (mut context, mut allow, mut ask) = (Vec::new(), false, false);
        for hook in hooks {
            // Boxed: its read buffers would otherwise sit in every future
            // that awaits a hook, down nested child runs.
            match Box::pin(process::run_one(hook, input, cwd, sandbox, secrets, &place)).await {
                Ran::Exited { code, stdout, stderr } => match verdict(event, code, &stdout, &stderr) {
                    Verdict::Proceed { context: said, allow: allowed, ask: asked } => {
                        context.extend(said);
                        allow |= allowed;
                        ask |= asked;
                    }
                    ended => return Ok(ended),
                },
                Ran::Cancelled => return Err(HookCancelled),
                Ran::TimedOut => {
                    tracing::warn!(
                        event = event.as_str(),
                        command = %hook.command,
                        timeout = ?hook.timeout,
                        "a hook ran past its timeout and was ended with all it started; it blocks nothing"
                    );
                }
                Ran::CouldNotStart(why) => {
                    tracing::warn!(event = event.as_str(), command = %hook.command, %why, "a hook could not run");
                    if event == HookEvent::PreToolUse {
                        // A guard that cannot run fails closed.
                        return Ok(Verdict::Block {
                            reason: capped(&format!(
                                "the PreToolUse hook `{}` could not run, so the call is refused: {why}",
                                hook.command
                            )),
                        });
                    }
                }
            }
        }
        // One hook's ask outweighs another's allow.
        Ok(Verdict::Proceed { context, allow: allow && !ask, ask })
    }
}

/// What a round of hooks decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go on; `context` holds what the hooks added for the model: plain
    /// text they printed, or their `additionalContext`.
    Proceed {
        /// What the hooks added, in order.
        context: Vec<String>,
        /// A `PreToolUse` hook answered `permissionDecision: "allow"`: the
        /// call runs without asking (a `deny` rule still refuses it).
        allow: bool,
        /// A `PreToolUse` hook answered `permissionDecision: "ask"`: the
        /// person is asked about the call even when it is allowed.
        ask: bool,
    },
    /// Blocked, with the hook's words.
    Block {
        /// Why, as the hook said it.
        reason: String,
    },
    /// A hook answered `"continue": false`: the run stops here, and its
    /// `stopReason` is what the person is shown.
    Halt {
        /// The hook's `stopReason`.
        reason: String,
    },
}

impl Verdict {
    /// Go on, nothing added.
    pub const fn proceed() -> Self {
        Verdict::Proceed { context: Vec::new(), allow: false, ask: false }
    }
}

/// One output stream of a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// What is shown of it: capped as a tool's output is (its start and end,
    /// the middle named by its size).
    pub shown: String,
    /// How many bytes the hook wrote in all.
    pub total: u64,
    /// All of it, when it is standard output that fits in [`ANSWER_BYTES`].
    pub whole: Option<String>,
}

impl Said {
    /// `text` as a hook's standard output (or error) of that whole text.
    pub fn text(text: &str) -> Self {
        let mut capture = Capture::default();
        capture.push(text.as_bytes());
        let whole = (text.len() <= ANSWER_BYTES).then(|| text.to_owned());
        Self { shown: capture.render(), total: capture.total(), whole }
    }
}

/// `text`, capped as a tool's output is ([`MAX_STREAM_BYTES`]): its start
/// and its end, the middle named by its size.
pub fn capped(text: &str) -> String {
    if text.len() <= MAX_STREAM_BYTES {
        return text.to_owned();
    }
    let mut capture = Capture::default();
    capture.push(text.as_bytes());
    capture.render()
}

/// What one hook's exit code and output mean for `event`, as Claude Code
/// reads them: exit 2 blocks with its standard error; exit 0 with JSON
/// decides by its fields (`continue: false` halts the run with its
/// `stopReason`; `decision: "block"` or `permissionDecision: "deny"`
/// blocks with the reason; `permissionDecision: "allow"` lets a call run
/// without asking; a `PermissionRequest` hook's `decision.behavior` of
/// `allow` or `deny` (with its `message`) answers for the person; `additionalContext` is added for the model;
/// `suppressOutput` is accepted: a JSON answer is never shown); exit 0 with
/// plain text adds it for the model; any other exit is a failure of the
/// hook's own, which blocks nothing. An event that cannot block
/// ([`HookEvent::can_block`]) never does. Every text it gives is capped
/// ([`capped`]). A JSON answer too long to read (over [`ANSWER_BYTES`])
/// refuses a `PreToolUse` call and is ignored elsewhere.
pub fn verdict(event: HookEvent, code: Option<i32>, stdout: &Said, stderr: &Said) -> Verdict {
    let decided = decide(event, code, stdout, stderr);
    match decided {
        Verdict::Block { reason } if !event.can_block() => {
            tracing::info!(event = event.as_str(), %reason, "a hook of an event that cannot block asked to");
            Verdict::proceed()
        }
        other => other,
    }
}

fn decide(event: HookEvent, code: Option<i32>, stdout: &Said, stderr: &Said) -> Verdict {
    let said = |text: &str, fallback: &str| {
        let text = text.trim();
        if text.is_empty() { fallback.to_owned() } else { capped(text) }
    };
    let plain = |text: &str| {
        let text = text.trim();
        Verdict::Proceed {
            context: (!text.is_empty()).then(|| text.to_owned()).into_iter().collect(),
            allow: false,
            ask: false,
        }
    };
    match code {
        Some(2) => Verdict::Block { reason: said(&stderr.shown, "a hook blocked it and gave no reason") },
        Some(0) => {
            let Some(whole) = &stdout.whole else {
                if !stdout.shown.trim_start().starts_with('{') {
                    return plain(&stdout.shown);
                }
                let why =
                    format!("the hook's answer was {} bytes, over the {ANSWER_BYTES} seri reads as JSON", stdout.total);
                tracing::warn!(event = event.as_str(), %why, "a hook's answer could not be read");
                return match event {
                    HookEvent::PreToolUse => {
                        Verdict::Block { reason: format!("{why}; a guard that cannot be read refuses the call") }
                    }
                    _ => Verdict::proceed(),
                };
            };
            let Ok(Value::Object(reply)) = serde_json::from_str::<Value>(whole.trim()) else {
                return plain(&stdout.shown);
            };
            let text = |key: &str, within: &serde_json::Map<String, Value>| {
                within.get(key).and_then(Value::as_str).map(str::to_owned)
            };
            if reply.get("continue").and_then(Value::as_bool) == Some(false) {
                return Verdict::Halt {
                    reason: said(&text("stopReason", &reply).unwrap_or_default(), "a hook stopped the run"),
                };
            }
            if reply.get("decision").and_then(Value::as_str) == Some("block") {
                return Verdict::Block {
                    reason: said(&text("reason", &reply).unwrap_or_default(), "a hook blocked it"),
                };
            }
            let specific = match reply.get("hookSpecificOutput") {
                Some(Value::Object(specific)) => specific.clone(),
                _ => serde_json::Map::new(),
            };
            // A PermissionRequest hook answers for the person: `decision.behavior`.
            if event == HookEvent::PermissionRequest {
                let decision = specific.get("decision");
                let field = |key: &str| decision.and_then(|d| d.get(key)).and_then(Value::as_str);
                match field("behavior") {
                    Some("deny") => {
                        return Verdict::Block {
                            reason: said(field("message").unwrap_or_default(), "a hook denied it"),
                        };
                    }
                    Some("allow") => return Verdict::Proceed { context: Vec::new(), allow: true, ask: false },
                    _ => return Verdict::proceed(),
                }
            }
            let decision = specific.get("permissionDecision").and_then(Value::as_str);
            if decision == Some("deny") {
                let why = text("permissionDecisionReason", &specific).unwrap_or_default();
                return Verdict::Block { reason: said(&why, "a hook denied it") };
            }
            let context = match specific.get("additionalContext") {
                Some(Value::String(text)) if !text.trim().is_empty() => vec![capped(text.trim())],
                _ => Vec::new(),
            };
            let pre = event == HookEvent::PreToolUse;
            Verdict::Proceed { context, allow: pre && decision == Some("allow"), ask: pre && decision == Some("ask") }
        }
        _ => {
            tracing::warn!(?code, stderr = stderr.shown.trim(), "a hook failed; it blocks nothing");
            Verdict::proceed()
        }
    }
}

/// Writes `text`, a session's transcript, to `<temp>/seri-transcripts-<uid>/<session>.jsonl`
/// and returns the path: a hook reads it as `transcript_path`. The folder
/// is this user's alone (mode 0700, made here, or found owned by this user
/// with no access for others, and not a link); otherwise nothing is
/// written, since another user could read what the session said. The file
/// is replaced whole (written beside it, then renamed).
pub fn transcript_file(session: seri_core::SessionId, text: &str) -> std::io::Result<std::path::PathBuf> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
    let uid = rustix::process::getuid().as_raw();
    let dir = std::env::temp_dir().join(format!("seri-transcripts-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} is not a folder of this user's alone", dir.display()),
        ));
    }
    let path = dir.join(format!("{session}.jsonl"));
    let partial = dir.join(format!("{session}.jsonl.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&partial)?;
    file.write_all(text.as_bytes())?;
    drop(file);
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// The fields every event's input has, in Claude Code's names
/// (`transcript_path` is filled in by the run loop, which writes the file).
pub fn base_input(
    event: HookEvent,
    session_id: seri_core::SessionId,
    cwd: &Path,
    mode: seri_core::PermissionMode,
) -> Value {
    let mode = match mode {
        seri_core::PermissionMode::Default => "default",
        seri_core::PermissionMode::AcceptEdits => "acceptEdits",
        seri_core::PermissionMode::Plan => "plan",
        seri_core::PermissionMode::Bypass => "bypassPermissions",
    };
    json!({
        "hook_event_name": event.as_str(),
        "session_id": session_id.to_string(),
        "transcript_path": null,
        "cwd": cwd.to_string_lossy(),
        "permission_mode": mode,
    })
}

/// A tool call's `tool_name` and `tool_input` as Claude Code's scripts
/// read them ([`claude::tool_input`]: `Edit` with `file_path`,
/// `old_string`, `new_string`, …; a tool Claude Code does not have keeps
/// seri's name and arguments), with seri's own beside them:
/// `seri_tool_name`, `seri_tool_input`.
pub fn tool_fields(input: &mut Value, tool: &str, arguments: &Value, cwd: &Path) {
    let (name, claude_input) = claude::tool_input(tool, arguments, cwd).unwrap_or((tool, arguments.clone()));
    input["tool_name"] = json!(name);
    input["tool_input"] = claude_input;
    input["seri_tool_name"] = json!(tool);
    input["seri_tool_input"] = arguments.clone();
}

#[cfg(test)]
mod tests;
