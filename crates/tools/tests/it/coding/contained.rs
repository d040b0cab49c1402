//! `Sandbox::contain`: a command of the person's (a hook) started as
//! `bash`'s are, through the launcher. What it starts ends with it when its
//! guard ends it; it cannot write outside the workspace; the secret
//! variables are not in its environment.

// A test that cannot check Landlock here says so on stderr.
#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::Stdio;

use seri_core::{AgentId, SessionId};
use seri_tools::sandbox::{Launcher, probe};
use seri_tools::{RunContext, Sandbox, SandboxMode, SandboxPolicy, Secrets};

use super::bash::{is_dead, pid_in, wait_for_line};
use super::world::World;

fn sandbox(mode: SandboxMode) -> Sandbox {
    let launcher = Launcher { program: PathBuf::from(env!("CARGO_BIN_EXE_seri-tools-launcher")), args: Vec::new() };
    Sandbox::new(SandboxPolicy { mode, ..SandboxPolicy::default() }, Some(launcher))
}

fn run() -> RunContext {
    RunContext {
        session_id: SessionId::from_bytes([0x22; 16]),
        agent_id: AgentId::local(),
        strategy: Default::default(),
        run: None,
    }
}

#[tokio::test]
async fn what_a_contained_command_started_ends_when_its_guard_ends_it() {
    let world = World::new();
    let sandbox = sandbox(SandboxMode::FullAccess);
    let command = "sh -c 'echo $$ > child.pid; exec sleep 300' & sleep 300";
    let mut contained = sandbox.contain(&run(), &world.root, &Secrets::default(), "sh", &["-c", command]).unwrap();
    assert!(contained.launched(), "through the launcher, even in full-access");
    contained.command().stdin(Stdio::null());
    let (mut child, mut guard) = contained.spawn().unwrap();
    let pid_file = world.root.join("child.pid");
    wait_for_line(&pid_file).await;
    guard.end(&mut child).await;
    assert!(is_dead(pid_in(&pid_file)).await, "the forked child outlived its guard's end");
}

#[tokio::test]
async fn a_contained_command_writes_only_where_bash_may_and_sees_no_secret() {
    let world = World::new();
    let elsewhere = super::outside_temp();
    let outside = elsewhere.path().join("pwned");
    let sandbox = sandbox(SandboxMode::WorkspaceWrite);
    let secrets = Secrets::new([], ["HOME".to_owned()], []);
    let command = format!("touch '{}'; echo \"home=${{HOME-none}}\" > seen", outside.display());
    let refused = sandbox.contain(&run(), &world.root, &secrets, "sh", &["-c", &command]);
    if let Err(why) = probe(false) {
        eprintln!("Landlock is not enforced here ({why}): checking that the command is refused instead");
        assert!(refused.is_err());
        return;
    }
    let (mut child, _guard) = refused.unwrap().spawn().unwrap();
    child.wait().await.unwrap();
    assert!(!outside.exists(), "it wrote outside the workspace");
    assert_eq!(std::fs::read_to_string(world.root.join("seen")).unwrap(), "home=none\n");
}
