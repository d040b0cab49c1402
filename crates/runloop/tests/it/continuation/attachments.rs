//! The initiating message is copied word for word into the successor, and
//! its attachments are hard-linked into the successor's folder, so
//! `attachment:<id>` resolves there to the very same file.

use std::os::unix::fs::MetadataExt as _;

use serde_json::json;
use seri_core::{AgentId, ContinuedFrom, Message};

use super::continue_call;
use crate::support::{Harness, text};

#[tokio::test]
async fn the_copied_message_keeps_everything_and_its_attachment_resolves_to_the_same_file() {
    let h = Harness::new(json!([continue_call("cont_1", "topic_change"), text("Got the itinerary.")]));
    let store = h.store.agent(&AgentId::local());
    let attachment =
        store.store_attachment(h.session, "itinerary.txt", Some("text/plain".into()), b"Day 1: Alfama").unwrap();
    let reference = format!("attachment:{}", attachment.id);
    let original = Message {
        raw_markdown: Some(format!("New topic: book **everything** in {reference}")),
        blocks: vec![json!({ "type": "file", "ref": reference })],
        context_lines: vec!["selected: Day 1: Alfama".into()],
        attachments: vec![attachment.clone()],
        ..Message::user(format!("New topic: book everything in {reference}"))
    };
    let outcomes = h.send_message(h.session, original.clone()).await;
    let continued = outcomes[0].continued_to.clone().expect("continued");
    assert_eq!(outcomes[1].result.as_deref(), Some("Got the itinerary."));

    let initiating = &h.events(h.session)[0];
    let copied = h.events(continued.session_id)[1].clone();
    assert_eq!(copied.id, continued.user_event_id, "the successor's run answers the copy");
    let mut expected = original;
    expected.meta_mut().continued_from =
        Some(ContinuedFrom { session_id: h.session, event_id: initiating.id, seq: initiating.seq });
    assert_eq!(copied.body.as_message(), Some(&expected), "copied word for word, with meta.continuedFrom");

    let in_predecessor = store.resolve_attachment(h.session, &reference).unwrap();
    let in_successor = store.resolve_attachment(continued.session_id, &reference).unwrap();
    assert_ne!(in_predecessor, in_successor, "each session has its own folder");
    assert_eq!(std::fs::read(&in_successor).unwrap(), b"Day 1: Alfama");
    let (a, b) = (std::fs::metadata(&in_predecessor).unwrap(), std::fs::metadata(&in_successor).unwrap());
    assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "a hard link, not a copy");
    assert_eq!(b.nlink(), 2);
}
