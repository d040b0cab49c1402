//! The registry's own rules: unique names, specs in registration order, the
//! tool descriptions coming from seri-prompt's contracts (and stating the
//! limits the code uses), and which runs see the coding tools.

use std::sync::Arc;

use seri_prompt::text::verbs;
use seri_tools::{ContinueSession, Status, ToolRegistry};

#[test]
fn names_are_unique() {
    let mut registry = ToolRegistry::with_session_verbs();
    let error = registry.register(Arc::new(Status)).unwrap_err();
    assert_eq!(error.to_string(), "a tool named `status` is already registered");
    let mut empty = ToolRegistry::new();
    empty.register(Arc::new(ContinueSession)).unwrap();
    assert_eq!(format!("{empty:?}"), "[\"continue_session\"]");
}

#[test]
fn descriptions_are_the_verb_contracts() {
    let registry = ToolRegistry::with_session_verbs();
    let description = |name: &str| registry.get(name).map(|t| t.description().to_owned()).unwrap();
    assert_eq!(description("continue_session"), verbs::CONTINUE_SESSION);
    assert_eq!(description("status"), verbs::STATUS);
    assert_eq!(description("read"), verbs::READ);
    assert_eq!(description("plan"), verbs::PLAN);
    assert_eq!(description("delegate"), verbs::DELEGATE);
}

#[test]
fn the_handoff_schema_accepts_keys_it_does_not_name() {
    let schema = ContinueSession.input_schema_for_test();
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema["properties"]["handoff"].get("additionalProperties").is_none());
}

trait SchemaForTest {
    fn input_schema_for_test(&self) -> serde_json::Value;
}

impl SchemaForTest for ContinueSession {
    fn input_schema_for_test(&self) -> serde_json::Value {
        seri_tools::Tool::input_schema(self)
    }
}

#[test]
fn coding_tool_descriptions_are_their_contracts_and_state_the_limits() {
    use seri_prompt::text::tools;
    use seri_tools::coding::{bash, grep, list, read_file};
    let registry = ToolRegistry::with_coding_tools();
    let description = |name: &str| registry.get(name).map(|t| t.description().to_owned()).unwrap();
    for (name, contract) in [
        ("read_file", tools::READ_FILE),
        ("write_file", tools::WRITE_FILE),
        ("edit", tools::EDIT),
        ("list", tools::LIST),
        ("grep", tools::GREP),
        ("bash", tools::BASH),
        ("remember", tools::REMEMBER),
    ] {
        assert_eq!(description(name), contract, "{name}");
    }
    // The numbers the model is told are the numbers the code uses.
    let states = |name: &str, facts: &[String]| {
        for fact in facts {
            assert!(description(name).contains(fact.as_str()), "{name}'s contract does not say {fact:?}");
        }
    };
    states("remember", &[format!("at most {} KiB", seri_tools::coding::remember::MAX_MEMORY_BYTES / 1024)]);
    states(
        "read_file",
        &[
            format!("{} by default", read_file::DEFAULT_LINES),
            format!("{} KiB of output", read_file::MAX_OUTPUT_BYTES / 1024),
            format!("longer than {} characters", read_file::MAX_LINE_CHARS),
        ],
    );
    states("list", &[format!("At most {} entries", list::MAX_ENTRIES)]);
    states(
        "grep",
        &[
            format!("over {} MiB", grep::MAX_FILE_BYTES / (1024 * 1024)),
            format!("At most {} matching lines", grep::MAX_MATCH_LINES),
            format!("cut at {} characters", grep::MAX_LINE_CHARS),
        ],
    );
    states(
        "bash",
        &[
            format!("{} (two minutes) by default", bash::DEFAULT_TIMEOUT_MS),
            format!("at most {}", bash::MAX_TIMEOUT_MS),
            format!("first {} KiB", bash::capture::HEAD_BYTES / 1024),
            format!("last {} KiB", bash::capture::TAIL_BYTES / 1024),
        ],
    );
}

#[test]
fn coding_tools_reach_interactive_and_child_runs_but_not_scripts() {
    use seri_core::{AgentId, RunId, SessionId};
    use seri_prompt::ContextStrategy;
    use seri_tools::{RunContext, RunKind, RunRef};
    let parent_run_id = RunId::from_bytes([0xbb; 16]);
    let names = |kind: Option<RunKind>| {
        let run = RunContext {
            session_id: SessionId::from_bytes([1; 16]),
            agent_id: AgentId::local(),
            strategy: ContextStrategy::Continue,
            run: kind.map(|kind| RunRef { id: RunId::from_bytes([0xaa; 16]), kind, parked_children: 0 }),
        };
        let names: Vec<String> =
            ToolRegistry::with_coding_tools().available(&run).into_iter().map(|s| s.name).collect();
        names.join(", ")
    };
    let coding = "read_file, write_file, edit, list, grep, bash";
    assert_eq!(
        names(Some(RunKind::Interactive)),
        format!("continue_session, status, read, plan, delegate, {coding}, remember"),
        "only a person's run writes memory"
    );
    assert_eq!(
        names(Some(RunKind::DelegatedChild { parent_run_id, depth: 1 })),
        format!("status, read, plan, {coding}")
    );
    assert_eq!(names(Some(RunKind::TypedChild { parent_run_id, depth: 1 })), format!("status, read, plan, {coding}"));
    assert_eq!(names(Some(RunKind::Script)), "status, read, plan");
    assert_eq!(names(None), "status, read, plan");
    assert_eq!(
        format!("{:?}", ToolRegistry::with_coding_tools()),
        format!(
            "[\"continue_session\", \"status\", \"read\", \"plan\", \"delegate\", {}, \"remember\"]",
            coding.split(", ").map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
        )
    );
}

#[tokio::test]
async fn a_script_calling_a_coding_tool_learns_why_it_cannot() {
    use seri_core::{AgentId, SessionId};
    use seri_prompt::ContextStrategy;
    use seri_tools::{
        InMemorySessions, PermissionPolicy, Permissions, RunContext, RunKind, RunRef, ToolContext, Workspace,
    };
    let dir = tempfile::tempdir().unwrap();
    let run = RunContext {
        session_id: SessionId::from_bytes([1; 16]),
        agent_id: AgentId::local(),
        strategy: ContextStrategy::Continue,
        run: Some(RunRef { id: seri_core::RunId::from_bytes([0xaa; 16]), kind: RunKind::Script, parked_children: 0 }),
    };
    let sessions = InMemorySessions::new(dir.path());
    let workspace = Workspace::new(dir.path()).unwrap();
    let permissions = Permissions::headless(PermissionPolicy::new());
    let ctx =
        ToolContext { run: &run, access: &sessions, workspace: &workspace, permissions: &permissions, call: None };
    let error =
        ToolRegistry::with_coding_tools().call(ctx, "list", serde_json::json!({"path": "."})).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "`list` is not available to this run: runs started by a script or automation do not get the coding tools"
    );
}
