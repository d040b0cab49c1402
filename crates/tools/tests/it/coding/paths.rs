//! Path rules (`Read(…)`, `Edit(…)`) through the real tools: a deny keeps
//! a pattern's files from `read_file`, `grep` and `list` (which walk past
//! them without naming them); an ask asks even when the tool is allowed and
//! the session accepts edits; an allow lets an edit through unasked, even
//! outside the working directory; and deny beats them all.

use serde_json::json;
use seri_core::{DenialReason, PermissionMode};
use seri_tools::permissions::PathAccess;
use seri_tools::{Decision, Permission, PermissionPolicy, Permissions};

use super::world::{Person, World, interactive, shown};

fn with_rules(world: &World, rules: &[(PathAccess, Permission, &str)]) -> PermissionPolicy {
    let mut policy = PermissionPolicy::new();
    for (access, permission, pattern) in rules {
        policy.add_path_rule(*access, *permission, &world.root, pattern, &format!("rule {pattern}")).unwrap();
    }
    policy
}

#[tokio::test]
async fn a_read_deny_pattern_keeps_its_files_from_every_reading_tool() {
    let world = World::new();
    world.write(".env", "TOKEN=hunter2\n");
    world.write("app/.env", "TOKEN=hunter3\n");
    world.write("app/main.rs", "// TOKEN is read from the environment\n");
    let policy = with_rules(&world, &[(PathAccess::Read, Permission::Deny, "**/.env")]);
    let headless = Permissions::headless(policy);

    let read = world.call_with(&headless, "read_file", json!({"path": "app/.env"})).await;
    let error = read.unwrap_err();
    assert_eq!(error.denial().map(|d| d.reason), Some(DenialReason::Policy));
    assert!(error.to_string().contains("the rule `rule **/.env` denies it"), "{error}");

    let grep = shown(world.call_with(&headless, "grep", json!({"pattern": "TOKEN"})).await);
    assert!(grep.contains("app/main.rs"), "{grep}");
    assert!(!grep.contains("hunter"), "grep walked into a denied file: {grep}");
    let list = shown(world.call_with(&headless, "list", json!({"path": "."})).await);
    assert!(list.contains("main.rs") && !list.contains(".env"), "{list}");
    // Editing is another rule's: a read rule does not refuse it.
    let person = Person::answering(Decision::Allow);
    let policy = with_rules(&world, &[(PathAccess::Read, Permission::Deny, "**/.env")]);
    let edit = world
        .call_with(&interactive(&person, policy), "write_file", json!({"path": ".env", "content": "TOKEN=\n"}))
        .await;
    assert!(edit.is_ok(), "{}", shown(edit));
}

#[tokio::test]
async fn an_edit_allow_rule_lets_edits_through_unasked_and_an_ask_rule_asks_even_in_accept_edits() {
    let world = World::new();
    world.write("src/lib.rs", "one\n");
    world.write("src/generated/table.rs", "one\n");
    let rules = [
        (PathAccess::Edit, Permission::Allow, "src/**"),
        (PathAccess::Edit, Permission::Ask, "src/generated/**"),
        (PathAccess::Edit, Permission::Deny, "src/generated/lock.rs"),
    ];
    let person = Person::answering(Decision::Deny);
    let permissions = interactive(&person, with_rules(&world, &rules));
    let edit = |path: &str| json!({"path": path, "old": "one", "new": "two"});

    assert!(world.call_with(&permissions, "edit", edit("src/lib.rs")).await.is_ok());
    assert_eq!(person.asked(), Vec::<String>::new(), "an allow rule answers for the edit tool's ask");

    let accepting = permissions.with_mode(PermissionMode::AcceptEdits);
    let asked = world.call_with(&accepting, "edit", edit("src/generated/table.rs")).await;
    assert_eq!(asked.unwrap_err().denial().map(|d| d.reason), Some(DenialReason::User));
    assert_eq!(person.asked(), ["edit: src/generated/table.rs"]);

    let trusted = permissions.trusted();
    world.write("src/generated/lock.rs", "one\n");
    let denied = world.call_with(&trusted, "edit", edit("src/generated/lock.rs")).await;
    assert_eq!(denied.unwrap_err().denial().map(|d| d.reason), Some(DenialReason::Policy), "deny beats --yes");
    assert_eq!(world.read("src/generated/lock.rs"), "one\n");
}

#[tokio::test]
async fn an_allow_rule_that_names_a_place_outside_answers_its_question() {
    let world = World::new();
    std::fs::write(world.outside.join("notes.md"), "one\n").unwrap();
    let mut policy = PermissionPolicy::new();
    policy.add_path_rule(PathAccess::Read, Permission::Allow, &world.outside, "*.md", "Read(//outside/*.md)").unwrap();
    let headless = Permissions::headless(policy);
    let path = world.outside.join("notes.md").display().to_string();
    let read = world.call_with(&headless, "read_file", json!({"path": path})).await;
    assert!(read.is_ok(), "{}", shown(read));
    let other = world.outside.join("other.txt");
    std::fs::write(&other, "x").unwrap();
    let refused = world.call_with(&headless, "read_file", json!({"path": other.display().to_string()})).await;
    assert_eq!(refused.unwrap_err().denial().map(|d| d.reason), Some(DenialReason::OutsideWorkspace));
}
