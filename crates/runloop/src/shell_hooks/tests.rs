//! Deciding what a hook said, matchers, and the caps on what it gives.

use super::*;

fn verdict(code: Option<i32>, stdout: &str, stderr: &str) -> Verdict {
    super::verdict(HookEvent::PreToolUse, code, &Said::text(stdout), &Said::text(stderr))
}

#[test]
fn exit_two_and_a_block_decision_block_and_other_failures_do_not() {
    let block = |reason: &str| Verdict::Block { reason: reason.to_owned() };
    let go = |context: &[&str]| Verdict::Proceed {
        context: context.iter().map(|c| (*c).to_owned()).collect(),
        allow: false,
        ask: false,
    };
    assert_eq!(verdict(Some(2), "", "no rm here\n"), block("no rm here"));
    assert_eq!(verdict(Some(2), "", ""), block("a hook blocked it and gave no reason"));
    assert_eq!(verdict(Some(0), r#"{"decision":"block","reason":"tests first"}"#, ""), block("tests first"));
    assert_eq!(
        verdict(
            Some(0),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}"#,
            ""
        ),
        block("not on main")
    );
    assert_eq!(verdict(Some(0), r#"{"decision":"approve"}"#, ""), go(&[]));
    assert_eq!(verdict(Some(0), "today is Tuesday\n", ""), go(&["today is Tuesday"]));
    assert_eq!(verdict(Some(1), r#"{"decision":"block"}"#, "oops"), go(&[]), "a hook's own failure blocks nothing");
    assert_eq!(verdict(None, "", ""), go(&[]));
}

#[test]
fn the_rest_of_claude_codes_answer_is_read() {
    let said =
        |event, code, stdout: &str, stderr: &str| super::verdict(event, code, &Said::text(stdout), &Said::text(stderr));
    let pre = HookEvent::PreToolUse;
    assert_eq!(
        said(pre, Some(0), r#"{"continue": false, "stopReason": "the build is red"}"#, ""),
        Verdict::Halt { reason: "the build is red".into() },
        "continue: false wins over everything else"
    );
    assert_eq!(
        said(HookEvent::Stop, Some(0), r#"{"continue": false, "decision": "block", "reason": "x"}"#, ""),
        Verdict::Halt { reason: "a hook stopped the run".into() }
    );
    let allowed = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}"#;
    assert_eq!(said(pre, Some(0), allowed, ""), Verdict::Proceed { context: Vec::new(), allow: true, ask: false });
    let asked = r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check it"}}"#;
    assert_eq!(said(pre, Some(0), asked, ""), Verdict::Proceed { context: Vec::new(), allow: false, ask: true });
    assert_eq!(
        said(HookEvent::PostToolUse, Some(0), allowed, ""),
        Verdict::proceed(),
        "only a PreToolUse hook lets a call run"
    );
    let added = r#"{"suppressOutput": true, "hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}}"#;
    assert_eq!(
        said(HookEvent::PostToolUse, Some(0), added, ""),
        Verdict::Proceed { context: vec!["lint: 2 warnings".into()], allow: false, ask: false }
    );
    // Events that cannot block never do, whatever the hook says.
    for event in [HookEvent::SessionStart, HookEvent::SessionEnd, HookEvent::PreCompact, HookEvent::Notification] {
        assert_eq!(said(event, Some(2), "", "no"), Verdict::proceed(), "{event:?}");
        assert_eq!(said(event, Some(0), r#"{"decision": "block"}"#, ""), Verdict::proceed(), "{event:?}");
    }
    assert_eq!(
        said(HookEvent::SessionStart, Some(0), "Branch: main, 2 commits ahead.\n", ""),
        Verdict::Proceed { context: vec!["Branch: main, 2 commits ahead.".into()], allow: false, ask: false }
    );
    assert_eq!(
        said(HookEvent::PreContinue, Some(2), "", "finish the migration first"),
        Verdict::Block { reason: "finish the migration first".into() }
    );
    // PermissionRequest answers for the person with `decision.behavior`, as Claude Code's does.
    let asking = HookEvent::PermissionRequest;
    let allow = r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}"#;
    assert_eq!(said(asking, Some(0), allow, ""), Verdict::Proceed { context: Vec::new(), allow: true, ask: false });
    let deny = r#"{"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "no writes on Fridays"}}}"#;
    assert_eq!(said(asking, Some(0), deny, ""), Verdict::Block { reason: "no writes on Fridays".into() });
    assert_eq!(said(asking, Some(2), "", "not here"), Verdict::Block { reason: "not here".into() });
    assert_eq!(said(asking, Some(0), allowed, ""), Verdict::proceed(), "a PreToolUse answer leaves the person to ask");
    let plain = said(asking, Some(0), "looks fine\n", "");
    assert!(matches!(plain, Verdict::Proceed { allow: false, .. }), "plain text is no answer: {plain:?}");
}

/// The cap's note, as `bash` writes it: `… [N elided] …`.
fn elided(text: &str) -> bool {
    text.contains(" elided] …")
}

#[test]
fn every_text_a_hook_gives_is_capped_like_a_tools_output() {
    let big = "x".repeat(3 * MAX_STREAM_BYTES);
    let Verdict::Block { reason } = verdict(Some(2), "", &big) else { panic!("exit 2 blocks") };
    assert!(reason.len() < MAX_STREAM_BYTES + 100 && elided(&reason), "{}", reason.len());
    let answer = json!({"decision": "block", "reason": big}).to_string();
    let Verdict::Block { reason } = verdict(Some(0), &answer, "") else { panic!("a block decision blocks") };
    assert!(reason.len() < MAX_STREAM_BYTES + 100 && elided(&reason), "{}", reason.len());
    let answer = json!({"hookSpecificOutput": {"additionalContext": big}}).to_string();
    let Verdict::Proceed { context, .. } = verdict(Some(0), &answer, "") else { panic!("context proceeds") };
    assert!(context[0].len() < MAX_STREAM_BYTES + 100 && elided(&context[0]));
    let Verdict::Proceed { context, .. } = verdict(Some(0), &big, "") else { panic!("plain text proceeds") };
    assert!(context[0].len() < MAX_STREAM_BYTES + 100 && elided(&context[0]));
}

#[test]
fn a_json_answer_too_long_to_read_refuses_a_guarded_call_and_is_ignored_elsewhere() {
    let huge = json!({"decision": "approve", "reason": "y".repeat(ANSWER_BYTES)}).to_string();
    let (out, err) = (Said::text(&huge), Said::text(""));
    assert!(out.whole.is_none());
    let Verdict::Block { reason } = super::verdict(HookEvent::PreToolUse, Some(0), &out, &err) else {
        panic!("a guard that cannot be read refuses")
    };
    assert!(reason.contains("over the 1048576 seri reads as JSON"), "{reason}");
    for event in [HookEvent::PostToolUse, HookEvent::UserPromptSubmit, HookEvent::Stop] {
        assert_eq!(super::verdict(event, Some(0), &out, &err), Verdict::proceed());
    }
}

#[test]
fn matchers_take_claude_codes_tool_names_and_every_mistake_names_its_key() {
    let hooks = Hooks::from_config(&json!({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b", "timeout": 5}]},
            {"hooks": [{"type": "command", "command": "c"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "d"}]}]
    }))
    .unwrap();
    let names = |event, tool| hooks.matching(event, tool).iter().map(|h| h.command.clone()).collect::<Vec<_>>();
    assert_eq!(names(HookEvent::PreToolUse, Some("bash")), ["a", "c"]);
    assert_eq!(names(HookEvent::PreToolUse, Some("write_file")), ["b", "c"]);
    assert_eq!(names(HookEvent::PreToolUse, Some("grep")), ["c"]);
    assert_eq!(names(HookEvent::PreToolUse, Some("bashful")), ["c"], "a matcher matches whole names");
    assert_eq!(names(HookEvent::Stop, None), ["d"]);
    assert!(names(HookEvent::PostToolUse, Some("bash")).is_empty());
    let error = |value: Value| Hooks::from_config(&value).unwrap_err().to_string();
    assert_eq!(
        error(json!({"PreTool": []})),
        "`hooks.PreTool`: not an event seri runs hooks on; those are PreToolUse, PostToolUse, UserPromptSubmit, \
         Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, PreContinue, Notification, PermissionRequest"
    );
    assert!(
        error(json!({"Stop": [{"matcher": "(", "hooks": []}]}))
            .starts_with("`hooks.Stop[0].matcher`: `(` is not a pattern")
    );
    assert_eq!(
        error(json!({"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]})),
        "`hooks.Stop[0].hooks[0].type`: only \"command\" hooks run in seri, got prompt"
    );
    assert_eq!(
        error(json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]})),
        "`hooks.Stop[0].hooks[0].timeout`: expected seconds above 0, got -1"
    );
}
