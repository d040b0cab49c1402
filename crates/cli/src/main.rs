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

mod acp;
mod agents;
mod app;
mod args;
mod child_lines;
mod claude_setup;
mod codex_setup;
mod completion;
mod config;
mod ctrl_c;
mod demo;
mod exit;
mod headless;
mod import;
mod inspect;
mod keys;
mod live;
mod markdown;
mod mcp;
mod mentions;
mod permission_mode;
mod progress;
mod prompt_files;
#[cfg(test)]
mod reference;
mod render;
mod repl;
mod report;
mod rewind;
mod sandbox;
mod search;
mod serve;
mod server_window;
mod skills;
mod slash;
mod slash_search;
mod stdout;
mod storage;
mod tool_line;
mod trajectory;

use std::path::PathBuf;
use std::process::ExitCode;

use seri_store::Profile;

use crate::app::App;
use crate::args::{Cli, Command, McpCommand, SessionsCommand, StoreCommand, TokenCommand, TrajectoryCommand};
use crate::exit::Exit;

fn main() -> ExitCode {
    // seri re-executed as the launcher of a command (`bash`'s, an MCP
    // server's): never a command a person types.
    let mut raw = std::env::args_os();
    if raw.nth(1).is_some_and(|first| first == sandbox::LAUNCH_SUBCOMMAND) {
        return seri_tools::sandbox::launcher::main(raw);
    }
    // seri holds keys (in its environment, its memory): no other process
    // of this user may read them through /proc/<pid>/environ or mem, nor
    // attach a debugger. A sandboxed command, which has no capabilities,
    // cannot either, even when the person is root.
    if let Err(error) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        eprintln!("seri: cannot keep this process's memory from other processes: {error}");
        return ExitCode::from(1);
    }
    let cli = match args::parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are not errors; everything else clap refuses is a usage error.
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    if let Some(meant) = args::mistyped_subcommand(&cli) {
        let word = cli.prompt.as_deref().unwrap_or_default().trim();
        eprintln!(
            "seri: `{word}` is not a command; did you mean `seri {meant}`?\n\
             (To send it to the model as a message, start `seri` and type it.)"
        );
        return ExitCode::from(2);
    }
    init_tracing();
    // `seri serve` runs on more workers than cores: see `seri_server::runtime`.
    let runtime = if matches!(cli.command, Some(args::Command::Serve(_))) {
        seri_server::runtime()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    };
    let runtime = match runtime {
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

/// Diagnostics never reach the person's screen unasked. By default they go
/// to `logs/seri.log` in the profile, warnings and errors, without colour;
/// the file is started afresh (the old one kept as `seri.log.1`) once it
/// passes [`LOG_ROTATE_BYTES`]. With `SERI_LOG` set (`debug`, `seri=trace`)
/// they go to standard error at that level instead, coloured only on a
/// terminal and only without `NO_COLOR`.
fn init_tracing() {
    use std::io::IsTerminal as _;
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("SERI_LOG") {
        let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_target(false)
            .try_init();
        return;
    }
    let Some(file) = log_file() else { return };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .with_target(false)
        .try_init();
}

/// How large the log may grow before it is started afresh.
const LOG_ROTATE_BYTES: u64 = 4 * 1024 * 1024;

/// The profile's log file, opened for appending (rotated first when large);
/// `None` when it cannot be opened, and then nothing is logged.
fn log_file() -> Option<std::fs::File> {
    let dir = seri_store::Profile::from_env().ok()?.root().join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("seri.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let _ = std::fs::rename(&path, dir.join("seri.log.1"));
    }
    std::fs::OpenOptions::new().create(true).append(true).open(path).ok()
}

async fn run(cli: Cli) -> Result<ExitCode, Exit> {
    if let Some(command) = cli.command {
        return subcommand(command, &cli.run).await;
    }
    // A one-shot run in a new session asks git whether the tree is dirty
    // (for its prompt) while the profile opens, not after.
    let early_git = (cli.print.is_some() && !cli.continue_recent && cli.resume.is_none())
        .then(|| std::env::current_dir().ok().and_then(|cwd| prompt_files::GitStatus::start(&cwd)))
        .flatten();
    let app = App::open(&cli.run)?;
    app.keep_git_status(early_git);
    for line in &app.effective.overridden {
        eprintln!("seri: {line}");
    }
    app.tell_unenforced_sandbox();
    let session = app.session_to_open(cli.continue_recent, cli.resume.as_deref())?;
    // A session of another folder: said so, and asked (or refused, when
    // nobody can be asked) before anything starts.
    if let Some(id) = session {
        use std::io::IsTerminal as _;
        let mut ask = |question: &str| repl::ask_line(question);
        let ask: Option<app::Ask<'_>> = (cli.print.is_none() && std::io::stdin().is_terminal()).then_some(&mut ask);
        if !app.resume_here(id, cli.allow_other_folder, ask)? {
            println!("Not resumed.");
            return Ok(ExitCode::SUCCESS);
        }
    }
    // MCP servers start with the session, before its prompt and tools are frozen.
    mcp::start(&app).await?;
    match cli.print {
        Some(text) => {
            let ended = headless::run(&app, session, &text, cli.output_format, cli.run_kind).await?;
            Ok(match ended {
                headless::Ended::Interrupted => ExitCode::from(130),
                // A reader that stopped reading is not a failure of the task.
                headless::Ended::Succeeded => ExitCode::SUCCESS,
                headless::Ended::NotFinished if stdout::is_closed() => ExitCode::SUCCESS,
                headless::Ended::NotFinished => ExitCode::from(1),
            })
        }
        None => {
            let pick = cli.resume.as_deref() == Some("");
            repl::run(&app, session, pick, cli.prompt, cli.allow_other_folder).await
        }
    }
}

async fn subcommand(command: Command, flags: &args::RunFlags) -> Result<ExitCode, Exit> {
    let output = match command {
        Command::Demo => return demo::run().await,
        Command::Acp => return acp::run(flags).await,
        Command::Sessions(SessionsCommand::List { json }) => inspect::list(flags, json)?,
        Command::Sessions(SessionsCommand::Show { id, json }) => {
            let app = App::open(flags)?;
            // The window of the model that last answered there, not of
            // whatever model is configured today.
            let store = app.store.agent(&app.agent);
            let info = store.info(store.resolve_session(&id)?)?;
            inspect::show(&app, &id, json, app.context_window_of(info.last_usage_model.as_ref()))?
        }
        Command::Sessions(SessionsCommand::Tree { id }) => inspect::tree(&App::open(flags)?, &id)?,
        Command::Sessions(SessionsCommand::Recalls { id, json }) => {
            inspect::recalls(&App::open(flags)?, id.as_deref(), json)?
        }
        Command::Thread { id, from, to, limit } => inspect::thread(&App::open(flags)?, &id, from, to, limit)?,
        Command::Fork { target, json } => inspect::fork(&App::open(flags)?, &target, json)?,
        Command::Search(args) => search::run(&App::open(flags)?, &args)?,
        Command::Config => slash::config_text(&App::open(flags)?)?,
        Command::Trajectory(command) => {
            let app = App::open(flags)?;
            match command {
                TrajectoryCommand::Show { id, json } => trajectory::show(&app, &id, json)?,
                TrajectoryCommand::Diff { a, b } => trajectory::diff(&app, &a, &b)?,
            }
        }
        Command::Serve(args) => return serve::run(flags, &args).await,
        Command::Mcp(McpCommand::List { json }) => {
            let (listed, failed) = mcp::list(&App::open(flags)?, json).await?;
            if failed {
                stdout::line(&listed);
                return Ok(ExitCode::from(1));
            }
            listed
        }
        Command::Mcp(McpCommand::Trust) => mcp::trust(&App::open(flags)?)?,
        Command::Mcp(McpCommand::Add { name, url, env, command }) => {
            mcp::add(&Profile::from_env()?.config_path(), &name, url, &env, &command)?
        }
        Command::Mcp(McpCommand::Remove { name }) => mcp::remove(&Profile::from_env()?.config_path(), &name)?,
        Command::Token(TokenCommand::Create { agent }) => serve::create_token(&App::open(flags)?, &agent)?,
        Command::Store(StoreCommand::Migrate { to, from }) => migrate_store(&to, from)?,
        Command::Store(StoreCommand::Du { json }) => storage::du(&App::open(flags)?, json)?,
        Command::Store(StoreCommand::Prune { older_than, dry_run, json }) => {
            storage::prune(&App::open(flags)?, older_than, dry_run, json)?
        }
        Command::Store(StoreCommand::Check { json }) => return storage::check(&App::open(flags)?, json),
        Command::Sessions(SessionsCommand::Pin { id }) => storage::pin(&App::open(flags)?, &id, true)?,
        Command::Sessions(SessionsCommand::Unpin { id }) => storage::pin(&App::open(flags)?, &id, false)?,
        Command::Import { paths, from } => import::run(&App::open(flags)?, paths, from)?,
    };
    if !output.is_empty() {
        stdout::line(&output);
    }
    Ok(ExitCode::SUCCESS)
}

/// `seri store migrate --to URL`: copies the profile's SQLite store (or
/// `--from`) into the store `to` names, and says how to use it.
fn migrate_store(to: &str, from: Option<PathBuf>) -> Result<String, Exit> {
    let profile = Profile::from_env()?;
    let from = from.unwrap_or_else(|| profile.db_path());
    if !from.is_file() {
        return Err(Exit::usage(format!("no SQLite store at {} to copy from", from.display())));
    }
    let source = seri_store::Store::open(&from)?;
    let options = seri_store::StoreOptions { attachments_dir: Some(profile.attachments_dir()), ..Default::default() };
    let target = seri_store::Store::open_url(Some(to), &profile.db_path(), options)?;
    let report = source.copy_into(&target)?;
    let mut text = format!("copied {} into {}:\n{report}\n", from.display(), target.path().display());
    if target.is_postgres() {
        text.push_str(&format!(
            "attachments were copied with the rest: they live in the database, and {} is this \
             machine's cache of them (only files stored there before attachments moved into the \
             database stay files, needed on every machine that serves this store)\n\
             use it: set \"store\": {{\"url\": \"…\"}} in {}, or SERI_STORE_URL",
            profile.attachments_dir().display(),
            profile.config_path().display()
        ));
    }
    Ok(text)
}
