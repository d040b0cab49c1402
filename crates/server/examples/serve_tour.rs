//! Serves seri's API from a program of your own, through `seri-server`'s
//! public API only: a store in a temporary profile, a [`Backend`] that
//! builds runtimes on a scripted model, the server on a free 127.0.0.1
//! port, and one message sent to it over HTTP. It stops as a signal would
//! stop it: runs in flight are cancelled and settled.
//!
//! ```sh
//! cargo run -p seri-server --example serve_tour
//! ```

// An example talks to a person: printing is its whole job.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use seri_core::{AgentId, FrozenPrompt, ModelRef, SessionInfo};
use seri_providers::script::{Script, ScriptReply, ScriptTurn, ScriptedProvider};
use seri_providers::{ConfiguredProvider, SCRIPTED_MODEL};
use seri_runloop::{Runtime, RuntimeParts, RuntimeSettings};
use seri_server::{Backend, ServerConfig, ServerState};
use seri_store::{Profile, Store};
use seri_tools::{Approver, PermissionPolicy, Permissions, ToolRegistry};

/// How the server makes runtimes and sessions: here, a scripted model and a
/// one-line system prompt; `seri serve` uses the CLI's configuration.
struct Tour {
    store: Arc<Store>,
    profile: Profile,
}

impl Backend for Tour {
    fn runtime(&self, agent: &AgentId, approver: Arc<dyn Approver>) -> Result<Runtime, String> {
        let reply = ScriptReply { text: "Hello from a served runtime.".into(), ..ScriptReply::default() };
        let script = Script::from_turns("tour.json", vec![ScriptTurn::Reply(reply)]);
        Ok(Runtime::new(RuntimeParts {
            store: self.store.clone(),
            agent: agent.clone(),
            provider: ConfiguredProvider {
                model: ModelRef::new("script", SCRIPTED_MODEL),
                provider: Arc::new(ScriptedProvider::new(script)),
            },
            tools: ToolRegistry::with_session_verbs(),
            memory_dir: self.profile.memory_dir(),
            permissions: Permissions::interactive(PermissionPolicy::new(), approver),
            settings: RuntimeSettings::default(),
            session_prompts: None,
        }))
    }

    fn create_session(
        &self,
        runtime: &Runtime,
        cwd: Option<&str>,
        title: Option<String>,
    ) -> Result<SessionInfo, String> {
        let prompt = FrozenPrompt { text: "You are a helpful agent.".into(), files: Vec::new(), tools: Vec::new() };
        let cwd = cwd.map_or_else(|| self.profile.root().to_string_lossy().into_owned(), str::to_owned);
        runtime.create_titled_session(&cwd, prompt, title).map_err(|e| e.to_string())
    }

    fn context_window(&self, _model: Option<&ModelRef>) -> u64 {
        200_000
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let profile = Profile::at(dir.path().join("profile"));
    profile.create()?;
    let store = Arc::new(profile.open_store()?);
    let config = ServerConfig { local_token: Some("tour-token".into()), ..ServerConfig::default() };
    let state = ServerState::new(store.clone(), Arc::new(Tour { store, profile }), config);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(seri_server::serve(listener, state, async move {
        let _ = stopped.await;
    }));
    println!("serving on {url}");

    // reqwest is built without a crypto provider of its own.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let created: serde_json::Value = http
        .post(format!("{url}/api/sessions"))
        .bearer_auth("tour-token")
        .json(&serde_json::json!({ "title": "A tour" }))
        .send()
        .await?
        .json()
        .await?;
    let session = created["session"]["id"].as_str().ok_or("no session id")?.to_owned();
    let title = created["session"]["title"].as_str().unwrap_or_default();
    println!("created session {session} \u{201c}{title}\u{201d}");
    let answer: serde_json::Value = http
        .post(format!("{url}/api/sessions/{session}/messages"))
        .bearer_auth("tour-token")
        .json(&serde_json::json!({ "text": "Hello?" }))
        .send()
        .await?
        .json()
        .await?;
    println!(
        "answer: {} ({})",
        answer["result"].as_str().unwrap_or_default(),
        answer["status"].as_str().unwrap_or_default()
    );
    let thread =
        http.get(format!("{url}/api/sessions/{session}/thread")).bearer_auth("tour-token").send().await?.text().await?;
    print!("{thread}");

    let _ = stop.send(());
    server.await??;
    println!("stopped");
    Ok(())
}
