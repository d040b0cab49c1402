//! `seri serve` and `seri token create`: the server on this profile, wired
//! to the CLI's own configuration (the same flags, `config.json`, provider
//! and prompt files as `seri -p`), and the tokens it accepts.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use seri_core::{AgentId, ModelRef, SessionInfo};
use seri_runloop::Runtime;
use seri_server::{Backend, ServerConfig, ServerState};
use seri_tools::Approver;

use crate::app::App;
use crate::args::{RunFlags, ServeArgs};
use crate::exit::Exit;

/// The local agent's fixed token, when set in `seri serve`'s environment.
use crate::config::SERVER_TOKEN_ENV;

/// The profile's file that says where a running server listens.
const SERVER_FILE: &str = "server.json";

/// The SQLite pages `seri serve` keeps in memory (see `Store::keep_pages_cached`).
const SERVER_PAGE_CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// The server's view of the CLI: runtimes and sessions as `seri -p` makes them.
struct CliBackend {
    app: Arc<App>,
}

impl Backend for CliBackend {
    fn runtime(&self, agent: &AgentId, approver: Arc<dyn Approver>) -> Result<Runtime, String> {
        self.app.runtime_for(agent, Some(approver)).map_err(|e| e.message())
    }

    fn create_session(
        &self,
        runtime: &Runtime,
        cwd: Option<&str>,
        title: Option<String>,
    ) -> Result<SessionInfo, String> {
        let cwd = match cwd {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                if !dir.is_absolute() {
                    return Err(format!("cwd must be an absolute path, not `{}`", dir.display()));
                }
                if !dir.is_dir() {
                    return Err(format!("cwd `{}` is not a directory on the server", dir.display()));
                }
                dir
            }
            None => self.app.cwd.clone(),
        };
        // A client's `cwd` is a request, never a grant.
        if let Some(folders) = &self.app.folders {
            let real = std::fs::canonicalize(&cwd).map_err(|e| format!("cwd `{}`: {e}", cwd.display()))?;
            if !folders.iter().any(|f| real.starts_with(f)) {
                return Err(seri_runloop::folder_refusal(&real, folders));
            }
        }
        self.app.new_session_in(runtime, &cwd, title).map_err(|e| e.message())
    }

    fn context_window(&self, model: Option<&ModelRef>) -> u64 {
        self.app.context_window_of(model)
    }

    fn sandbox(&self) -> Option<Arc<seri_tools::Sandbox>> {
        Some(self.app.sandbox.clone())
    }
}

/// How many connections `seri serve` serves at once: `--max-connections`,
/// else `serve.maxConnections` of `config.json`, else what the descriptor
/// limit (raised to its hard limit first) leaves room for. A cap chosen
/// above that limit is kept, and said on stderr: past the limit a
/// connection cannot even be answered.
fn connection_cap(flag: Option<u64>, file: Option<u64>) -> usize {
    let limit = seri_server::raise_descriptor_limit();
    let budget = seri_server::connection_budget();
    let Some(chosen) = flag.or(file) else { return budget };
    let chosen = usize::try_from(chosen).unwrap_or(usize::MAX);
    if chosen > budget
        && let Some(limit) = limit
    {
        eprintln!(
            "seri: serving up to {chosen} connections, but the descriptor limit ({limit}) leaves room for {budget} \
             once {} are kept for the store and tools: raise it (ulimit -n) or connections past it fail",
            seri_server::RESERVED_DESCRIPTORS
        );
    }
    chosen
}

/// `seri serve`: listens, writes `server.json`, prints the URL, and serves
/// until SIGINT or SIGTERM; then cancels and settles the runs in flight.
pub(crate) async fn run(flags: &RunFlags, args: &ServeArgs) -> Result<ExitCode, Exit> {
    let host: IpAddr = args
        .host
        .parse()
        .map_err(|_| Exit::usage(format!("--host must be an IP address such as 127.0.0.1, not `{}`", args.host)))?;
    if !host.is_loopback() && !args.allow_remote {
        return Err(Exit::usage(format!(
            "refusing to listen on {host}: anyone who reaches it with a token can run tools on this machine; \
             add --allow-remote if that is what you want"
        )));
    }
    let mut app = App::open(flags)?;
    // A server searches and lists the same index pages request after
    // request: keep a working set of them in memory rather than SQLite's
    // 2 MiB (about 13 ms against 16 for a search of a million events).
    app.store.keep_pages_cached(SERVER_PAGE_CACHE_BYTES)?;
    // The folders its sessions work in: this one and the `--folder`s, each
    // chosen by the person who started the server.
    let mut folders = Vec::new();
    for folder in std::iter::once(&app.cwd).chain(&args.folders) {
        let real =
            std::fs::canonicalize(folder).map_err(|e| Exit::usage(format!("--folder {}: {e}", folder.display())))?;
        if !real.is_dir() {
            return Err(Exit::usage(format!("--folder {}: not a folder", folder.display())));
        }
        folders.push(real);
    }
    app.folders = Some(folders);
    app.tell_unenforced_sandbox();
    let app = Arc::new(app);
    // One set of MCP servers for the whole server: every agent's sessions share it.
    crate::mcp::start(&app).await?;
    let listener = tokio::net::TcpListener::bind((host, args.port))
        .await
        .with_context(|| format!("cannot listen on {host}:{}", args.port))?;
    let address = listener.local_addr().context("cannot read the address listened on")?;
    let url = format!("http://{address}");
    let local_token = std::env::var(SERVER_TOKEN_ENV).ok().filter(|t| !t.trim().is_empty());
    let announced = match &local_token {
        Some(_) => None,
        None => Some(create_token(&app, "local")?),
    };
    let max_connections = connection_cap(args.max_connections, app.config.serve.max_connections);
    let config = ServerConfig {
        max_connections,
        local_token,
        approval_timeout: Duration::from_secs(args.approval_timeout),
        run_lease: Duration::from_secs(args.run_lease),
        host_names: args.host_names.clone(),
        max_unauthenticated_per_client: usize::try_from(args.max_unauthenticated_per_client).unwrap_or(usize::MAX),
        ..ServerConfig::default()
    };
    let state = ServerState::new(app.store.clone(), Arc::new(CliBackend { app: app.clone() }), config);
    let file = app.root().join(SERVER_FILE);
    write_server_file(&file, &url)?;
    println!("{url}");
    if let Some(token) = announced {
        println!("token: {token}  (set {SERVER_TOKEN_ENV} to choose your own; `seri token create` makes more)");
    }
    let served = seri_server::serve(listener, state, stop_signal()).await;
    remove_server_file(&file);
    served.context("the server stopped on an error")?;
    Ok(ExitCode::SUCCESS)
}

/// SIGINT or SIGTERM, whichever comes first.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        // Without signal handlers the server still stops with the process.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
}

/// `server.json`: `{"url", "pid"}`, written whole (a reader never sees half of it).
fn write_server_file(path: &Path, url: &str) -> Result<(), Exit> {
    let body = serde_json::json!({ "url": url, "pid": std::process::id() }).to_string();
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, body).with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Removes `server.json` if it is still this process's (another server may
/// have started on the profile since).
fn remove_server_file(path: &Path) {
    let ours = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|v| v["pid"] == std::process::id());
    if ours {
        let _ = std::fs::remove_file(path);
    }
}

/// `seri token create --agent NAME`: a new token for that agent, printed
/// once; the profile keeps only its hash.
pub(crate) fn create_token(app: &App, agent: &str) -> Result<String, Exit> {
    let agent = AgentId::named(agent)
        .map_err(|_| Exit::usage(format!("--agent must be 1 to 64 letters, digits, `-`, `_` or `.`, not `{agent}`")))?;
    let token =
        seri_server::new_token().map_err(|e| Exit::Failure(anyhow::anyhow!("no randomness for a token: {e}")))?;
    app.store.record_server_token(&agent, &seri_server::token_hash(&token))?;
    Ok(token)
}
