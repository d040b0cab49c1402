//! Storage you can see and bound, through the real binary: `seri store
//! du`, `seri store prune` (never without `--older-than` or `retention`),
//! `seri sessions pin`, `seri store check` and its exit code.

use serde_json::json;

use crate::support::*;

/// Runs one headless turn in a new session and returns the session id.
fn session(env: &Env, text: &str) -> String {
    let script = env.script(&format!("{text}.json"), json!([crate::support::text("ok")]));
    let run = env.run(&["-p", text, "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    run.json()["session_id"].as_str().unwrap().to_owned()
}

/// Makes every session look last active `days` ago. Only the list's cached
/// head moves (the events themselves can never be changed): it is what
/// retention reads a session's age from.
fn age_all(env: &Env, days: i64) {
    let conn = rusqlite::Connection::open(env.home().join("seri.db")).unwrap();
    conn.execute("UPDATE session_last_events SET created_at = created_at - ?1", [days * 86_400_000]).unwrap();
}

fn listed(env: &Env) -> Vec<String> {
    let run = env.run(&["sessions", "list", "--json"]);
    run.expect_code(0);
    run.json().as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn prune_says_so_and_does_nothing_without_older_than_or_retention() {
    let env = Env::new();
    session(&env, "hello");
    age_all(&env, 1000);
    let run = env.run(&["store", "prune"]);
    run.expect_code(2);
    assert!(run.stderr.contains("nothing to prune by: give --older-than DAYS"), "{}", run.stderr);
    assert!(run.stderr.contains("seri never prunes anything"), "{}", run.stderr);
    assert_eq!(listed(&env).len(), 1);
}

#[test]
fn a_dry_run_lists_what_the_prune_removes_and_a_pin_keeps_its_session() {
    let env = Env::new();
    let old = session(&env, "old");
    let pinned = session(&env, "pinned");
    env.run(&["sessions", "pin", &pinned]).expect_code(0);
    age_all(&env, 100);

    let dry = env.run(&["store", "prune", "--older-than", "30", "--dry-run", "--json"]);
    dry.expect_code(0);
    let dry = dry.json();
    assert_eq!(dry["sessions"], json!([old]));
    assert!(dry["bytes"].as_u64().unwrap() > 0);
    assert_eq!(dry["keptPinned"], 1);
    assert_eq!(listed(&env).len(), 2, "a dry run removes nothing");

    let words = env.run(&["store", "prune", "--older-than", "30", "--dry-run"]);
    assert!(words.stdout.contains("would remove 1 sessions in 1 lineages"), "{}", words.stdout);
    assert!(words.stdout.contains("kept 1 old lineages: pinned"), "{}", words.stdout);

    let done = env.run(&["store", "prune", "--older-than", "30", "--json"]);
    done.expect_code(0);
    let done = done.json();
    assert_eq!((&done["sessions"], &done["bytes"]), (&dry["sessions"], &dry["bytes"]), "the dry run said exactly this");
    assert_eq!(done["space"]["how"], "incremental");
    assert_eq!(listed(&env), std::slice::from_ref(&pinned));
    // (`seri store check` would flag the kept session's aged list head:
    // `age_all` forged it.)

    env.run(&["sessions", "unpin", &pinned]).expect_code(0);
    let done = env.run(&["store", "prune", "--older-than", "30", "--json"]);
    assert_eq!(done.json()["sessions"], json!([pinned]));
}

#[test]
fn du_reports_sizes_and_the_database_file() {
    let env = Env::new();
    session(&env, "first");
    session(&env, "second");
    let run = env.run(&["store", "du", "--json"]);
    run.expect_code(0);
    let du = run.json();
    assert_eq!(du["total"]["sessions"], 2);
    assert!(du["total"]["eventBytes"].as_u64().unwrap() > 0);
    assert_eq!(du["database"]["backend"], "sqlite");
    assert_eq!(du["database"]["autoVacuum"], "incremental");
    assert_eq!(du["lineages"].as_array().unwrap().len(), 2);
    let words = env.run(&["store", "du"]);
    assert!(words.stdout.contains("database (sqlite):"), "{}", words.stdout);
    assert!(words.stdout.contains("by folders (largest first):"), "{}", words.stdout);
}

#[test]
fn check_exits_1_on_a_mismatch_and_names_it() {
    let env = Env::new();
    let id = session(&env, "hello");
    let clean = env.run(&["store", "check"]);
    clean.expect_code(0);
    assert!(clean.stdout.contains("the store is consistent"), "{}", clean.stdout);
    let conn = rusqlite::Connection::open(env.home().join("seri.db")).unwrap();
    conn.execute("UPDATE session_last_events SET seq = 99 WHERE session_id = ?1", [&id]).unwrap();
    let run = env.run(&["store", "check"]);
    run.expect_code(1);
    assert!(run.stdout.contains(&format!("session-events: {id} is listed up to seq 99")), "{}", run.stdout);
    assert!(run.stdout.contains("the store has mismatches"), "{}", run.stdout);
    let json = env.run(&["store", "check", "--json"]);
    json.expect_code(1);
    assert!(!json.json()["problems"].as_array().unwrap().is_empty());
}

#[test]
fn retention_in_config_json_prunes_at_a_start_and_says_so() {
    let env = Env::new();
    let old = session(&env, "old");
    age_all(&env, 100);
    std::fs::write(env.home().join("config.json"), json!({"retention": {"days": 30}}).to_string()).unwrap();
    let script = env.script("new.json", json!([text("ok")]));
    let run = env.run(&["-p", "new", "--script", path_str(&script)]);
    run.expect_code(0);
    assert!(run.stderr.contains("retention in config.json pruned 1 sessions"), "{}", run.stderr);
    assert!(!listed(&env).contains(&old));
    assert_eq!(listed(&env).len(), 1, "the new session stays");
}
