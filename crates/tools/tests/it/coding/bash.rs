//! `bash` with real processes: output, exit status, caps, and the process
//! group (and every marked process that left it) killed on timeout, on exit
//! and when the call is dropped. Every
//! timeout here is short; no test asserts how long anything took.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use seri_tools::{CommandExit, ToolError, ToolFacts, ToolOutcome};

use super::world::{World, shown};

/// Whether a process is gone: no longer in /proc, or a zombie waiting to be
/// reaped by whoever inherited it. SIGKILL is delivered asynchronously, so
/// this waits for it (up to ten seconds) instead of asserting at once.
pub(crate) async fn is_dead(pid: u32) -> bool {
    for _ in 0..1_000 {
        let dead = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // The state follows the parenthesised command name.
            Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
        };
        if dead {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// The pid a command wrote to a file.
pub(crate) fn pid_in(path: &Path) -> u32 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// Waits until a command has written a whole line to `path`.
pub(crate) async fn wait_for_line(path: &Path) {
    while !std::fs::read_to_string(path).is_ok_and(|text| text.ends_with('\n')) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn captures_stdout_stderr_and_the_exit_code() {
    let world = World::new();
    let result = shown(world.call("bash", json!({"command": "echo out; echo err >&2; exit 3"})).await);
    assert_eq!(result, "ok: exit code: 3\nstdout:\nout\nstderr:\nerr");
    let result = shown(world.call("bash", json!({"command": "true"})).await);
    assert_eq!(result, "ok: exit code: 0\n(no output)");
    let result = shown(world.call("bash", json!({"command": "kill -TERM $$"})).await);
    assert_eq!(result, "ok: killed by signal 15 (SIGTERM)\n(no output)");
}

#[tokio::test]
async fn reports_how_the_command_ended_as_facts_as_well_as_text() {
    let world = World::new();
    let exit = |result: Result<ToolOutcome, ToolError>| {
        let facts = match result {
            Ok(outcome) => outcome.facts,
            Err(error) => error.facts(),
        };
        facts.as_ref().and_then(ToolFacts::command).map(|run| run.exit)
    };
    assert_eq!(exit(world.call("bash", json!({"command": "exit 3"})).await), Some(CommandExit::Code { code: 3 }));
    let killed = world.call("bash", json!({"command": "kill -TERM $$"})).await;
    assert_eq!(exit(killed), Some(CommandExit::Signal { signal: 15 }));
    let timed_out = world.call("bash", json!({"command": "sleep 30", "timeoutMs": 200})).await;
    assert_eq!(exit(timed_out), Some(CommandExit::Timeout));
    assert_eq!(exit(world.call("bash", json!({"command": ""})).await), None, "a command that never ran has none");
    assert_eq!(exit(world.call("read_file", json!({"path": "missing"})).await), None);
}

#[tokio::test]
async fn runs_in_the_working_directory_with_no_input() {
    let world = World::new();
    let result = shown(world.call("bash", json!({"command": "pwd; cat; echo done"})).await);
    assert_eq!(result, format!("ok: exit code: 0\nstdout:\n{}\ndone", world.root.display()));
}

#[tokio::test]
async fn long_output_is_elided_with_its_size() {
    let world = World::new();
    let command = "head -c 100000 /dev/zero | tr '\\0' a; echo; echo the end";
    let result = shown(world.call("bash", json!({"command": command})).await);
    assert!(result.starts_with(&format!("ok: exit code: 0\nstdout:\n{}", "a".repeat(8 * 1024))), "head kept");
    assert!(result.contains("\n… [65.7 KiB elided] …\n"), "gap named: {}", &result[8_000..8_300]);
    assert!(result.ends_with("aaaa\nthe end"), "tail kept");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_tree() {
    let world = World::new();
    let command = "echo $$ > leader.pid; sleep 30 & echo $! > child.pid; echo started; wait";
    let result = shown(world.call("bash", json!({"command": command, "timeoutMs": 500})).await);
    assert_eq!(
        result,
        "error: the command did not finish within 500 ms, so it and every process it started were killed. Give a larger timeoutMs if it needs longer, or make it faster.\nstdout:\nstarted"
    );
    assert!(is_dead(pid_in(&world.root.join("leader.pid"))).await, "bash itself is gone");
    assert!(is_dead(pid_in(&world.root.join("child.pid"))).await, "its background child is gone");
}

#[tokio::test]
async fn what_a_command_leaves_running_is_killed_when_it_exits() {
    let world = World::new();
    let command = "sleep 30 & echo $! > child.pid; echo started";
    // Were the background sleep left alive, it would hold stdout open and
    // the call would end at the timeout with a note instead.
    let result = shown(world.call("bash", json!({"command": command, "timeoutMs": 20_000})).await);
    assert_eq!(result, "ok: exit code: 0\nstdout:\nstarted");
    assert!(is_dead(pid_in(&world.root.join("child.pid"))).await);
}

#[tokio::test]
async fn a_process_that_left_the_group_is_killed_when_the_command_exits() {
    let world = World::new();
    // setsid puts the inner shell in a session of its own, out of reach of
    // the group kill; the call's mark in its environment still finds it.
    // bash waits until it has left the group, so the kill at bash's exit
    // cannot win the race.
    let command =
        "setsid sh -c 'echo $$ > left.pid; sleep 30' & until [ -s left.pid ]; do sleep 0.01; done; echo started";
    let result = shown(world.call("bash", json!({"command": command, "timeoutMs": 20_000})).await);
    assert_eq!(result, "ok: exit code: 0\nstdout:\nstarted", "the output was not held open");
    assert!(is_dead(pid_in(&world.root.join("left.pid"))).await, "the process that left the group is gone");
}

#[tokio::test]
async fn output_held_open_by_a_process_that_scrubbed_its_environment_ends_at_the_timeout() {
    let world = World::new();
    // `env -i` drops the call's mark too: the one way out, which the
    // security model names. Reading still stops at the timeout.
    let command = "setsid env -i sh -c 'echo > left; sleep 2' & until [ -e left ]; do sleep 0.01; done; echo started";
    let result = shown(world.call("bash", json!({"command": command, "timeoutMs": 300})).await);
    assert_eq!(
        result,
        "ok: exit code: 0 (a process it started outside its process group kept the output open; reading stopped at the timeout)\nstdout:\nstarted"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_whole_process_tree() {
    let world = World::new();
    let command = "echo $$ > leader.pid; sleep 30 & echo $! > child.pid; wait";
    let child_file = world.root.join("child.pid");
    tokio::select! {
        result = world.call("bash", json!({"command": command, "timeoutMs": 60_000})) => {
            panic!("the command finished: {}", shown(result));
        }
        () = wait_for_line(&child_file) => {}
    }
    // The call's future was dropped when select! returned.
    assert!(is_dead(pid_in(&world.root.join("leader.pid"))).await, "bash itself is gone");
    assert!(is_dead(pid_in(&child_file)).await, "its background child is gone");
}

#[tokio::test]
async fn bad_inputs_are_refused() {
    let world = World::new();
    let check = |input| {
        let world = &world;
        async move { shown(world.call("bash", input).await) }
    };
    assert_eq!(check(json!({"command": "  "})).await, "error: `command`: empty");
    assert_eq!(
        check(json!({"command": "ls", "timeoutMs": 0})).await,
        "error: `timeoutMs`: expected a whole number of at least 1, got 0"
    );
    assert_eq!(
        check(json!({"command": "ls", "timeoutMs": 600_001})).await,
        "error: `timeoutMs`: 600001; at most 600000"
    );
    assert_eq!(
        check(json!({"cmd": "ls"})).await,
        "error: `cmd`: not a field of this input (expected one of: command, timeoutMs)"
    );
}
