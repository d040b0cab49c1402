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
//! blocks too. Any other exit, a timeout or a command that cannot start is
//! logged and changes nothing. What a block means is the event's: a tool
//! call refused, a result followed by the words, a prompt not sent, a turn
//! that goes on.
//!
//! Deciding what a hook said ([`verdict`]) and which hooks match
//! ([`Hooks::matching`]) are pure; only [`Hooks::run`] starts processes.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

/// How long a hook may run when its `timeout` does not say (Claude Code's).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The points of a turn a hook runs at.
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
}

impl HookEvent {
    /// Every event, in the order `config.json` lists them.
    pub const ALL: [HookEvent; 4] =
        [HookEvent::PreToolUse, HookEvent::PostToolUse, HookEvent::UserPromptSubmit, HookEvent::Stop];

    /// Its name, as in `config.json` and `hook_event_name`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
        }
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

/// The configured hooks, by event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hooks {
    by_event: Vec<(HookEvent, Vec<Matcher>)>,
}

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
                return Err(bad(
                    field,
                    "not an event seri runs hooks on; those are PreToolUse, PostToolUse, UserPromptSubmit, Stop".into(),
                ));
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

    /// Runs the commands that match, one after another, each with `input`
    /// on its standard input, in `cwd`; the first that blocks ends the
    /// round. Nothing configured: nothing runs.
    pub async fn run(&self, event: HookEvent, tool: Option<&str>, input: &Value, cwd: &Path) -> Verdict {
        let mut context = Vec::new();
        for hook in self.matching(event, tool) {
            match run_one(hook, input, cwd).await {
                Ok((code, stdout, stderr)) => match verdict(code, &stdout, &stderr) {
                    Verdict::Block { reason } => return Verdict::Block { reason },
                    Verdict::Proceed { context: said } => context.extend(said),
                },
                Err(error) => {
                    tracing::warn!(event = event.as_str(), command = %hook.command, %error, "a hook did not run to the end");
                }
            }
        }
        Verdict::Proceed { context }
    }
}

/// What a round of hooks decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go on; `context` holds what a hook printed that was not JSON (for
    /// `UserPromptSubmit`, added to the prompt as Claude Code does).
    Proceed {
        /// Plain text hooks printed, in order.
        context: Vec<String>,
    },
    /// Blocked, with the hook's words.
    Block {
        /// Why, as the hook said it.
        reason: String,
    },
}

/// What one hook's exit code and output mean: exit 2 blocks with its
/// standard error; exit 0 blocks when its output is JSON saying so; any
/// other exit is a failure of the hook's own, which blocks nothing.
pub fn verdict(code: Option<i32>, stdout: &str, stderr: &str) -> Verdict {
    let said = |text: &str, fallback: &str| {
        let text = text.trim();
        if text.is_empty() { fallback.to_owned() } else { text.to_owned() }
    };
    match code {
        Some(2) => Verdict::Block { reason: said(stderr, "a hook blocked it and gave no reason") },
        Some(0) => {
            let Ok(Value::Object(reply)) = serde_json::from_str::<Value>(stdout.trim()) else {
                let text = stdout.trim();
                return Verdict::Proceed { context: (!text.is_empty()).then(|| text.to_owned()).into_iter().collect() };
            };
            let reason = |key: &str, within: &serde_json::Map<String, Value>| {
                within.get(key).and_then(Value::as_str).map(str::to_owned)
            };
            if reply.get("decision").and_then(Value::as_str) == Some("block") {
                return Verdict::Block {
                    reason: said(&reason("reason", &reply).unwrap_or_default(), "a hook blocked it"),
                };
            }
            if let Some(Value::Object(specific)) = reply.get("hookSpecificOutput")
                && specific.get("permissionDecision").and_then(Value::as_str) == Some("deny")
            {
                let why = reason("permissionDecisionReason", specific).unwrap_or_default();
                return Verdict::Block { reason: said(&why, "a hook denied it") };
            }
            let context = match reply.get("hookSpecificOutput").and_then(|s| s.get("additionalContext")) {
                Some(Value::String(text)) if !text.trim().is_empty() => vec![text.trim().to_owned()],
                _ => Vec::new(),
            };
            Verdict::Proceed { context }
        }
        _ => {
            tracing::warn!(?code, stderr = stderr.trim(), "a hook failed; it blocks nothing");
            Verdict::Proceed { context: Vec::new() }
        }
    }
}

/// Runs one hook: its exit code (`None` when a signal ended it), standard
/// output and standard error.
async fn run_one(hook: &HookCommand, input: &Value, cwd: &Path) -> std::io::Result<(Option<i32>, String, String)> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&hook.command)
        .current_dir(cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .env("SERI_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input is not an error.
        let _ = stdin.write_all(format!("{input}\n").as_bytes()).await;
    }
    let output = tokio::time::timeout(hook.timeout, child.wait_with_output()).await.map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::TimedOut, format!("it ran past its {:?} timeout", hook.timeout))
    })??;
    Ok((
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// The fields every event's input has, in Claude Code's names.
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
        "cwd": cwd.to_string_lossy(),
        "permission_mode": mode,
    })
}

/// A tool call's `tool_name` and `tool_input` as Claude Code's scripts
/// read them: its name (`Bash`, `Edit`, …, else seri's own), its arguments
/// with a `path` also given as `file_path`, and `seri_tool_name`.
pub fn tool_fields(input: &mut Value, tool: &str, arguments: &Value) {
    let mut arguments = arguments.clone();
    if let Value::Object(map) = &mut arguments
        && let Some(path) = map.get("path").cloned()
        && !map.contains_key("file_path")
    {
        map.insert("file_path".into(), path);
    }
    input["tool_name"] = json!(claude_name(tool).unwrap_or(tool));
    input["seri_tool_name"] = json!(tool);
    input["tool_input"] = arguments;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_two_and_a_block_decision_block_and_other_failures_do_not() {
        let block = |reason: &str| Verdict::Block { reason: reason.to_owned() };
        let go = |context: &[&str]| Verdict::Proceed { context: context.iter().map(|c| (*c).to_owned()).collect() };
        assert_eq!(verdict(Some(2), "", "no rm here\n"), block("no rm here"));
        assert_eq!(verdict(Some(2), "", ""), block("a hook blocked it and gave no reason"));
        assert_eq!(verdict(Some(0), r#"{"decision":"block","reason":"tests first"}"#, ""), block("tests first"));
        assert_eq!(
            verdict(
                Some(0),
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}"#,
                ""
            ),
            block("not on main")
        );
        assert_eq!(verdict(Some(0), r#"{"decision":"approve"}"#, ""), go(&[]));
        assert_eq!(verdict(Some(0), "today is Tuesday\n", ""), go(&["today is Tuesday"]));
        assert_eq!(verdict(Some(1), r#"{"decision":"block"}"#, "oops"), go(&[]), "a hook's own failure blocks nothing");
        assert_eq!(verdict(None, "", ""), go(&[]));
    }

    #[test]
    fn matchers_take_claude_codes_tool_names_and_every_mistake_names_its_key() {
        let hooks = Hooks::from_config(&json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b", "timeout": 5}]},
                {"hooks": [{"type": "command", "command": "c"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "d"}]}]
        }))
        .unwrap();
        let names = |event, tool| hooks.matching(event, tool).iter().map(|h| h.command.clone()).collect::<Vec<_>>();
        assert_eq!(names(HookEvent::PreToolUse, Some("bash")), ["a", "c"]);
        assert_eq!(names(HookEvent::PreToolUse, Some("write_file")), ["b", "c"]);
        assert_eq!(names(HookEvent::PreToolUse, Some("grep")), ["c"]);
        assert_eq!(names(HookEvent::PreToolUse, Some("bashful")), ["c"], "a matcher matches whole names");
        assert_eq!(names(HookEvent::Stop, None), ["d"]);
        assert!(names(HookEvent::PostToolUse, Some("bash")).is_empty());
        let error = |value: Value| Hooks::from_config(&value).unwrap_err().to_string();
        assert_eq!(
            error(json!({"PreTool": []})),
            "`hooks.PreTool`: not an event seri runs hooks on; those are PreToolUse, PostToolUse, UserPromptSubmit, Stop"
        );
        assert!(
            error(json!({"Stop": [{"matcher": "(", "hooks": []}]}))
                .starts_with("`hooks.Stop[0].matcher`: `(` is not a pattern")
        );
        assert_eq!(
            error(json!({"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]})),
            "`hooks.Stop[0].hooks[0].type`: only \"command\" hooks run in seri, got prompt"
        );
        assert_eq!(
            error(json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]})),
            "`hooks.Stop[0].hooks[0].timeout`: expected seconds above 0, got -1"
        );
    }
}
