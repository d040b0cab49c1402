//! The command line, as clap parses it. Flags follow the design contract
//! exactly; see the README for each.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use seri_prompt::ContextStrategy;

/// Examples and the environment, after the flags in `seri --help`.
const AFTER_HELP: &str = "\
Examples:
  seri \"fix the failing test\"              an interactive session starting with that message
  cargo test 2>&1 | seri -p \"why?\"         one task, headless, with the piped output attached
  seri -c                                  back to the most recent session in this directory

Environment:
  SERI_HOME                 the profile root (default ~/.seri)
  SERI_PROVIDER, SERI_MODEL the provider and model (flags win, then these, then config.json)
  ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY   provider keys
  SERI_CONTEXT_STRATEGY, SERI_CONTEXT_WINDOW, SERI_KEEP_TOKENS, SERI_MAX_TURNS
  SERI_TEMPERATURE, SERI_TOP_P, SERI_MAX_OUTPUT_TOKENS, SERI_REASONING_EFFORT
  SERI_TRAJECTORY=0|1       turn run recording off or on
  SERI_REQUEST_LOG=FILE     append each model request, as JSON, to FILE
  SERI_SERVER_TOKEN         the local agent's token for `seri serve`
  SERI_LOG=debug            diagnostics on stderr (otherwise in the profile's logs/seri.log)
  NO_COLOR                  no colour";

/// seri: an agent session runtime that never loses history.
#[derive(Debug, Parser)]
#[command(name = "seri", version, about, disable_help_subcommand = true, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// Run one task headless and print the answer. `-` reads it from stdin.
    #[arg(short = 'p', long = "print", value_name = "TEXT")]
    pub(crate) print: Option<String>,

    /// Output of a headless run.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, requires = "print")]
    pub(crate) output_format: OutputFormat,

    /// Who sends a headless task: a person (interactive, the default), or
    /// automation (script: the message is a trigger's, and the run never
    /// continues the session or uses the coding tools).
    #[arg(long, value_enum, default_value_t = RunKindArg::Interactive, requires = "print")]
    pub(crate) run_kind: RunKindArg,

    /// Open the most recent session in this directory.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub(crate) continue_recent: bool,

    /// Open a session by id or unique id prefix (without ID in a terminal: pick one).
    #[arg(short = 'r', long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub(crate) resume: Option<String>,

    /// Resume a session started in another folder without asking (its
    /// tools work in that folder); without it, seri asks, and refuses when
    /// it cannot ask (`-p`, input not a terminal).
    #[arg(long)]
    pub(crate) allow_other_folder: bool,

    /// Start the interactive session with this first message (`seri "fix the build"`).
    #[arg(value_name = "PROMPT", conflicts_with = "print")]
    pub(crate) prompt: Option<String>,

    #[command(flatten)]
    pub(crate) run: RunFlags,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Parses the command line. The run flags are global (so `seri serve
/// --provider …` and `seri sessions show ID --context-window N` work), but
/// a subcommand's help lists only its own flags: help is drawn from a copy
/// of the command in which the run flags belong to the top level alone,
/// and to the subcommands that use them (`serve` all, `sessions show` its
/// window).
pub(crate) fn parse() -> Result<Cli, clap::Error> {
    use clap::Parser as _;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let asks_for_help = args.iter().skip(1).take_while(|a| *a != "--").any(|a| a == "--help" || a == "-h");
    if asks_for_help
        && let Err(e) = help_command().try_get_matches_from(&args)
        && e.kind() == clap::error::ErrorKind::DisplayHelp
    {
        return Err(e);
    }
    Cli::try_parse_from(args)
}

/// The subcommand a one-word first message most likely meant, when it is
/// a near miss of one (`seri sesions`): a single word within a small edit
/// distance of a subcommand's name is refused with a suggestion rather
/// than sent to the model. A task (`seri "fix the bug"`) is never one word.
pub(crate) fn mistyped_subcommand(cli: &Cli) -> Option<String> {
    use clap::CommandFactory as _;
    let word = cli.prompt.as_deref().filter(|_| cli.command.is_none())?.trim();
    let command = Cli::command();
    let names = command.get_subcommands().flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()));
    closest(word, names).map(str::to_owned)
}

/// The name in `names` within a small edit distance of `word` (one edit
/// for a name of up to seven letters, two for a longer one), the nearest
/// first; `None` when `word` has spaces or nothing is that close.
/// The name `word` most likely meant, for a typed slash command: a near
/// miss as [`closest`] finds one, or the name `word` is with two
/// neighbouring letters swapped (`/hlep`, the commonest slip of a short
/// word, which is two edits).
pub(crate) fn meant<'a>(word: &str, names: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    closest(word, names.clone()).or_else(|| {
        let word: Vec<char> = word.to_lowercase().chars().collect();
        names.into_iter().find(|name| {
            let name: Vec<char> = name.chars().collect();
            name.len() == word.len()
                && (0..word.len().saturating_sub(1)).any(|i| {
                    let mut swapped = word.clone();
                    swapped.swap(i, i + 1);
                    swapped == name && word != name
                })
        })
    })
}

fn closest<'a>(word: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    if word.is_empty() || word.contains(char::is_whitespace) {
        return None;
    }
    let word = word.to_lowercase();
    names
        .filter_map(|name| {
            let distance = edit_distance(&word, name);
            let allowed = if name.chars().count() >= 8 { 2 } else { 1 };
            (distance > 0 && distance <= allowed).then_some((distance, name))
        })
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance: insertions, deletions and substitutions, by char.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The command as help shows it: run flags on the top level and on the
/// subcommands that use them only.
pub(crate) fn help_command() -> clap::Command {
    use clap::CommandFactory as _;
    let run_flags: Vec<clap::Arg> =
        RunFlags::augment_args(clap::Command::new("run")).get_arguments().map(|a| a.clone().global(false)).collect();
    let ids: Vec<clap::Id> = run_flags.iter().map(|a| a.get_id().clone()).collect();
    let window: Vec<clap::Arg> = run_flags.iter().filter(|a| a.get_id() == "context_window").cloned().collect();
    Cli::command()
        .mut_args(|a| if ids.contains(a.get_id()) { a.global(false) } else { a })
        .mut_subcommand("serve", |serve| serve.args(run_flags.clone()))
        .mut_subcommand("sessions", |sessions| sessions.mut_subcommand("show", |show| show.args(window.clone())))
}

/// Flags that shape a run.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct RunFlags {
    /// Model provider: anthropic, openai, openrouter, ollama, openai-compatible, script.
    #[arg(long, global = true)]
    pub(crate) provider: Option<String>,

    /// Model id.
    #[arg(long, global = true)]
    pub(crate) model: Option<String>,

    /// Script file for `--provider script` (implies it).
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) script: Option<PathBuf>,

    /// How the working context is managed: continue (default) or compact.
    #[arg(long, value_enum, global = true)]
    pub(crate) context_strategy: Option<ContextStrategyArg>,

    /// Override the model's context window, in tokens.
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) context_window: Option<u64>,

    /// Model turns per task (default 500). Running out exits 1.
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_turns: Option<u32>,

    /// Sampling temperature, 0 to 2 (default: the provider's).
    #[arg(long, value_name = "T", global = true)]
    pub(crate) temperature: Option<f64>,

    /// Nucleus sampling, above 0 and at most 1 (default: the provider's).
    #[arg(long, value_name = "P", global = true)]
    pub(crate) top_p: Option<f64>,

    /// The most output tokens one response may take.
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_output_tokens: Option<u32>,

    /// How hard a reasoning model thinks: minimal, low, medium or high.
    #[arg(long, value_name = "EFFORT", global = true)]
    pub(crate) reasoning_effort: Option<String>,

    /// Allow a tool, or commands matching `Bash(PATTERN)`, without asking (repeatable).
    #[arg(long, value_name = "TOOL", global = true)]
    pub(crate) allow: Vec<String>,

    /// Never let a tool, or commands matching `Bash(PATTERN)`, run (repeatable).
    #[arg(long, value_name = "TOOL", global = true)]
    pub(crate) deny: Vec<String>,

    /// How much tools may do without asking: default, accept-edits, plan
    /// (reading tools only) or bypass (nothing asks).
    #[arg(long, value_name = "MODE", global = true)]
    pub(crate) permission_mode: Option<String>,

    /// Trust this run: answer yes to every question (never overrides --deny).
    #[arg(long, global = true)]
    pub(crate) yes: bool,

    /// When another run holds the session, fail at once naming it instead
    /// of waiting for it to finish.
    #[arg(long, global = true)]
    pub(crate) no_wait: bool,

    /// What bash may touch: read-only, workspace-write (default) or full-access.
    #[arg(long, value_name = "MODE", global = true)]
    pub(crate) sandbox: Option<String>,
}

/// `--context-strategy` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ContextStrategyArg {
    /// Continue into a successor session.
    Continue,
    /// Compact the oldest context into a recap.
    Compact,
}

impl From<ContextStrategyArg> for ContextStrategy {
    fn from(arg: ContextStrategyArg) -> Self {
        match arg {
            ContextStrategyArg::Continue => ContextStrategy::Continue,
            ContextStrategyArg::Compact => ContextStrategy::Compact,
        }
    }
}

/// `seri import --from` values: the agents whose sessions seri reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ImportFrom {
    /// Claude Code: `~/.claude/projects` (or `$CLAUDE_CONFIG_DIR/projects`).
    ClaudeCode,
    /// Codex: `~/.codex/sessions` and `archived_sessions` (or under `$CODEX_HOME`).
    Codex,
    /// pi: `~/.pi/agent/sessions` (or `$PI_CODING_AGENT_DIR/sessions`).
    Pi,
    /// opencode: its database (`$XDG_DATA_HOME/opencode/opencode.db`, by default under `~/.local/share`).
    Opencode,
}

/// `--run-kind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunKindArg {
    /// A person's task.
    Interactive,
    /// Automation's task: a script run.
    Script,
}

/// `--output-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// The answer text.
    Text,
    /// One JSON object at the end.
    Json,
    /// One JSON event per line as the run proceeds.
    StreamJson,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Sessions: `list`, `show`, `tree`, `pin`/`unpin`, `recalls`.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Print a session's transcript as `[seq] who: text` lines.
    Thread {
        /// Session id or unique prefix.
        id: String,
        /// First seq to print.
        #[arg(long)]
        from: Option<u64>,
        /// Last seq to print.
        #[arg(long)]
        to: Option<u64>,
        /// Most lines to print.
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Branch a session at an earlier point: `seri fork ID[@SEQ]` makes a
    /// new session that shares ID's events up to SEQ (default: those before
    /// its last message of yours, to send another in its place) without
    /// copying them, and prints the new id alone; `seri -r` it to go on.
    Fork {
        /// Session id or unique prefix, optionally `@SEQ`.
        #[arg(value_name = "ID[@SEQ]")]
        target: String,
        /// Print the fork's `SessionInfo` as JSON instead of its id.
        #[arg(long)]
        json: bool,
    },
    /// Search everything said in every session: messages, thinking, tool
    /// calls and results, titles, recaps and handoffs. `"a phrase"`,
    /// `prefix*`, `AND`, `OR`, `NOT` (or `-word`) and parentheses; this
    /// folder's sessions first.
    Search(SearchArgs),
    /// Show the effective configuration and where each value came from.
    Config,
    /// A self-contained tour on a temporary profile: no key, no network.
    Demo,
    /// Serve the Agent Client Protocol on standard input and output, for
    /// editors (Zed, JetBrains IDEs, Neovim): `seri acp` is the command
    /// the editor starts.
    Acp,
    /// Read recorded runs: `show ID [--json]`, `diff A B`.
    #[command(subcommand)]
    Trajectory(TrajectoryCommand),
    /// Import sessions: an older release's `.jsonl` files (default: the
    /// profile's `sessions/`), or another agent's (Claude Code, Codex, pi,
    /// opencode's database or an export), each file's format read from its content.
    Import {
        /// Files, and folders searched recursively.
        paths: Vec<PathBuf>,
        /// Import that agent's sessions from where it keeps them.
        #[arg(long, value_enum, conflicts_with = "paths")]
        from: Option<ImportFrom>,
    },
    /// Serve the HTTP and WebSocket API (and the web UI) on this profile.
    Serve(ServeArgs),
    /// Server tokens: `create [--agent NAME]`.
    #[command(subcommand)]
    Token(TokenCommand),
    /// The store itself: `du`, `prune`, `check`, `migrate --to postgres://…`.
    #[command(subcommand)]
    Store(StoreCommand),
    /// MCP servers: `list [--json]`, `add NAME -- COMMAND…` or `add NAME --url URL`, `remove NAME`, `trust`.
    #[command(subcommand)]
    Mcp(McpCommand),
}

/// `seri search …` (and `/search` in the REPL).
#[derive(Debug, PartialEq, Eq, Args)]
pub(crate) struct SearchArgs {
    /// What to find (several words are one query).
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub(crate) query: Vec<String>,
    /// Print `{"hits": [...]}`, best first.
    #[arg(long)]
    pub(crate) json: bool,
    /// Most hits to show (default 20, at most 200).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=200))]
    pub(crate) limit: Option<u64>,
    /// Only this folder's sessions.
    #[arg(long, conflicts_with = "all")]
    pub(crate) here: bool,
    /// Every folder's sessions alike (default: this folder's first).
    #[arg(long)]
    pub(crate) all: bool,
    /// Only what was written since DATE: `2026-11-30`, an RFC 3339 UTC
    /// time, or an age (`12h`, `7d`, `2w`).
    #[arg(long, value_name = "DATE")]
    pub(crate) since: Option<String>,
}

/// `seri mcp …`.
#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Start each configured server and show its state and tools.
    List {
        /// One JSON document instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Let this project's own files apply, as they are now: its servers (.mcp.json), its settings
    /// (.seri/config.json), Claude Code's settings (.claude/settings.json, settings.local.json),
    /// and its skills, subagents and slash commands.
    Trust,
    /// Add a server to the profile's config.json: `seri mcp add NAME -- COMMAND [ARGS…]`
    /// or `seri mcp add NAME --url URL`.
    Add {
        /// The server's name (its tools become mcp__NAME__TOOL).
        name: String,
        /// A streamable HTTP server's URL, instead of a command.
        #[arg(long)]
        url: Option<String>,
        /// An environment variable for a command's server, KEY=VALUE (repeatable).
        #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// The command that starts the server, and its arguments.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove a server from the profile's config.json.
    Remove {
        /// The server's name.
        name: String,
    },
}

/// `seri serve …`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on. Anything but a loopback address needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) host: String,
    /// The port (0: any free one; the URL printed and server.json say which).
    #[arg(long, default_value_t = 4317)]
    pub(crate) port: u16,
    /// Listen on a non-loopback address: anyone who can reach it and holds a token can run tools here.
    #[arg(long)]
    pub(crate) allow_remote: bool,
    /// Another name clients reach this server by, as they send it in `Host`
    /// (NAME or NAME:PORT), such as a load balancer's in front of it;
    /// repeatable. Besides these, a request's `Host` must name the server
    /// itself (localhost, 127.0.0.1 or `[::1]` with its port); on a
    /// non-loopback address, without any, every `Host` is accepted.
    #[arg(long = "host-name", value_name = "NAME", value_parser = parse_host_name)]
    pub(crate) host_names: Vec<String>,
    /// Seconds a tool's question waits for an answer before it counts as a no.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) approval_timeout: u64,
    /// Seconds this server's claim on a run it runs lasts unless renewed:
    /// after a server stops (killed, its machine lost), another server on
    /// the same database takes its runs over once their claims lapse.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) run_lease: u64,
    /// Another folder (besides the one `seri serve` starts in) whose
    /// sessions this server runs; repeatable. A session recorded in any
    /// other folder (by an import, or an API client's `cwd`) is refused.
    #[arg(long = "folder", value_name = "DIR")]
    pub(crate) folders: Vec<PathBuf>,
    /// How many connections one address (a client's IP) may hold open
    /// before any of them has presented a valid token; past it, new ones
    /// from that address are answered 429 and closed at once. Behind a
    /// load balancer every client has the balancer's address: raise it
    /// there (up to --max-connections).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub(crate) max_unauthenticated_per_client: u64,
    /// How many connections (WebSockets included) are served at once;
    /// past it a new one is answered 503 with Retry-After. Default:
    /// `serve.maxConnections` of config.json, else what the descriptor
    /// limit leaves room for.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub(crate) max_connections: Option<u64>,
}

/// A `--host-name`: a name as a client sends it in `Host`, with or without
/// a port (an IPv6 address in brackets), never a URL.
fn parse_host_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("a host name cannot be empty".to_owned());
    }
    if name.contains("://") || name.contains('/') {
        return Err(format!(
            "`{name}` is a URL, not a host name: give the name as clients send it in `Host`, \
             such as seri.example.com or 127.0.0.1:8080"
        ));
    }
    if let Some(bad) = name.chars().find(|c| c.is_whitespace() || c.is_control() || matches!(c, '@' | ',' | '?' | '#'))
    {
        return Err(format!("`{name}` is not a host name: it holds {bad:?}"));
    }
    let port = match name.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((_, "")) => None,
            Some((_, after)) => Some(
                after
                    .strip_prefix(':')
                    .ok_or_else(|| format!("`{name}`: after an IPv6 address in brackets only `:PORT` may follow"))?,
            ),
            None => return Err(format!("`{name}`: an IPv6 address in brackets needs its closing `]`")),
        },
        None if name.matches(':').count() > 1 => {
            return Err(format!("`{name}`: an IPv6 address goes in brackets, such as [::1]:8080"));
        }
        None => name.split_once(':').map(|(_, port)| port),
    };
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return Err(format!("`{name}`: the port after `:` must be a number from 1 to 65535, not `{port}`"));
    }
    Ok(name.to_owned())
}

/// `seri token …`.
#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a token for an agent (default: the local one) and print it once; only its hash is kept.
    Create {
        /// The agent the token speaks for: letters, digits, `-`, `_`, `.`.
        #[arg(long, default_value = "local")]
        agent: String,
    },
}

/// `seri store …`.
#[derive(Debug, Subcommand)]
pub(crate) enum StoreCommand {
    /// Copy this profile's SQLite history into another store (a PostgreSQL
    /// database): all of it in one transaction, verified by counts and a
    /// re-fold of every session; running it again copies only what is new.
    Migrate {
        /// The store to copy into: `postgres://user:password@host:port/db`
        /// (or `sqlite:PATH`).
        #[arg(long, value_name = "URL")]
        to: String,
        /// The SQLite file to copy from (default: the profile's seri.db).
        #[arg(long, value_name = "PATH")]
        from: Option<std::path::PathBuf>,
    },
    /// What the store holds: per agent, folder and lineage, split into
    /// events, attachments and trajectories, and the database's own size
    /// and the space it could give back.
    Du {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove whole lineages older than DAYS (or as `retention` in
    /// config.json says); pinned sessions, sessions in use and history a
    /// kept fork shares stay. Nothing is pruned without one of the two.
    Prune {
        /// Lineages whose newest session last changed more than DAYS ago go.
        #[arg(long, value_name = "DAYS")]
        older_than: Option<u32>,
        /// List what would go and what it frees; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the store: every session has its events, every edge and fork
    /// resolves, the cached columns are the fold of the events. Exit 1 on
    /// any mismatch.
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `seri sessions …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// Sessions, most recent first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One session's details.
    Show {
        /// Session id or unique prefix.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The lineage around a session (continuations and forks), as a tree.
    Tree {
        /// Session id or unique prefix.
        id: String,
    },
    /// Keep a session (and its lineage) whatever retention says.
    Pin {
        /// Session id or unique prefix.
        id: String,
    },
    /// Let retention prune a pinned session again.
    Unpin {
        /// Session id or unique prefix.
        id: String,
    },
    /// How often successors read back what their projection left out,
    /// per continuation and across the profile (or for one session's
    /// continuations, into and out of it): data to tune budgets by.
    Recalls {
        /// Session id or unique prefix (default: every continuation).
        id: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `seri trajectory …`.
#[derive(Debug, Subcommand)]
pub(crate) enum TrajectoryCommand {
    /// A run's trajectory (header and records), or every trajectory of a session.
    Show {
        /// Run id, session id, or a unique prefix of either.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Where two runs differ: the header in force and the outcome.
    Diff {
        /// A run id (or unique prefix).
        a: String,
        /// Another run id (or unique prefix).
        b: String,
    },
}

#[cfg(test)]
mod suggestion_tests {
    use super::*;

    const NAMES: [&str; 6] = ["sessions", "thread", "fork", "config", "serve", "mcp"];

    #[test]
    fn a_near_miss_of_a_subcommand_is_suggested() {
        let near = |word| closest(word, NAMES.into_iter());
        assert_eq!(near("sesions"), Some("sessions"));
        assert_eq!(near("sessoins"), Some("sessions"), "a swap is two edits, allowed for a long name");
        assert_eq!(near("Sessions"), None, "the same name is no near miss: clap took it already");
        assert_eq!(near("thred"), Some("thread"));
        assert_eq!(near("confg"), Some("config"));
        assert_eq!(near("mpc"), None, "two edits is too many for a short name");
    }

    #[test]
    fn a_task_or_a_far_word_is_not_refused() {
        let near = |word| closest(word, NAMES.into_iter());
        assert_eq!(near("fix the bug"), None);
        assert_eq!(near("sesions please"), None);
        assert_eq!(near("hello"), None);
        assert_eq!(near("refactor"), None);
        assert_eq!(near(""), None);
    }

    #[test]
    fn a_typed_command_with_two_letters_swapped_is_meant_as_the_command() {
        let commands = ["help", "exit", "model", "mcp"];
        assert_eq!(meant("hlep", commands.into_iter()), Some("help"));
        assert_eq!(meant("mdoel", commands.into_iter()), Some("model"));
        assert_eq!(meant("exti", commands.into_iter()), Some("exit"));
        assert_eq!(meant("modle", commands.into_iter()), Some("model"));
        assert_eq!(meant("nonsense", commands.into_iter()), None);
        assert_eq!(meant("help", commands.into_iter()), None, "the name itself is no slip");
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("sesions", "sessions"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "mcp"), 3);
        assert_eq!(edit_distance("fork", "fork"), 0);
    }
}

#[cfg(test)]
mod help_tests {
    use clap::CommandFactory as _;

    use super::*;

    /// A group's one-line help lists its subcommands (`seri mcp: list,
    /// add, remove, trust`): one added without its word there is a help
    /// line that lies by omission.
    #[test]
    fn a_command_groups_help_line_names_each_of_its_subcommands() {
        let cli = Cli::command();
        let mut missing = Vec::new();
        for group in cli.get_subcommands().filter(|c| c.has_subcommands()) {
            let about = group.get_about().map(ToString::to_string).unwrap_or_default();
            for sub in group.get_subcommands().filter(|s| s.get_name() != "help") {
                if !about.contains(&format!("`{}", sub.get_name())) {
                    missing.push(format!("seri {} {}: not in \"{about}\"", group.get_name(), sub.get_name()));
                }
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
