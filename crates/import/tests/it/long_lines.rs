//! A line longer than the import reads (`seri_import::LINE_LIMIT`)
//! is skipped and reported by its number and size, without being held,
//! and the rest of its file is imported: in seri's own older format, which
//! is imported as it is read, and in another agent's (Claude Code's),
//! which is parsed a line at a time. The files are written as they are
//! generated, so the test never holds the long line either.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use seri_core::{EventBody, Seq, SeqRange};
use seri_import::FileOutcome;
use seri_store::SessionQuery;

use crate::support::*;

/// Writes `before`, then a user line of `content_bytes` bytes of content,
/// then `after`, each line ended by a line break; the path and the long
/// line's size.
fn write_with_long_line(path: &Path, before: &[String], long_line: (&str, usize, &str), after: &[String]) -> u64 {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for line in before {
        writeln!(file, "{line}").unwrap();
    }
    let (open, content_bytes, close) = long_line;
    file.write_all(open.as_bytes()).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut left = content_bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        file.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    file.write_all(close.as_bytes()).unwrap();
    file.write_all(b"\n").unwrap();
    for line in after {
        writeln!(file, "{line}").unwrap();
    }
    file.flush().unwrap();
    (open.len() + content_bytes + close.len()) as u64
}

fn texts(fx: &Fixture) -> Vec<String> {
    let local = fx.local();
    let sessions = local.list_sessions(&SessionQuery::default()).unwrap();
    assert_eq!(sessions.len(), 1);
    let events = local.events(sessions[0].id, SeqRange::starting_at(Seq(1))).unwrap();
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::Message(message) => Some(message.content.clone()),
            _ => None,
        })
        .collect()
}

fn over_limit() -> usize {
    seri_import::LINE_LIMIT + 1
}

#[test]
fn a_line_over_the_limit_in_seris_own_format_is_skipped_and_reported_and_the_rest_imported() {
    let fx = Fixture::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("long.jsonl");
    let before = [
        r#"{"type":"session","title":"Long","createdAt":"2025-03-01T09:30:00Z"}"#.to_owned(),
        r#"{"role":"user","content":"before"}"#.to_owned(),
    ];
    let after = [r#"{"role":"assistant","content":"after"}"#.to_owned()];
    let size = write_with_long_line(&path, &before, (r#"{"role":"user","content":""#, over_limit(), r#""}"#), &after);
    let report = seri_import::import_path(&fx.local(), &path, "/w").unwrap();
    let file = &report.files[0];
    assert!(matches!(file.outcome, FileOutcome::Imported { events: 2, .. }), "{:?}", file.outcome);
    let skipped: Vec<String> =
        file.warnings.iter().map(|w| format!("{}: {} {}", w.line, w.skipped, w.problem)).collect();
    assert_eq!(skipped, [format!("3: true a line of {size} bytes, longer than the 64 MiB a line may hold: not read")]);
    assert!(file.to_string().contains(&format!("long.jsonl:3: skipped: a line of {size} bytes")), "{file}");
    assert_eq!(texts(&fx), ["before", "after"]);
    // Known by its bytes: importing it again reads nothing more.
    let again = seri_import::import_path(&fx.local(), &path, "/w").unwrap();
    assert!(matches!(again.files[0].outcome, FileOutcome::AlreadyImported { .. }), "{:?}", again.files[0].outcome);
}

#[test]
fn a_line_over_the_limit_in_another_agents_file_is_skipped_and_reported_and_the_rest_imported() {
    let fx = Fixture::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("5e551011-0000-4000-8000-0000000000aa.jsonl");
    let line = |uuid: &str, parent: Option<&str>, role: &str, text: &str| {
        serde_json::json!({
            "type": role, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/p",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        })
        .to_string()
    };
    let before = [line("u1", None, "user", "before")];
    let after = [line("a1", Some("u1"), "assistant", "after")];
    let open = r#"{"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"s","message":{"role":"user","content":""#;
    let size = write_with_long_line(&path, &before, (open, over_limit(), r#""}}"#), &after);
    let report = seri_import::import_path(&fx.local(), &path, "/w").unwrap();
    let file = &report.files[0];
    assert_eq!(file.format, Some(seri_import::peers::Format::ClaudeCode));
    assert!(matches!(file.outcome, FileOutcome::Imported { events: 2, .. }), "{:?}", file.outcome);
    let skipped: Vec<String> =
        file.warnings.iter().filter(|w| w.skipped).map(|w| format!("{}: {}", w.line, w.problem)).collect();
    assert_eq!(skipped, [format!("2: a line of {size} bytes, longer than the 64 MiB a line may hold: not read")]);
    assert_eq!(texts(&fx), ["before", "after"]);
}
