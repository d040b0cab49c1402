//! MCP servers through the `seri` binary, against the reference server
//! (`cargo xtask ci` installs it with npm): a scripted model calls its
//! tools, a refusal is recorded, the tool list is frozen with the session,
//! a broken server costs one notice, a project's servers wait for trust.

use std::path::PathBuf;

use serde_json::json;

use crate::support::{Env, path_str, text};

/// The reference server's entry point, or `None` (with a note) when it is
/// not installed and `SERI_REQUIRE_MCP` is unset.
pub(crate) fn everything() -> Option<PathBuf> {
    let path = std::env::var_os("SERI_MCP_EVERYTHING").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    });
    if path.is_file() {
        return Some(path);
    }
    let note = format!("the MCP reference server is not at {} (cargo xtask ci installs it)", path.display());
    assert!(std::env::var_os("SERI_REQUIRE_MCP").is_none(), "{note}");
    #[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
    {
        eprintln!("skipped: {note}");
    }
    None
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> serde_json::Value {
    json!({ "tool_calls": [{ "id": id, "name": name, "arguments": arguments }] })
}

fn configure(env: &Env, servers: serde_json::Value) {
    std::fs::write(env.home().join("config.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
}

#[test]
fn a_picture_result_is_a_note_for_a_provider_that_is_sent_no_pictures() {
    let Some(entry) = everything() else { return };
    let env = Env::new();
    // A local server's provider (ollama, openai-compatible) is sent no
    // pictures by default; `"images": false` says the same of any provider.
    let config = json!({
        "mcpServers": { "everything": { "command": "node", "args": [path_str(&entry), "stdio"] } },
        "providers": { "script": { "images": false } },
    });
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let script = env.script("s.json", json!([call("c1", "mcp__everything__get-tiny-image", json!({})), text("Done.")]));
    let log = env.request_log();
    let args = ["-p", "Show me", "--script", path_str(&script), "--allow", "mcp__everything__*"];
    env.run_with(&args, &[("SERI_REQUEST_LOG", path_str(&log))]).expect_code(0);
    let requests = env.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let at = messages.iter().position(|m| m["role"] == "tool" && m["toolCallId"] == "c1").unwrap();
    let pictures = &messages[at + 1];
    assert!(pictures.get("images").is_none(), "no image part: {pictures}");
    let note = pictures["text"].as_str().unwrap();
    assert!(note.contains("is a picture (image/png) that you are not shown: seri sends no images to script"), "{note}");
}

#[test]
fn a_scripted_turn_calls_the_servers_tools_and_the_list_is_frozen_with_the_session() {
    let Some(entry) = everything() else { return };
    let env = Env::new();
    let broken = json!({ "command": "sh", "args": ["-c", "echo no such database >&2; exit 2"] });
    configure(
        &env,
        json!({
            "everything": { "command": "node", "args": [path_str(&entry), "stdio"], "toolTimeoutSec": 1 },
            "broken": broken,
        }),
    );
    let log = env.request_log();
    let vars = [("SERI_REQUEST_LOG", path_str(&log))];
    let script = env.script(
        "s.json",
        json!([
            call("c1", "mcp__everything__echo", json!({ "message": "hello" })),
            call("c2", "mcp__everything__get-sum", json!({ "a": 2, "b": 40 })),
            call("c3", "mcp__everything__trigger-long-running-operation", json!({ "duration": 5, "steps": 5 })),
            call("c6", "mcp__everything__get-tiny-image", json!({})),
            text("Done."),
        ]),
    );
    let run = env.run_with(
        &[
            "-p",
            "Use the tools",
            "--script",
            path_str(&script),
            "--allow",
            "mcp__everything__*",
            "--output-format",
            "json",
        ],
        &vars,
    );
    let report = run.expect_code(0).json();
    assert!(
        run.stderr.contains("MCP server `broken` is not available") && run.stderr.contains("no such database"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "one notice, nothing more: {}", run.stderr);
    let session = report["session_id"].as_str().unwrap().to_owned();

    let requests = env.requests();
    let tools = requests[0]["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "mcp__everything__echo").expect("offered");
    assert_eq!(echo["inputSchema"]["properties"]["message"]["type"], "string");
    let results = requests[3]["messages"].to_string();
    assert!(results.contains("Echo: hello") && results.contains("42"), "{results}");
    assert!(results.contains("did not answer `trigger-long-running-operation` within 1 s"), "{results}");

    // A picture the tool returned is stored with the session and shown to
    // the model in a message right after the turn's results.
    let messages = requests[4]["messages"].as_array().unwrap();
    let at = messages.iter().position(|m| m["role"] == "tool" && m["toolCallId"] == "c6").unwrap();
    let result = messages[at]["content"].as_str().unwrap();
    assert!(result.starts_with("Here's the image you requested:") && result.contains("[image: image/png"), "{result}");
    let pictures = &messages[at + 1];
    assert_eq!(pictures["role"], "user", "{pictures}");
    assert!(
        pictures["text"]
            .as_str()
            .unwrap()
            .contains("The pictures the `mcp__everything__get-tiny-image` call c6 returned")
    );
    assert_eq!(pictures["images"][0]["mediaType"], "image/png", "{pictures}");
    let id = pictures["images"][0]["attachmentId"].as_str().unwrap();
    assert!(result.contains(&format!("[attachment:{id} \"mcp__everything__get-tiny-image-1.png\"]")), "{result}");

    // Recorded like any call.
    let shown = env.run(&["trajectory", "show", &session, "--json"]).json();
    assert!(shown.to_string().contains("mcp__everything__echo"), "{shown}");

    // The session keeps its tools when the server is gone: the same prefix
    // is sent, and a call says the tool cannot run.
    configure(&env, json!({}));
    let again =
        env.script("again.json", json!([call("c4", "mcp__everything__echo", json!({ "message": "x" })), text("Ok.")]));
    env.run_with(&["-p", "Again", "--resume", &session, "--script", path_str(&again)], &vars).expect_code(0);
    let requests = env.requests();
    let resumed = requests[requests.len() - 2]["tools"].as_array().unwrap();
    assert!(resumed.iter().any(|t| t["name"] == "mcp__everything__echo"), "frozen with the session");
    assert!(requests.last().unwrap()["messages"].to_string().contains("no tool named `mcp__everything__echo`"));
    // A new session is started without it, and keeps to that when the
    // server is back: its tools reach the next session, not this one.
    let fresh = env.run_with(
        &["-p", "Fresh", "--script", path_str(&env.script("t.json", json!([text("Hi.")]))), "--output-format", "json"],
        &vars,
    );
    let fresh = fresh.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();
    assert!(!env.requests().last().unwrap()["tools"].to_string().contains("mcp__"));
    configure(&env, json!({ "everything": { "command": "node", "args": [path_str(&entry), "stdio"] } }));
    let guess =
        env.script("guess.json", json!([call("c5", "mcp__everything__echo", json!({ "message": "x" })), text("Ok.")]));
    let args = ["-p", "Try", "--resume", &fresh, "--script", path_str(&guess), "--allow", "mcp__everything__*"];
    env.run_with(&args, &vars).expect_code(0);
    let requests = env.requests();
    assert!(!requests[requests.len() - 2]["tools"].to_string().contains("mcp__"), "not offered");
    let answer = requests.last().unwrap()["messages"].to_string();
    assert!(answer.contains("This tool is not one of this session's tools"), "{answer}");
}

#[test]
fn mcp_tools_ask_by_default_and_a_headless_refusal_is_recorded() {
    let Some(entry) = everything() else { return };
    let env = Env::new();
    configure(&env, json!({ "everything": { "command": "node", "args": [path_str(&entry), "stdio"] } }));
    let script = env
        .script("s.json", json!([call("c1", "mcp__everything__echo", json!({ "message": "hi" })), text("Refused.")]));
    let run = env.run(&["-p", "Echo", "--script", path_str(&script), "--output-format", "json"]);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();
    let thread = env.run(&["thread", &session]).stdout.clone();
    assert!(thread.contains("permission denied: mcp__everything__echo"), "{thread}");
}

#[test]
fn mcp_list_shows_each_server_and_a_projects_servers_wait_for_trust() {
    let Some(entry) = everything() else { return };
    let env = Env::new();
    configure(&env, json!({ "gone": { "command": "sh", "args": ["-c", "exit 1"] } }));
    let project = json!({ "mcpServers": { "everything": { "command": "node", "args": [path_str(&entry), "stdio"] } } });
    std::fs::write(env.work().join(".mcp.json"), project.to_string()).unwrap();

    let listed = env.run(&["mcp", "list"]);
    let out = &listed.expect_code(1).stdout;
    assert!(out.contains("gone  stdio  failed: it did not start"), "{out}");
    assert!(out.contains(".mcp.json  not trusted (everything): run `seri mcp trust`"), "{out}");

    assert!(env.run(&["mcp", "trust"]).expect_code(0).stdout.contains("Trusted "));
    let listed = env.run(&["mcp", "list", "--json"]).json();
    let everything = listed["servers"].as_array().unwrap().iter().find(|s| s["name"] == "everything").unwrap().clone();
    assert_eq!(everything["state"], "running", "{listed}");
    assert!(everything["tools"].as_array().unwrap().contains(&json!("mcp__everything__echo")));
    // A tool that runs only as an MCP task is listed as skipped, with why.
    let skipped = everything["skipped"].as_array().unwrap();
    assert!(skipped.iter().all(|t| t["name"] == "simulate-research-query"), "{listed}");
    assert!(!everything["tools"].to_string().contains("simulate-research-query"), "{listed}");
    let shown = env.run(&["mcp", "list"]).stdout;
    for tool in skipped {
        assert!(shown.contains(&format!("  skipped simulate-research-query: {}", tool["reason"].as_str().unwrap())));
    }

    // Editing the file asks for trust again.
    let edited =
        json!({ "mcpServers": { "everything": { "command": "node", "args": [path_str(&entry), "stdio", "--x"] } } });
    std::fs::write(env.work().join(".mcp.json"), edited.to_string()).unwrap();
    assert!(env.run(&["mcp", "list"]).stdout.contains("not trusted"));
    let bad = json!({ "mcpServers": { "x": { "url": "http://127.0.0.1:1/mcp" } } });
    std::fs::write(env.home().join("config.json"), bad.to_string()).unwrap();
    let refused = env.run(&["mcp", "list"]);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("`mcpServers.x`: needs a `command`"), "{}", refused.stderr);
}

#[test]
fn mcp_list_skips_a_task_only_tool_of_a_streamable_http_server() {
    // seri-mcp's task fixture served over streamable HTTP by the official
    // TypeScript SDK, which the reference server's install brings.
    let Some(entry) = everything() else { return };
    let modules = entry.ancestors().nth(3).unwrap().to_path_buf();
    let sdk = [modules.join("sdk"), modules.join("server-everything/node_modules/@modelcontextprotocol/sdk")]
        .into_iter()
        .find(|p| p.join("package.json").is_file())
        .unwrap_or_else(|| panic!("the MCP TypeScript SDK is not beside {}", entry.display()));
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/fixtures/tasks.js");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = std::process::Command::new("node")
        .args([path_str(&fixture), "http", &port.to_string(), path_str(&sdk)])
        .spawn()
        .unwrap();
    let address = format!("127.0.0.1:{port}");
    for _ in 0..200 {
        if std::net::TcpStream::connect(&address).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let env = Env::new();
    configure(&env, json!({ "tasks": { "type": "http", "url": format!("http://{address}/mcp") } }));
    let listed = env.run(&["mcp", "list", "--json"]);
    let listed = listed.expect_code(0).json();
    let tasks = &listed["servers"][0];
    assert_eq!(tasks["transport"], "http", "{listed}");
    assert_eq!(tasks["tools"], json!(["mcp__tasks__plain", "mcp__tasks__either"]), "{listed}");
    assert_eq!(tasks["skipped"][0]["name"], "research", "{listed}");
    let reason = tasks["skipped"][0]["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("execution.taskSupport: required"), "{reason}");
    let shown = env.run(&["mcp", "list"]);
    assert!(shown.expect_code(0).stdout.contains(&format!("  skipped research: {reason}")), "{}", shown.stdout);
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_server_that_hangs_at_start_is_reported_and_its_processes_end_with_seri() {
    let env = Env::new();
    // The server and the process it started: a group seri must end.
    let marker = format!("sleep {}", 4000 + std::process::id() % 5000);
    let script = format!("{marker} & {marker}");
    configure(&env, json!({ "hang": { "command": "sh", "args": ["-c", script], "startupTimeoutSec": 1 } }));
    let listed = env.run(&["mcp", "list"]);
    assert!(
        listed.expect_code(1).stdout.contains("hang  stdio  failed: it did not start within 1 s"),
        "{}",
        listed.stdout
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let left = std::process::Command::new("pgrep").args(["-f", &marker]).output().unwrap();
    assert!(left.stdout.is_empty(), "left running: {}", String::from_utf8_lossy(&left.stdout));
}

#[test]
fn mcp_add_and_remove_edit_the_profiles_config() {
    let env = Env::new();
    std::fs::write(env.home().join("config.json"), json!({"maxTurns": 7}).to_string()).unwrap();
    let added = env.run(&["mcp", "add", "docs", "-e", "TOKEN=x", "--", "node", "server.js", "--stdio"]);
    assert!(added.expect_code(0).stdout.contains("Added docs"), "{}", added.stdout);
    env.run(&["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp"]).expect_code(0);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.home().join("config.json")).unwrap()).unwrap();
    assert_eq!(config["maxTurns"], 7, "other settings stay");
    assert_eq!(
        config["mcpServers"]["docs"],
        json!({"command": "node", "args": ["server.js", "--stdio"], "env": {"TOKEN": "x"}})
    );
    assert_eq!(config["mcpServers"]["web"], json!({"type": "http", "url": "http://127.0.0.1:9/mcp"}));
    let again = env.run(&["mcp", "add", "docs", "--", "node"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("configured already"), "{}", again.stderr);
    env.run(&["mcp", "remove", "docs"]).expect_code(0);
    assert!(!std::fs::read_to_string(env.home().join("config.json")).unwrap().contains("docs"));
    let missing = env.run(&["mcp", "remove", "docs"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("no server named docs"), "{}", missing.stderr);
}

#[test]
fn codexs_servers_start_from_its_own_config_toml() {
    let Some(entry) = everything() else { return };
    let env = Env::new();
    // Codex's file in the person's home (HOME is the test's folder), as Codex writes it.
    let codex = env.dir.path().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("config.toml"),
        format!(
            "model = \"gpt-5-codex\"\n\n[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n\n\
             [mcp_servers.off]\ncommand = \"nothing\"\nenabled = false\n",
            path_str(&entry)
        ),
    )
    .unwrap();
    let config = env.run(&["config"]).expect_code(0).stdout.clone();
    assert!(config.contains(".codex/config.toml (yours)"), "{config}");
    assert!(config.contains("uses       mcp_servers: everything"), "{config}");
    assert!(config.contains("not used   mcp_servers.off: enabled = false, so it is left out"), "{config}");
    assert!(config.contains("not used   model: not a setting seri takes from Codex"), "{config}");
    let script =
        env.script("s.json", json!([call("c1", "mcp__everything__echo", json!({"message": "hi"})), text("Done.")]));
    let run = env.run_with(
        &["-p", "Echo", "--script", path_str(&script), "--allow", "mcp__everything__*", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    run.expect_code(0);
    let second = env.requests()[1]["messages"].to_string();
    assert!(second.contains("Echo: hi"), "{second}");
}
