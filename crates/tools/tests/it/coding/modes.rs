//! Permission modes and command patterns through the real tools: plan mode
//! lets only reading tools run, accept-edits lets file changes inside the
//! working directory through, bypass answers every question yes (never a
//! `deny`), and `Bash(…)` patterns from `config.json` decide commands part
//! by part.

use serde_json::json;
use seri_core::{DenialReason, PermissionMode};
use seri_tools::{Decision, PermissionPolicy, Permissions};

use super::world::{Person, World, interactive, policy};

#[tokio::test]
async fn plan_mode_runs_only_reading_tools_even_in_a_trusted_run() {
    let world = World::new();
    world.write("a.txt", "a");
    let plan = Permissions::headless(policy(&[], &[], true)).with_mode(PermissionMode::Plan);
    assert!(world.call_with(&plan, "read_file", json!({"path": "a.txt"})).await.is_ok());
    assert!(world.call_with(&plan, "grep", json!({"pattern": "a"})).await.is_ok());
    for (tool, input) in [
        ("write_file", json!({"path": "new.txt", "content": "hi"})),
        ("edit", json!({"path": "a.txt", "old": "a", "new": "b"})),
        ("bash", json!({"command": "touch ran"})),
    ] {
        let error = world.call_with(&plan, tool, input).await.unwrap_err();
        assert_eq!(error.denial().map(|d| d.reason), Some(DenialReason::PlanMode), "{tool}");
        assert!(error.to_string().contains("plan mode"), "{error}");
    }
    assert_eq!(world.read("a.txt"), "a");
    assert!(!world.root.join("ran").exists() && !world.root.join("new.txt").exists());
}

#[tokio::test]
async fn accept_edits_changes_files_without_asking_but_commands_still_ask() {
    let world = World::new();
    let person = Person::answering(Decision::Deny);
    let edits = interactive(&person, policy(&[], &[], false)).with_mode(PermissionMode::AcceptEdits);
    world.call_with(&edits, "write_file", json!({"path": "new.txt", "content": "hi"})).await.unwrap();
    assert_eq!(world.read("new.txt"), "hi");
    assert!(person.asked().is_empty(), "{:?}", person.asked());
    let refused = world.call_with(&edits, "bash", json!({"command": "touch ran"})).await.unwrap_err();
    assert_eq!(refused.denial().map(|d| d.reason), Some(DenialReason::User));
    assert_eq!(person.asked(), ["bash: touch ran"]);
}

#[tokio::test]
async fn bypass_asks_nothing_but_deny_still_refuses() {
    let world = World::new();
    let bypass = Permissions::headless(policy(&[], &["write_file"], false)).with_mode(PermissionMode::Bypass);
    world.call_with(&bypass, "bash", json!({"command": "touch ran"})).await.unwrap();
    assert!(world.root.join("ran").exists());
    let error = world.call_with(&bypass, "write_file", json!({"path": "x", "content": "x"})).await.unwrap_err();
    assert_eq!(error.denial().map(|d| d.reason), Some(DenialReason::Policy));
}

#[tokio::test]
async fn command_patterns_from_config_decide_each_part_of_a_command() {
    let world = World::new();
    let config = json!({"allow": ["Bash(echo *)", "Bash(touch allowed)"], "deny": ["Bash(rm *)"], "mode": "default"});
    let headless = Permissions::headless(PermissionPolicy::from_config(&config).unwrap());
    let ran = world.call_with(&headless, "bash", json!({"command": "echo hi && touch allowed"})).await.unwrap();
    assert!(ran.text.contains("hi"), "{}", ran.text);
    assert!(world.root.join("allowed").exists());
    // One part no pattern allows: bash's own permission (ask) holds, and
    // nobody can be asked.
    let error = world.call_with(&headless, "bash", json!({"command": "echo hi; touch other"})).await.unwrap_err();
    assert_eq!(error.denial().map(|d| d.reason), Some(DenialReason::Policy));
    assert!(!world.root.join("other").exists());
    // A denied part refuses even a trusted run.
    let trusted = Permissions::headless({
        let mut p = PermissionPolicy::from_config(&config).unwrap();
        p.trust();
        p
    });
    let error = world.call_with(&trusted, "bash", json!({"command": "echo hi | rm -f allowed"})).await.unwrap_err();
    assert!(error.to_string().contains("`rm -f allowed` matches Bash(rm *)"), "{error}");
    assert!(world.root.join("allowed").exists());
    // What cannot be parsed is asked about: the person sees it.
    let person = Person::answering(Decision::Deny);
    let asking = interactive(&person, PermissionPolicy::from_config(&config).unwrap());
    let _ = world.call_with(&asking, "bash", json!({"command": "echo $(touch sneaky)"})).await;
    assert_eq!(person.asked(), ["bash: echo $(touch sneaky)"]);
    assert!(!world.root.join("sneaky").exists());
}

#[test]
fn the_mode_and_rule_lists_read_from_config_and_flags_with_precise_errors() {
    let policy =
        PermissionPolicy::from_config(&json!({"defaultMode": "acceptEdits", "allow": ["Edit", "Bash(git *)"]}))
            .unwrap();
    assert_eq!(policy.mode(), PermissionMode::AcceptEdits);
    assert_eq!(policy.permission("edit"), seri_tools::Permission::Allow, "Claude Code's tool names are taken");
    assert_eq!(policy.commands().allow.len(), 1);
    let error = |config| PermissionPolicy::from_config(&config).unwrap_err().to_string();
    assert_eq!(
        error(json!({"mode": "yolo"})),
        "`permissions.mode`: `yolo` is not a permission mode; expected one of: default, accept-edits, plan, bypass"
    );
    assert!(
        error(json!({"allow": ["Read(src/**)"]}))
            .starts_with("`permissions.allow[0]`: `Read(src/**)` is not a rule seri takes")
    );
    assert!(error(json!({"deny": "Bash(rm *)"})).starts_with("`permissions.deny`:"));
    let mut flagged = PermissionPolicy::new();
    flagged
        .apply_flags(&seri_tools::PermissionFlags {
            allow: vec!["Bash(cargo test:*)".into()],
            mode: Some(PermissionMode::Plan),
            ..Default::default()
        })
        .unwrap();
    assert_eq!((flagged.mode(), flagged.commands().allow.len()), (PermissionMode::Plan, 1));
}
