//! The creation transaction commits everything or nothing. A fault is
//! injected after every one of its steps in turn (and real store failures
//! are provoked: a refused insert, a missing attachment file); after each,
//! the database holds no session, edge or event of the continuation, no
//! attachment file was left behind, `PRAGMA integrity_check` is `ok`, and a
//! retry succeeds.

use serde_json::json;
use seri_core::{AgentId, Attachment, Message};
use seri_runloop::continuation::CreationStep;

use super::{continue_call, error_results, integrity, row_counts};
use crate::support::{Harness, text};

fn with_attachment(text: &str, attachments: &[Attachment]) -> Message {
    Message { attachments: attachments.to_vec(), ..Message::user(text) }
}

/// Every attachment file on disk, as `session-folder/file` names.
fn attachment_files(h: &Harness) -> Vec<String> {
    let mut files = Vec::new();
    let root = h.profile.attachments_dir();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap();
        for file in std::fs::read_dir(dir.path()).unwrap() {
            files.push(format!(
                "{}/{}",
                dir.file_name().to_string_lossy(),
                file.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    files.sort();
    files
}

/// A harness whose model continues, answers after the refusal, then
/// continues again when asked to retry and the successor answers.
fn harness() -> (Harness, Attachment) {
    let h = Harness::new(json!([
        continue_call("cont_1", "topic_change"),
        text("That failed; answering here."),
        continue_call("cont_2", "topic_change"),
        text("The successor answers."),
    ]));
    let attachment =
        h.store.agent(&AgentId::local()).store_attachment(h.session, "plan.txt", None, b"Day 1: Alfama").unwrap();
    (h, attachment)
}

/// After a failed creation: nothing of it anywhere, and a retry succeeds.
async fn check_nothing_then_retry(h: &Harness, attachment: &Attachment, failure: &str) {
    let errors = error_results(h, h.session);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("the successor could not be created: "), "{}", errors[0]);
    assert!(errors[0].contains(failure), "says {failure:?}: {}", errors[0]);
    assert_eq!(row_counts(h), (1, 0, 5), "no session, edge or event of the continuation");
    assert_eq!(integrity(h), "ok");
    assert_eq!(attachment_files(h), [format!("{}/{}", h.session, attachment.id)], "no linked file left behind");

    let outcomes = h.send_message(h.session, with_attachment("Try again.", std::slice::from_ref(attachment))).await;
    assert_eq!(outcomes.len(), 2, "the retry continued: {outcomes:?}");
    let successor = outcomes[0].continued_to.clone().unwrap().session_id;
    assert_eq!(row_counts(h), (2, 1, 9 + 3));
    assert_eq!(integrity(h), "ok");
    h.store.agent(&AgentId::local()).resolve_attachment(successor, &format!("attachment:{}", attachment.id)).unwrap();
}

#[tokio::test]
async fn a_fault_after_any_step_of_the_creation_leaves_nothing() {
    for step in CreationStep::ALL {
        let (h, attachment) = harness();
        h.runtime.continuation_hooks().fail_after(Some(step));
        let outcomes =
            h.send_message(h.session, with_attachment("New topic.", std::slice::from_ref(&attachment))).await;
        assert_eq!(outcomes.len(), 1, "{step}: {outcomes:?}");
        assert_eq!(outcomes[0].continued_to, None, "{step}");
        check_nothing_then_retry(&h, &attachment, &format!("after step `{step}`")).await;
    }
}

#[tokio::test]
async fn a_store_failure_on_the_last_insert_rolls_everything_back() {
    let (h, attachment) = harness();
    // A trigger refuses the successor's second event: a genuine SQLite
    // failure at the very end of the transaction, after every other write.
    let db = rusqlite::Connection::open(h.store.path()).unwrap();
    db.execute_batch(&format!(
        "CREATE TRIGGER refuse_copied_message BEFORE INSERT ON session_events \
         WHEN NEW.session_id <> '{}' AND NEW.seq = 2 \
         BEGIN SELECT RAISE(ABORT, 'injected: the disk is failing'); END;",
        h.session
    ))
    .unwrap();
    h.send_message(h.session, with_attachment("New topic.", std::slice::from_ref(&attachment))).await;
    db.execute_batch("DROP TRIGGER refuse_copied_message").unwrap();
    check_nothing_then_retry(&h, &attachment, "the disk is failing").await;
}

#[tokio::test]
async fn a_missing_attachment_file_rolls_back_the_links_made_before_it() {
    let (h, attachment) = harness();
    let store = h.store.agent(&AgentId::local());
    let gone = store.store_attachment(h.session, "gone.txt", None, b"soon deleted").unwrap();
    // A folder where the cached file was: unreadable (a missing file would
    // be written again from the database).
    let path = store.resolve_attachment(h.session, &format!("attachment:{}", gone.id)).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    // `attachment` is linked first; `gone` then fails, and the link is undone.
    h.send_message(h.session, with_attachment("New topic.", &[attachment.clone(), gone.clone()])).await;
    assert!(error_results(&h, h.session)[0].contains(&gone.id), "names the unreadable file");
    std::fs::remove_dir(&path).unwrap();
    check_nothing_then_retry(&h, &attachment, "attachment file").await;
}
