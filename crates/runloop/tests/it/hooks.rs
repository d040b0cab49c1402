//! Hooks bounded: each test here fails without its fix. A hook that never
//! reads a big input ends at its timeout; what a hook forked ends with it;
//! fifty megabytes of hook output come to a capped text; cancelling a run
//! ends the hook running and the run `cancelled`, its session free; a
//! guard the sandbox cannot contain refuses the call; the provider keys are
//! not in a hook's environment. (Sandboxing itself, which needs seri's
//! launcher, is checked by the CLI's hook tests.)

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use seri_core::{AgentId, EventBody};
use seri_runloop::shell_hooks::Hooks;
use seri_runloop::{Command, Quiet, RunStatus, RuntimeSettings, Submitted};
use seri_tools::{Sandbox, SandboxMode, SandboxPolicy, Secrets, WhenUnavailable};

use crate::support::{Harness, Options, call, ran, send, text};

/// Far more than any of these hooks needs to end (their timeouts are 1–2 s).
const GENEROUS: Duration = Duration::from_secs(60);

fn settings(hooks: Value) -> Options {
    Options {
        settings: RuntimeSettings { hooks: Hooks::from_config(&hooks).unwrap(), ..RuntimeSettings::default() },
        ..Options::default()
    }
}

fn hook(command: &str, timeout: u64) -> Value {
    json!([{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}])
}

/// A value no other test's processes carry.
fn marker(name: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

/// The processes whose environment holds `HOOK_TEST_MARK=mark`.
fn marked(mark: &str) -> Vec<PathBuf> {
    let wanted = format!("HOOK_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(|n| n.parse::<u32>().is_ok()))
        .filter(|entry| {
            std::fs::read(entry.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_bytes()))
        })
        .map(|entry| entry.path())
        .collect()
}

#[tokio::test]
async fn a_guard_that_never_reads_a_big_input_ends_at_its_timeout() {
    // 300 KB of arguments: far over a pipe's 64 KiB buffer, so writing them
    // to a hook that never reads blocks until the hook is ended.
    let content = "a".repeat(300_000);
    let h = Harness::with(
        json!([call("w1", "write_file", json!({"path": "big.txt", "content": content})), text("Done.")]),
        settings(json!({"PreToolUse": hook("sleep 3604", 2)})),
    );
    let started = Instant::now();
    let outcomes = tokio::time::timeout(GENEROUS, h.send("Write it.")).await.expect("the hook's timeout ended it");
    assert!(started.elapsed() < GENEROUS);
    assert_eq!(outcomes[0].status, RunStatus::Succeeded, "a timed-out hook blocks nothing: {outcomes:?}");
}

#[tokio::test]
async fn what_a_hook_forked_ends_with_it_at_its_timeout() {
    let mark = marker("forks");
    let h = Harness::with(
        json!([text("Done.")]),
        settings(json!({"Stop": hook(&format!("export HOOK_TEST_MARK={mark}; sleep 300 & sleep 300"), 1)})),
    );
    let outcomes = tokio::time::timeout(GENEROUS, h.send("Go.")).await.expect("the hook's timeout ended it");
    assert_eq!(outcomes[0].status, RunStatus::Succeeded);
    // SIGKILL is sent before the hook's round ends; the processes take a
    // moment to go.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marked(&mark).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(marked(&mark), Vec::<PathBuf>::new(), "nothing the hook started outlives it");
}

#[tokio::test]
async fn fifty_megabytes_of_hook_output_come_to_a_capped_text() {
    const FIFTY_MB: &str = "head -c 50000000 /dev/zero | tr '\\0'";
    let h = Harness::with(
        json!([call("g1", "list", json!({})), call("p1", "read_file", json!({"path": "a.txt"})), text("Done.")]),
        settings(json!({
            "PreToolUse": [{"matcher": "list", "hooks": [{"type": "command", "command": format!("cat > /dev/null; {FIFTY_MB} e >&2; exit 2")}]}],
            "PostToolUse": [{"matcher": "read_file", "hooks": [{"type": "command", "command":
                "cat > /dev/null; printf '{\"decision\":\"block\",\"reason\":\"'; head -c 600000 /dev/zero | tr '\\0' r; printf '\"}'"}]}],
            "UserPromptSubmit": hook(&format!("{FIFTY_MB} u"), 60),
        })),
    );
    std::fs::write(h._dir.path().join("work/a.txt"), "hello").unwrap();
    let outcomes = ran(tokio::time::timeout(GENEROUS, h.runtime.submit(send(h.session, "Go."), &Quiet))
        .await
        .expect("a capped hook ends")
        .unwrap());
    assert_eq!(outcomes[0].status, RunStatus::Succeeded, "{outcomes:?}");
    let cap = seri_tools::coding::bash::MAX_STREAM_BYTES + 200;
    let mut seen = 0;
    for event in h.events(h.session) {
        let said = match event.body {
            EventBody::Message(m) if m.content.starts_with("Go.") => m.content,
            EventBody::ToolResult(r) => r.content,
            EventBody::PermissionDenied(d) => d.detail,
            _ => continue,
        };
        seen += 1;
        assert!(said.len() < cap, "{} bytes kept of a hook's output", said.len());
        assert!(said.contains(" elided] …"), "what was cut is said: {}", &said[..200.min(said.len())]);
    }
    assert_eq!(seen, 4, "the prompt, the denial and its result, and the result with words after it");
}

#[tokio::test]
async fn cancelling_a_run_ends_the_hook_running_and_the_run_cancelled() {
    // The first time, the hook waits for an hour; after that it lets calls by.
    let h = Harness::with(
        json!([call("l1", "list", json!({})), text("After the cancel.")]),
        settings(json!({"PreToolUse": hook("[ -e hook-started ] && exit 0; touch hook-started; sleep 3604", 3600)})),
    );
    let started = h._dir.path().join("work/hook-started");
    let runtime = h.runtime.clone();
    let session = h.session;
    let waiting = tokio::spawn(async move { runtime.submit(send(session, "List."), &Quiet).await });
    let deadline = Instant::now() + GENEROUS;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the hook never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancelled = h.runtime.submit(Command::Cancel { session_id: session }, &Quiet).await.unwrap();
    assert_eq!(cancelled, Submitted::Cancelled(true));
    let outcomes =
        ran(tokio::time::timeout(GENEROUS, waiting).await.expect("the cancel ended the hook").unwrap().unwrap());
    assert_eq!(outcomes[0].status, RunStatus::Cancelled);
    let store = h.store.agent(&AgentId::local());
    assert_eq!(store.runs(session).unwrap()[0].status, RunStatus::Cancelled, "recorded cancelled");
    assert_eq!(h.runtime.running_submissions(), 0);
    // The session is free: the next message is answered.
    let next = tokio::time::timeout(GENEROUS, h.runtime.submit(send(session, "Again."), &Quiet))
        .await
        .expect("the session was given back")
        .unwrap();
    assert_eq!(ran(next)[0].result.as_deref(), Some("After the cancel."));
}

#[tokio::test]
async fn a_cancel_reaches_a_prompt_hook_still_running() {
    let h = Harness::with(
        json!([text("Never.")]),
        settings(json!({"UserPromptSubmit": hook("touch prompt-hook; sleep 3604", 3600)})),
    );
    let started = h._dir.path().join("work/prompt-hook");
    let runtime = h.runtime.clone();
    let session = h.session;
    let waiting = tokio::spawn(async move { runtime.submit(send(session, "Hello."), &Quiet).await });
    let deadline = Instant::now() + GENEROUS;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the hook never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        h.runtime.submit(Command::Cancel { session_id: session }, &Quiet).await.unwrap(),
        Submitted::Cancelled(true)
    );
    let outcomes =
        ran(tokio::time::timeout(GENEROUS, waiting).await.expect("the cancel ended the hook").unwrap().unwrap());
    assert_eq!(outcomes[0].status, RunStatus::Cancelled);
    assert!(!h.transcript(session).contains("Hello."), "the message was not recorded");
}

#[tokio::test]
async fn a_guard_the_sandbox_cannot_contain_refuses_the_call_and_other_hooks_block_nothing() {
    // Sandboxed, with no launcher to apply it, and a policy that refuses.
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        when_unavailable: WhenUnavailable::Refuse,
        ..SandboxPolicy::default()
    };
    let hooks = Hooks::from_config(&json!({
        "PreToolUse": hook("touch guard-ran", 10),
        "Stop": hook("touch stop-ran; exit 2", 10),
    }))
    .unwrap()
    .contained_in(Arc::new(Sandbox::new(policy, None)), Secrets::default());
    let h = Harness::with(
        json!([call("l1", "list", json!({})), text("Done.")]),
        Options { settings: RuntimeSettings { hooks, ..RuntimeSettings::default() }, ..Options::default() },
    );
    let outcomes = h.send("List.").await;
    assert_eq!(outcomes[0].status, RunStatus::Succeeded, "{outcomes:?}");
    let work = h._dir.path().join("work");
    assert!(!work.join("guard-ran").exists() && !work.join("stop-ran").exists(), "nothing ran unsandboxed");
    let result = h
        .events(h.session)
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::ToolResult(r) => Some(r.content),
            _ => None,
        })
        .unwrap();
    assert!(result.contains("could not run, so the call is refused"), "{result}");
    assert!(result.contains("nothing ran: commands run sandboxed (workspace-write)"), "{result}");
}

#[tokio::test]
async fn a_hook_runs_without_the_secrets_bash_runs_without() {
    let hooks = Hooks::from_config(&json!({"Stop": hook("echo \"home=${HOME-unset}\" > seen", 10)}))
        .unwrap()
        .contained_in(Arc::new(Sandbox::default()), Secrets::new([], ["HOME".to_owned()], []));
    let h = Harness::with(
        json!([text("Done.")]),
        Options { settings: RuntimeSettings { hooks, ..RuntimeSettings::default() }, ..Options::default() },
    );
    h.send("Go.").await;
    let seen = std::fs::read_to_string(h._dir.path().join("work/seen")).unwrap();
    assert_eq!(seen.trim(), "home=unset");
}
