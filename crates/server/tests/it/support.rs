//! A server on a temporary profile: a scripted model, a token for the local
//! agent and one for another agent, and clients for both protocols.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use seri_core::{AgentId, FrozenPrompt, ModelRef, SessionInfo};
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Runtime, RuntimeParts, RuntimeSettings};
use seri_server::{Backend, ServerConfig, ServerState};
use seri_store::{Profile, Store};
use seri_tools::{Approver, PermissionPolicy, Permissions, ToolRegistry};
use tokio_tungstenite::tungstenite::Message;

pub(crate) const TOKEN: &str = "local-test-token";

/// Builds runtimes whose model plays one script, shared by every agent.
struct ScriptedBackend {
    store: Arc<Store>,
    script: PathBuf,
    work: PathBuf,
    memory: PathBuf,
    policy: PermissionPolicy,
    /// No sandbox and no launcher: what `/api/sessions/{id}/sandbox` reads
    /// and changes.
    sandbox: Arc<seri_tools::Sandbox>,
}

impl Backend for ScriptedBackend {
    fn runtime(&self, agent: &AgentId, approver: Arc<dyn Approver>) -> Result<Runtime, String> {
        let settings = Settings { script: Some(self.script.clone()), ..Settings::default() };
        let provider = build_provider(ProviderKind::Script, "", &settings, &|_| None).map_err(|e| e.to_string())?;
        Ok(Runtime::new(RuntimeParts {
            store: self.store.clone(),
            agent: agent.clone(),
            provider,
            tools: {
                let mut tools = ToolRegistry::with_coding_tools();
                let bash = seri_tools::BashSettings { sandbox: self.sandbox.clone(), ..Default::default() };
                tools.replace(Arc::new(seri_tools::Bash::new(bash)));
                tools
            },
            memory_dir: self.memory.clone(),
            permissions: Permissions::interactive(self.policy.clone(), approver),
            // The window the backend says, so every figure agrees on it.
            settings: RuntimeSettings {
                context_window: std::num::NonZeroU64::new(100_000),
                ..RuntimeSettings::default()
            },
            session_prompts: None,
        }))
    }

    fn create_session(
        &self,
        runtime: &Runtime,
        cwd: Option<&str>,
        title: Option<String>,
    ) -> Result<SessionInfo, String> {
        let cwd = cwd.map_or_else(|| self.work.to_string_lossy().into_owned(), str::to_owned);
        let prompt = FrozenPrompt { text: "You are a test agent.".into(), files: Vec::new(), tools: Vec::new() };
        runtime.create_titled_session(&cwd, prompt, title).map_err(|e| e.to_string())
    }

    fn context_window(&self, _model: Option<&ModelRef>) -> u64 {
        100_000
    }

    fn sandbox(&self) -> Option<Arc<seri_tools::Sandbox>> {
        Some(self.sandbox.clone())
    }
}

/// A runtime on a fresh profile whose model plays `turns`, outside any
/// server: the in-process baseline of the load benchmark.
#[allow(dead_code)]
pub(crate) fn scripted_runtime(turns: Value) -> (tempfile::TempDir, Runtime, String) {
    scripted_runtime_on(turns, None)
}

/// The same on the store `url` names (`None`: the profile's seri.db).
#[allow(dead_code)]
pub(crate) fn scripted_runtime_on(turns: Value, url: Option<&str>) -> (tempfile::TempDir, Runtime, String) {
    let dir = tempfile::tempdir().unwrap();
    let profile = Profile::at(dir.path().join("profile"));
    profile.create().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
    let store = Arc::new(profile.open_store_url(url, seri_store::StoreOptions::default()).unwrap());
    let work = dir.path().to_path_buf();
    let backend = ScriptedBackend {
        store,
        script,
        work: work.clone(),
        memory: profile.memory_dir(),
        policy: PermissionPolicy::new(),
        sandbox: Arc::default(),
    };
    let runtime = backend.runtime(&AgentId::local(), Arc::new(seri_runloop::Approvals::new(None))).unwrap();
    (dir, runtime, work.to_string_lossy().into_owned())
}

/// A running server.
pub(crate) struct Server {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) url: String,
    pub(crate) other_token: String,
    pub(crate) http: reqwest::Client,
    /// The server's store, for tests that count what it asked of the database.
    #[allow(dead_code)]
    pub(crate) store: Arc<Store>,
    /// What did not fit the OpenAPI document (see `document.rs`).
    findings: crate::document::Findings,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// A server whose model plays `turns`.
    pub(crate) async fn start(turns: Value) -> Self {
        Self::with(turns, ServerConfig::default()).await
    }

    pub(crate) async fn with(turns: Value, config: ServerConfig) -> Self {
        // SERI_TEST_SERVER_ON=postgres runs the whole suite on PostgreSQL
        // (`cargo xtask ci` runs it both ways).
        let postgres = std::env::var("SERI_TEST_SERVER_ON").is_ok_and(|b| b == "postgres");
        let url = if postgres { fresh_postgres_url() } else { None };
        if postgres {
            assert!(url.is_some(), "SERI_TEST_SERVER_ON=postgres needs SERI_TEST_POSTGRES_URL");
        }
        Self::on(turns, config, url.as_deref()).await
    }

    /// A server on the store `url` names (`None`: the profile's seri.db).
    pub(crate) async fn on(turns: Value, config: ServerConfig, url: Option<&str>) -> Self {
        Self::prepared(turns, config, url, |_| {}).await
    }

    /// [`Server::on`], with `prepare` writing to its store before the
    /// server starts (what a process that is gone left behind).
    pub(crate) async fn prepared(
        turns: Value,
        config: ServerConfig,
        url: Option<&str>,
        prepare: impl FnOnce(&seri_store::Store),
    ) -> Self {
        Self::built(turns, config, url, seri_store::StoreOptions::default(), prepare).await
    }

    /// [`Server::on`] with its store's time from `clock`: a claim or a
    /// lease lapses when the test moves the clock past it, and only then.
    pub(crate) async fn clocked(
        turns: Value,
        config: ServerConfig,
        url: Option<&str>,
        clock: Arc<seri_store::ManualClock>,
    ) -> Self {
        let options = seri_store::StoreOptions { clock, ..seri_store::StoreOptions::default() };
        Self::built(turns, config, url, options, |_| {}).await
    }

    async fn built(
        turns: Value,
        config: ServerConfig,
        url: Option<&str>,
        options: seri_store::StoreOptions,
        prepare: impl FnOnce(&seri_store::Store),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let profile = Profile::at(dir.path().join("profile"));
        profile.create().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let script = dir.path().join("script.json");
        std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
        let store = Arc::new(profile.open_store_url(url, options).unwrap());
        prepare(&store);
        let other_token = seri_server::new_token().unwrap();
        store.record_server_token(&AgentId::named("other").unwrap(), &seri_server::token_hash(&other_token)).unwrap();
        let backend = ScriptedBackend {
            store: store.clone(),
            script,
            work,
            memory: profile.memory_dir(),
            policy: PermissionPolicy::new(),
            sandbox: Arc::default(),
        };
        let config = ServerConfig { local_token: Some(TOKEN.to_owned()), ..config };
        let state = ServerState::new(store.clone(), Arc::new(backend), config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let findings = crate::document::Findings::default();
        let checked = findings.clone();
        let task = tokio::spawn(seri_server::serve_wrapped(
            listener,
            state,
            async move {
                let _ = stopped.await;
            },
            move |app| crate::document::checking(app, checked),
        ));
        // reqwest has no crypto provider of its own (see the workspace
        // manifest); an `Err` means another test installed it first.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        Self { _dir: dir, url, other_token, http, store, findings, stop: Some(stop), task: Some(task) }
    }

    /// Fails the test if an answer did not fit the OpenAPI document.
    fn assert_documented(&self) {
        let findings = self.findings.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        assert!(findings.is_empty(), "answers the OpenAPI document does not describe:\n{}", findings.join("\n"));
    }

    /// Stops the server the way a signal does, and waits for it.
    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
        self.assert_documented();
    }

    pub(crate) fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(format!("{}{path}", self.url)).bearer_auth(TOKEN)
    }

    pub(crate) fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.http.post(format!("{}{path}", self.url)).bearer_auth(TOKEN).json(&body)
    }

    /// POSTs `body` to `path` and reads the JSON answer.
    pub(crate) async fn post_json(&self, path: &str, body: Value) -> Value {
        self.post(path, body).send().await.unwrap().json().await.unwrap()
    }

    /// GETs `path` and reads the JSON answer.
    pub(crate) async fn get_json(&self, path: &str) -> Value {
        self.get(path).send().await.unwrap().json().await.unwrap()
    }

    /// A session's `[seq] who: text` lines.
    pub(crate) async fn thread(&self, session: &str) -> String {
        self.get(&format!("/api/sessions/{session}/thread?limit=1000")).send().await.unwrap().text().await.unwrap()
    }

    /// A new session of the local agent; its id.
    pub(crate) async fn session(&self) -> String {
        let created: Value = self.post("/api/sessions", json!({})).send().await.unwrap().json().await.unwrap();
        created["session"]["id"].as_str().unwrap().to_owned()
    }

    /// Sends `text` and waits for the answer.
    pub(crate) async fn say(&self, session: &str, text: &str) -> Value {
        let response =
            self.post(&format!("/api/sessions/{session}/messages"), json!({ "text": text })).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    /// A WebSocket client with the local token.
    pub(crate) async fn ws(&self) -> Ws {
        let url = format!("{}/api/ws?token={TOKEN}", self.url.replacen("http", "ws", 1));
        let (socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        Ws { socket, early: std::collections::VecDeque::new() }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.assert_documented();
        }
    }
}

/// One WebSocket client.
pub(crate) struct Ws {
    socket: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    /// Frames that came before a subscription's answer (an account change
    /// the database relayed late): read next, in order.
    early: std::collections::VecDeque<Value>,
}

impl Ws {
    pub(crate) async fn send(&mut self, frame: Value) {
        self.socket.send(Message::Text(frame.to_string().into())).await.unwrap();
    }

    /// Sends a subscription and waits until it took effect; frames that
    /// come before its answer are kept for [`Ws::next`].
    pub(crate) async fn subscribe(&mut self, frame: Value) {
        self.send(frame).await;
        loop {
            let reply = self.read().await.unwrap();
            if reply["type"] == "subscribed" {
                return;
            }
            assert_ne!(reply["type"], "error", "{reply}");
            self.early.push_back(reply);
        }
    }

    /// The next frame; a deadline only so a broken server fails the test.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        match self.early.pop_front() {
            Some(frame) => Some(frame),
            None => self.read().await,
        }
    }

    /// The next frame off the socket.
    async fn read(&mut self) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(std::time::Duration::from_secs(60), self.socket.next()).await.ok()??;
            match message.ok()? {
                Message::Text(text) => {
                    let frame = serde_json::from_str(text.as_str()).ok()?;
                    crate::document::check_server_frame(&frame);
                    return Some(frame);
                }
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// The next frame if one comes within `wait`: to read what is left.
    pub(crate) async fn next_within(&mut self, wait: std::time::Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next()).await.ok()?
    }

    /// Frames until one matches `until`, which is returned with the rest.
    pub(crate) async fn collect_until(&mut self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        while let Some(frame) = self.next().await {
            let done = until(&frame);
            seen.push(frame);
            if done {
                break;
            }
        }
        seen
    }
}

pub(crate) fn text(text: &str) -> Value {
    json!({ "text": text })
}

/// A fresh, empty store on the PostgreSQL database `SERI_TEST_POSTGRES_URL`
/// names (a schema of its own, which the store creates), if one is given.
#[allow(dead_code)]
pub(crate) fn fresh_postgres_url() -> Option<String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty())?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let schema = format!("srv{}_{nanos}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let join = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{join}options=-csearch_path%3D{schema}"))
}
