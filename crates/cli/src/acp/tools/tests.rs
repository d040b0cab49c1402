//! The editor's view of each tool call: kinds, titles, locations, diffs, endings.

use std::path::Path;

use serde_json::json;
use seri_core::{CommandExit, CommandRun, FileChange, ToolFacts};

use super::*;

fn call<'a>(id: &'a str, name: &'a str, arguments: &'a Value) -> Call<'a> {
    Call { id, name, arguments, cwd: Path::new("/work") }
}

#[test]
fn each_tool_has_its_kind_title_and_locations() {
    let cases = [
        ("read_file", json!({"path": "src/lib.rs", "offset": 40})),
        ("edit", json!({"path": "a.rs", "old": "x", "new": "y"})),
        ("write_file", json!({"path": "/abs/b.rs", "content": "z"})),
        ("grep", json!({"pattern": "fn main", "path": "src"})),
        ("list", json!({})),
        ("bash", json!({"command": "cargo test\necho done"})),
        ("plan", json!({"steps": []})),
        ("continue_session", json!({})),
        ("mcp__docs__search", json!({"q": "x"})),
    ];
    let shown: Vec<Value> = cases
        .iter()
        .map(|(name, arguments)| {
            let call = call("c1", name, arguments);
            serde_json::to_value(call.started(None)).unwrap()
        })
        .collect();
    insta::assert_json_snapshot!(shown);
}

#[test]
fn a_write_shows_the_file_it_replaces_and_an_edit_its_snippets() {
    let write = json!({"path": "notes.txt", "content": "new\n"});
    let edit = json!({"path": "notes.txt", "old": "a", "new": "b"});
    let shown = json!({
        "write over a file": call("w", "write_file", &write).preview(Some("old\n")),
        "write of a new file": call("w", "write_file", &write).preview(None),
        "edit": call("e", "edit", &edit).preview(None),
    });
    insta::assert_json_snapshot!(shown);
}

#[test]
fn a_finished_call_says_how_it_ended() {
    let bash = json!({"command": "cargo test"});
    let run = ToolFacts::Command(CommandRun {
        command: "cargo test".to_owned(),
        exit: CommandExit::Code { code: 101 },
        timeout: 120_000,
        duration: 2_000,
        tail: "test a ... FAILED\n```odd```".to_owned(),
        lines: 40,
    });
    let edit = json!({"path": "a.rs", "old": "x", "new": "y"});
    let change = ToolFacts::Change(FileChange {
        path: "a.rs".to_owned(),
        created: false,
        diff: "-x\n+y\n".to_owned(),
        added: 1,
        removed: 1,
        whole: None,
    });
    let refused = json!({"path": "b.rs", "content": "z"});
    let shown = json!({
        "failed command": call("b", "bash", &bash).finished(&Ended { is_error: true, summary: "exit 101", facts: Some(&run) }, None),
        "edit": call("e", "edit", &edit).finished(&Ended { is_error: false, summary: "edited a.rs", facts: Some(&change) }, None),
        "refused": call("w", "write_file", &refused).finished(&Ended { is_error: true, summary: "refused: plan mode only reads", facts: None }, None),
    });
    insta::assert_json_snapshot!(shown);
}
