//! `seri import`: sessions from files and folders (searched recursively), or
//! from where another agent keeps them (`--from`), each file's format read
//! from its content; with nothing named, the profile's own older
//! `sessions/` folder, as every start imports it.
//!
//! What it prints: a line for each file (with its warnings when the file
//! was named), then a summary per format: files, sessions and events
//! imported, files already imported or failed, and the lines skipped,
//! counted by reason. A file named on the command line that held nothing
//! importable (or could not be read) makes the exit non-zero. While it
//! reads, a bar of the bytes read so far is drawn on standard error when
//! that is a terminal.

use std::collections::BTreeMap;
use std::path::PathBuf;

use seri_import::peers::Format;
use seri_import::peers::opencode_db::FILE_NAME;
use seri_import::{FileOutcome, FileReport, FolderCheck, LegacyImport as _};

use crate::app::App;
use crate::args::ImportFrom;
use crate::exit::Exit;
use crate::progress::Bar;
use crate::stdout;

/// Runs `seri import [PATH…] [--from AGENT]`; the text left to print.
pub(crate) fn run(app: &App, paths: Vec<PathBuf>, from: Option<ImportFrom>) -> Result<String, Exit> {
    let agent = app.store.agent(&app.agent);
    let cwd = app.cwd_text();
    let targets = match (from, paths.is_empty()) {
        (Some(from), _) => default_folders(from)?,
        (None, false) => paths,
        (None, true) => {
            let dir = app.profile.legacy_sessions_dir();
            let bar = Bar::new();
            let imported =
                agent.import_legacy_sessions_and_read(&dir, &cwd, FolderCheck::EveryFile, bar.tell(), |_| Ok(()));
            bar.done();
            let short = |id| crate::app::short_in(&agent, id);
            return Ok(imported?.0.naming(&short).to_string());
        }
    };
    if let Some(missing) = targets.iter().find(|path| !path.exists()) {
        return Err(Exit::usage(format!("no file or folder at {}", missing.display())));
    }
    let mut summary = Summary::default();
    let mut refused = Vec::new();
    for target in &targets {
        let named = !target.is_dir();
        let bar = Bar::new();
        let imported = seri_import::import_path_with_progress(&agent, target, &cwd, bar.tell());
        bar.done();
        let report = imported?;
        if report.files.is_empty() {
            stdout::line(&format!("no session files in {}", target.display()));
        }
        for file in &report.files {
            // Each session by the short id a person reads and `seri -r` takes.
            let short = |id| crate::app::short_in(&agent, id);
            stdout::line(&if named {
                file.naming(&short).to_string()
            } else {
                file.headline_naming(&short).to_string()
            });
            summary.add(file);
            if named && held_nothing(file) {
                refused.push(target.display().to_string());
            }
        }
    }
    stdout::line(&summary.to_string());
    if !refused.is_empty() {
        return Err(Exit::Failure(anyhow::anyhow!("nothing importable in {}", refused.join(", "))));
    }
    Ok(String::new())
}

/// Whether a file gave no session, this time or before.
fn held_nothing(file: &FileReport) -> bool {
    matches!(
        file.outcome,
        FileOutcome::NothingImportable
            | FileOutcome::Unreadable { .. }
            | FileOutcome::AlreadyImported { session_id: None }
    )
}

/// Where an agent keeps its sessions, by its own environment variable or
/// under HOME.
fn default_folders(from: ImportFrom) -> Result<Vec<PathBuf>, Exit> {
    let home = || std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let under = |variable: &str, default: &[&str], leaf: &str| match std::env::var_os(variable) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join(leaf),
        _ => default.iter().fold(home(), |path, part| path.join(part)).join(leaf),
    };
    let folder = match from {
        ImportFrom::ClaudeCode => under("CLAUDE_CONFIG_DIR", &[".claude"], "projects"),
        ImportFrom::Codex => under("CODEX_HOME", &[".codex"], "sessions"),
        ImportFrom::Pi => under("PI_CODING_AGENT_DIR", &[".pi", "agent"], "sessions"),
        ImportFrom::Opencode => {
            // One database of every session, where XDG puts data.
            let database = under("XDG_DATA_HOME", &[".local", "share"], "opencode").join(FILE_NAME);
            if !database.is_file() {
                return Err(Exit::usage(format!("no opencode sessions: no database at {}", database.display())));
            }
            return Ok(vec![database]);
        }
    };
    if !folder.is_dir() {
        return Err(Exit::usage(format!("no {} sessions: {} is not a folder", name(from), folder.display())));
    }
    // `codex archive` moves a session's file beside `sessions/`.
    let archived = folder.with_file_name("archived_sessions");
    if from == ImportFrom::Codex && archived.is_dir() {
        return Ok(vec![folder, archived]);
    }
    Ok(vec![folder])
}

fn name(from: ImportFrom) -> &'static str {
    match from {
        ImportFrom::ClaudeCode => "Claude Code",
        ImportFrom::Codex => "Codex",
        ImportFrom::Pi => "pi",
        ImportFrom::Opencode => "opencode",
    }
}

/// What the import did, per format.
#[derive(Default)]
struct Summary {
    formats: BTreeMap<Option<Format>, Tally>,
}

#[derive(Default)]
struct Tally {
    files: u64,
    sessions: u64,
    grown: u64,
    events: u64,
    already: u64,
    failed: u64,
    skipped: BTreeMap<String, u64>,
}

impl Summary {
    fn add(&mut self, file: &FileReport) {
        let tally = self.formats.entry(file.format).or_default();
        tally.files += 1;
        match &file.outcome {
            FileOutcome::Imported { events, .. } | FileOutcome::Reimported { events, .. } => {
                tally.sessions += 1;
                tally.events += events;
            }
            FileOutcome::Grew { events, .. } => {
                tally.grown += 1;
                tally.events += events;
            }
            FileOutcome::AlreadyImported { .. } => tally.already += 1,
            FileOutcome::NothingImportable | FileOutcome::Unreadable { .. } => tally.failed += 1,
        }
        for warning in file.warnings.iter().filter(|warning| warning.skipped) {
            *tally.skipped.entry(warning.problem.clone()).or_default() += warning.count;
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.formats.is_empty() {
            return f.write_str("nothing to import");
        }
        for (i, (format, tally)) in self.formats.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            let format = format.map_or("seri (older release)", Format::name);
            write!(
                f,
                "{format}: {}: {} imported, {} grown ({} events), {} already imported, {} failed",
                Count(tally.files, "file"),
                Count(tally.sessions, "session"),
                tally.grown,
                tally.events,
                tally.already,
                tally.failed
            )?;
            for (reason, count) in &tally.skipped {
                write!(f, "\n  skipped {count} × {reason}")?;
            }
        }
        Ok(())
    }
}

/// "1 file", "2 files".
struct Count(u64, &'static str);

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            1 => write!(f, "1 {}", self.1),
            n => write!(f, "{n} {}s", self.1),
        }
    }
}
