//! Skills as the Agent Skills format defines them, from the person's
//! Claude Code folder and a project's, through the binary: only their names
//! and descriptions in the frozen prompt, the body loaded by the `skill`
//! verb (an event like any call), a script beside it run with `bash`, and
//! `/skills` in a real pty. A project's skill waits for `seri mcp trust`.

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

fn skill(at: &std::path::Path, name: &str, description: &str, body: &str) -> std::path::PathBuf {
    let folder = at.join(name);
    std::fs::create_dir_all(folder.join("scripts")).unwrap();
    std::fs::write(folder.join("SKILL.md"), format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"))
        .unwrap();
    folder
}

#[test]
fn a_skill_is_listed_loaded_when_needed_and_its_script_runs() {
    let env = Env::new();
    // The person's own, in Claude Code's folder (HOME is the test's folder).
    let folder = skill(
        &env.dir.path().join(".claude").join("skills"),
        "greeting",
        "Greet a person in the house style. Use when asked to greet someone.",
        "# Greeting\n\nRun `python3 scripts/greet.py NAME` from this folder and answer with what it prints.",
    );
    std::fs::write(folder.join("scripts").join("greet.py"), "import sys\nprint('Hello, ' + sys.argv[1] + '!')\n")
        .unwrap();
    // The project's, not trusted yet.
    skill(&env.work().join(".claude").join("skills"), "deploy", "Deploy the site.", "Run make deploy.");
    let greet = format!("cd '{}' && python3 scripts/greet.py Ana", folder.display());
    let turns = json!([
        {"tool_calls": [{"id": "c1", "name": "skill", "arguments": {"name": "greeting"}}]},
        {"tool_calls": [{"id": "c2", "name": "bash", "arguments": {"command": greet}}]},
        text("Hello, Ana!"),
    ]);
    let script = env.script("s.json", turns);
    let run = env.run_with(
        &["--script", path_str(&script), "--yes", "-p", "Greet Ana", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    let out = run.expect_code(0).json();
    assert_eq!(out["result"], "Hello, Ana!");
    let requests = env.requests();
    let system = requests[0]["system"].as_str().unwrap();
    assert!(
        system.contains(
            "<skill name=\"greeting\">Greet a person in the house style. Use when asked to greet someone.</skill>"
        ),
        "{system}"
    );
    assert!(!system.contains("scripts/greet.py"), "only the name and description are in the prompt");
    assert!(!system.contains("deploy"), "an untrusted project's skill is not offered");
    let tools: Vec<&str> = requests[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(tools.contains(&"skill"), "{tools:?}");
    let loaded = requests[1]["messages"].to_string();
    assert!(loaded.contains("Run `python3 scripts/greet.py NAME` from this folder"), "{loaded}");
    assert!(loaded.contains("scripts/greet.py"), "the folder's files are listed: {loaded}");
    let ran = requests[2]["messages"].to_string();
    assert!(ran.contains("Hello, Ana!"), "the script ran in the sandbox: {ran}");
    // The load is an event: the thread shows it.
    let session = out["session_id"].as_str().unwrap();
    let thread = env.run(&["thread", session]).stdout;
    assert!(thread.contains("skill"), "{thread}");

    // /skills, in the REPL, says what is offered and what waits for trust.
    let mut p = crate::terminal::on_terminal(&env, &["--script", path_str(&script)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("/skills");
    p.sees("greeting  (user,");
    p.sees("a project's skill is offered once you trust the project: seri mcp trust");
    p.leaves();

    // Trusted, the project's skill is offered to new sessions too.
    env.run(&["mcp", "trust"]).expect_code(0);
    let again = env.script("t.json", json!([text("Ok.")]));
    env.run_with(
        &["--script", path_str(&again), "-p", "Hi", "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    )
    .expect_code(0);
    let last: Value = env.requests().last().cloned().unwrap();
    assert!(last["system"].as_str().unwrap().contains("<skill name=\"deploy\">Deploy the site.</skill>"));
}
