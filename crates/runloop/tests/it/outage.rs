//! A PostgreSQL store whose connections are all cut at once (a restart, a
//! failover, `pg_terminate_backend`): what a runtime asks of the store next
//! waits it out instead of failing. Taking a free session (posting a
//! person's message, opening a session a stopped process left) is the
//! write this checks; it runs wherever the PostgreSQL half of the suite
//! runs (`SERI_TEST_POSTGRES_URL` set).

use std::sync::Arc;

use seri_core::{AgentId, FrozenPrompt, Message};
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Command, Runtime, RuntimeParts, Submitted};
use seri_store::{Store, StoreOptions};
use seri_tools::{PermissionPolicy, Permissions, ToolRegistry};

/// A fresh schema of the test cluster, its connections named `app`.
fn fresh_url(base: &str, app: &str) -> String {
    let join = if base.contains('?') { '&' } else { '?' };
    format!("{base}{join}options=-csearch_path%3D{app}&application_name={app}")
}

/// Cuts every connection named `app`, as the server going away would.
async fn cut_connections(base: &str, app: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(base, tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = $1 AND pid <> pg_backend_pid()",
            &[&app],
        )
        .await
        .unwrap();
    drop(client);
    let _ = driver.await;
    row.get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taking_a_free_session_waits_out_every_connection_cut_under_it() {
    let Ok(base) = std::env::var("SERI_TEST_POSTGRES_URL") else { return };
    let dir = tempfile::tempdir().unwrap();
    let app =
        format!("outage_{}_{}", std::process::id(), dir.path().file_name().unwrap().to_string_lossy().to_lowercase());
    let app: String = app.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let store = Arc::new(
        Store::open_url(Some(&fresh_url(&base, &app)), &dir.path().join("unused.db"), StoreOptions::default()).unwrap(),
    );
    let script = dir.path().join("script.json");
    std::fs::write(&script, serde_json::json!({ "turns": [] }).to_string()).unwrap();
    let settings = Settings { script: Some(script), ..Settings::default() };
    let runtime = Runtime::new(RuntimeParts {
        store: store.clone(),
        agent: AgentId::local(),
        provider: build_provider(ProviderKind::Script, "", &settings, &|_| None).unwrap(),
        tools: ToolRegistry::with_coding_tools(),
        memory_dir: dir.path().join("memory"),
        permissions: Permissions::headless(PermissionPolicy::new()),
        settings: Default::default(),
        session_prompts: None,
    });
    let workspace = dir.path().join("work");
    std::fs::create_dir_all(&workspace).unwrap();
    let prompt = FrozenPrompt { text: "You are a test agent.".into(), files: Vec::new(), tools: Vec::new() };
    let session = runtime.create_session(workspace.to_str().unwrap(), prompt).unwrap().id;
    for round in 0..5 {
        // Connections in the pool, then every one of them cut.
        runtime.post_user_message(session, Message::user(format!("before {round}"))).unwrap();
        assert!(cut_connections(&base, &app).await > 0, "the store's connections were found");
        let posted =
            tokio::task::block_in_place(|| runtime.post_user_message(session, Message::user(format!("after {round}"))));
        assert!(posted.is_ok(), "round {round}: {posted:?}");
        cut_connections(&base, &app).await;
        let recovered = runtime.submit(Command::Recover { session_id: session }, &seri_runloop::Quiet).await;
        assert!(matches!(recovered, Ok(Submitted::Recovered(None))), "round {round}: {recovered:?}");
    }
    let texts: Vec<String> = store
        .agent(&AgentId::local())
        .events(session, seri_store::SeqRange::ALL)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.body.as_message().map(|m| m.content.clone()))
        .collect();
    assert_eq!(texts.len(), 10, "each message posted once: {texts:?}");
}
