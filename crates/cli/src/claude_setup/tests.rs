//! Reading Claude Code's settings files: what applies, what is named, and path deny rules.

use serde_json::json;

use super::*;

fn places() -> Places<'static> {
    Places { cwd: Path::new("/home/ana/work"), home: Some(Path::new("/home/ana")) }
}

/// A setup as Claude Code's documentation shows one, with what seri uses and what it does not.
fn documented() -> Value {
    json!({
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "permissions": {
            "allow": ["Bash(npm run lint)", "Bash(npm run test:*)", "Edit", "mcp__docs__search"],
            "ask": ["Bash(git push:*)"],
            "deny": ["Read(./.env)", "Read(./secrets/**)", "WebFetch(domain:example.com)", "Bash(curl:*)"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../docs/"]
        },
        "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "1"},
        "model": "claude-sonnet-4-5",
        "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "python3 ~/.claude/hooks/bash_validator.py"},
                {"type": "prompt", "prompt": "Is this safe?"}
            ]}],
            "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./scripts/check.sh", "timeout": 120}]}],
            "PermissionRequest": [{"hooks": [{"type": "command", "command": "./approve.sh"}]}]
        },
        "cleanupPeriodDays": 20
    })
}

#[test]
fn a_documented_setup_is_read_and_what_seri_cannot_use_is_named() {
    let file = read_file(Path::new("/home/ana/.claude/settings.json"), Scope::User, &documented(), true, places());
    insta::assert_debug_snapshot!((&file.used, &file.not_used, &file.rules, &file.mode));
    let hooks = Value::Object(file.hooks.clone());
    insta::assert_json_snapshot!("documented_hooks", hooks);
    let setup = ClaudeSetup { files: vec![file] };
    let hooks = setup.hooks(Hooks::default()).unwrap();
    assert_eq!(hooks.matching(HookEvent::PreToolUse, Some("bash")).len(), 1, "the prompt hook is left out");
    assert_eq!(hooks.matching(HookEvent::PostToolUse, Some("edit")).len(), 1);
    let mut policy = PermissionPolicy::new();
    setup.apply(&mut policy).unwrap();
    assert_eq!(policy.permission("edit"), Permission::Allow);
    assert_eq!(policy.mode(), seri_core::PermissionMode::AcceptEdits);
}

#[test]
fn a_project_file_applies_only_when_trusted_and_never_turns_questions_off() {
    let value = json!({
        "permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./x.sh"}]}]}
    });
    let path = Path::new("/repo/.claude/settings.json");
    let untrusted = read_file(path, Scope::Project, &value, false, places());
    let setup = ClaudeSetup { files: vec![untrusted.clone()] };
    assert!(setup.hooks(Hooks::default()).unwrap().is_empty(), "an untrusted file's hooks never run");
    let mut policy = PermissionPolicy::new();
    setup.apply(&mut policy).unwrap();
    assert_eq!(policy, PermissionPolicy::new(), "nor do its rules apply");
    assert!(setup.config_lines().contains("(project, not trusted, not applied: seri mcp trust)"));

    let trusted = read_file(path, Scope::Project, &value, true, places());
    assert_eq!(trusted.mode, None);
    assert!(
        trusted.not_used.iter().any(|n| n.contains("a project never turns every question off")),
        "{:?}",
        trusted.not_used
    );
}

#[test]
fn a_file_that_is_not_json_is_named_and_nothing_else_breaks() {
    let file = read_file(
        Path::new("/repo/.claude/settings.local.json"),
        Scope::Project,
        &Value::String("{\"permissions\": ".to_owned()),
        true,
        places(),
    );
    assert!(file.used.is_empty());
    assert_eq!(file.not_used.len(), 1);
    assert!(file.not_used[0].starts_with("the whole file: not JSON: EOF"), "{:?}", file.not_used);
}

#[test]
fn a_deny_of_a_path_or_a_folder_keeps_it_from_bash_too_and_a_pattern_binds_the_tools() {
    let value = json!({"permissions": {"deny": [
        "Read(./.env)", "Read(secrets/**)", "Read(~/.npmrc)", "Read(//etc/shadow)", "Read(/config/keys.json)",
        "Edit(/migrations/**)", "Write(./Cargo.lock)", "Read(**/.env)", "Edit(src/*.rs)"
    ]}});
    let file = read_file(Path::new("/home/ana/work/.claude/settings.json"), Scope::Project, &value, true, places());
    let read: Vec<&str> = file.deny_read.iter().filter_map(|p| p.to_str()).collect();
    assert_eq!(
        read,
        [
            "/home/ana/work/.env",
            "/home/ana/work/secrets",
            "/home/ana/.npmrc",
            "/etc/shadow",
            "/home/ana/work/config/keys.json"
        ]
    );
    let write: Vec<&str> = file.deny_write.iter().filter_map(|p| p.to_str()).collect();
    assert_eq!(write, ["/home/ana/work/migrations", "/home/ana/work/Cargo.lock"]);
    assert_eq!(
        file.used,
        [
            "permissions.deny: 9 path rules for seri's file tools",
            "permissions.deny: 7 places kept from bash too, by the sandbox"
        ]
    );
    assert_eq!(
        file.not_used,
        ["permissions.deny `Read(**/.env)`, `Edit(src/*.rs)`: a pattern binds seri's file tools, not bash (the \
          sandbox keeps places); list the places in sandbox.denyRead"]
    );
    let mut policy = PermissionPolicy::new();
    ClaudeSetup { files: vec![file.clone()] }.apply(&mut policy).unwrap();
    let decide = |tool: &str, path: &str| policy.paths().decide(tool, Path::new(path)).map(|d| d.rule.to_owned());
    assert_eq!(decide("grep", "/home/ana/work/app/.env").as_deref(), Some("Read(**/.env)"));
    assert_eq!(decide("edit", "/home/ana/work/src/main.rs").as_deref(), Some("Edit(src/*.rs)"));
    assert_eq!(decide("write_file", "/home/ana/work/migrations/001.sql").as_deref(), Some("Edit(/migrations/**)"));
    assert_eq!(decide("read_file", "/home/ana/work/src/main.rs"), None);
    let untrusted = ClaudeSetup { files: vec![ClaudeFile { applied: false, ..file.clone() }] };
    assert_eq!(untrusted.kept_out(), (Vec::new(), Vec::new()), "an untrusted file keeps nothing out");
    let trusted = ClaudeSetup { files: vec![file] };
    assert_eq!(trusted.kept_out().0.len(), 5);
}
