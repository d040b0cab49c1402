//! `seri sessions …`, `seri thread` and `seri demo` through the binary.

use serde_json::json;

use crate::support::{Env, path_str, text};

fn session_with_two_exchanges(env: &Env) -> String {
    let script = env.script("s.json", json!([text("One."), text("Two.")]));
    let run = env.run(&["-p", "First", "--script", path_str(&script), "--output-format", "json"]);
    let id = run.json()["session_id"].as_str().unwrap().to_owned();
    let script = env.script("s2.json", json!([text("Two.")]));
    env.run(&["--resume", &id, "-p", "Second", "--script", path_str(&script)]).expect_code(0);
    id
}

#[test]
fn sessions_list_and_show_in_json_and_text() {
    let env = Env::new();
    let id = session_with_two_exchanges(&env);
    let list = env.run(&["sessions", "list", "--json"]);
    list.expect_code(0);
    assert_eq!(list.json()[0]["id"], id.as_str());
    assert_eq!(list.json()[0]["lastSeq"], 4);

    let show = env.run(&["sessions", "show", &id[..13], "--json", "--context-window", "32000"]);
    show.expect_code(0);
    let info = show.json();
    assert_eq!(info["id"], id.as_str());
    assert_eq!(info["contextWindow"], 32000);
    assert_eq!(info["title"], "First");
    assert_eq!(info["titleSource"], "fallback");
    assert!(info.get("continuedFrom").is_some() && info.get("continuedTo").is_some());

    let text = env.run(&["sessions", "list"]);
    assert!(text.stdout.contains("First"), "{}", text.stdout);
}

#[test]
fn thread_prints_seq_lines_with_from_to_and_limit() {
    let env = Env::new();
    let id = session_with_two_exchanges(&env);
    let all = env.run(&["thread", &id]);
    all.expect_code(0);
    assert_eq!(all.stdout, "[1] user: First\n[2] assistant: One.\n[3] user: Second\n[4] assistant: Two.\n");
    assert_eq!(env.run(&["thread", &id, "--from", "2", "--to", "3"]).stdout, "[2] assistant: One.\n[3] user: Second\n");
    assert_eq!(env.run(&["thread", &id, "--from", "2", "--limit", "1"]).stdout, "[2] assistant: One.\n");
}

#[test]
fn the_demo_runs_without_a_key_and_shows_both_strategies() {
    let env = Env::new();
    let run = env.run(&["demo"]);
    run.expect_code(0);
    assert!(run.stdout.contains("Continued in \u{201c}Autumn haiku\u{201d} (topic change)"), "{}", run.stdout);
    assert!(run.stdout.contains("compacted seq"), "{}", run.stdout);
    assert!(run.stdout.contains("└─"), "the lineage tree: {}", run.stdout);
    assert!(!env.home().join("seri.db").exists(), "the demo never touches the real profile");
}

#[test]
fn config_shows_the_keep_budget_in_force_and_refuses_one_that_cannot_compact() {
    let env = Env::new();
    // The default, on a small window: cut to a quarter, and said so.
    let shown = env.run(&["config", "--context-window", "32000"]);
    shown.expect_code(0);
    let row = shown.stdout.lines().find(|l| l.starts_with("context.keepTokens")).unwrap().to_owned();
    assert!(row.contains(" 8000 ") && row.contains("(default 20000, cut to 25% of the 32000-token window"), "{row}");
    // A chosen one is used as given, however small the window.
    std::fs::write(env.home().join("config.json"), r#"{"context": {"keepTokens": 30000}}"#).unwrap();
    let shown = env.run(&["config", "--context-window", "64000"]);
    shown.expect_code(0);
    let row = shown.stdout.lines().find(|l| l.starts_with("context.keepTokens")).unwrap().to_owned();
    assert!(row.contains(" 30000 ") && row.contains("(config.json context.keepTokens)"), "{row}");
    // On the continue strategy (the default) it plays no part: nothing is refused.
    env.run(&["config", "--context-window", "60000"]).expect_code(0);
    std::fs::write(env.home().join("config.json"), r#"{"context": {"keepTokens": 20000}}"#).unwrap();
    env.run(&["config", "--context-window", "32000"]).expect_code(0);
    // A session starts and answers with it, as the default would.
    let script = env.script("s.json", json!([text("Hello.")]));
    let run = env.run(&["-p", "Hi", "--script", path_str(&script), "--context-window", "32000"]);
    run.expect_code(0);
    assert!(run.stdout.contains("Hello."), "{}", run.stdout);
    // On the compact strategy one at the trigger is refused, saying why and by how much.
    std::fs::write(env.home().join("config.json"), r#"{"context": {"keepTokens": 30000, "strategy": "compact"}}"#)
        .unwrap();
    let refused = env.run(&["config", "--context-window", "60000"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("config.json context.keepTokens is 30000: 30000 tokens is at or past the compaction trigger (50% of the 60000-token window, 30000 tokens)"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("1 fewer at least"), "{}", refused.stderr);
}

#[test]
fn a_trusted_projects_seri_config_merges_over_the_profiles() {
    let env = Env::new();
    std::fs::create_dir_all(env.work().join(".git")).unwrap();
    std::fs::create_dir_all(env.work().join(".seri")).unwrap();
    std::fs::write(env.home().join("config.json"), r#"{"context": {"strategy": "continue", "window": 50000}}"#)
        .unwrap();
    let project = env.work().join(".seri/config.json");
    std::fs::write(&project, r#"{"context": {"strategy": "compact"}, "maxTurns": 7}"#).unwrap();

    // Not trusted yet: said once on stderr, not applied.
    let config = env.run(&["config"]);
    config.expect_code(0);
    assert!(
        config.stderr.contains("has settings that apply only once you trust this project: seri mcp trust"),
        "{}",
        config.stderr
    );
    assert!(config.stdout.contains("(not trusted, not applied: seri mcp trust)"), "{}", config.stdout);
    assert!(config.stdout.contains("context.strategy            continue"), "{}", config.stdout);

    env.run(&["mcp", "trust"]).expect_code(0);
    let config = env.run(&["config"]);
    let out = &config.expect_code(0).stdout;
    assert!(out.contains("(trusted; merged over config.json)"), "{out}");
    assert!(out.contains("context.strategy            compact"), "the project's: {out}");
    assert!(out.contains("context.window              50000"), "the profile's, merged key by key: {out}");
    assert!(out.contains("maxTurns                    7"), "{out}");

    // An edit asks for trust again; a bad setting in a trusted file is an error naming it.
    std::fs::write(&project, r#"{"subagents": {"parallel": 0}}"#).unwrap();
    let config = env.run(&["config"]);
    assert!(config.expect_code(0).stdout.contains("context.strategy            continue"));
    env.run(&["mcp", "trust"]).expect_code(0);
    let refused = env.run(&["config"]);
    refused.expect_code(2);
    assert!(refused.stderr.contains(".seri/config.json merged over"), "{}", refused.stderr);
}

#[test]
fn a_mistyped_subcommand_is_suggested_never_sent_to_the_model() {
    let env = Env::new();
    // No script and no key: were the word sent to a model, the run would fail otherwise.
    let run = env.run(&["sesions"]);
    run.expect_code(2);
    assert!(run.stderr.contains("did you mean `seri sessions`?"), "{}", run.stderr);
    let run = env.run(&["thred"]);
    assert!(run.stderr.contains("did you mean `seri thread`?"), "{}", run.stderr);
    assert!(!env.home().join("seri.db").exists(), "nothing was opened, let alone sent");
}

#[test]
fn a_provider_without_a_default_model_says_so_in_the_config() {
    let env = Env::new();
    let config = env.run(&["config", "--provider", "script"]);
    let out = &config.expect_code(0).stdout;
    let model = out.lines().find(|l| l.starts_with("model ")).unwrap_or_default();
    assert!(model.contains("(none: the provider answers with its own)"), "{out}");
}
