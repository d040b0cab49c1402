//! `seri acp`: the Agent Client Protocol on standard input and output, the
//! door for editors (Zed, JetBrains IDEs, Neovim, Emacs). The editor starts
//! `seri acp` and speaks JSON-RPC to it; seri answers with the same profile,
//! store, configuration, providers, tools, permissions, sandbox, hooks and
//! MCP servers as `seri` itself, and its sessions are ordinary sessions:
//! `seri sessions list`, `seri -r` and the web UI see them.
//!
//! The protocol is the official SDK's (`agent-client-protocol`): it reads
//! and writes the frames, answers malformed JSON, unknown methods and bad
//! parameters with the protocol's errors, and keeps serving. This module
//! maps the protocol's requests onto the runtime:
//!
//! - [`state`]: the sessions an editor has open, each following its
//!   lineage (a continuation moves the editor's session to the successor);
//! - [`turn`]: a prompt, its streamed updates, and the permission questions;
//! - [`tools`] and [`replay`]: pure mappings of calls and history.
//!
//! Standard output carries only the protocol: before anything else, the
//! protocol takes a private copy of it and standard output becomes standard
//! error, so a stray line from anything this process runs reaches the
//! editor's log, never its parser.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub(crate) mod replay;
mod state;
mod tools;
mod turn;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, CancelNotification, CloseSessionRequest, ForkSessionRequest,
    InitializeRequest, ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest, ResumeSessionRequest,
    SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::{Agent, Lines, on_receive_notification, on_receive_request};

use crate::args::RunFlags;
use crate::exit::Exit;
use state::Acp;

/// How long the turns still running may take to settle once the editor has
/// gone (they are cancelled first).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the protocol until the editor closes standard input (or a signal
/// stops seri); then cancels what still runs, as a person's cancel would,
/// and exits 0.
pub(crate) async fn run(flags: &RunFlags) -> Result<ExitCode, Exit> {
    let (outgoing, incoming) = transport()?;
    let acp = Arc::new(Acp::new(flags.clone()));
    let served = serve(acp.clone(), Lines::new(outgoing, incoming));
    tokio::select! {
        served = served => {
            if let Err(error) = served {
                tracing::warn!("acp: the connection ended with an error: {error:?}");
            }
        }
        signal = crate::headless::stop_requested() => {
            tracing::info!("acp: stopped by {signal:?}");
        }
    }
    acp.shutdown(SETTLE_TIMEOUT).await;
    Ok(ExitCode::SUCCESS)
}

/// The handlers, one per request the protocol defines, connected to
/// `transport`. Each returns at once: work that waits (a turn, opening a
/// folder, a replay) runs in a task of its own that answers when done, so
/// the connection keeps reading (a `session/cancel` must get through).
async fn serve(
    acp: Arc<Acp>,
    transport: impl agent_client_protocol::ConnectTo<Agent> + 'static,
) -> agent_client_protocol::Result<()> {
    let (a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) = (
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp,
    );
    Agent
        .v1()
        .name("seri")
        .on_receive_request(
            async move |request: InitializeRequest, responder, cx| {
                a1.connected(&cx);
                responder.respond(a1.initialize(request))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: AuthenticateRequest, responder, cx| {
                a2.connected(&cx);
                responder.respond_with_result(a2.authenticate(&request).map(|()| AuthenticateResponse::new()))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                a3.connected(&cx);
                let acp = a3.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.new_session(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                a4.connected(&cx);
                let acp = a4.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.load_session(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, cx| {
                a5.connected(&cx);
                let acp = a5.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.resume_session(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ForkSessionRequest, responder, cx| {
                a6.connected(&cx);
                let acp = a6.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.fork_session(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, cx| {
                a7.connected(&cx);
                let acp = a7.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.list_sessions(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder, cx| {
                a8.connected(&cx);
                let acp = a8.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.close_session(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, cx| {
                a9.connected(&cx);
                responder.respond_with_result(a9.set_mode(request))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, cx| {
                a10.connected(&cx);
                responder.respond_with_result(a10.set_config_option(request))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                a11.connected(&cx);
                let acp = a11.clone();
                acp.clone().spawn(async move { responder.respond_with_result(acp.prompt(request).await) });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, cx| {
                a12.connected(&cx);
                a12.cancel(&notification.session_id);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

/// The protocol's two streams: lines read from standard input, and lines
/// written to a private copy of standard output, which itself becomes
/// standard error from here on.
fn transport() -> Result<
    (
        impl futures_util::Sink<String, Error = std::io::Error> + Send + Unpin + 'static,
        impl futures_util::Stream<Item = std::io::Result<String>> + Send + Unpin + 'static,
    ),
    Exit,
> {
    use anyhow::Context as _;
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let protocol = rustix::io::dup(rustix::stdio::stdout()).context("cannot copy standard output for the protocol")?;
    rustix::stdio::dup2_stdout(rustix::stdio::stderr()).context("cannot point standard output at standard error")?;
    let writer = tokio::fs::File::from_std(std::fs::File::from(protocol));
    let outgoing = Box::pin(futures_util::sink::unfold(writer, async |mut writer, line: String| {
        writer.write_all(line.as_bytes()).await?;
        writer.write_all(b"\n").await?;
        writer.flush().await?;
        Ok::<_, std::io::Error>(writer)
    }));
    let lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    // A read error ends the stream after it is reported, as the end does.
    let incoming = Box::pin(futures_util::stream::unfold(Some(lines), async |lines| {
        let mut lines = lines?;
        match lines.next_line().await {
            Ok(Some(line)) => Some((Ok(line), Some(lines))),
            Ok(None) => None,
            Err(error) => Some((Err(error), None)),
        }
    }));
    Ok((outgoing, incoming))
}
