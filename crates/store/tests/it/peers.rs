//! Other agents' sessions imported (`seri_store::legacy::import_path`): every
//! file the peers recorded (`tests/fixtures/peers/`), found below a folder
//! searched recursively, becomes a session in its working directory whose
//! events are the branch the peer last left it on, each call followed by
//! its result; importing again, by folder or by file, writes nothing.

use std::path::{Path, PathBuf};

use seri_core::Seq;
use seri_store::{FileOutcome, ImportReport, SeqRange, SessionQuery};

use crate::support::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("peers")
}

/// Each file as `format path: outcome (events)`, without the session ids.
fn outcomes(report: &ImportReport) -> String {
    let mut out = String::new();
    for file in &report.files {
        let format = file.format.map_or("seri", |format| format.name());
        let outcome = match &file.outcome {
            FileOutcome::Imported { events, .. } => format!("imported ({events} events)"),
            FileOutcome::Reimported { events, .. } => format!("re-imported ({events} events)"),
            FileOutcome::AlreadyImported { session_id: Some(_) } => "already imported".to_owned(),
            other => format!("{other:?}"),
        };
        let skipped: u64 = file.warnings.iter().filter(|w| w.skipped).map(|w| w.count).sum();
        out.push_str(&format!("{format} {}: {outcome}, {skipped} lines skipped\n", file.short_path()));
    }
    out
}

#[test]
fn the_peers_recordings_become_sessions_once_from_a_folder_searched_recursively() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let first = seri_store::legacy::import_path(&local, &fixtures(), "/w").unwrap();
        insta::assert_snapshot!("peer_files_imported", outcomes(&first));

        let sessions = local.list_sessions(&SessionQuery::default()).unwrap();
        assert_eq!(sessions.len(), 8);
        assert!(sessions.iter().all(|s| s.cwd == "/tmp/seri-peer-home/project"), "each in its project");

        // Each session's events: calls answered in order, as the run loop needs them.
        let mut transcripts = String::new();
        for file in &first.files {
            let Some(id) = file.new_session() else { continue };
            let events = local.events(id, SeqRange::starting_at(Seq(1))).unwrap();
            let mut waiting = std::collections::VecDeque::new();
            for event in &events {
                match &event.body {
                    seri_core::EventBody::ToolCall(call) => waiting.push_back(call.id.clone()),
                    seri_core::EventBody::ToolResult(result) => {
                        assert_eq!(waiting.pop_front(), Some(result.tool_call_id.clone()), "{}", file.short_path())
                    }
                    _ => assert!(waiting.is_empty(), "{}: a message before the results", file.short_path()),
                }
            }
            // Claude Code's session (its id is the recording's choice) and pi's
            // (the first of its two files by name, which starts with its time).
            let pi_first = first.files.iter().find(|f| f.format == Some(seri_store::peers::Format::Pi));
            if file.short_path().contains("5e551011") || pi_first.is_some_and(|f| f.path == file.path) {
                transcripts.push_str(&format!("{}\n", file.short_path()));
                for event in &events {
                    transcripts.push_str(&format!("  {}\n", seri_projection::transcript_event_line(event)));
                }
            }
        }
        insta::assert_snapshot!("peer_transcripts", transcripts);

        // Again: by the folder, and each file by name, nothing is written.
        fx.clock.advance(60_000);
        let again = seri_store::legacy::import_path(&local, &fixtures(), "/w").unwrap();
        assert!(again.new_sessions().is_empty(), "{}", outcomes(&again));
        for file in &first.files {
            let named = seri_store::legacy::import_path(&local, &file.path, "/w").unwrap();
            assert!(matches!(named.files[..], [ref one] if matches!(one.outcome, FileOutcome::AlreadyImported { .. })));
        }
        assert_eq!(local.list_sessions(&SessionQuery::default()).unwrap().len(), 8);
    }
}

#[test]
fn a_named_file_with_nothing_importable_says_so() {
    let fx = Fixture::sqlite();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    std::fs::write(&file, "not json\n").unwrap();
    let report = seri_store::legacy::import_path(&fx.local(), &file, "/w").unwrap();
    assert!(matches!(report.files[..], [ref one] if matches!(one.outcome, FileOutcome::NothingImportable)));
    let missing = seri_store::legacy::import_path(&fx.local(), &dir.path().join("gone"), "/w").unwrap_err();
    assert!(missing.to_string().contains("gone"), "{missing}");
}
