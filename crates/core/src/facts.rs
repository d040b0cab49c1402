//! What a tool call came to, as values: [`ToolFacts`], stored in the
//! `tool_result` event next to the text the model reads.
//!
//! The text says the same things in words (`exit code: 3`, `Edited
//! src/lib.rs: …`); nothing reads them back out of it. A client (the CLI's
//! tool lines, the web page's tool rows, a trajectory) reads these fields.
//!
//! Every key is one lowercase word, so the facts read the same in the two
//! JSON families that carry them: the stored event and the API's event view
//! (camelCase) and the stream-json lines (snake_case). Times and limits are
//! whole milliseconds; counts are exact over the whole change or file, even
//! where the text or the diff shown is cut.

use serde::{Deserialize, Serialize};

/// What a tool call came to, by kind (`kind` on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolFacts {
    /// A command ran (`bash`).
    Command(CommandRun),
    /// A file was written (`edit`, `write_file`).
    Change(FileChange),
    /// A file was read (`read_file`).
    Read(FileRead),
    /// Files were searched (`grep`).
    Search(SearchRun),
    /// A folder was listed (`list`).
    List(Listing),
}

/// A command that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The command, as given to `bash -c`.
    pub command: String,
    /// How it ended.
    #[serde(flatten)]
    pub exit: CommandExit,
    /// The timeout it had, in milliseconds.
    pub timeout: u64,
    /// How long it ran, in milliseconds: until it exited, or until it was
    /// killed at its timeout.
    pub duration: u64,
    /// The last lines it printed (stdout, then stderr), for a person; the
    /// model reads the whole capped output in the result's text.
    #[serde(default)]
    pub tail: String,
    /// How many lines it printed in all (of the captured output).
    #[serde(default)]
    pub lines: u64,
}

/// How a command ended (`exit` on the wire, with `code` or `signal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "exit", rename_all = "snake_case")]
pub enum CommandExit {
    /// It exited with `code`.
    Code {
        /// The exit code.
        code: i32,
    },
    /// A signal ended it.
    Signal {
        /// The signal's number.
        signal: i32,
    },
    /// It ran past its timeout, and its process group was killed.
    Timeout,
    /// It ended, but the system reported neither a code nor a signal.
    Unknown,
}

impl CommandExit {
    /// Whether it exited with code 0.
    pub fn succeeded(self) -> bool {
        self == CommandExit::Code { code: 0 }
    }
}

/// A file a call wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The file, as the call's result names it (relative to the working
    /// directory inside it).
    pub path: String,
    /// Whether the call created it.
    #[serde(default)]
    pub created: bool,
    /// A unified diff of the change (`@@` hunks), cut after a number of
    /// lines with a `… N more lines` line.
    pub diff: String,
    /// Lines added, over the whole change.
    pub added: u64,
    /// Lines removed, over the whole change.
    pub removed: u64,
    /// The whole diff, when `diff` is cut (itself cut only past a far
    /// larger number of lines); absent when `diff` is all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<String>,
}

/// A file a call read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRead {
    /// The file, as the call's result names it.
    pub path: String,
    /// Its lines, in all.
    pub lines: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The first line shown, counting from 1; absent for an empty file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<u64>,
    /// The last line shown; absent for an empty file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<u64>,
}

impl FileRead {
    /// Whether the call showed only part of the file.
    pub fn partial(&self) -> bool {
        self.from.is_some_and(|f| f > 1) || self.to.is_some_and(|t| t < self.lines)
    }
}

/// A search of files for a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchRun {
    /// The regular expression.
    pub pattern: String,
    /// The folder or file searched, as the result names it.
    pub path: String,
    /// The glob that narrowed it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Matching lines, in all (not only those shown).
    pub matches: u64,
    /// Files with at least one match.
    pub files: u64,
}

/// A folder listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// The folder, as the result names it.
    pub path: String,
    /// Entries found, in all (not only those shown).
    pub entries: u64,
}

impl ToolFacts {
    /// The diff, for a call that changed a file.
    pub fn diff(&self) -> Option<&str> {
        match self {
            ToolFacts::Change(change) => Some(&change.diff),
            _ => None,
        }
    }

    /// The command's run, for a call that ran one.
    pub fn command(&self) -> Option<&CommandRun> {
        match self {
            ToolFacts::Command(run) => Some(run),
            _ => None,
        }
    }

    /// The paths the call read or wrote, as its result names them.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            ToolFacts::Command(_) => Vec::new(),
            ToolFacts::Change(FileChange { path, .. })
            | ToolFacts::Read(FileRead { path, .. })
            | ToolFacts::Search(SearchRun { path, .. })
            | ToolFacts::List(Listing { path, .. }) => vec![path],
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round_trip(facts: &ToolFacts) -> serde_json::Value {
        let value = serde_json::to_value(facts).unwrap_or_default();
        let back: ToolFacts = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{e}: {value}"));
        assert_eq!(&back, facts);
        value
    }

    #[test]
    fn a_command_reads_as_one_flat_object() {
        let run = |exit| {
            ToolFacts::Command(CommandRun {
                command: "cargo test".into(),
                exit,
                timeout: 120_000,
                duration: 532,
                tail: "ok".into(),
                lines: 1,
            })
        };
        assert_eq!(
            round_trip(&run(CommandExit::Code { code: 3 })),
            json!({ "kind": "command", "command": "cargo test", "exit": "code", "code": 3,
                    "timeout": 120_000, "duration": 532, "tail": "ok", "lines": 1 })
        );
        assert_eq!(round_trip(&run(CommandExit::Signal { signal: 9 }))["signal"], 9);
        assert_eq!(round_trip(&run(CommandExit::Timeout))["exit"], "timeout");
        assert_eq!(round_trip(&run(CommandExit::Unknown))["exit"], "unknown");
    }

    #[test]
    fn every_key_is_one_lowercase_word() {
        let all = [
            ToolFacts::Change(FileChange {
                path: "a".into(),
                created: true,
                diff: "@@ -0,0 +1 @@\n+x\n".into(),
                added: 1,
                removed: 0,
                whole: Some("@@ -0,0 +1 @@\n+x\n".into()),
            }),
            ToolFacts::Read(FileRead { path: "a".into(), lines: 9, bytes: 80, from: Some(2), to: Some(3) }),
            ToolFacts::Search(SearchRun {
                pattern: "fn".into(),
                path: ".".into(),
                glob: Some("*.rs".into()),
                matches: 3,
                files: 2,
            }),
            ToolFacts::List(Listing { path: ".".into(), entries: 4 }),
        ];
        for facts in &all {
            let value = round_trip(facts);
            for key in value.as_object().into_iter().flat_map(|o| o.keys()) {
                assert!(key.chars().all(|c| c.is_ascii_lowercase()), "{key} in {value}");
            }
        }
    }

    #[test]
    fn a_partial_read_is_one_that_left_lines_out() {
        let read = |from, to| FileRead { path: "a".into(), lines: 10, bytes: 1, from, to };
        assert!(!read(Some(1), Some(10)).partial());
        assert!(read(Some(2), Some(10)).partial());
        assert!(read(Some(1), Some(9)).partial());
        assert!(!read(None, None).partial());
    }
}
