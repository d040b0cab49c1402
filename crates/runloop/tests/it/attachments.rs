//! A message's attachments: the model reads a line naming each, is sent
//! the pictures as images, and can `read attachment:<id>`.

use serde_json::json;
use seri_core::{AgentId, Message};

use crate::support::{Harness, call, text};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n-pixels-";

#[tokio::test]
async fn pictures_reach_the_model_as_images_and_every_attachment_reads_back() {
    let mut h = Harness::new(json!([]));
    let store = h.store.clone();
    let store = store.agent(&AgentId::local());
    let picture = store.store_attachment(h.session, "panic.png", Some("image/png".into()), PNG).unwrap();
    let notes = store.store_attachment(h.session, "notes.txt", None, b"first\nsecond\nthird\n").unwrap();
    let blob = store.store_attachment(h.session, "core.bin", None, b"\x7fELF\0\0\x01").unwrap();
    let read = |id: &str, target: String, limit: Option<u64>| {
        let mut arguments = json!({ "target": target });
        if let Some(limit) = limit {
            arguments["limit"] = json!(limit);
        }
        call(id, "read", arguments)
    };
    h.rescript(json!([
        read("r1", format!("attachment:{}", picture.id), None),
        read("r2", format!("attachment:{}", notes.id), Some(2)),
        read("r3", format!("attachment:{}", blob.id), None),
        read("r4", "attachment:not-here".into(), None),
        text("Seen."),
    ]));
    let message = Message {
        attachments: vec![picture.clone(), notes.clone(), blob.clone()],
        ..Message::user("What went wrong?")
    };
    let outcomes = h.send_message(h.session, message).await;
    assert_eq!(outcomes[0].result.as_deref(), Some("Seen."));

    let requests = h.requests();
    let first = &requests[0]["messages"][0];
    assert_eq!(first["images"], json!([{ "attachmentId": picture.id, "mediaType": "image/png", "bytes": PNG.len() }]));
    let expected = format!(
        "What went wrong?\n[attachment:{} \"panic.png\"]\n[attachment:{} \"notes.txt\"]\n[attachment:{} \"core.bin\"]",
        picture.id, notes.id, blob.id
    );
    assert_eq!(first["text"], expected.as_str(), "a line names each attachment");

    let results: Vec<String> = requests[4]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(results[0].contains("a picture (image/png)"), "{}", results[0]);
    assert_eq!(
        results[1],
        format!(
            "attachment:{}, 19 bytes\n     1\tfirst\n     2\tsecond\n… 1 more lines; read with a larger limit.",
            notes.id
        )
    );
    assert!(results[2].contains("binary data, not text"), "{}", results[2]);
    assert!(results[3].contains("attachment:not-here is not attached to this session"), "{}", results[3]);

    // A picture whose file is gone is left out of the request, not the
    // request out of the run: the model still reads its line.
    // (A folder where the cached file was: a missing file would be written
    // again from the database.)
    let path = store.resolve_attachment(h.session, &format!("attachment:{}", picture.id)).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    h.rescript(json!([text("Still here.")]));
    let outcomes = h.send("And now?").await;
    assert_eq!(outcomes[0].result.as_deref(), Some("Still here."));
    let last = h.requests().pop().unwrap();
    assert!(last["messages"][0].get("images").is_none(), "{}", last["messages"][0]);
    assert_eq!(last["messages"][0]["text"], expected.as_str());
}
