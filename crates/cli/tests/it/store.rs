//! Where sessions are kept: `store.url` in `config.json` or `SERI_STORE_URL`
//! (the profile's `seri.db` by default, another SQLite file, or PostgreSQL),
//! and `seri store migrate`, which copies a profile's history into PostgreSQL.

use serde_json::json;

use crate::support::*;

#[test]
fn a_store_url_in_config_json_moves_the_sessions_and_seri_config_says_where() {
    let env = Env::new();
    let other = env.dir.path().join("elsewhere.db");
    let config = json!({ "store": { "url": format!("sqlite:{}", other.display()) } });
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let script = env.script("s.json", json!([text("Kept elsewhere.")]));
    env.run(&["-p", "Hi", "--script", path_str(&script)]).expect_code(0);
    assert!(other.is_file(), "the session went to the file store.url names");
    assert!(!env.home().join("seri.db").exists(), "and not to the profile's seri.db");
    let shown = env.run(&["config"]);
    shown.expect_code(0);
    assert!(
        shown.stdout.contains(&format!("store        {} (config.json store.url)", other.display())),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_store_url_seri_cannot_use_is_refused_by_name() {
    let env = Env::new();
    let run = env.run_with(&["sessions", "list"], &[("SERI_STORE_URL", "mysql://root:hunter2@db/seri")]);
    run.expect_code(2);
    // The URL as given (its own scheme, not `postgres://…`), which scheme
    // seri cannot use, and the ones it can.
    assert!(
        run.stderr.contains(
            "SERI_STORE_URL: store URL `mysql://root@db/seri` is not usable: seri cannot keep sessions in `mysql:`"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("`sqlite:` (the profile's seri.db), `sqlite:PATH` or `postgres://…`"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hunter2"), "the password is never shown: {}", run.stderr);
    assert!(!env.home().join("seri.db").exists(), "nothing was opened");
    std::fs::write(env.home().join("config.json"), r#"{"store": {"url": "redis://x"}}"#).unwrap();
    let run = env.run(&["sessions", "list"]);
    run.expect_code(2);
    assert!(run.stderr.contains("store.url: store URL `redis://x` is not usable"), "{}", run.stderr);
}

#[test]
fn an_empty_seri_store_url_is_a_usage_error_naming_it() {
    let env = Env::new();
    for empty in ["", " "] {
        let run = env.run_with(&["sessions", "list"], &[("SERI_STORE_URL", empty)]);
        run.expect_code(2);
        assert!(run.stderr.contains("SERI_STORE_URL is set but empty"), "{}", run.stderr);
        assert!(!env.home().join("seri.db").exists(), "it did not quietly mean the profile's SQLite file");
    }
    // Unset, it is the profile's seri.db.
    env.run(&["sessions", "list"]).expect_code(0);
    assert!(env.home().join("seri.db").exists());
}

#[test]
fn a_project_cannot_move_the_store() {
    let env = Env::new();
    std::fs::create_dir_all(env.work().join(".seri")).unwrap();
    std::fs::write(env.work().join(".seri/config.json"), r#"{"store": {"url": "sqlite:/tmp/elsewhere.db"}}"#).unwrap();
    env.run(&["mcp", "trust"]).expect_code(0);
    let run = env.run(&["sessions", "list"]);
    run.expect_code(2);
    assert!(run.stderr.contains("`store` is read from the profile's config.json"), "{}", run.stderr);
}

#[test]
fn sessions_live_in_postgres_when_seri_store_url_names_it() {
    let Some(url) = fresh_postgres_url() else { return };
    let env = Env::new();
    let vars = [("SERI_STORE_URL", url.as_str())];
    let script = env.script("s.json", json!([text("Stored in PostgreSQL."), text("Still there.")]));
    let first = env.run_with(&["-p", "Hi", "--script", path_str(&script), "--output-format", "json"], &vars);
    first.expect_code(0);
    let id = first.json()["session_id"].as_str().unwrap().to_owned();
    assert!(!env.home().join("seri.db").exists(), "nothing went to the profile's SQLite file");
    let listed = env.run_with(&["sessions", "list", "--json"], &vars).json();
    assert_eq!(listed[0]["id"], id.as_str());
    let again =
        env.run_with(&["-p", "More", "-r", &id, "--script", path_str(&script), "--output-format", "json"], &vars);
    again.expect_code(0);
    let thread = env.run_with(&["thread", &id], &vars);
    assert!(thread.stdout.contains("Hi") && thread.stdout.contains("More"), "{}", thread.stdout);
    let shown = env.run_with(&["config"], &vars);
    assert!(shown.stdout.contains("(environment SERI_STORE_URL)"), "{}", shown.stdout);
    assert!(shown.stdout.contains("store        postgres://"), "{}", shown.stdout);
}

#[test]
fn store_migrate_copies_a_profile_into_postgres_once_and_verified() {
    let Some(url) = fresh_postgres_url() else { return };
    let env = Env::new();
    let script = env.script("s.json", json!([text("Answered on SQLite."), text("Answered on PostgreSQL.")]));
    let first = env.run(&["-p", "Plan the move", "--script", path_str(&script), "--output-format", "json"]);
    first.expect_code(0);
    let id = first.json()["session_id"].as_str().unwrap().to_owned();

    let migrated = env.run(&["store", "migrate", "--to", &url]);
    migrated.expect_code(0);
    assert!(
        migrated
            .stdout
            .contains("verified: the counts add up, and the 1 session folds to the same view in both stores"),
        "{}",
        migrated.stdout
    );
    assert!(migrated.stdout.contains("SERI_STORE_URL"), "{}", migrated.stdout);
    // Attachments live in the database: the copy took them along.
    assert!(migrated.stdout.contains("attachments were copied with the rest"), "{}", migrated.stdout);
    assert!(!migrated.stdout.contains("attachments stay in"), "{}", migrated.stdout);
    let events_line = migrated.stdout.lines().find(|l| l.trim_start().starts_with("session_events")).unwrap();
    assert!(!events_line.contains(" 0 copied"), "{events_line}");

    let again = env.run(&["store", "migrate", "--to", &url]);
    again.expect_code(0);
    let events_line = again.stdout.lines().find(|l| l.trim_start().starts_with("session_events")).unwrap();
    assert!(events_line.contains(" 0 copied"), "a second migration copies nothing: {events_line}");

    // The copy is a store seri runs on: the same session, resumed there.
    let vars = [("SERI_STORE_URL", url.as_str())];
    let listed = env.run_with(&["sessions", "list", "--json"], &vars).json();
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["title"], "Plan the move");
    env.run_with(&["-p", "Go on", "-r", &id, "--script", path_str(&script)], &vars).expect_code(0);
    let thread = env.run_with(&["thread", &id], &vars);
    assert!(thread.stdout.contains("Answered on SQLite.") && thread.stdout.contains("Go on"), "{}", thread.stdout);
}

#[test]
fn store_migrate_without_a_profile_store_says_so() {
    let env = Env::new();
    let run = env.run(&["store", "migrate", "--to", "postgres://127.0.0.1:1/none"]);
    run.expect_code(2);
    assert!(run.stderr.contains("no SQLite store at"), "{}", run.stderr);
}

#[test]
fn a_message_holding_nul_runs_on_postgres_and_a_profile_holding_one_migrates() {
    let Some(url) = fresh_postgres_url() else { return };
    let env = Env::new();
    // What the person types comes from standard input; the model answers
    // with a NUL too.
    let ask = |prompt: &str, answer: &str, resume: Option<&str>, vars: &[(&str, &str)]| -> String {
        let script = env.script("nul.json", json!([text(answer)]));
        let mut command = env.seri();
        command.args(["-p", "-", "--script", path_str(&script), "--output-format", "json"]);
        if let Some(id) = resume {
            command.args(["-r", id]);
        }
        command.envs(vars.iter().copied()).stdin(std::process::Stdio::piped());
        command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), prompt.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
        let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        answer["session_id"].as_str().unwrap().to_owned()
    };
    let id = ask("fix\0 the bug", "done\0", None, &[]);
    let migrated = env.run(&["store", "migrate", "--to", &url]);
    migrated.expect_code(0);
    assert!(migrated.stdout.contains("the 1 session folds to the same view in both stores"), "{}", migrated.stdout);
    let vars = [("SERI_STORE_URL", url.as_str())];
    ask("and\0 more", "again\0", Some(&id), &vars);
    let listed = env.run_with(&["sessions", "list", "--json"], &vars).json();
    assert_eq!(listed[0]["title"], "fix\u{fffd} the bug");
    // A session started on PostgreSQL with one.
    let fresh = ask("\0 first", "ok", None, &vars);
    assert_ne!(fresh, id);
}
