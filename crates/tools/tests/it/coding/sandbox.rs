//! Commands that try to escape, run through the launcher as seri runs them:
//! each test here fails without the sandbox or the launcher. Writing
//! outside the workspace, reading a hidden place, and connecting with the
//! network off are refused; what a
//! call starts, `setsid env -i` included, ends with it. The Landlock tests
//! need a kernel with Landlock (and its network rules); on one without,
//! they say so and check that the call is refused instead.

// A test that cannot check Landlock here says so on stderr.
#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use seri_core::SessionId;
use seri_tools::sandbox::{Launcher, probe};
use seri_tools::{
    Bash, BashSettings, Sandbox, SandboxMode, SandboxPolicy, SessionSandbox, ToolRegistry, WhenUnavailable,
};

use super::bash::{is_dead, pid_in, wait_for_line};
use super::world::{World, shown, trusted};

/// The session the world's run belongs to.
const SESSION: SessionId = SessionId::from_bytes([0x11; 16]);

fn launcher() -> Launcher {
    Launcher { program: PathBuf::from(env!("CARGO_BIN_EXE_seri-tools-launcher")), args: Vec::new() }
}

/// A registry whose `bash` runs under `sandbox`.
fn registry(sandbox: &Arc<Sandbox>) -> ToolRegistry {
    let mut registry = ToolRegistry::with_coding_tools();
    registry.replace(Arc::new(Bash::new(BashSettings { sandbox: sandbox.clone(), ..BashSettings::default() })));
    registry
}

/// A sandbox through the launcher whose session's choices are read from
/// `stored`, as seri reads them from its store.
fn choosing(policy: SandboxPolicy, stored: &Arc<Mutex<SessionSandbox>>) -> Arc<Sandbox> {
    let read = stored.clone();
    let sandbox = Sandbox::new(policy, Some(launcher())).with_choice_lookup(Arc::new(move |_, session| {
        assert_eq!(session, SESSION, "the world's session");
        Ok(*read.lock().unwrap())
    }));
    Arc::new(sandbox)
}

fn policy(mode: SandboxMode, network: bool, hidden: Vec<PathBuf>) -> SandboxPolicy {
    SandboxPolicy { mode, network, hidden, ..SandboxPolicy::default() }
}

async fn bash(world: &World, sandbox: &Arc<Sandbox>, command: &str) -> String {
    bash_input(world, sandbox, json!({ "command": command })).await
}

async fn bash_input(world: &World, sandbox: &Arc<Sandbox>, input: Value) -> String {
    shown(world.call_through(&registry(sandbox), &world.workspace, &trusted(), "bash", input).await)
}

/// A folder outside the temporary folder (in cargo's target folder).
fn not_in_temp() -> tempfile::TempDir {
    super::outside_temp()
}

/// Whether this kernel enforces Landlock (with network rules when
/// `network` is off); when it does not, says so on stderr, for the test to
/// check the refusal instead.
fn landlock(network: bool) -> bool {
    match probe(network) {
        Ok(()) => true,
        Err(why) => {
            eprintln!("Landlock is not enforced here ({why}): checking that the call is refused instead");
            false
        }
    }
}

#[tokio::test]
async fn a_write_outside_the_workspace_is_refused_with_eacces_and_inside_it_works() {
    let world = World::new();
    let sandbox = Arc::new(Sandbox::new(policy(SandboxMode::WorkspaceWrite, false, vec![]), Some(launcher())));
    // The world's own `outside/` is in the temporary folder, which is
    // writable: this one is not.
    let elsewhere = not_in_temp();
    let outside = elsewhere.path().join("escaped");
    let command =
        format!("echo in > inside; echo tmp > \"$(mktemp)\" && echo tmp ok; echo out > '{}'", outside.display());
    let result = bash(&world, &sandbox, &command).await;
    if !landlock(false) {
        assert!(result.starts_with("error: nothing ran: commands run sandboxed (workspace-write)"), "{result}");
        return;
    }
    assert!(result.starts_with("ok: exit code: 1\nstdout:\ntmp ok\nstderr:\n"), "{result}");
    assert!(result.contains("Permission denied"), "EACCES is named: {result}");
    assert!(!outside.exists(), "nothing was written outside");
    assert_eq!(world.read("inside"), "in\n");
}

#[tokio::test]
async fn read_only_writes_nothing_and_full_access_chosen_for_the_session_writes_anywhere() {
    let world = World::new();
    let stored = Arc::new(Mutex::new(SessionSandbox::default()));
    let sandbox = choosing(policy(SandboxMode::ReadOnly, false, vec![]), &stored);
    let elsewhere = not_in_temp();
    let outside = elsewhere.path().join("allowed");
    let command = format!("echo in > inside; cat inside; echo out > '{}' 2>/dev/null; echo done", outside.display());
    let result = bash(&world, &sandbox, &command).await;
    if landlock(false) {
        assert!(result.starts_with("ok: exit code: 0\nstdout:\ndone\nstderr:\n"), "{result}");
        assert!(result.contains("inside: Permission denied"), "{result}");
        assert!(!world.root.join("inside").exists() && !outside.exists());
    } else {
        assert!(result.starts_with("error: nothing ran: commands run sandboxed (read-only)"), "{result}");
    }
    stored.lock().unwrap().mode = Some(SandboxMode::FullAccess);
    assert_eq!(bash(&world, &sandbox, &command).await, "ok: exit code: 0\nstdout:\nin\ndone");
    assert!(outside.exists(), "full access writes anywhere");
    assert_eq!(sandbox.describe(*stored.lock().unwrap()), "full-access (no sandbox)");
}

#[tokio::test]
async fn a_hidden_place_cannot_be_read_or_listed_and_seri_cannot_be_signalled() {
    let world = World::new();
    let home = world.outside.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    std::fs::write(home.join("notes"), "public").unwrap();
    let sandbox =
        Arc::new(Sandbox::new(policy(SandboxMode::WorkspaceWrite, false, vec![home.join(".ssh")]), Some(launcher())));
    let command = format!(
        "cat '{home}/notes'; cat '{home}/.ssh/id_ed25519'; ls '{home}/.ssh'; echo x > '{home}/.ssh/config'; kill -0 {seri}",
        home = home.display(),
        seri = std::process::id(),
    );
    let result = bash(&world, &sandbox, &command).await;
    if !landlock(false) {
        assert!(result.starts_with("error: nothing ran"), "{result}");
        return;
    }
    assert!(result.starts_with("ok: exit code: 1\nstdout:\npublic\nstderr:\n"), "only the notes were read: {result}");
    assert!(!result.contains("PRIVATE KEY"), "{result}");
    assert!(result.contains("id_ed25519: Permission denied"), "{result}");
    assert!(result.contains(".ssh': Permission denied"), "{result}");
    assert!(!home.join(".ssh/config").exists(), "nor written, though the temporary folder is writable");
    assert!(
        result.contains("kill: ") && result.contains("Operation not permitted"),
        "seri cannot be signalled: {result}"
    );
}

#[tokio::test]
async fn a_connection_to_loopback_is_refused_with_the_network_off_and_works_with_it_on() {
    let world = World::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let stored = Arc::new(Mutex::new(SessionSandbox::default()));
    let sandbox = choosing(policy(SandboxMode::WorkspaceWrite, false, vec![]), &stored);
    let off = bash(&world, &sandbox, &command).await;
    if landlock(false) {
        assert!(off.starts_with("ok: exit code: 1\nstderr:\n") && off.contains("Permission denied"), "{off}");
        assert_eq!(sandbox.describe(*stored.lock().unwrap()), "workspace-write, network off (Landlock)");
    } else {
        assert!(off.starts_with("error: nothing ran"), "{off}");
    }
    stored.lock().unwrap().network = Some(true);
    let on = bash(&world, &sandbox, &command).await;
    if landlock(true) {
        assert_eq!(on, "ok: exit code: 0\nstdout:\nconnected");
    }
}

#[tokio::test]
async fn setsid_env_i_does_not_outlive_the_call() {
    let world = World::new();
    // Full access: only the launcher (and the call's cgroup) bound it.
    let sandbox = Arc::new(Sandbox::new(policy(SandboxMode::FullAccess, true, vec![]), Some(launcher())));
    // `env -i` drops the call's mark and `setsid` leaves the group: the
    // two ways out of the marks alone.
    let command = "setsid env -i sh -c 'echo $$ > left.pid; exec sleep 1000' & until [ -s left.pid ]; do sleep 0.01; done; echo started";
    let result = bash(&world, &sandbox, command).await;
    assert_eq!(result, "ok: exit code: 0\nstdout:\nstarted", "the output was not held open");
    assert!(is_dead(pid_in(&world.root.join("left.pid"))).await, "the escaped sleep is gone");

    // The same at a timeout, and when the call is dropped.
    let command = "setsid env -i sh -c 'echo $$ > timed.pid; exec sleep 1000' & sleep 1000";
    let result = bash_input(&world, &sandbox, json!({"command": command, "timeoutMs": 500})).await;
    assert!(result.starts_with("error: the command did not finish within 500 ms"), "{result}");
    wait_for_line(&world.root.join("timed.pid")).await;
    assert!(is_dead(pid_in(&world.root.join("timed.pid"))).await, "gone after the timeout");

    let command = "setsid env -i sh -c 'echo $$ > dropped.pid; exec sleep 1000' & sleep 1000";
    let dropped = world.root.join("dropped.pid");
    tokio::select! {
        result = bash_input(&world, &sandbox, json!({"command": command, "timeoutMs": 60_000})) => {
            panic!("the command finished: {result}");
        }
        () = wait_for_line(&dropped) => {}
    }
    assert!(is_dead(pid_in(&dropped)).await, "gone after the call was dropped");
}

#[tokio::test]
async fn without_a_sandbox_to_apply_a_call_is_refused_or_warned_never_silently_run() {
    let world = World::new();
    // No launcher: the sandbox cannot be applied, as on a kernel without
    // Landlock.
    let refusing = Arc::new(Sandbox::new(policy(SandboxMode::WorkspaceWrite, false, vec![]), None));
    let result = bash(&world, &refusing, "echo ran > ran").await;
    assert_eq!(
        result,
        "error: nothing ran: commands run sandboxed (workspace-write) and seri runs commands without its launcher. Run it in full-access (`/sandbox full-access`, `--sandbox full-access`), or set sandbox.whenUnavailable to \"unsandboxed\" in config.json to run commands without a sandbox, with a warning"
    );
    assert!(!world.root.join("ran").exists());
    let warning = Arc::new(Sandbox::new(
        SandboxPolicy {
            when_unavailable: WhenUnavailable::Unsandboxed,
            ..policy(SandboxMode::WorkspaceWrite, false, vec![])
        },
        None,
    ));
    let result = bash(&world, &warning, "echo ran").await;
    assert_eq!(
        result,
        "ok: exit code: 0\nwarning: this ran without a sandbox (workspace-write was asked): seri runs commands without its launcher\nstdout:\nran"
    );
}

#[tokio::test]
async fn through_the_launcher_a_command_ends_as_it_would_without_it() {
    let world = World::new();
    let sandbox = Arc::new(Sandbox::new(policy(SandboxMode::FullAccess, true, vec![]), Some(launcher())));
    let ran = bash(&world, &sandbox, "echo out; echo err >&2; exit 3").await;
    assert_eq!(ran, "ok: exit code: 3\nstdout:\nout\nstderr:\nerr");
    assert_eq!(bash(&world, &sandbox, "kill -TERM $$").await, "ok: killed by signal 15 (SIGTERM)\n(no output)");
    assert_eq!(bash(&world, &sandbox, "kill -KILL $$").await, "ok: killed by signal 9 (SIGKILL)\n(no output)");
    let pwd = bash(&world, &sandbox, "pwd; cat; echo done").await;
    assert_eq!(pwd, format!("ok: exit code: 0\nstdout:\n{}\ndone", world.root.display()));
}
