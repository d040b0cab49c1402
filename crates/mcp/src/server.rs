//! Starting MCP servers and keeping them: one connection per configured
//! server, all started at once, each with its own startup timeout, so one
//! slow or broken server delays or fails only itself.
//!
//! A stdio server runs as the leader of its own process group, with its
//! standard error read into the log (its last lines explain a server that
//! exits at once). Dropping [`McpServers`] (seri exiting) kills each group.
//! Started through seri's launcher ([`McpServers::start_launched`]), a
//! server and everything it starts (`setsid` included) end when seri drops
//! it, and when seri is killed outright: the launcher sees its parent go.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt as _};
use serde_json::Value;
use tokio::io::AsyncBufReadExt as _;

use crate::config::{ServerSpec, Transport};
use crate::raw::Declared;
use crate::tool::McpTool;

/// How many of a stdio server's last standard-error lines are kept to
/// explain its failure.
const STDERR_TAIL: usize = 5;

/// Receives what a server sends unasked; seri listens only for its tool
/// list changing, which takes effect in the next session.
#[derive(Debug, Clone, Default)]
pub(crate) struct Handler {
    list_changed: Arc<AtomicBool>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.store(true, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("seri", env!("CARGO_PKG_VERSION")))
    }
}

/// A server's state, as `seri mcp list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Connected; its tools, as the model sees them.
    Running {
        /// Each tool's seri name (`mcp__server__tool`).
        tools: Vec<String>,
        /// The tools it lists that are not offered, and why.
        skipped: Vec<SkippedTool>,
    },
    /// It did not start, or stopped answering.
    Failed {
        /// Why, in a sentence.
        error: String,
    },
}

/// A tool a server lists that seri does not offer to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedTool {
    /// The server's name for it.
    pub name: String,
    /// Why, in a sentence.
    pub reason: String,
}

/// One configured server, as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Running with tools, or failed with a reason.
    pub state: ServerState,
}

/// A live connection, shared by the server's tools.
pub(crate) struct Connection {
    /// The launcher's guard, first so that it is dropped first: the
    /// launcher ends what the server started before the server's process
    /// group is killed.
    _launcher: Option<seri_tools::sandbox::Bounded>,
    /// A stdio server's process group, killed when the connection goes.
    _child: Option<ChildGuard>,
    pub(crate) name: String,
    pub(crate) service: RunningService<RoleClient, Handler>,
    list_changed: Arc<AtomicBool>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// What its tool lists declared that the SDK's types drop.
    declared: Declared,
    /// Set when a call found the transport gone (the process died, the
    /// HTTP session ended).
    stopped: AtomicBool,
}

impl Connection {
    /// Why seri does not offer the server's tool `tool`, or `None` when it does.
    fn unsupported(&self, tool: &str) -> Option<String> {
        crate::raw::unsupported(self.declared.task_support(tool).as_deref())
    }

    /// Whether the server is known to be gone.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) || self.service.is_closed()
    }

    /// Records that a call found the server gone.
    pub(crate) fn mark_stopped(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// The server's last standard-error lines, for an error message.
    pub(crate) fn stderr_tail(&self) -> String {
        tail(&self.stderr)
    }
}

/// A server that started: its connection, its tools, and those it lists
/// that are not offered.
type Started = (Arc<Connection>, Vec<Arc<McpTool>>, Vec<SkippedTool>);

/// A stdio server's process (the leader of its group): killed, group and
/// all, when dropped.
#[derive(Debug)]
struct ChildGuard(Box<dyn process_wrap::tokio::ChildWrapper>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Err(error) = self.0.start_kill() {
            tracing::debug!(%error, "the MCP server had already ended");
        }
    }
}

/// The configured servers, started.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<(ServerSpec, Result<Started, String>)>,
}

impl std::fmt::Debug for McpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServers").field("servers", &self.report()).finish()
    }
}

impl McpServers {
    /// Starts every server at once (stdio ones in `cwd`) and lists their tools.
    pub async fn start(specs: Vec<ServerSpec>, cwd: &Path) -> McpServers {
        Self::start_launched(specs, cwd, None).await
    }

    /// [`McpServers::start`], each stdio server through the launcher of
    /// `sandbox` when it has one, and under its policy
    /// ([`seri_tools::Sandbox::server_args`]): a server the model could
    /// have rewritten (its script in the workspace) runs contained, as
    /// `bash` does. A server the sandbox refuses to start unsandboxed
    /// fails, saying why.
    pub async fn start_launched(
        specs: Vec<ServerSpec>,
        cwd: &Path,
        sandbox: Option<&seri_tools::Sandbox>,
    ) -> McpServers {
        let launch = sandbox.and_then(|s| s.launcher().map(|l| (l, s.server_args(cwd).map_err(|e| e.to_string()))));
        let launch = launch.as_ref().map(|(launcher, args)| (*launcher, args.as_deref().map_err(String::as_str)));
        let started = futures_util::future::join_all(specs.iter().map(|spec| start(spec, cwd, launch))).await;
        McpServers { servers: specs.into_iter().zip(started).collect() }
    }

    /// Every running server's tools, as seri tools.
    pub fn tools(&self) -> Vec<Arc<dyn seri_tools::Tool>> {
        self.servers
            .iter()
            .filter_map(|(_, started)| started.as_ref().ok())
            .flat_map(|(_, tools, _)| tools.iter().map(|t| t.clone() as Arc<dyn seri_tools::Tool>))
            .collect()
    }

    /// Each server's state, in configuration order. A server whose
    /// connection closed since it started reads as failed.
    pub fn report(&self) -> Vec<ServerReport> {
        self.servers
            .iter()
            .map(|(spec, started)| ServerReport {
                name: spec.name.clone(),
                transport: spec.transport.kind(),
                state: match started {
                    Ok((connection, _, _)) if connection.is_stopped() => {
                        ServerState::Failed { error: format!("it stopped{}", connection.stderr_tail()) }
                    }
                    Ok((_, tools, skipped)) => ServerState::Running {
                        tools: tools.iter().map(|t| t.name.clone()).collect(),
                        skipped: skipped.clone(),
                    },
                    Err(error) => ServerState::Failed { error: error.clone() },
                },
            })
            .collect()
    }

    /// The servers whose tools differ from those they started with, among
    /// those that said their list changed since the last call: each is
    /// said once, and the change reaches the next session. (A server may
    /// announce a change that changes nothing, as it finishes starting.)
    pub async fn take_changed(&self) -> Vec<String> {
        let mut changed = Vec::new();
        for (_, started) in &self.servers {
            let Ok((connection, tools, _)) = started else { continue };
            if !connection.list_changed.swap(false, Ordering::SeqCst) {
                continue;
            }
            let Ok(listed) = connection.service.peer().list_all_tools().await else { continue };
            let mut now: Vec<String> = listed
                .iter()
                .filter(|t| connection.unsupported(&t.name).is_none())
                .map(|t| crate::tool::seri_name(&connection.name, &t.name))
                .collect();
            let mut then: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
            now.sort();
            then.sort();
            if now != then {
                changed.push(connection.name.clone());
            }
        }
        changed
    }
}

/// Connects to one server and lists its tools within its startup timeout.
async fn start(
    spec: &ServerSpec,
    cwd: &Path,
    launch: Option<(&seri_tools::Launcher, Result<&[std::ffi::OsString], &str>)>,
) -> Result<Started, String> {
    let mut bounded = None;
    let mut child = None;
    let declared = Declared::default();
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let handler = Handler::default();
    let list_changed = handler.list_changed.clone();
    let mut reader: Option<tokio::task::JoinHandle<()>> = None;
    let connecting = async {
        let service = match &spec.transport {
            Transport::Stdio { command, args, env } => {
                let mut cmd = match launch {
                    Some((_, Err(refused))) => return Err(refused.to_owned()),
                    Some((launcher, Ok(sandbox))) => {
                        let (cmd, guard) = launcher.bounded(command, args, sandbox);
                        bounded = Some(guard);
                        cmd
                    }
                    None => {
                        let mut cmd = tokio::process::Command::new(command);
                        cmd.args(args);
                        cmd
                    }
                };
                // Its whole environment is what its configuration gave:
                // seri's own (the provider's key) stays with seri.
                cmd.env_clear().envs(env).current_dir(cwd).kill_on_drop(true);
                let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
                wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
                wrapped
                    .command_mut()
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                let mut spawned = ChildGuard(wrapped.spawn().map_err(|e| format!("cannot run `{command}`: {e}"))?);
                if let Some(guard) = &mut bounded {
                    guard.started(spawned.0.id());
                }
                let (Some(input), Some(output)) = (spawned.0.stdin().take(), spawned.0.stdout().take()) else {
                    return Err(format!("`{command}` started without its standard input and output"));
                };
                if let Some(err) = spawned.0.stderr().take() {
                    reader = Some(tokio::spawn(read_stderr(spec.name.clone(), err, stderr.clone())));
                }
                child = Some(spawned);
                // The server's output is read on its way to the SDK for
                // what the SDK's types drop (a tool's taskSupport).
                let output = crate::raw::Tee::new(output, declared.clone());
                handler.serve((output, input)).await.map_err(|e| format!("it did not start: {e}"))?
            }
            Transport::Http { url, headers } => {
                // Its tool lists are read on their way to the SDK too.
                let transport = crate::http::transport(url, headers, declared.clone())?;
                handler.serve(transport).await.map_err(|e| format!("it did not start: {e}"))?
            }
        };
        let listed = service.peer().list_all_tools().await.map_err(|e| format!("it did not list its tools: {e}"))?;
        Ok::<_, String>((service, listed))
    };
    let outcome = tokio::time::timeout(spec.startup_timeout, connecting).await;
    if !matches!(outcome, Ok(Ok(_)))
        && let Some(reader) = reader
    {
        // A server that exited has closed its standard error: let the
        // reader take in its last words before they are quoted.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), reader).await;
    }
    let (service, listed) = match outcome {
        Ok(Ok(started)) => started,
        Ok(Err(error)) => return Err(format!("{error}{}", tail(&stderr))),
        Err(_) => {
            return Err(format!(
                "it did not start within {} s (startupTimeoutSec){}",
                spec.startup_timeout.as_secs_f64(),
                tail(&stderr)
            ));
        }
    };
    let connection = Arc::new(Connection {
        _launcher: bounded,
        _child: child,
        name: spec.name.clone(),
        service,
        list_changed,
        stderr,
        declared,
        stopped: AtomicBool::new(false),
    });
    let mut tools: Vec<Arc<McpTool>> = Vec::new();
    let mut skipped = Vec::new();
    for tool in listed {
        if let Some(reason) = connection.unsupported(&tool.name) {
            tracing::info!(server = %spec.name, tool = %tool.name, %reason, "MCP tool not offered");
            skipped.push(SkippedTool { name: tool.name.to_string(), reason });
            continue;
        }
        let value = serde_json::to_value(&tool).unwrap_or(Value::Null);
        let name = crate::tool::seri_name(&spec.name, &tool.name);
        if tools.iter().any(|t| t.name == name) {
            tracing::warn!(server = %spec.name, tool = %tool.name, "two tools map to one name; keeping the first");
            continue;
        }
        tools.push(Arc::new(McpTool::new(name, &value, connection.clone(), spec.tool_timeout)));
    }
    tracing::info!(server = %spec.name, tools = tools.len(), "MCP server started");
    Ok((connection, tools, skipped))
}

/// Logs a stdio server's standard error and keeps its last lines.
async fn read_stderr(name: String, err: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = tokio::io::BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %name, "{line}");
        let mut kept = tail.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() == STDERR_TAIL {
            kept.pop_front();
        }
        kept.push_back(line);
    }
}

/// `; it said: …` with the last standard-error lines, or nothing.
fn tail(lines: &Mutex<VecDeque<String>>) -> String {
    let lines = lines.lock().unwrap_or_else(PoisonError::into_inner);
    if lines.is_empty() {
        return String::new();
    }
    format!("; it said: {}", lines.iter().map(String::as_str).collect::<Vec<_>>().join(" | "))
}
