//! Against the reference server, `@modelcontextprotocol/server-everything`,
//! over stdio and over streamable HTTP on 127.0.0.1: its tools listed and
//! called, a refusal, a call past its timeout, and servers that fail to
//! start. `cargo xtask ci` installs the server (npm); run alone, these tests
//! say where it was looked for and pass only when `SERI_REQUIRE_MCP` is unset.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use seri_core::{AgentId, SessionId};
use seri_mcp::{McpServers, ServerSpec, ServerState, Transport};
use seri_tools::{
    InMemorySessions, PermissionPolicy, Permissions, RunContext, RunKind, RunRef, Tool, ToolContext, ToolError,
    Workspace,
};

/// The server's entry point, or `None` (with a note) when it is not installed.
fn everything() -> Option<PathBuf> {
    let path = std::env::var_os("SERI_MCP_EVERYTHING").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    });
    if path.is_file() {
        return Some(path);
    }
    let note = format!("the MCP reference server is not at {} (cargo xtask ci installs it)", path.display());
    assert!(std::env::var_os("SERI_REQUIRE_MCP").is_none(), "{note}");
    eprintln!("skipped: {note}");
    None
}

fn spec(name: &str, transport: Transport) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport,
        tool_timeout: Duration::from_secs(2),
        startup_timeout: Duration::from_secs(20),
    }
}

fn stdio(command: &str, args: &[&str]) -> Transport {
    Transport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: Default::default(),
    }
}

/// Calls `tool` as an interactive run would, under `policy`.
async fn call(tool: &dyn Tool, input: Value, policy: PermissionPolicy) -> Result<String, ToolError> {
    let dir = tempfile::tempdir().unwrap();
    let run = RunContext {
        session_id: SessionId::from_bytes([0x11; 16]),
        agent_id: AgentId::local(),
        strategy: Default::default(),
        run: Some(RunRef {
            id: seri_core::RunId::from_bytes([0x22; 16]),
            kind: RunKind::Interactive,
            parked_children: 0,
        }),
    };
    let access = InMemorySessions::new(dir.path().join("memory"));
    let workspace = Workspace::new(dir.path()).unwrap();
    let permissions = Permissions::headless(policy);
    let ctx = ToolContext { run: &run, access: &access, workspace: &workspace, permissions: &permissions, call: None };
    tool.call(ctx, input).await.map(|outcome| outcome.text)
}

fn allowing(pattern: &str) -> PermissionPolicy {
    let mut policy = PermissionPolicy::new();
    policy.set(pattern, seri_tools::Permission::Allow, "test").unwrap();
    policy
}

fn tool<'a>(tools: &'a [std::sync::Arc<dyn Tool>], name: &str) -> &'a dyn Tool {
    tools.iter().find(|t| t.name() == name).unwrap_or_else(|| panic!("no {name}")).as_ref()
}

#[tokio::test]
async fn over_stdio_tools_are_listed_called_refused_and_cut_off_at_their_timeout() {
    let Some(entry) = everything() else { return };
    let cwd = std::env::temp_dir();
    let servers =
        McpServers::start(vec![spec("everything", stdio("node", &[entry.to_str().unwrap(), "stdio"]))], &cwd).await;
    let report = servers.report();
    let ServerState::Running { tools: names, skipped } = &report[0].state else { panic!("{report:?}") };
    assert!(
        names.contains(&"mcp__everything__echo".to_owned()) && names.contains(&"mcp__everything__get-sum".to_owned()),
        "{names:?}"
    );
    // Its research tool runs only as an MCP task: listed (once the server
    // has registered it), never offered.
    assert!(!names.contains(&"mcp__everything__simulate-research-query".to_owned()), "{names:?}");
    assert!(skipped.iter().all(|t| t.name == "simulate-research-query"), "{skipped:?}");
    let tools = servers.tools();
    let echo = tool(&tools, "mcp__everything__echo");
    assert_eq!(echo.input_schema()["properties"]["message"]["type"], "string", "the server's own schema");

    let said = call(echo, json!({ "message": "hi" }), allowing("mcp__everything__*")).await.unwrap();
    assert_eq!(said, "Echo: hi");
    let sum =
        call(tool(&tools, "mcp__everything__get-sum"), json!({ "a": 2, "b": 3 }), allowing("mcp__everything__get-sum"))
            .await
            .unwrap();
    assert!(sum.contains('5'), "{sum}");

    // Asked by default: headless, nobody answers, so it is refused.
    let refused = call(echo, json!({ "message": "hi" }), PermissionPolicy::new()).await.unwrap_err();
    assert!(refused.denial().is_some(), "{refused}");
    assert!(refused.to_string().contains("--allow mcp__everything__echo"), "{refused}");

    // A call past the server's tool timeout is cancelled and says so; the
    // server keeps answering.
    let slow = tool(&tools, "mcp__everything__trigger-long-running-operation");
    let error = call(slow, json!({ "duration": 10, "steps": 2 }), allowing("mcp__everything__*")).await.unwrap_err();
    assert!(error.to_string().contains("did not answer `trigger-long-running-operation` within 2 s"), "{error}");
    assert_eq!(call(echo, json!({ "message": "again" }), allowing("mcp__everything__*")).await.unwrap(), "Echo: again");

    // A server-side error is the call's error, with the server's words.
    let wrong = call(tool(&tools, "mcp__everything__get-sum"), json!({ "a": "x" }), allowing("mcp__everything__*"))
        .await
        .unwrap_err();
    assert!(matches!(wrong, ToolError::Failed(_)), "{wrong}");
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something listens at `address`.
async fn listening(address: &str) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(address).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens at {address}");
}

#[tokio::test]
async fn over_streamable_http_on_loopback() {
    let Some(entry) = everything() else { return };
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .args([entry.to_str().unwrap(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let address = format!("127.0.0.1:{port}");
    listening(&address).await;
    let http = Transport::Http {
        url: format!("http://{address}/mcp"),
        headers: [("X-Test".to_owned(), "1".to_owned())].into(),
    };
    let servers = McpServers::start(vec![spec("web", http)], &std::env::temp_dir()).await;
    assert!(matches!(servers.report()[0].state, ServerState::Running { .. }), "{:?}", servers.report());
    let tools = servers.tools();
    let said =
        call(tool(&tools, "mcp__web__echo"), json!({ "message": "over http" }), allowing("mcp__web__*")).await.unwrap();
    assert_eq!(said, "Echo: over http");
    drop(servers);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_server_that_exits_at_once_or_speaks_garbage_fails_alone_with_the_reason() {
    let mut garbage = spec("garbage", stdio("sh", &["-c", "echo this is not json-rpc; sleep 30"]));
    garbage.startup_timeout = Duration::from_secs(2);
    let specs = vec![
        spec("gone", stdio("sh", &["-c", "echo missing API key >&2; exit 3"])),
        garbage,
        spec("absent", stdio("/nonexistent/mcp-server", &[])),
    ];
    let servers = McpServers::start(specs, &std::env::temp_dir()).await;
    let report = servers.report();
    let errors: Vec<String> = report
        .iter()
        .map(|r| match &r.state {
            ServerState::Failed { error } => error.clone(),
            other => panic!("{} should have failed: {other:?}", r.name),
        })
        .collect();
    assert!(errors[0].contains("did not start") && errors[0].contains("missing API key"), "{}", errors[0]);
    assert!(!errors[1].is_empty(), "{}", errors[1]);
    assert!(errors[2].contains("cannot run `/nonexistent/mcp-server`"), "{}", errors[2]);
    assert!(servers.tools().is_empty());
}

#[tokio::test]
async fn a_server_that_dies_mid_session_fails_its_calls_and_reads_as_failed() {
    let Some(entry) = everything() else { return };
    let marker = format!("seri-crash-marker-{}", std::process::id());
    let args = [entry.to_str().unwrap(), "stdio", marker.as_str()];
    let servers = McpServers::start(vec![spec("frail", stdio("node", &args))], &std::env::temp_dir()).await;
    let tools = servers.tools();
    let echo = tool(&tools, "mcp__frail__echo");
    assert_eq!(call(echo, json!({ "message": "1" }), allowing("mcp__frail__*")).await.unwrap(), "Echo: 1");
    let killed = std::process::Command::new("pkill").args(["-9", "-f", &marker]).status().unwrap();
    assert!(killed.success(), "the server was running");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let error = call(echo, json!({ "message": "2" }), allowing("mcp__frail__*")).await.unwrap_err();
    assert!(matches!(error, ToolError::Failed(_)), "{error}");
    assert!(error.to_string().contains("MCP server `frail`"), "{error}");
    assert!(
        matches!(servers.report()[0].state, ServerState::Failed { .. }),
        "{error} / {:?}",
        servers.report()[0].state
    );
}

/// Parses one stdio server's configuration, as `config.json` would give it,
/// reading variables from this process's own environment.
fn configured(name: &str, config: Value) -> ServerSpec {
    let env = |var: &str| std::env::var(var).ok();
    let mut specs = seri_mcp::parse_servers(&json!({ name: config }), "mcpServers", &env).unwrap();
    let mut spec = specs.remove(0);
    spec.startup_timeout = Duration::from_secs(20);
    spec
}

/// The names of this process's variables that no stdio server may see: all
/// but the SDK's list. The test process has some (cargo sets `CARGO_*`);
/// a test that had none would prove nothing, so it fails instead.
fn private_variables() -> Vec<String> {
    let private: Vec<String> =
        std::env::vars().map(|(k, _)| k).filter(|k| !seri_mcp::config::INHERITED_ENV.contains(&k.as_str())).collect();
    assert!(!private.is_empty(), "the test process has no variable of its own to keep from the server");
    private
}

#[tokio::test]
async fn a_stdio_server_sees_only_the_sdk_variables_and_those_it_is_given() {
    // Any program is started the same way, MCP server or not: this one
    // writes its environment and exits, so the server fails to start.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("env.txt");
    let script = format!("env > '{}'", out.display());
    let spec = configured(
        "dump",
        json!({"command": "sh", "args": ["-c", script], "passEnv": ["CARGO_PKG_NAME"], "env": {"GIVEN": "yes"}}),
    );
    let servers = McpServers::start(vec![spec], dir.path()).await;
    assert!(matches!(servers.report()[0].state, ServerState::Failed { .. }));
    let seen = std::fs::read_to_string(&out).unwrap();
    let names: Vec<&str> = seen.lines().filter_map(|l| l.split_once('=').map(|(k, _)| k)).collect();
    assert!(names.contains(&"GIVEN") && names.contains(&"CARGO_PKG_NAME"), "{seen}");
    for variable in private_variables() {
        if variable != "CARGO_PKG_NAME" && variable != "GIVEN" {
            // `sh` itself sets PWD, SHLVL and `_`.
            assert!(
                !names.contains(&variable.as_str()) || ["PWD", "SHLVL", "_"].contains(&variable.as_str()),
                "{variable} reached the server:\n{seen}"
            );
        }
    }
}

#[tokio::test]
async fn the_reference_servers_get_env_shows_no_variable_of_seris() {
    let Some(entry) = everything() else { return };
    let spec = configured("everything", json!({"command": "node", "args": [entry.to_str().unwrap(), "stdio"]}));
    let servers = McpServers::start(vec![spec], &std::env::temp_dir()).await;
    let tools = servers.tools();
    let said = call(tool(&tools, "mcp__everything__get-env"), json!({}), allowing("mcp__everything__*")).await.unwrap();
    let shown: Value = serde_json::from_str(said.trim_start_matches(|c| c != '{')).unwrap_or(Value::Null);
    let shown = shown.as_object().unwrap_or_else(|| panic!("get-env said: {said}"));
    for variable in private_variables() {
        assert!(!shown.contains_key(&variable), "{variable} reached the server: {said}");
    }
    assert!(shown.contains_key("PATH"), "{said}");
}

#[tokio::test]
async fn a_tool_that_runs_only_as_a_task_is_listed_as_skipped_and_not_offered() {
    // A server written for this test (node, as the reference server needs):
    // `research` declares `execution.taskSupport: "required"`.
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tasks.js");
    let servers =
        McpServers::start(vec![spec("tasks", stdio("node", &[server.to_str().unwrap()]))], &std::env::temp_dir()).await;
    let report = servers.report();
    let ServerState::Running { tools: names, skipped } = &report[0].state else { panic!("{report:?}") };
    assert_eq!(names, &["mcp__tasks__plain", "mcp__tasks__either"], "an optional task runs as a plain call");
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].name, "research");
    assert!(skipped[0].reason.contains("execution.taskSupport: required"), "{}", skipped[0].reason);
    let tools = servers.tools();
    assert!(tools.iter().all(|t| t.name() != "mcp__tasks__research"));
    let said = call(tool(&tools, "mcp__tasks__either"), json!({}), allowing("mcp__tasks__*")).await.unwrap();
    assert_eq!(said, "called either");
}

#[tokio::test]
async fn over_http_a_task_only_tool_is_skipped_whether_answers_are_events_or_json() {
    // The same fixture, served by the official TypeScript SDK (installed
    // with the reference server), answering with server-sent events and
    // then with JSON bodies: rmcp decodes both before seri sees them.
    let Some(entry) = everything() else { return };
    let modules = entry.ancestors().nth(3).unwrap().to_path_buf();
    let sdk = [modules.join("sdk"), modules.join("server-everything/node_modules/@modelcontextprotocol/sdk")]
        .into_iter()
        .find(|p| p.join("package.json").is_file())
        .unwrap_or_else(|| panic!("the MCP TypeScript SDK is not beside {}", entry.display()));
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tasks.js");
    for mode in ["events", "json"] {
        let port = free_port();
        let mut server = tokio::process::Command::new("node")
            .args([fixture.to_str().unwrap(), "http", &port.to_string(), sdk.to_str().unwrap(), mode])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let address = format!("127.0.0.1:{port}");
        listening(&address).await;
        let http = Transport::Http { url: format!("http://{address}/mcp"), headers: Default::default() };
        let servers = McpServers::start(vec![spec("tasks", http)], &std::env::temp_dir()).await;
        let report = servers.report();
        let ServerState::Running { tools: names, skipped } = &report[0].state else { panic!("{mode}: {report:?}") };
        assert_eq!(names, &["mcp__tasks__plain", "mcp__tasks__either"], "{mode}");
        assert_eq!(skipped.len(), 1, "{mode}: {skipped:?}");
        assert_eq!(skipped[0].name, "research", "{mode}");
        assert!(skipped[0].reason.contains("execution.taskSupport: required"), "{}", skipped[0].reason);
        let tools = servers.tools();
        assert!(tools.iter().all(|t| t.name() != "mcp__tasks__research"), "{mode}");
        let said = call(tool(&tools, "mcp__tasks__either"), json!({}), allowing("mcp__tasks__*")).await.unwrap();
        assert_eq!(said, "called either", "{mode}");
        drop(servers);
        server.kill().await.unwrap();
    }
}
