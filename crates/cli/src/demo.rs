//! `seri demo`: a self-contained tour on a fresh temporary profile, with
//! bundled scripts for the model (no key, no network). A session that
//! continues into a successor, a session that compacts, then the lineage
//! tree. Everything runs through the same runtime `seri` uses.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use seri_core::{AgentId, FrozenPrompt, Message, SessionId};
use seri_prompt::{ContextStrategy, SystemPrompt};
use seri_providers::{ProviderKind, Settings, build_provider};
use seri_runloop::{Runtime, RuntimeParts, RuntimeSettings};
use seri_store::{Profile, Store};
use seri_tools::{PermissionPolicy, Permissions, ToolRegistry};

use crate::exit::Exit;
use crate::headless;
use crate::inspect;
use crate::render::{Style, Terminal};

const CONTINUE_SCRIPT: &str = include_str!("../demo/continue.json");
const COMPACT_SCRIPT: &str = include_str!("../demo/compact.json");
const NOTES: &str = include_str!("../demo/notes.md");

/// The demo profile: a temporary folder removed when the demo ends.
struct TempProfile {
    root: PathBuf,
}

impl TempProfile {
    fn create() -> Result<Self, Exit> {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let root = std::env::temp_dir().join(format!("seri-demo-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
        Ok(Self { root })
    }
}

impl Drop for TempProfile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Runs the tour and prints it.
pub(crate) async fn run() -> Result<ExitCode, Exit> {
    let temp = TempProfile::create()?;
    let profile = Profile::at(temp.root.join("profile"));
    profile.create()?;
    let store = Arc::new(profile.open_store()?);
    let style = Style::detect();
    let cwd = temp.root.join("work");
    std::fs::create_dir_all(&cwd).with_context(|| format!("cannot create {}", cwd.display()))?;
    println!("seri demo: a temporary profile at {} (removed when the demo ends)", profile.root().display());
    println!("The model is a bundled script: no key, no network.\n");

    heading(style, "1. A session that continues into a successor (--context-strategy continue)");
    let runtime =
        demo_runtime(&store, &profile, &temp.root, "continue.json", CONTINUE_SCRIPT, ContextStrategy::Continue, None)?;
    let first = new_session(&runtime, &cwd, ContextStrategy::Continue)?;
    say(&runtime, style, first, "Let's design the database schema for a todo app.").await?;
    say(&runtime, style, first, "Different topic: write me a haiku about autumn.").await?;

    heading(style, "2. A session that compacts (--context-strategy compact, a 4,000-token window)");
    let runtime = demo_runtime(
        &store,
        &profile,
        &temp.root,
        "compact.json",
        COMPACT_SCRIPT,
        ContextStrategy::Compact,
        Some(4_000),
    )?;
    let second = new_session(&runtime, &cwd, ContextStrategy::Compact)?;
    let notes = cwd.join("notes.md");
    std::fs::write(&notes, NOTES).with_context(|| format!("cannot write {}", notes.display()))?;
    for line in [
        "Hi! I have a project I would like to review with you.",
        "Read the notes in notes.md and tell me what the project is about.",
        "Summarise the open questions from those notes.",
        "Which question should we answer first?",
    ] {
        say(&runtime, style, second, line).await?;
    }
    println!("{}", style.dim("The oldest messages were replaced by one recap; every event is still in seri.db:"));
    let app_view = View { store: &store };
    println!("{}\n", app_view.thread(second)?);

    heading(style, "3. The lineage of the first session");
    println!("{}\n", app_view.tree(first)?);
    println!(
        "Try it for real: `seri` (set ANTHROPIC_API_KEY or OPENAI_API_KEY), or `seri --provider script --script FILE`."
    );
    Ok(ExitCode::SUCCESS)
}

fn heading(style: Style, text: &str) {
    println!("{}", style.amber(&format!("── {text}")));
}

/// Sends one message and streams the answer like the REPL does.
async fn say(runtime: &Runtime, style: Style, session: SessionId, text: &str) -> Result<(), Exit> {
    println!("› {text}");
    let terminal = Terminal::new(style);
    let report = headless::send(runtime, session, Message::user(text), runtime.settings().max_turns, &terminal).await?;
    terminal.finish();
    if !report.succeeded() {
        return Err(Exit::Failure(anyhow::anyhow!(
            "the demo run ended {}: {}",
            report.status,
            report.error.unwrap_or_default()
        )));
    }
    println!();
    Ok(())
}

fn new_session(runtime: &Runtime, cwd: &Path, strategy: ContextStrategy) -> Result<SessionId, Exit> {
    let prompt: FrozenPrompt = SystemPrompt::builder(strategy).build().freeze();
    Ok(runtime.create_session(&cwd.to_string_lossy(), prompt)?.id)
}

#[allow(clippy::too_many_arguments)]
fn demo_runtime(
    store: &Arc<Store>,
    profile: &Profile,
    temp: &Path,
    name: &str,
    script: &str,
    strategy: ContextStrategy,
    window: Option<u64>,
) -> Result<Runtime, Exit> {
    let path = temp.join(name);
    std::fs::write(&path, script).with_context(|| format!("cannot write {}", path.display()))?;
    let settings = Settings { script: Some(path), ..Settings::default() };
    let provider = build_provider(ProviderKind::Script, "", &settings, &|_| None).map_err(Exit::usage)?;
    Ok(Runtime::new(RuntimeParts {
        store: store.clone(),
        agent: AgentId::local(),
        provider,
        tools: ToolRegistry::with_coding_tools(),
        memory_dir: profile.memory_dir(),
        permissions: Permissions::headless(PermissionPolicy::new()),
        settings: RuntimeSettings {
            strategy,
            context_window: window.and_then(std::num::NonZeroU64::new),
            ..RuntimeSettings::default()
        },
        session_prompts: None,
    }))
}

/// Read-only views for the tour.
struct View<'a> {
    store: &'a Arc<Store>,
}

impl View<'_> {
    /// The transcript, one line per event (`seri thread` prints them whole).
    fn thread(&self, session: SessionId) -> Result<String, Exit> {
        let events = self.store.agent(&AgentId::local()).events(session, seri_store::SeqRange::ALL)?;
        let lines: Vec<String> = events
            .iter()
            .map(|event| {
                let text = seri_projection::transcript_event_line(event);
                let first: String = text.lines().next().unwrap_or("").chars().take(110).collect();
                if first.len() < text.trim_end().len() { format!("{first} …") } else { first }
            })
            .collect();
        Ok(lines.join("\n"))
    }

    fn tree(&self, session: SessionId) -> Result<String, Exit> {
        inspect::tree_of(self.store, &AgentId::local(), session)
    }
}
