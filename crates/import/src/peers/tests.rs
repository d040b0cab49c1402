//! The readers on the files the peers wrote themselves
//! (`tests/fixtures/peers/`, recorded by `cargo xtask peers`): one
//! snapshot of each file as read, and properties over any bytes.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("peers")
}

/// Every file below `dir`, sorted.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The session Claude Code's recording names (`--session-id`); its fork
/// has an id of Claude Code's choosing.
const CLAUDE_SESSION: &str = "5e551011-0000-4000-8000-000000000001";

/// The two sessions `cargo xtask peers` records of `format`, the session
/// and its fork, told apart by what they say of themselves rather than by
/// their names, which change with every recording.
fn recording(format: Format) -> (Vec<u8>, Vec<u8>) {
    let mut session = None;
    let mut fork = None;
    for path in files_below(&fixtures()) {
        let relative = path.strip_prefix(fixtures()).unwrap().to_string_lossy().into_owned();
        if !relative.starts_with(&format!("{}-", format.name()))
            || relative.ends_with(".md")
            || opencode_db::is_database(&path)
        {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let read = parse(format, &bytes).unwrap();
        let is_fork = read.forked_from.is_some()
            || read.title.as_deref().is_some_and(|title| title.contains("(fork"))
            || (format == Format::ClaudeCode && read.id.as_deref() != Some(CLAUDE_SESSION));
        let slot = if is_fork { &mut fork } else { &mut session };
        assert!(slot.replace(bytes).is_none(), "two of a kind in {format}: {relative}");
    }
    (session.unwrap(), fork.unwrap())
}

/// An id short enough to read: a UUID's first 8 characters, another long
/// id's last 8, and any `.n` suffix.
fn short(id: &str) -> String {
    let (base, suffix) = match id.split_once('.') {
        Some((base, suffix)) => (base, format!(".{suffix}")),
        None => (id, String::new()),
    };
    let base = match base.len() {
        0..=12 => base.to_owned(),
        _ if base.contains('-') => base[..8].to_owned(),
        n => base[n - 8..].to_owned(),
    };
    format!("{base}{suffix}")
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(72).collect();
    let more = if clipped.len() < text.len() { "…" } else { "" };
    format!("{:?}{more}", clipped)
}

/// A session as the snapshots show it: its facts, one entry a line
/// (`id <- parent  Lline  kind detail`), the skips counted by reason, and
/// the main branch.
fn render(session: &PeerSession) -> String {
    let mut out = String::new();
    let or_none = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".to_owned());
    out.push_str(&format!("format: {}\n", session.format));
    out.push_str(&format!("id: {}\n", or_none(&session.id)));
    out.push_str(&format!("cwd: {}\n", or_none(&session.cwd)));
    out.push_str(&format!("model: {} ({})\n", or_none(&session.model), or_none(&session.provider)));
    let created = session.created_at.map(|at| at.to_string());
    out.push_str(&format!("created: {}\n", or_none(&created)));
    out.push_str(&format!("title: {}\n", or_none(&session.title)));
    out.push_str(&format!("peer version: {}\n", or_none(&session.peer_version)));
    if let Some(fork) = &session.forked_from {
        out.push_str(&format!("forked from: {} before {}\n", fork.session, or_none(&fork.before)));
    }
    if session.copies_unnamed_source {
        out.push_str("forked from: a session it does not name (its first entries are copies)\n");
    }
    out.push_str("entries:\n");
    for entry in &session.entries {
        let parent = entry.parent.as_deref().map(short).unwrap_or_else(|| "root".to_owned());
        let detail = match &entry.kind {
            EntryKind::UserText { text } | EntryKind::AssistantText { text } | EntryKind::Thinking { text, .. } => {
                clip(text)
            }
            EntryKind::ToolCall { call_id, name, arguments } => format!("{call_id} {name} {arguments}"),
            EntryKind::ToolResult { call_id, name, text, is_error } => {
                format!("{call_id} {} {}{}", or_none(name), clip(text), if *is_error { " (error)" } else { "" })
            }
            EntryKind::Compaction { summary, first_kept, read_files, modified_files } => format!(
                "{} first kept {} read {read_files:?} modified {modified_files:?}",
                clip(summary),
                first_kept.as_deref().map(short).unwrap_or_else(|| "-".to_owned())
            ),
            EntryKind::BranchSummary { summary, from } => {
                format!("{} from {}", clip(summary), from.as_deref().map(short).unwrap_or_else(|| "-".to_owned()))
            }
            EntryKind::ModelChange { provider, model } => format!("{} {model}", or_none(provider)),
            EntryKind::Skipped { reason } => reason.clone(),
        };
        out.push_str(&format!(
            "  {} <- {}  L{}  {} {detail}\n",
            short(&entry.id),
            parent,
            entry.line,
            entry.kind.name()
        ));
    }
    out.push_str("skipped lines:\n");
    let mut counts = std::collections::BTreeMap::new();
    for skip in &session.skipped {
        *counts.entry(skip.reason.as_str()).or_insert(0) += 1;
    }
    for (reason, count) in counts {
        out.push_str(&format!("  {count} × {reason}\n"));
    }
    let main: Vec<String> = session.main_branch().iter().map(|entry| short(&entry.id)).collect();
    out.push_str(&format!("main branch: {}\n", main.join(" ")));
    out
}

/// Reads `bytes`, checks that [`detect`] names `format` and that the tree
/// keeps its promises, and compares what was read with the snapshot `name`.
#[track_caller]
fn check(name: &str, format: Format, bytes: &[u8]) {
    assert_eq!(detect(bytes), Some(format), "{name}");
    let session = parse(format, bytes).unwrap();
    assert_tree(&session);
    insta::assert_snapshot!(name, render(&session));
}

/// Ids are unique, and every parent is an earlier entry.
#[track_caller]
fn assert_tree(session: &PeerSession) {
    let mut seen = std::collections::HashSet::new();
    for entry in &session.entries {
        if let Some(parent) = &entry.parent {
            assert!(seen.contains(parent.as_str()), "{} names {parent}, not an earlier entry", entry.id);
        }
        assert!(seen.insert(entry.id.as_str()), "{} twice", entry.id);
    }
    let main = session.main_branch();
    for pair in main.windows(2) {
        assert_eq!(pair[1].parent.as_deref(), Some(pair[0].id.as_str()));
    }
}

#[test]
fn claude_code_session_with_a_branch_and_a_compaction() {
    check("claude_code_session", Format::ClaudeCode, &recording(Format::ClaudeCode).0);
}

#[test]
fn claude_code_fork() {
    check("claude_code_fork", Format::ClaudeCode, &recording(Format::ClaudeCode).1);
}

#[test]
fn codex_session_with_a_compaction() {
    check("codex_session", Format::Codex, &recording(Format::Codex).0);
}

#[test]
fn codex_fork() {
    check("codex_fork", Format::Codex, &recording(Format::Codex).1);
}

#[test]
fn pi_session_with_a_branch_and_a_compaction() {
    check("pi_session", Format::Pi, &recording(Format::Pi).0);
}

#[test]
fn pi_fork() {
    check("pi_fork", Format::Pi, &recording(Format::Pi).1);
}

#[test]
fn opencode_session_with_a_compaction() {
    check("opencode_session", Format::Opencode, &recording(Format::Opencode).0);
}

#[test]
fn opencode_fork() {
    check("opencode_fork", Format::Opencode, &recording(Format::Opencode).1);
}

/// opencode's database, as it recorded it, holds each session as its own
/// export of it reads: the same session, entry for entry.
#[test]
fn opencode_database_sessions_read_as_their_exports() {
    let files = files_below(&fixtures());
    let recorded = files.iter().find(|path| opencode_db::is_database(path)).expect("the recorded database");
    // A copy: reading a database in WAL mode, even read-only, makes its
    // `-shm` and `-wal` beside it, as opencode's own would have.
    let dir = std::env::temp_dir().join(format!("seri-opencode-db-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let database = dir.join(opencode_db::FILE_NAME);
    std::fs::copy(recorded, &database).unwrap();
    let sessions = opencode_db::read(&database).unwrap();
    assert_eq!(sessions.len(), 2, "the session and its fork");
    for session in &sessions {
        let export = files
            .iter()
            .find(|path| path.file_name().is_some_and(|name| *name == *format!("{}.json", session.id)))
            .unwrap_or_else(|| panic!("no export of {}", session.id));
        let from_export = parse(Format::Opencode, &std::fs::read(export).unwrap()).unwrap();
        assert_eq!(detect(&session.document), Some(Format::Opencode));
        let from_database = parse(Format::Opencode, &session.document).unwrap();
        assert_eq!(from_database, from_export, "{}", session.id);
        assert!(!from_database.entries.is_empty());
    }
    // Read-only: the reader left the database as it was.
    assert_eq!(std::fs::read(&database).unwrap(), std::fs::read(recorded).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn opencode_database_that_is_not_one_is_a_precise_error() {
    let dir = std::env::temp_dir().join(format!("seri-opencode-db-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(opencode_db::FILE_NAME);
    std::fs::write(&path, b"not a database at all, but long enough to look at its header............").unwrap();
    let error = opencode_db::read(&path).unwrap_err();
    assert!(matches!(error, opencode_db::DbError::Sqlite { .. }), "{error}");
    assert!(error.to_string().contains("opencode.db"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The recorded session with every line a subagent's, as Claude Code
/// writes a subagent's own file, and with one line made a subagent's.
#[test]
fn claude_code_subagent_lines_are_read_only_in_a_subagent_file() {
    let (bytes, _) = recording(Format::ClaudeCode);
    let lines: Vec<serde_json::Value> =
        bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    let marked = |mark: &dyn Fn(usize) -> bool| -> Vec<u8> {
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let mut line = line.clone();
            if line.get("isSidechain").is_some() && mark(i) {
                line["isSidechain"] = serde_json::Value::Bool(true);
            }
            out.extend_from_slice(line.to_string().as_bytes());
            out.push(b'\n');
        }
        out
    };
    let kinds = |bytes: &[u8]| -> Vec<&'static str> {
        parse(Format::ClaudeCode, bytes).unwrap().entries.iter().map(|e| e.kind.name()).collect()
    };
    let whole = kinds(&bytes);
    assert_eq!(kinds(&marked(&|_| true)), whole, "a subagent's own file reads as a conversation");
    // Line 3 is the first prompt: made a subagent's, it holds nothing.
    let one = kinds(&marked(&|i| i == 2));
    assert_eq!((one[0], &one[1..]), ("skipped", &whole[1..]));
}

#[test]
fn seri_legacy_files_and_other_text_are_no_peers() {
    for bytes in [
        &br#"{"type":"session","id":"a41f","cwd":"/repo","createdAt":"2025-03-01T09:30:00Z"}"#[..],
        b"{\"type\":\"session\",\"id\":\"a\",\"timestamp\":\"2025-03-01T09:30:00Z\"}\n{\"role\":\"user\",\"content\":\"hi\"}",
        br#"{"role":"user","content":"hi"}"#,
        b"",
        b"   \n",
        b"not json",
        b"[1, 2]",
        br#"{"info":{"id":"ses_1"}}"#,
    ] {
        assert_eq!(detect(bytes), None, "{}", String::from_utf8_lossy(bytes));
    }
    assert!(parse(Format::Opencode, b"[]").is_err());
}

/// Every line of every fixture, for the property below.
fn fixture_lines() -> &'static [Vec<u8>] {
    static LINES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        files_below(&fixtures())
            .iter()
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .flat_map(|path| {
                std::fs::read(path).unwrap().split(|b| *b == b'\n').map(<[u8]>::to_vec).collect::<Vec<_>>()
            })
            .collect()
    })
}

proptest! {
    /// No bytes make a reader panic, and whatever they read keeps the tree's promises.
    #[test]
    fn any_bytes_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = detect(&bytes);
        for format in Format::ALL {
            if let Ok(session) = parse(format, &bytes) {
                assert_tree(&session);
            }
        }
    }

    /// The peers' own lines, shuffled, repeated and cut short anywhere,
    /// read without panicking and keep the tree's promises.
    #[test]
    fn peer_lines_in_any_order_and_cut_anywhere(
        picks in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..30),
    ) {
        let lines = fixture_lines();
        let mut bytes = Vec::new();
        for (line, cut) in picks {
            let line = &lines[line.index(lines.len())];
            let cut = if line.is_empty() { 0 } else { cut.index(line.len() * 2).min(line.len()) };
            bytes.extend_from_slice(&line[..cut]);
            bytes.push(b'\n');
        }
        let _ = detect(&bytes);
        for format in Format::ALL {
            if let Ok(session) = parse(format, &bytes) {
                assert_tree(&session);
            }
        }
    }
}
