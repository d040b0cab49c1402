//! `seri`: the command line of the seri agent session runtime.
//!
//! `seri` opens an interactive session, `seri -p TEXT` runs one task
//! headless, `seri sessions …` and `seri thread …` inspect what is stored,
//! `seri demo` tours it all on a temporary profile. The contract (flags,
//! exit codes, JSON fields) is fixed in the design README; see the project
//! README for each command.
//!
//! This is the binary edge: the only crate that reads the environment for
//! settings, prints to the terminal, and uses `anyhow`.

// The binary talks to a person on a terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod app;
mod args;
mod child_lines;
mod config;
mod demo;
mod exit;
mod headless;
mod inspect;
mod mcp;
mod mentions;
mod prompt_files;
mod render;
mod repl;
mod report;
mod rewind;
mod serve;
mod trajectory;

use std::process::ExitCode;

use clap::Parser as _;

use crate::app::App;
use crate::args::{Cli, Command, McpCommand, SessionsCommand, TokenCommand, TrajectoryCommand};
use crate::exit::Exit;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are not errors; everything else clap refuses is a usage error.
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("seri: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(exit) => {
            eprintln!("seri: {}", exit.message());
            exit.code()
        }
    }
}

/// Diagnostics go to standard error, filtered by `SERI_LOG` (e.g. `debug`);
/// warnings and errors by default.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SERI_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).try_init();
}

async fn run(cli: Cli) -> Result<ExitCode, Exit> {
    if let Some(command) = cli.command {
        return subcommand(command, &cli.run).await;
    }
    let app = App::open(&cli.run)?;
    for line in &app.effective.overridden {
        eprintln!("seri: {line}");
    }
    let session = app.session_to_open(cli.continue_recent, cli.resume.as_deref())?;
    // MCP servers start with the session, before its prompt and tools are frozen.
    mcp::start(&app).await?;
    match cli.print {
        Some(text) => {
            let finished = headless::run(&app, session, &text, cli.output_format, cli.run_kind).await?;
            Ok(if finished { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        None => repl::run(&app, session, cli.resume.as_deref() == Some("")).await,
    }
}

async fn subcommand(command: Command, flags: &args::RunFlags) -> Result<ExitCode, Exit> {
    let output = match command {
        Command::Demo => return demo::run().await,
        Command::Sessions(sessions) => {
            let app = App::open(flags)?;
            match sessions {
                SessionsCommand::List { json } => inspect::list(&app, json)?,
                SessionsCommand::Show { id, json } => {
                    // The window of the model that last answered there, not
                    // of whatever model is configured today.
                    let store = app.store.agent(&app.agent);
                    let info = store.info(store.resolve_session(&id)?)?;
                    inspect::show(&app, &id, json, app.context_window_of(info.last_usage_model.as_ref()))?
                }
                SessionsCommand::Tree { id } => inspect::tree(&app, &id)?,
            }
        }
        Command::Thread { id, from, to, limit } => inspect::thread(&App::open(flags)?, &id, from, to, limit)?,
        Command::Config => {
            let app = App::open(flags)?;
            format!(
                "profile      {}\nconfig.json  {}\n\n{}",
                app.root().display(),
                app.profile.config_path().display(),
                config::render(&app.effective, app.context_window_of(None), &trajectory::config_rows(&app)?)
            )
        }
        Command::Trajectory(command) => {
            let app = App::open(flags)?;
            match command {
                TrajectoryCommand::Show { id, json } => trajectory::show(&app, &id, json)?,
                TrajectoryCommand::Diff { a, b } => trajectory::diff(&app, &a, &b)?,
            }
        }
        Command::Serve(args) => return serve::run(flags, &args).await,
        Command::Mcp(McpCommand::List { json }) => mcp::list(&App::open(flags)?, json).await?,
        Command::Mcp(McpCommand::Trust) => mcp::trust(&App::open(flags)?)?,
        Command::Token(TokenCommand::Create { agent }) => serve::create_token(&App::open(flags)?, &agent)?,
        Command::Import { dir } => {
            let app = App::open(flags)?;
            let dir = dir.unwrap_or_else(|| app.profile.legacy_sessions_dir());
            app.store.agent(&app.agent).import_legacy_sessions(&dir, &app.cwd_text())?.to_string()
        }
    };
    if !output.is_empty() {
        println!("{output}");
    }
    Ok(ExitCode::SUCCESS)
}
