//! What each coding tool reports as values beside its text: the facts the
//! run loop stores in the `tool_result` and clients draw rows from.

use serde_json::json;
use seri_core::{FileChange, FileRead, Listing, SearchRun};
use seri_tools::{CommandExit, CommandRun, ToolFacts};

use super::world::World;

async fn facts(world: &World, tool: &str, input: serde_json::Value) -> Option<ToolFacts> {
    match world.call(tool, input).await {
        Ok(outcome) => outcome.facts,
        Err(error) => error.facts(),
    }
}

#[tokio::test]
async fn bash_reports_the_command_its_exit_its_timeout_and_its_last_lines() {
    let world = World::new();
    let command = "for i in $(seq 1 15); do echo line $i; done; echo oops >&2; exit 3";
    let Some(ToolFacts::Command(run)) = facts(&world, "bash", json!({"command": command, "timeoutMs": 9000})).await
    else {
        panic!("bash reports a command run")
    };
    let CommandRun { command: ran, exit, timeout, tail, lines, .. } = run;
    assert_eq!((ran.as_str(), exit, timeout, lines), (command, CommandExit::Code { code: 3 }, 9000, 16));
    let expected: Vec<String> = (7..=15).map(|i| format!("line {i}")).chain(["oops".to_owned()]).collect();
    assert_eq!(tail, expected.join("\n"), "the last ten lines, stdout then stderr");
    let Some(ToolFacts::Command(killed)) = facts(&world, "bash", json!({"command": "kill -KILL $$"})).await else {
        panic!("a killed command reports its run")
    };
    assert_eq!(killed.exit, CommandExit::Signal { signal: 9 });
    assert_eq!(killed.timeout, seri_tools::coding::bash::DEFAULT_TIMEOUT_MS);
    let Some(ToolFacts::Command(timed_out)) =
        facts(&world, "bash", json!({"command": "echo started; sleep 30", "timeoutMs": 200})).await
    else {
        panic!("a command killed at its timeout reports its run")
    };
    assert_eq!((timed_out.exit, timed_out.timeout, timed_out.tail.as_str()), (CommandExit::Timeout, 200, "started"));
    assert!(timed_out.duration >= 200, "it ran until its timeout: {}", timed_out.duration);
}

#[tokio::test]
async fn edit_and_write_file_report_the_path_the_diff_and_the_counts() {
    let world = World::new();
    let created = facts(&world, "write_file", json!({"path": "src/a.txt", "content": "one\ntwo\nthree\n"})).await;
    assert_eq!(
        created,
        Some(ToolFacts::Change(FileChange {
            path: "src/a.txt".into(),
            created: true,
            diff: "@@ -0,0 +1,3 @@\n+one\n+two\n+three\n".into(),
            added: 3,
            removed: 0,
            whole: None,
        }))
    );
    let edited = facts(&world, "edit", json!({"path": "src/a.txt", "old": "two\n", "new": "2\n2b\n"})).await;
    assert_eq!(
        edited,
        Some(ToolFacts::Change(FileChange {
            path: "src/a.txt".into(),
            created: false,
            diff: "@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2b\n three\n".into(),
            added: 2,
            removed: 1,
            whole: None,
        }))
    );
    // Counts cover the whole change even where the diff shown is cut.
    let long: String = (1..=500).map(|n| format!("{n}\n")).collect();
    facts(&world, "write_file", json!({"path": "long.txt", "content": long})).await;
    let Some(ToolFacts::Change(replaced)) =
        facts(&world, "write_file", json!({"path": "long.txt", "content": long.replace('1', "one")})).await
    else {
        panic!("write_file reports a change")
    };
    let changed = long.lines().filter(|l| l.contains('1')).count() as u64;
    assert_eq!((replaced.added, replaced.removed, replaced.created), (changed, changed, false));
    assert!(replaced.diff.contains("more lines"), "the diff is cut: {}", replaced.diff);
    // The whole diff is kept with it, for a person who wants all of it.
    let whole = replaced.whole.expect("kept whole where the diff is cut");
    assert!(!whole.contains("more lines"), "{whole}");
    assert_eq!(whole.lines().filter(|l| l.starts_with('+')).count() as u64, changed);
}

#[tokio::test]
async fn read_file_reports_the_path_the_size_and_the_range_shown() {
    let world = World::new();
    let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    world.write("notes.txt", &text);
    let whole = facts(&world, "read_file", json!({"path": "notes.txt"})).await;
    let read = |from, to| {
        Some(ToolFacts::Read(FileRead { path: "notes.txt".into(), lines: 30, bytes: text.len() as u64, from, to }))
    };
    assert_eq!(whole, read(Some(1), Some(30)));
    let page = facts(&world, "read_file", json!({"path": "notes.txt", "offset": 11, "limit": 5})).await;
    assert_eq!(page, read(Some(11), Some(15)));
    world.write("empty.txt", "");
    assert_eq!(
        facts(&world, "read_file", json!({"path": "empty.txt"})).await,
        Some(ToolFacts::Read(FileRead { path: "empty.txt".into(), lines: 0, bytes: 0, from: None, to: None }))
    );
    assert_eq!(facts(&world, "read_file", json!({"path": "missing.txt"})).await, None, "a failed read has none");
}

#[tokio::test]
async fn grep_and_list_report_what_they_searched_and_how_much_they_found() {
    let world = World::new();
    world.write("src/a.rs", "fn a() {}\nfn b() {}\n");
    world.write("src/b.rs", "fn c() {}\n");
    world.write("notes.md", "fn in prose\n");
    assert_eq!(
        facts(&world, "grep", json!({"pattern": "^fn", "glob": "*.rs"})).await,
        Some(ToolFacts::Search(SearchRun {
            pattern: "^fn".into(),
            path: ".".into(),
            glob: Some("*.rs".into()),
            matches: 3,
            files: 2,
        }))
    );
    assert_eq!(
        facts(&world, "grep", json!({"pattern": "nothing here", "path": "src"})).await,
        Some(ToolFacts::Search(SearchRun {
            pattern: "nothing here".into(),
            path: "src".into(),
            glob: None,
            matches: 0,
            files: 0,
        }))
    );
    assert_eq!(
        facts(&world, "list", json!({"path": "src"})).await,
        Some(ToolFacts::List(Listing { path: "src".into(), entries: 2 }))
    );
}
