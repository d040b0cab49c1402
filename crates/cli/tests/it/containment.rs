//! Nothing a tool started outlives seri: SIGTERM (`timeout`, a cancelled CI
//! job) or SIGHUP (a closed terminal) to a `seri -p` running a `bash` call
//! cancels the call, kills everything it started (a process that left its
//! process group with `setsid` too), settles the call, and seri exits. And
//! a session of another project is read only as a file outside the project
//! would be: asked about, or refused headless unless the run is trusted.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Env, path_str};
use crate::terminal::Typing as _;

/// Whether `pid` is gone (or a zombie nobody reaped yet); waits for it a while.
fn dies(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

fn check_signal(signal: &str) {
    // SIGINT is the person pressing Ctrl-C; SIGTERM and SIGHUP stop seri.
    let told = if signal == "-INT" { "cancelled: the user interrupted" } else { "stopped: seri was shutting down" };
    let env = Env::new();
    // Two processes that would outlive a plain kill of bash: a background
    // child, and one that left the process group.
    let command = "sleep 300 & echo $! > child.pid; setsid sleep 300 & echo $! > escaped.pid; wait";
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": command, "timeoutMs": 600000 } }] }]),
    );
    let seri = env
        .seri()
        .args(["-p", "Run it.", "--script", path_str(&script), "--allow", "bash", "--output-format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (child, escaped) = (env.work().join("child.pid"), env.work().join("escaped.pid"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(std::fs::read_to_string(&child).is_ok_and(|t| t.ends_with('\n'))
        && std::fs::read_to_string(&escaped).is_ok_and(|t| t.ends_with('\n')))
    {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = |path: &std::path::Path| std::fs::read_to_string(path).unwrap().trim().parse::<u32>().unwrap();
    let (child_pid, escaped_pid) = (pid(&child), pid(&escaped));
    let status = std::process::Command::new("kill").args([signal, &seri.id().to_string()]).status().unwrap();
    assert!(status.success());
    let output = seri.wait_with_output().unwrap();
    // Ctrl-C exits 130, as a shell reports a command it interrupted; a stop, 1.
    assert_eq!(output.status.code(), Some(if signal == "-INT" { 130 } else { 1 }), "{signal}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["error"], "cancelled");
    assert!(dies(child_pid), "the background child outlived seri");
    assert!(dies(escaped_pid), "the process that left the group outlived seri");
    // The model is told which it was: a stop is not the person refusing.
    let thread = env.run(&["thread", report["session_id"].as_str().unwrap()]).stdout;
    assert!(thread.contains(&format!("tool result bash (error): {told}")), "{thread}");
}

#[test]
fn sigterm_ends_every_process_a_tool_started_and_settles_the_call() {
    check_signal("-TERM");
}

#[test]
fn sighup_ends_every_process_a_tool_started_and_settles_the_call() {
    check_signal("-HUP");
}

#[test]
fn sigint_ends_every_process_a_tool_started_and_settles_the_call_as_interrupted() {
    check_signal("-INT");
}

/// Starts a session in a second project and returns its id.
fn session_in_another_project(env: &Env) -> (std::path::PathBuf, String) {
    let other = env.dir.path().join("other-project");
    std::fs::create_dir_all(&other).unwrap();
    let script = env.script("other.json", json!([{ "text": "Secret plans." }]));
    let output = env
        .seri()
        .current_dir(&other)
        .args(["-p", "Our secret plans.", "--script", path_str(&script), "--output-format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    (other, report["session_id"].as_str().unwrap().to_owned())
}

fn read_call(session: &str) -> serde_json::Value {
    json!({ "tool_calls": [{ "id": "r1", "name": "read", "arguments": { "target": format!("thread:{session}") } }] })
}

#[test]
fn another_projects_session_is_read_only_as_a_file_outside_would_be() {
    let env = Env::new();
    let (_other, secret) = session_in_another_project(&env);
    // Headless, with nobody to ask: refused, and recorded as a denial.
    let script = env.script("s.json", json!([read_call(&secret), { "text": "Could not read it." }]));
    let run = env.run(&["-p", "What were their plans?", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let mine = run.json()["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &mine]).stdout;
    assert!(thread.contains("tool result read (error): "), "{thread}");
    assert!(thread.contains(&format!("(read: thread:{secret} (a session of ")), "{thread}");
    assert!(!thread.contains("Our secret plans."), "nothing of it was read: {thread}");
    // A trusted run may, as it may read files outside.
    let script = env.script("t.json", json!([read_call(&secret), { "text": "Read it." }]));
    let run = env.run(&["-p", "Read theirs.", "--script", path_str(&script), "--yes", "--output-format", "json"]);
    let mine = run.json()["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &mine]).stdout;
    assert!(thread.contains("Our secret plans."), "{thread}");
}

#[test]
fn this_projects_sessions_are_read_freely() {
    let env = Env::new();
    let first = env.script("a.json", json!([{ "text": "First answer." }]));
    let run = env.run(&["-p", "First question.", "--script", path_str(&first), "--output-format", "json"]);
    let earlier = run.json()["session_id"].as_str().unwrap().to_owned();
    let script = env.script("s.json", json!([read_call(&earlier), { "text": "Done." }]));
    let run = env.run(&["-p", "What did I ask before?", "--script", path_str(&script), "--output-format", "json"]);
    let mine = run.json()["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &mine]).stdout;
    assert!(thread.contains("First question."), "{thread}");
}

#[test]
fn an_ambiguous_thread_prefix_lists_this_projects_sessions_first() {
    let env = Env::new();
    // Two sessions elsewhere, made first, so their ids sort before ours.
    session_in_another_project(&env);
    session_in_another_project(&env);
    let first = env.script("a.json", json!([{ "text": "Ours." }]));
    let run = env.run(&["-p", "Ours.", "--script", path_str(&first), "--output-format", "json"]);
    let ours = run.json()["session_id"].as_str().unwrap().to_owned();
    // Every id of this profile starts like this one: the prefix names them all.
    let prefix = &ours[..2];
    let call = json!({ "tool_calls": [{ "id": "r1", "name": "read", "arguments": { "target": format!("thread:{prefix}") } }] });
    let script = env.script("s.json", json!([call, { "text": "Which one?" }]));
    let run =
        env.run(&["--resume", &ours, "-p", "Read one.", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let thread = env.run(&["thread", &ours]).stdout;
    let listed = thread.split("matches several of your threads (").nth(1).unwrap_or_default();
    assert!(listed.starts_with(&format!("thread:{ours}")), "this project's session is listed first: {thread}");
}

/// A key seri was given in its environment.
const KEY: &str = "sk-containment-test-0123456789";

#[test]
fn a_provider_key_never_reaches_bash_or_the_session() {
    let env = Env::new();
    std::fs::write(env.work().join("leak.txt"), format!("OPENAI_API_KEY={KEY}\n")).unwrap();
    let command = "env | grep -c API_KEY; cat leak.txt";
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": command } }] }, { "text": "Done." }]),
    );
    let run = env.run_with(
        &["-p", "Show me.", "--script", path_str(&script), "--allow", "bash", "--output-format", "json"],
        &[("OPENAI_API_KEY", KEY), ("ANTHROPIC_API_KEY", "sk-ant-another-key-0123")],
    );
    run.expect_code(0);
    let thread = env.run(&["thread", run.json()["session_id"].as_str().unwrap()]).stdout;
    assert!(!thread.contains(KEY), "{thread}");
    assert!(
        thread.contains("stdout:\n  0\n  OPENAI_API_KEY=[redacted: OPENAI_API_KEY]"),
        "no key variable, the file's key redacted: {thread}"
    );
}

#[test]
fn a_write_outside_the_workspace_is_refused_by_the_default_sandbox() {
    let env = Env::new();
    // Outside the workspace and outside the temporary folder.
    let elsewhere = crate::support::outside_temp();
    let target = elsewhere.path().join("escaped");
    let command = format!("echo in > inside.txt; echo out > {}", target.display());
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": command } }] }, { "text": "Done." }]),
    );
    let run = env.run(&["-p", "Write.", "--script", path_str(&script), "--allow", "bash", "--output-format", "json"]);
    run.expect_code(0);
    let thread = env.run(&["thread", run.json()["session_id"].as_str().unwrap()]).stdout;
    if seri_tools::sandbox::probe(false).is_ok() {
        assert!(thread.contains("escaped: Permission denied"), "{thread}");
        assert!(!target.exists());
        assert!(env.work().join("inside.txt").exists());
    } else {
        // No Landlock here: refused by default, never run bare.
        assert!(thread.contains("nothing ran: commands run sandboxed (workspace-write)"), "{thread}");
        assert!(!target.exists() && !env.work().join("inside.txt").exists());
    }
    // Full access, by flag: no sandbox.
    let script = env.script(
        "t.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": command } }] }, { "text": "Done." }]),
    );
    env.run(&["-p", "Write.", "--script", path_str(&script), "--allow", "bash", "--sandbox", "full-access"])
        .expect_code(0);
    assert!(target.exists());
    let bad = env.run(&["-p", "Write.", "--script", path_str(&script), "--sandbox", "open"]);
    bad.expect_code(2);
    assert!(
        bad.stderr.contains("--sandbox: `open` is not one of: read-only, workspace-write, full-access"),
        "{}",
        bad.stderr
    );
    let config = env.run(&["config", "--sandbox", "read-only"]).stdout;
    assert!(
        config.contains("sandbox.mode") && config.contains("read-only") && config.contains("(--sandbox)"),
        "{config}"
    );
    assert!(config.contains("sandbox.enforced"), "{config}");
}

#[test]
fn what_a_call_started_dies_when_seri_is_killed_with_sigkill() {
    let env = Env::new();
    // It leaves the group and drops the call's mark: only the launcher
    // (or the call's cgroup) can end it.
    let command = "setsid env -i sh -c 'echo $$ > escaped.pid; exec sleep 300' & sleep 300";
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": command, "timeoutMs": 600000 } }] }]),
    );
    let mut seri = env
        .seri()
        .args(["-p", "Run it.", "--script", path_str(&script), "--allow", "bash"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let escaped = env.work().join("escaped.pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&escaped).is_ok_and(|t| t.ends_with('\n')) {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(&escaped).unwrap().trim().parse::<u32>().unwrap();
    seri.kill().unwrap();
    seri.wait().unwrap();
    assert!(dies(pid), "the escaped process outlived seri");
}

#[test]
fn slash_sandbox_sets_the_sessions_mode_and_status_shows_it() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo x > made.txt; echo ran" } }] });
    let script = env.script("s.json", json!([{ "text": "Hello." }, call.clone(), { "text": "Done." }]));
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script), "--allow", "bash"], "dumb", &[]);
    p.sees("/help for commands");
    p.types("/sandbox");
    p.sees("No session yet: send a message first.");
    p.types("Hi");
    p.sees("Hello.");
    let enforced = seri_tools::sandbox::probe(false).is_ok();
    p.types("/sandbox");
    p.exp_string(if enforced {
        "workspace-write, network off (Landlock)"
    } else {
        "workspace-write, network off (not enforced"
    })
    .unwrap();
    p.types("/sandbox read-write");
    p.sees("/sandbox: `read-write` is not one of: read-only, workspace-write, full-access");
    p.types("/sandbox read-only");
    p.sees("read-only, network off");
    p.types("/sandbox network on");
    p.sees("read-only, network on");
    p.types("Make a file.");
    p.sees("Done.");
    p.types("/status");
    p.sees("sandbox      read-only, network on");
    p.leaves();
    assert!(!env.work().join("made.txt").exists(), "read-only wrote nothing");

    // The choice is the session's, stored: an event, in its view, and a
    // later `seri -r` runs under it.
    let store = seri_store::Store::open(env.home().join("seri.db")).unwrap();
    let agent = store.agent(&seri_core::AgentId::local());
    let session = agent.most_recent_session(None).unwrap().unwrap().id;
    let info = agent.info(session).unwrap();
    assert_eq!((info.sandbox_mode, info.sandbox_network), (Some(seri_core::SandboxMode::ReadOnly), Some(true)));
    let changes = agent.events(session, seri_store::SeqRange::ALL).unwrap();
    let changes: Vec<_> = changes.iter().filter(|e| e.body.kind() == "sandbox_changed").collect();
    assert_eq!(changes.len(), 2, "one event per change: {changes:?}");
    drop(store);
    let again = env.script("again.json", json!([call, { "text": "Again." }]));
    let id = session.to_string();
    env.run(&["-r", &id, "-p", "Make it again.", "--script", path_str(&again), "--allow", "bash"]).expect_code(0);
    assert!(!env.work().join("made.txt").exists(), "seri -r ran read-only too");
}

/// Waits for a whole pid written to `path`.
fn pid_written(path: &std::path::Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "{} was never written", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_mcp_servers_processes_end_with_seri_stopped_or_killed() {
    let Some(entry) = crate::mcp::everything() else { return };
    for killed in [false, true] {
        let env = Env::new();
        // In the workspace: the server runs in the sandbox, which writes
        // nowhere else near the profile.
        let (server, escaped) = (env.work().join("server.pid"), env.work().join("escaped.pid"));
        // The reference server, after starting a process that leaves its
        // group and drops every mark.
        let wrapper = format!(
            "echo $$ > {server}; setsid env -i sh -c 'echo $$ > {escaped}; exec sleep 1000' & exec node {entry} stdio",
            server = server.display(),
            escaped = escaped.display(),
            entry = entry.display()
        );
        let config = json!({ "mcpServers": { "everything": { "command": "sh", "args": ["-c", wrapper] } } });
        std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
        let (server_pid, escaped_pid) = if killed {
            let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "sleep 300", "timeoutMs": 600000 } }] });
            let script = env.script("s.json", json!([call]));
            let mut seri = env
                .seri()
                .args(["-p", "Wait.", "--script", path_str(&script), "--allow", "bash"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let pids = (pid_written(&server), pid_written(&escaped));
            seri.kill().unwrap();
            seri.wait().unwrap();
            pids
        } else {
            let script = env.script("s.json", json!([{ "text": "Done." }]));
            env.run(&["-p", "Hi.", "--script", path_str(&script)]).expect_code(0);
            (pid_written(&server), pid_written(&escaped))
        };
        assert!(dies(server_pid), "the server outlived seri (killed: {killed})");
        assert!(dies(escaped_pid), "what the server started outlived seri (killed: {killed})");
    }
}

#[test]
fn claude_codes_and_codexs_folders_stay_unwritten_even_where_writes_are_allowed() {
    if seri_tools::sandbox::probe(false).is_err() {
        return;
    }
    let env = Env::new();
    let home = env.dir.path().to_path_buf();
    std::fs::create_dir_all(home.join("notes")).unwrap();
    // As a Claude Code and Codex user has them.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".claude/settings.json"), "{}").unwrap();
    std::fs::write(home.join(".codex/config.toml"), "").unwrap();
    // The home folder writable as a whole, as when seri works in it.
    std::fs::write(env.home().join("config.json"), json!({"sandbox": {"writable": [path_str(&home)]}}).to_string())
        .unwrap();
    let command = "mkdir -p ~/.claude ~/.codex; echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > ~/.claude/settings.json; \
                   echo '[mcp_servers.x]' > ~/.codex/config.toml; echo fine > ~/notes/ok.txt";
    let script = env.script(
        "s.json",
        json!([{ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": command } }] }, { "text": "Done." }]),
    );
    let run = env.run(&["-p", "Write.", "--script", path_str(&script), "--allow", "bash", "--output-format", "json"]);
    run.expect_code(0);
    let thread = env.run(&["thread", run.json()["session_id"].as_str().unwrap()]).stdout;
    assert!(home.join("notes/ok.txt").exists(), "{thread}");
    assert!(home.join("notes/ok.txt").exists(), "the writable folder is written");
    let settings = std::fs::read_to_string(home.join(".claude/settings.json")).unwrap();
    assert_eq!(settings, "{}", "a model cannot write Claude Code's settings seri obeys");
    assert_eq!(std::fs::read_to_string(home.join(".codex/config.toml")).unwrap(), "", "nor Codex's servers");
}
