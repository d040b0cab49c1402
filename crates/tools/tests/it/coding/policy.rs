//! The permission policy: defaults, `config.json`, flags, their precedence,
//! and the errors a bad setting gets.

use serde_json::json;
use seri_tools::{Permission, PermissionFlags, PermissionPolicy};

fn flags(allow: &[&str], deny: &[&str], yes: bool) -> PermissionFlags {
    let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
    PermissionFlags { allow: names(allow), deny: names(deny), yes, mode: None }
}

/// Each gated tool's permission, in a fixed order, as one line.
fn table(policy: &PermissionPolicy) -> String {
    let tools = ["read_file", "list", "grep", "write_file", "edit", "bash"];
    let mut line: Vec<String> = tools.iter().map(|t| format!("{t}={}", policy.permission(t))).collect();
    line.push(format!("trusted={}", policy.is_trusted()));
    line.join(" ")
}

#[test]
fn defaults_allow_reading_and_ask_for_the_rest() {
    assert_eq!(
        table(&PermissionPolicy::new()),
        "read_file=allow list=allow grep=allow write_file=ask edit=ask bash=ask trusted=false"
    );
    assert_eq!(PermissionPolicy::new().permission("status"), Permission::Allow, "session verbs are not gated");
}

#[test]
fn config_then_flags_each_win_over_the_layer_before() {
    let mut policy =
        PermissionPolicy::from_config(&json!({"bash": "allow", "edit": "deny", "read_file": "ask"})).unwrap();
    assert_eq!(table(&policy), "read_file=ask list=allow grep=allow write_file=ask edit=deny bash=allow trusted=false");
    policy.apply_flags(&flags(&["edit"], &["bash"], true)).unwrap();
    assert_eq!(table(&policy), "read_file=ask list=allow grep=allow write_file=ask edit=allow bash=deny trusted=true");
}

#[test]
fn bad_settings_name_what_was_wrong_and_change_nothing() {
    let mut policy = PermissionPolicy::from_config(&json!({"bash": "allow"})).unwrap();
    let before = policy.clone();
    let errors = [
        policy.apply_config(&json!({"edit": "deny", "bahs": "allow"})).unwrap_err().to_string(),
        policy.apply_config(&json!({"edit": "yes"})).unwrap_err().to_string(),
        policy.apply_config(&json!({"edit": true})).unwrap_err().to_string(),
        policy.apply_config(&json!(["bash"])).unwrap_err().to_string(),
        policy.apply_config(&json!({"status": "deny"})).unwrap_err().to_string(),
        policy.apply_flags(&flags(&["bash", "edit"], &["edit"], false)).unwrap_err().to_string(),
        policy.apply_flags(&flags(&["grpe"], &[], true)).unwrap_err().to_string(),
    ];
    assert_eq!(
        errors,
        [
            "`permissions.bahs`: `bahs` is not a tool with a permission; those are read_file, list, grep, write_file, edit, bash, remember, and an MCP server's tools as mcp__<server>__<tool> or mcp__<server>__*",
            "`permissions.edit`: expected \"allow\", \"ask\" or \"deny\", got \"yes\"",
            "`permissions.edit`: expected \"allow\", \"ask\" or \"deny\", got true",
            "`permissions`: expected an object mapping tool names to \"allow\", \"ask\" or \"deny\", got an array",
            "`permissions.status`: `status` is not a tool with a permission; those are read_file, list, grep, write_file, edit, bash, remember, and an MCP server's tools as mcp__<server>__<tool> or mcp__<server>__*",
            "--allow edit and --deny edit contradict each other; give one of them",
            "`--allow`: `grpe` is not a tool with a permission; those are read_file, list, grep, write_file, edit, bash, remember, and an MCP server's tools as mcp__<server>__<tool> or mcp__<server>__*",
        ]
    );
    assert_eq!(policy, before);
}

#[test]
fn permissions_read_and_print_as_their_config_words() {
    for word in ["allow", "ask", "deny"] {
        assert_eq!(Permission::parse(word).unwrap().as_str(), word);
    }
    assert_eq!(Permission::parse("Allow"), None);
}
