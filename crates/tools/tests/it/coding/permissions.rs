//! Every permission outcome, through the real tools: allow, ask answered
//! yes and no, deny, ask in a headless run, `--yes`, paths outside the
//! working directory and under an allowed root, and the recorded denial.

use serde_json::{Value, json};
use seri_core::{DenialReason, EventBody};
use seri_tools::{Decision, Permissions, ToolError, ToolOutcome};

use super::world::{Person, World, interactive, policy, shown};

/// What happened: the result the model reads, what the person was asked,
/// and the denial's reason when there was one.
#[derive(Debug, PartialEq)]
struct Seen {
    result: String,
    asked: Vec<String>,
    reason: Option<DenialReason>,
}

fn seen(result: Result<ToolOutcome, ToolError>, person: Option<&Person>) -> Seen {
    let reason = result.as_ref().err().and_then(ToolError::denial).map(|d| d.reason);
    Seen { result: shown(result), asked: person.map(Person::asked).unwrap_or_default(), reason }
}

fn write_new() -> Value {
    json!({"path": "new.txt", "content": "hi"})
}

#[tokio::test]
async fn reading_is_allowed_without_asking() {
    let world = World::new();
    world.write("a.txt", "a");
    let person = Person::answering(Decision::Deny);
    let result =
        world.call_with(&interactive(&person, policy(&[], &[], false)), "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(seen(result, Some(&person)), Seen { result: "ok:      1\ta".into(), asked: vec![], reason: None });
    let headless = Permissions::headless(policy(&[], &[], false));
    for (tool, input) in [("list", json!({"path": "."})), ("grep", json!({"pattern": "a"}))] {
        assert!(world.call_with(&headless, tool, input).await.is_ok(), "{tool}");
    }
}

#[tokio::test]
async fn ask_answered_yes_goes_ahead() {
    let world = World::new();
    let person = Person::answering(Decision::Allow);
    let result = world.call_with(&interactive(&person, policy(&[], &[], false)), "write_file", write_new()).await;
    assert_eq!(
        seen(result, Some(&person)),
        Seen {
            result: "ok: Created new.txt (1 line, 2 bytes).".into(),
            asked: vec!["write_file: new.txt".into()],
            reason: None
        }
    );
    assert_eq!(world.read("new.txt"), "hi");
    assert_eq!(person.requests()[0].preview.as_deref(), Some("@@ -0,0 +1,1 @@\n+hi\n"), "a new file's head");
}

#[tokio::test]
async fn a_refusal_with_words_gives_the_model_those_words() {
    let world = World::new();
    let person = Person::answering(Decision::Instead("write it under docs/ instead".into()));
    let result = world.call_with(&interactive(&person, policy(&[], &[], false)), "write_file", write_new()).await;
    let error = result.unwrap_err();
    assert_eq!(error.denial().unwrap().reason, DenialReason::User);
    assert_eq!(
        error.to_string(),
        "permission denied: the person declined write_file: new.txt and said instead: write it under docs/ instead. \
         Do not retry this call: do what the person said."
    );
    assert!(!world.root.join("new.txt").exists());
}

#[tokio::test]
async fn overwriting_a_file_asks_with_a_diff_and_the_outcome_shows_it() {
    let world = World::new();
    world.write("plan.md", "one\ntwo\n");
    let person = Person::answering(Decision::Allow);
    let outcome = world
        .call_with(
            &interactive(&person, policy(&[], &[], false)),
            "write_file",
            json!({"path": "plan.md", "content": "one\n2\n"}),
        )
        .await
        .unwrap();
    let diff = "@@ -1,2 +1,2 @@\n one\n-two\n+2\n";
    assert_eq!(person.requests()[0].preview.as_deref(), Some(diff));
    assert_eq!(outcome.change(), Some(diff), "the person sees the change after the call too");
}

#[tokio::test]
async fn ask_answered_no_is_a_denial_by_the_user() {
    let world = World::new();
    let person = Person::answering(Decision::Deny);
    let result = world.call_with(&interactive(&person, policy(&[], &[], false)), "write_file", write_new()).await;
    let error = result.as_ref().unwrap_err();
    assert_eq!(
        error.denial().unwrap().event("call_7".into()).to_payload(),
        json!({"toolCallId": "call_7", "tool": "write_file", "reason": "user", "detail": "the person declined write_file: new.txt"})
    );
    assert_eq!(
        seen(result, Some(&person)),
        Seen {
            result: "error: permission denied: the person declined write_file: new.txt. The person said no: do not retry this call. Ask them what they want instead, or take another approach.".into(),
            asked: vec!["write_file: new.txt".into()],
            reason: Some(DenialReason::User),
        }
    );
    assert!(!world.root.join("new.txt").exists());
}

#[tokio::test]
async fn deny_refuses_without_asking_even_a_trusted_run() {
    let world = World::new();
    let person = Person::answering(Decision::Allow);
    let mut denied = policy(&[], &[], false);
    denied.apply_config(&json!({"bash": "deny"})).unwrap();
    let result = world.call_with(&interactive(&person, denied), "bash", json!({"command": "touch ran"})).await;
    assert_eq!(
        seen(result, Some(&person)),
        Seen {
            result: "error: permission denied: bash is set to deny in this run's permissions (bash: touch ran). This run's permissions do not allow it: do not retry. Take another approach, or say what you needed it for.".into(),
            asked: vec![],
            reason: Some(DenialReason::Policy),
        }
    );
    let trusted_but_denied = Permissions::headless(policy(&[], &["bash"], true));
    let result = world.call_with(&trusted_but_denied, "bash", json!({"command": "touch ran"})).await;
    assert_eq!(result.unwrap_err().denial().unwrap().reason, DenialReason::Policy);
    assert!(!world.root.join("ran").exists(), "the command never ran");
}

#[tokio::test]
async fn ask_in_a_headless_run_is_refused_by_policy() {
    let world = World::new();
    let headless = Permissions::headless(policy(&[], &[], false));
    let result = world.call_with(&headless, "bash", json!({"command": "touch ran"})).await;
    assert_eq!(
        seen(result, None),
        Seen {
            result: "error: permission denied: bash needs approval and this headless run has nobody to ask (bash: touch ran); a person can allow it with --allow bash, --yes, or \"permissions\" in config.json. This run's permissions do not allow it: do not retry. Take another approach, or say what you needed it for.".into(),
            asked: vec![],
            reason: Some(DenialReason::Policy),
        }
    );
    assert!(!world.root.join("ran").exists());
    let allowed = Permissions::headless(policy(&["bash"], &[], false));
    assert_eq!(
        shown(world.call_with(&allowed, "bash", json!({"command": "touch ran"})).await),
        "ok: exit code: 0\n(no output)"
    );
    assert!(world.root.join("ran").exists());
}

#[tokio::test]
async fn yes_answers_every_question() {
    let world = World::new();
    std::fs::write(world.outside.join("notes.txt"), "outside").unwrap();
    let trusted = Permissions::headless(policy(&[], &[], true));
    assert!(world.call_with(&trusted, "write_file", write_new()).await.is_ok());
    let outside = world.outside.join("notes.txt").display().to_string();
    let result = shown(world.call_with(&trusted, "read_file", json!({"path": outside})).await);
    assert_eq!(result, "ok:      1\toutside");
}

#[tokio::test]
async fn a_path_outside_is_asked_about_even_when_the_tool_is_allowed() {
    let world = World::new();
    std::fs::write(world.outside.join("notes.txt"), "outside").unwrap();
    let outside = world.outside.join("notes.txt").display().to_string();
    let summary = format!("read_file: {outside} (outside the working directory)");
    for (answer, result, reason) in [
        (Decision::Allow, "ok:      1\toutside".to_owned(), None),
        (
            Decision::Deny,
            format!(
                "error: permission denied: the person declined {summary}. The person said no: do not retry this call. Ask them what they want instead, or take another approach."
            ),
            Some(DenialReason::User),
        ),
    ] {
        let person = Person::answering(answer);
        let permissions = interactive(&person, policy(&["read_file"], &[], false));
        let got = world.call_with(&permissions, "read_file", json!({"path": &outside})).await;
        assert_eq!(seen(got, Some(&person)), Seen { result, asked: vec![summary.clone()], reason });
    }
}

#[tokio::test]
async fn a_path_outside_in_a_headless_run_is_its_own_denial() {
    let world = World::new();
    std::fs::write(world.outside.join("notes.txt"), "outside").unwrap();
    let outside = world.outside.join("notes.txt").display().to_string();
    let headless = Permissions::headless(policy(&["write_file"], &[], false));
    let result = world.call_with(&headless, "write_file", json!({"path": &outside, "content": "x"})).await;
    let denial = result.as_ref().unwrap_err().denial().unwrap().clone();
    assert_eq!(denial.reason, DenialReason::OutsideWorkspace);
    assert_eq!(
        denial.detail,
        format!(
            "this headless run has nobody to ask about a path outside the working directory and its allowed roots (write_file: {outside} (outside the working directory))"
        )
    );
    assert_eq!(
        shown(result),
        format!(
            "error: permission denied: {}. Work inside the working directory, or ask the person to allow this path and say why you need it.",
            denial.detail
        )
    );
    let EventBody::PermissionDenied(event) = denial.event("call_3".into()) else { unreachable!() };
    assert_eq!(event.reason, DenialReason::OutsideWorkspace);
    assert_eq!(std::fs::read_to_string(world.outside.join("notes.txt")).unwrap(), "outside");
}

#[tokio::test]
async fn an_allowed_root_is_reached_without_asking() {
    let world = World::new();
    std::fs::write(world.outside.join("notes.txt"), "shared").unwrap();
    let workspace = world.workspace.clone().with_allowed_root(&world.outside).unwrap();
    let person = Person::answering(Decision::Deny);
    let permissions = interactive(&person, policy(&[], &[], false));
    let path = world.outside.join("notes.txt").display().to_string();
    let result = world.call_in(&workspace, &permissions, "read_file", json!({"path": &path})).await;
    assert_eq!(seen(result, Some(&person)), Seen { result: "ok:      1\tshared".into(), asked: vec![], reason: None });
    // Writing there still follows the tool's own policy.
    let result = world.call_in(&workspace, &permissions, "write_file", json!({"path": &path, "content": "x"})).await;
    assert_eq!(person.asked(), [format!("write_file: {path}")]);
    assert_eq!(result.unwrap_err().denial().unwrap().reason, DenialReason::User);
}

#[tokio::test]
async fn the_person_sees_what_an_edit_and_a_command_would_do() {
    let world = World::new();
    world.write("a.rs", "let x = 1;\n");
    let person = Person::answering(Decision::Deny);
    let permissions = interactive(&person, policy(&[], &[], false));
    let _ = world.call_with(&permissions, "edit", json!({"path": "a.rs", "old": "x = 1", "new": "x = 2"})).await;
    let _ = world.call_with(&permissions, "bash", json!({"command": "cargo test\ncargo clippy\ncargo fmt"})).await;
    assert_eq!(person.asked(), ["edit: a.rs", "bash: cargo test … (+2 more lines)"]);
    let requests = person.requests();
    assert_eq!(
        requests[0].preview.as_deref(),
        Some("@@ -1 +1 @@\n-let x = 1;\n+let x = 2;\n"),
        "whole lines, as a diff"
    );
    assert_eq!(requests[1].target, "cargo test\ncargo clippy\ncargo fmt", "the whole command is there to show");
    assert_eq!(world.read("a.rs"), "let x = 1;\n");
}

#[tokio::test]
async fn input_errors_come_before_any_question() {
    let world = World::new();
    let person = Person::answering(Decision::Allow);
    let permissions = interactive(&person, policy(&[], &[], false));
    let result = world.call_with(&permissions, "edit", json!({"path": "missing.rs", "old": "a", "new": "b"})).await;
    assert_eq!(shown(result), "error: `path`: `missing.rs` does not exist; create it with write_file");
    assert!(person.asked().is_empty(), "nobody is asked about a call that cannot succeed");
}
