//! Retention and imported files: a session imported from an older
//! release's file goes by the file's modification time, and pruning never
//! touches the file.

use std::time::{Duration, SystemTime};

use seri_import::LegacyImport as _;
use seri_store::{RetentionPolicy, SeqRange};

use crate::support::{Backend, Fixture, T0};

const DAY: i64 = 86_400_000;

/// Sets a file's modification time to `at` (Unix milliseconds).
fn set_mtime(path: &std::path::Path, at: i64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_millis(at as u64)).unwrap();
}

#[test]
fn legacy_files_go_by_their_modification_time_and_are_never_touched() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let dir = f.profile().legacy_sessions_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let line =
            |text: &str| format!("{{\"role\": \"user\", \"content\": \"{text}\", \"timestamp\": {}}}\n", T0.millis());
        let (old, fresh, current) = (dir.join("old.jsonl"), dir.join("fresh.jsonl"), dir.join("current.jsonl"));
        for (path, text) in [(&old, "old"), (&fresh, "fresh"), (&current, "current")] {
            std::fs::write(path, line(text)).unwrap();
        }
        local.import_legacy_sessions(&dir, "/w").unwrap();
        let session_of = |name: &str| {
            local
                .list_sessions(&seri_store::SessionQuery::default())
                .unwrap()
                .into_iter()
                .find(|s| s.title == name)
                .unwrap()
                .id
        };
        let (old_session, fresh_session, current_session) =
            (session_of("old"), session_of("fresh"), session_of("current"));
        // The clock is 60 days on; `old` and `current` were last modified 45 days
        // ago, `fresh` 10 days ago. Import times are irrelevant.
        f.clock.advance(60 * DAY);
        let now = f.store.now().millis();
        set_mtime(&old, now - 45 * DAY);
        set_mtime(&current, now - 45 * DAY);
        set_mtime(&fresh, now - 10 * DAY);
        let bytes_before = std::fs::read(&old).unwrap();

        let report =
            local.prune_trajectories(&RetentionPolicy { days: 30, current_session: Some(current_session) }).unwrap();
        let canonical = std::fs::canonicalize(&old).unwrap();
        assert_eq!(report.legacy_files, std::slice::from_ref(&canonical));
        assert!(report.sessions.is_empty());
        let forgotten = local.legacy_trajectory(old_session).unwrap().unwrap();
        assert_eq!(forgotten.path, canonical);
        assert_eq!(forgotten.file_modified_at.map(|t| t.millis()), Some(now - 45 * DAY));
        assert!(forgotten.pruned_at.is_some());
        assert_eq!(local.legacy_trajectory(fresh_session).unwrap().unwrap().pruned_at, None);
        assert_eq!(
            local.legacy_trajectory(current_session).unwrap().unwrap().pruned_at,
            None,
            "the current session is kept"
        );
        // The file is untouched and the imported conversation is whole.
        assert_eq!(std::fs::read(&old).unwrap(), bytes_before);
        assert_eq!(local.events(old_session, SeqRange::ALL).unwrap().len(), 1);
        // Forgotten once: the next start has nothing more to do.
        assert!(local.prune_trajectories(&RetentionPolicy::new(Some(current_session))).unwrap().is_empty());
    }
}
