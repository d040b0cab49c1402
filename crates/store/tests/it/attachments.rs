//! Attachments: kept in the database, cached as files per session,
//! resolved from `attachment:<id>` (from the rows when the cache lacks the
//! file, as on another server), hard-linked into another session (copied
//! across file systems).

use std::fs;
use std::os::unix::fs::MetadataExt;

use seri_store::{AttachmentError, LinkOutcome, StoreError};

use crate::support::*;

#[test]
fn attachments_are_stored_resolved_and_hard_linked() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/w");
        let b = fx.session(&local, "/w");
        let file = local.store_attachment(a, "shot.png", Some("image/png".into()), b"\x89PNG...").unwrap();
        assert_eq!((file.name.as_str(), file.media_type.as_deref(), file.bytes), ("shot.png", Some("image/png"), 7));
        let reference = format!("attachment:{}", file.id);

        let in_a = local.resolve_attachment(a, &reference).unwrap();
        assert_eq!(in_a, fx.profile().attachments_dir().join(a.to_string()).join(&file.id));
        assert_eq!(fs::read(&in_a).unwrap(), b"\x89PNG...");

        // Not yet in b.
        let err = local.resolve_attachment(b, &reference).unwrap_err();
        assert!(matches!(err, StoreError::Attachment(AttachmentError::Unknown { .. })), "{err:?}");

        assert_eq!(local.write(|tx| tx.link_attachment(a, b, &file.id)).unwrap(), LinkOutcome::HardLinked);
        let in_b = local.resolve_attachment(b, &reference).unwrap();
        assert_eq!(fs::read(&in_b).unwrap(), b"\x89PNG...");
        let (meta_a, meta_b) = (fs::metadata(&in_a).unwrap(), fs::metadata(&in_b).unwrap());
        assert_eq!((meta_a.ino(), meta_a.nlink()), (meta_b.ino(), 2), "one file, two names");
        assert_eq!(local.write(|tx| tx.link_attachment(a, b, &file.id)).unwrap(), LinkOutcome::AlreadyPresent);
    }
}

#[test]
fn across_file_systems_the_attachment_is_copied() {
    for backend in Backend::all() {
        // /dev/shm is a tmpfs on Linux, a different file system from the
        // temporary directory; a session folder placed there cannot take a hard link.
        let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
            // Without /dev/shm the fallback is still covered by the unit test
            // that makes the hard link fail on purpose.
            continue;
        };
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/w");
        let b = fx.session(&local, "/w");
        let file = local.store_attachment(a, "log.txt", None, b"log").unwrap();
        let root = fx.profile().attachments_dir();
        std::os::unix::fs::symlink(shm.path(), root.join(b.to_string())).unwrap();
        let same_device = fs::metadata(&root).unwrap().dev() == fs::metadata(shm.path()).unwrap().dev();

        let outcome = local.write(|tx| tx.link_attachment(a, b, &file.id)).unwrap();
        assert_eq!(outcome, if same_device { LinkOutcome::HardLinked } else { LinkOutcome::Copied });
        let in_b = local.resolve_attachment(b, &format!("attachment:{}", file.id)).unwrap();
        assert_eq!(fs::read(in_b).unwrap(), b"log");
        assert!(shm.path().join(&file.id).exists());
    }
}

#[test]
fn bad_references_and_ids_are_refused_with_their_text() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/w");
        let messages: Vec<String> = ["notes.txt", "attachment:../../seri.db", "attachment:"]
            .into_iter()
            .map(|r| local.resolve_attachment(a, r).unwrap_err().to_string())
            .collect();
        insta::assert_snapshot!("bad_attachment_references", messages.join("\n"));
        let err = local.write(|tx| tx.link_attachment(a, a, "../escape")).unwrap_err();
        assert!(matches!(err, StoreError::Attachment(AttachmentError::InvalidId { .. })), "{err:?}");
        let elsewhere = fx.session(&local, "/w");
        let missing = local.write(|tx| tx.link_attachment(a, elsewhere, "nothing-here")).unwrap_err();
        assert!(matches!(missing, StoreError::Attachment(AttachmentError::Unknown { .. })), "{missing:?}");
    }
}

#[test]
fn the_database_holds_attachments_and_the_folder_is_its_cache() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/w");
        let b = fx.session(&local, "/w");
        let file = local.store_attachment(a, "notes.txt", None, b"kept in the database").unwrap();
        let reference = format!("attachment:{}", file.id);
        // The cache is gone (another machine, or cleared): the file comes back from the rows.
        fs::remove_dir_all(fx.profile().attachments_dir()).unwrap();
        let path = local.resolve_attachment(a, &reference).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"kept in the database");
        // A link made where the source is not cached resolves in the target, from the rows too.
        fs::remove_dir_all(fx.profile().attachments_dir()).unwrap();
        local.write(|tx| tx.link_attachment(a, b, &file.id)).unwrap();
        fs::remove_dir_all(fx.profile().attachments_dir()).unwrap();
        assert_eq!(fs::read(local.resolve_attachment(b, &reference).unwrap()).unwrap(), b"kept in the database");
        // Another agent's session never resolves it.
        let other = fx.store.agent(&seri_core::AgentId::named("other").unwrap());
        assert!(other.resolve_attachment(a, &reference).is_err());
    }
}

#[test]
fn an_attachment_stored_through_one_store_resolves_through_another_on_the_same_database() {
    let Some(base) = postgres_url() else { return };
    let url = fresh_schema_url(&base);
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let open = |dir: &tempfile::TempDir| {
        let options = seri_store::StoreOptions {
            attachments_dir: Some(dir.path().join("attachments")),
            ..seri_store::StoreOptions::default()
        };
        seri_store::Store::open_url(Some(&url), &dir.path().join("unused.db"), options).unwrap()
    };
    let (a, b) = (open(&dir_a), open(&dir_b));
    let agent = seri_core::AgentId::local();
    let seed = a.agent(&agent).new_seed("/w");
    a.agent(&agent).create_session(&seed).unwrap();
    let file = a.agent(&agent).store_attachment(seed.id, "shot.png", None, b"\x89PNG from A").unwrap();
    let on_b = b.agent(&agent).resolve_attachment(seed.id, &format!("attachment:{}", file.id)).unwrap();
    assert!(on_b.starts_with(dir_b.path()), "B's own cache: {}", on_b.display());
    assert_eq!(fs::read(on_b).unwrap(), b"\x89PNG from A");
}
