//! The script file: `{"turns": [TURN, ...]}`, where a TURN is
//! `{"text"?, "thinking"?, "tool_calls"?: [{"id", "name", "arguments": object}],
//! "usage"?: {"input", "cache_read", "cache_write", "output"}, "hang"?: true,
//! "chunks"?: [str], "delay_ms"?: n}` or
//! `{"error": {"kind": "context_overflow" | "rate_limit" | "server" | "auth", "message"?}}`.
//!
//! `chunks` gives the text as the deltas it streams in (instead of `text`,
//! which streams in a few pieces of about equal length); `delay_ms` is
//! waited before each delta and before the tool calls, so a client sees
//! the answer arrive as a slow model writes it.
//!
//! An extension for child runs: the file may also hold
//! `"children": [SCRIPT, ...]`, each SCRIPT again `{"turns": [...],
//! "children"?: [...]}`. Child runs (delegated subagents) take these scripts
//! in the order they are started, one each, so children running in parallel
//! replay deterministically. Without `children`, a child's requests consume
//! the shared `turns` like any other request.
//!
//! Unknown keys are refused rather than ignored: a misspelt `"tool_call"`
//! would otherwise replay as a plain answer and the test using it would pass
//! for the wrong reason. Errors name the file and the JSON path of the fault
//! (`turns[2].tool_calls[0].arguments`, `children[1].turns[0]`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use seri_core::{ToolCall, ToolCallId, Usage};

use crate::error::ErrorKind;

/// A loaded script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    path: PathBuf,
    /// Where in the file this script is: empty for the file itself,
    /// `children[1]` (or `children[1].children[0]`) for a child's.
    scope: String,
    turns: Vec<ScriptTurn>,
    /// The child scripts, when the file gives a `children` list.
    children: Option<Vec<Script>>,
}

/// One scripted answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptTurn {
    /// The model answers.
    Reply(ScriptReply),
    /// The request fails with an error of this kind.
    Error {
        /// What kind of failure to replay.
        kind: ScriptErrorKind,
        /// The error's message, if the script gave one.
        message: Option<String>,
    },
}

/// A scripted answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptReply {
    /// The visible answer.
    pub text: String,
    /// The reasoning, if any.
    pub thinking: Option<String>,
    /// The tools to call.
    pub tool_calls: Vec<ToolCall>,
    /// The usage to report; `None` when the turn gives none.
    pub usage: Option<Usage>,
    /// After its text, the reply never ends (until the call is dropped): a
    /// turn cancelled while the answer is being written.
    pub hang: bool,
    /// The deltas the text streams in, in order (together they are
    /// `text`); empty: a few pieces of about equal length.
    pub chunks: Vec<String>,
    /// Milliseconds waited before each delta and before the tool calls.
    pub delay_ms: u64,
}

/// The error kinds a script can replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptErrorKind {
    /// The prompt does not fit.
    ContextOverflow,
    /// Too many requests.
    RateLimit,
    /// The provider failed.
    Server,
    /// The key was refused.
    Auth,
}

impl ScriptErrorKind {
    /// The provider error kind it replays as.
    pub fn error_kind(self) -> ErrorKind {
        match self {
            ScriptErrorKind::ContextOverflow => ErrorKind::ContextOverflow,
            ScriptErrorKind::RateLimit => ErrorKind::RateLimited,
            ScriptErrorKind::Server => ErrorKind::Server,
            ScriptErrorKind::Auth => ErrorKind::Auth,
        }
    }
}

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {}: {source}", path.display())]
    Read {
        /// The script's path.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a script.
    #[error("script {} is malformed at {at}: {message}", path.display())]
    Malformed {
        /// The script's path.
        path: PathBuf,
        /// The JSON path of the fault (`turns[2].usage.input`), or `.` for the whole file.
        at: String,
        /// What is wrong there.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "an object `{\"turns\": [...]}`")]
struct FileJson {
    turns: Vec<TurnJson>,
    children: Option<Vec<FileJson>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a turn object")]
struct TurnJson {
    text: Option<String>,
    thinking: Option<String>,
    tool_calls: Option<Vec<ToolCallJson>>,
    usage: Option<UsageJson>,
    #[serde(default)]
    hang: bool,
    chunks: Option<Vec<String>>,
    delay_ms: Option<u64>,
    error: Option<ErrorJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a tool call `{\"id\", \"name\", \"arguments\"}`")]
struct ToolCallJson {
    id: String,
    name: String,
    arguments: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a usage object")]
struct UsageJson {
    #[serde(default)]
    input: u64,
    #[serde(default)]
    cache_read: u64,
    #[serde(default)]
    cache_write: u64,
    #[serde(default)]
    output: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "an error `{\"kind\", \"message\"?}`")]
struct ErrorJson {
    kind: ScriptErrorKind,
    message: Option<String>,
}

impl Script {
    /// Reads and checks the script at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Script, ScriptError> {
        let path = path.as_ref();
        let text =
            std::fs::read_to_string(path).map_err(|source| ScriptError::Read { path: path.to_owned(), source })?;
        Script::parse(path, &text)
    }

    /// Checks a script's text; `path` is only used to name it in errors.
    pub fn parse(path: impl AsRef<Path>, text: &str) -> Result<Script, ScriptError> {
        let path = path.as_ref().to_owned();
        let malformed = |at: String, message: String| ScriptError::Malformed { path: path.clone(), at, message };
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let file: FileJson = serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|e| malformed(e.path().to_string(), e.into_inner().to_string()))?;
        deserializer.end().map_err(|e| malformed(".".to_owned(), e.to_string()))?;
        script_from_json(&path, String::new(), file).map_err(|(at, message)| malformed(at, message))
    }

    /// A script built in code (tests of other crates use this).
    pub fn from_turns(path: impl Into<PathBuf>, turns: Vec<ScriptTurn>) -> Script {
        Script { path: path.into(), scope: String::new(), turns, children: None }
    }

    /// The same script with child scripts, as a file's `children` list gives them.
    pub fn with_children(mut self, children: Vec<Script>) -> Script {
        let scoped = children.into_iter().enumerate().map(|(n, child)| child.scoped(&format!("children[{n}]")));
        self.children = Some(scoped.collect());
        self
    }

    fn scoped(mut self, scope: &str) -> Script {
        self.scope = scope.to_owned();
        if let Some(children) = self.children.take() {
            let nested = children.into_iter().enumerate().map(|(n, c)| c.scoped(&format!("{scope}.children[{n}]")));
            self.children = Some(nested.collect());
        }
        self
    }

    /// The file the script came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file and, for a child's script, where in the file it is:
    /// `s.json` or `s.json (children[1])`. Errors name a script by this.
    pub fn name(&self) -> String {
        if self.scope.is_empty() {
            self.path.display().to_string()
        } else {
            format!("{} ({})", self.path.display(), self.scope)
        }
    }

    /// The turns, in replay order.
    pub fn turns(&self) -> &[ScriptTurn] {
        &self.turns
    }

    /// The child scripts, in the order children take them; `None` when the
    /// file gives no `children` list (children then share `turns`).
    pub fn children(&self) -> Option<&[Script]> {
        self.children.as_deref()
    }
}

/// One script of the file (the file itself at `scope` ""), its children
/// included; errors carry the JSON path of the fault.
fn script_from_json(path: &Path, scope: String, file: FileJson) -> Result<Script, (String, String)> {
    let at = |rest: String| if scope.is_empty() { rest } else { format!("{scope}.{rest}") };
    let turns = file
        .turns
        .into_iter()
        .enumerate()
        .map(|(n, turn)| turn_from_json(turn).map_err(|(field, message)| (at(format!("turns[{n}]{field}")), message)))
        .collect::<Result<_, _>>()?;
    let children = file
        .children
        .map(|children| {
            children
                .into_iter()
                .enumerate()
                .map(|(n, child)| script_from_json(path, at(format!("children[{n}]")), child))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    Ok(Script { path: path.to_owned(), scope, turns, children })
}

/// Checks what serde cannot: an error turn has nothing else, and a turn's
/// tool-call ids are present and distinct.
fn turn_from_json(turn: TurnJson) -> Result<ScriptTurn, (String, String)> {
    if let Some(error) = turn.error {
        let extra: Vec<&str> = [
            ("text", turn.text.is_some()),
            ("thinking", turn.thinking.is_some()),
            ("tool_calls", turn.tool_calls.is_some()),
            ("usage", turn.usage.is_some()),
            ("hang", turn.hang),
            ("chunks", turn.chunks.is_some()),
            ("delay_ms", turn.delay_ms.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect();
        if !extra.is_empty() {
            return Err((
                String::new(),
                format!("an error turn has only `error`, but this one also has `{}`", extra.join("`, `")),
            ));
        }
        return Ok(ScriptTurn::Error { kind: error.kind, message: error.message });
    }
    if turn.text.is_some() && turn.chunks.is_some() {
        return Err((
            String::new(),
            "a turn gives its text as `text` or as `chunks`, but this one has both".to_owned(),
        ));
    }
    let mut seen = HashSet::new();
    let mut tool_calls = Vec::new();
    for (n, call) in turn.tool_calls.unwrap_or_default().into_iter().enumerate() {
        if call.id.is_empty() || call.name.is_empty() {
            return Err((format!(".tool_calls[{n}]"), "a tool call needs a non-empty `id` and `name`".to_owned()));
        }
        if !seen.insert(call.id.clone()) {
            return Err((format!(".tool_calls[{n}].id"), format!("the id `{}` is used twice in this turn", call.id)));
        }
        tool_calls.push(ToolCall {
            id: ToolCallId(call.id),
            name: call.name,
            arguments: serde_json::Value::Object(call.arguments),
        });
    }
    let usage = turn.usage.map(|u| Usage {
        input: u.input,
        cache_read: u.cache_read,
        cache_write: u.cache_write,
        output: u.output,
    });
    let chunks = turn.chunks.unwrap_or_default();
    Ok(ScriptTurn::Reply(ScriptReply {
        text: turn.text.unwrap_or_else(|| chunks.concat()),
        thinking: turn.thinking,
        tool_calls,
        usage,
        hang: turn.hang,
        chunks,
        delay_ms: turn.delay_ms.unwrap_or(0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_malformed(text: &str, expected: &str) {
        let err = Script::parse("s.json", text).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }

    #[test]
    fn every_turn_shape_loads() {
        let script = Script::parse(
            "s.json",
            r#"{"turns": [
                {"text": "hi", "thinking": "hmm", "usage": {"input": 10, "cache_read": 5, "cache_write": 2, "output": 3}},
                {"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "a"}}]},
                {},
                {"error": {"kind": "context_overflow"}},
                {"error": {"kind": "rate_limit", "message": "slow"}},
                {"error": {"kind": "server"}},
                {"error": {"kind": "auth"}}
            ]}"#,
        )
        .unwrap();
        assert_eq!(script.turns().len(), 7);
        let slow = Script::parse("s.json", r#"{"turns": [{"chunks": ["Hel", "lo."], "delay_ms": 300}]}"#).unwrap();
        let ScriptTurn::Reply(reply) = &slow.turns()[0] else { panic!("{slow:?}") };
        assert_eq!((reply.text.as_str(), reply.chunks.len(), reply.delay_ms), ("Hello.", 2, 300));
        assert_eq!(
            script.turns()[0],
            ScriptTurn::Reply(ScriptReply {
                text: "hi".into(),
                thinking: Some("hmm".into()),
                tool_calls: vec![],
                usage: Some(Usage { input: 10, cache_read: 5, cache_write: 2, output: 3 }),
                hang: false,
                chunks: vec![],
                delay_ms: 0,
            })
        );
        assert_eq!(
            script.turns()[4],
            ScriptTurn::Error { kind: ScriptErrorKind::RateLimit, message: Some("slow".into()) }
        );
    }

    #[test]
    fn malformed_files_name_the_file_and_the_path() {
        check_malformed(
            "{\"turns\": [",
            "script s.json is malformed at turns: EOF while parsing a list at line 1 column 11",
        );
        check_malformed(
            "[]",
            "script s.json is malformed at .: invalid length 0, expected an object `{\"turns\": [...]}` at line 1 column 2",
        );
        check_malformed(
            r#"{"turn": []}"#,
            "script s.json is malformed at turn: unknown field `turn`, expected `turns` or `children` at line 1 column 7",
        );
        check_malformed(
            r#"{"turns": [{"text": "a"}, {"tool_call": []}]}"#,
            "script s.json is malformed at turns[1].tool_call: unknown field `tool_call`, expected one of `text`, `thinking`, `tool_calls`, `usage`, `hang`, `chunks`, `delay_ms`, `error` at line 1 column 38",
        );
        check_malformed(
            r#"{"turns": [{"tool_calls": [{"id": "c", "name": "read", "arguments": "{}"}]}]}"#,
            "script s.json is malformed at turns[0].tool_calls[0].arguments: invalid type: string \"{}\", expected a map at line 1 column 72",
        );
        check_malformed(
            r#"{"turns": [{"usage": {"input": -1}}]}"#,
            "script s.json is malformed at turns[0].usage.input: invalid value: integer `-1`, expected u64 at line 1 column 33",
        );
        check_malformed(
            r#"{"turns": [{"error": {"kind": "timeout"}}]}"#,
            "script s.json is malformed at turns[0].error.kind: unknown variant `timeout`, expected one of `context_overflow`, `rate_limit`, `server`, `auth` at line 1 column 39",
        );
        check_malformed(
            r#"{"turns": [{"error": {"kind": "auth"}, "text": "x"}]}"#,
            "script s.json is malformed at turns[0]: an error turn has only `error`, but this one also has `text`",
        );
        check_malformed(
            r#"{"turns": [{"error": {"kind": "auth"}, "delay_ms": 5}]}"#,
            "script s.json is malformed at turns[0]: an error turn has only `error`, but this one also has `delay_ms`",
        );
        check_malformed(
            r#"{"turns": [{"text": "a", "chunks": ["a"]}]}"#,
            "script s.json is malformed at turns[0]: a turn gives its text as `text` or as `chunks`, but this one has both",
        );
        check_malformed(
            r#"{"turns": [{"tool_calls": [{"id": "c", "name": "a", "arguments": {}}, {"id": "c", "name": "b", "arguments": {}}]}]}"#,
            "script s.json is malformed at turns[0].tool_calls[1].id: the id `c` is used twice in this turn",
        );
        check_malformed(
            r#"{"turns": []} x"#,
            "script s.json is malformed at .: trailing characters at line 1 column 15",
        );
    }

    #[test]
    fn child_scripts_load_with_their_scope_and_their_own_children() {
        let script = Script::parse(
            "s.json",
            r#"{"turns": [{"text": "parent"}], "children": [
                {"turns": [{"text": "first child"}]},
                {"turns": [], "children": [{"turns": [{"text": "grandchild"}]}]}
            ]}"#,
        )
        .unwrap();
        let children = script.children().unwrap();
        assert_eq!(children.len(), 2);
        assert_eq!(children[0].name(), "s.json (children[0])");
        assert_eq!(children[1].children().unwrap()[0].name(), "s.json (children[1].children[0])");
        assert!(children[0].children().is_none());
        assert_eq!(Script::parse("s.json", r#"{"turns": []}"#).unwrap().children(), None);
    }

    #[test]
    fn faults_in_child_scripts_name_their_path() {
        check_malformed(
            r#"{"turns": [], "children": [{"turns": []}, {"turns": [{"tool_call": []}]}]}"#,
            "script s.json is malformed at children[1].turns[0].tool_call: unknown field `tool_call`, expected one of `text`, `thinking`, `tool_calls`, `usage`, `hang`, `chunks`, `delay_ms`, `error` at line 1 column 65",
        );
        check_malformed(
            r#"{"turns": [], "children": [{"turns": [{"error": {"kind": "auth"}, "text": "x"}]}]}"#,
            "script s.json is malformed at children[0].turns[0]: an error turn has only `error`, but this one also has `text`",
        );
        check_malformed(
            r#"{"turns": [], "children": [{}]}"#,
            "script s.json is malformed at children[0]: missing field `turns` at line 1 column 29",
        );
    }

    #[test]
    fn an_unreadable_file_is_named() {
        let err = Script::load("/nonexistent/seri-script.json").unwrap_err();
        assert!(err.to_string().starts_with("cannot read script /nonexistent/seri-script.json: "), "{err}");
    }
}
