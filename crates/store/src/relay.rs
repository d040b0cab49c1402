//! Messages between the processes on one database that are not facts: a
//! run's streaming frames, the questions it asks and their answers. What
//! a run did is in its session's events (written by the store, read by
//! anyone, durable); what the relay carries is what a person watching on
//! another server sees *while* it happens, and what they answer.
//!
//! On PostgreSQL it is `NOTIFY` on a channel of the schema's own
//! (`seri_relay:<schema>`), sent and heard on one connection of its own, so
//! it never costs a store transaction a statement. A message is delivered
//! to every *other* process listening on the schema, at most once, in the
//! order each sender sent; one longer than a notification may be (8000
//! bytes) goes as numbered parts and is put together again. Nothing is
//! kept: a process that is not listening when a message goes misses it
//! (it reads the events instead). SQLite has no channel between
//! processes, and no relay.

use tokio::sync::mpsc;

/// Sends messages to the other processes on the database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct RelaySender {
    pub(crate) out: mpsc::UnboundedSender<String>,
}

impl RelaySender {
    /// Queues `message` for every other process; `false` once the relay stopped.
    /// It never waits: a slow database delays the message, not the caller.
    pub fn send(&self, message: String) -> bool {
        self.out.send(message).is_ok()
    }
}

/// Both ends of the relay: [`Relay::sender`] sends, [`Relay::received`]
/// hears what other processes sent. Dropping the receiver stops it (its
/// connection closes).
#[derive(Debug)]
pub struct Relay {
    /// Sends to the others.
    pub sender: RelaySender,
    /// What the others sent, whole, in each sender's order.
    pub received: mpsc::UnboundedReceiver<String>,
    /// How many times the relay connected and listens, changed as it does:
    /// what others sent while it was not listening (its connection dropped
    /// and it reconnected) it never hears, so a process that keeps a
    /// picture of the others asks them again then.
    pub connected: tokio::sync::watch::Receiver<u64>,
}

/// The most a part's body holds, in bytes: a notification's payload must
/// be shorter than 8000 bytes, and a part's header takes a few.
pub(crate) const PART_BODY: usize = 7800;

/// `message` as the payloads of its parts, each `"<id> <i> <n> <body>"`
/// (`i` counts from 0 to `n - 1`), cut at character boundaries.
pub(crate) fn parts(id: u64, message: &str) -> Vec<String> {
    let mut bodies = Vec::new();
    let mut rest = message;
    while rest.len() > PART_BODY {
        let mut cut = PART_BODY;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (body, after) = rest.split_at(cut);
        bodies.push(body);
        rest = after;
    }
    bodies.push(rest);
    let n = bodies.len();
    bodies.into_iter().enumerate().map(|(i, body)| format!("{id} {i} {n} {body}")).collect()
}

/// Puts parts back together, per sender and message.
#[derive(Debug, Default)]
pub(crate) struct Reassembly {
    partial: std::collections::HashMap<(i32, u64), (usize, String)>,
}

impl Reassembly {
    /// Most messages being put together at once; beyond it (parts were
    /// lost with a connection) the unfinished ones are forgotten.
    const MAX_PARTIAL: usize = 256;

    /// Adds the part `payload` that process `sender` sent: the whole
    /// message once its last part arrived. A payload that is no part is dropped.
    pub(crate) fn add(&mut self, sender: i32, payload: &str) -> Option<String> {
        let mut fields = payload.splitn(4, ' ');
        let (Some(id), Some(i), Some(n), Some(body)) = (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            tracing::warn!(payload, "a relayed message that is not a part");
            return None;
        };
        let (Ok(id), Ok(i), Ok(n)) = (id.parse::<u64>(), i.parse::<usize>(), n.parse::<usize>()) else {
            tracing::warn!(payload, "a relayed message that is not a part");
            return None;
        };
        if n == 1 && i == 0 {
            return Some(body.to_owned());
        }
        if self.partial.len() >= Self::MAX_PARTIAL {
            self.partial.clear();
        }
        let key = (sender, id);
        let entry = self.partial.entry(key).or_insert_with(|| (0, String::new()));
        if entry.0 != i {
            // A part went missing: the message cannot be whole.
            self.partial.remove(&key);
            return None;
        }
        entry.0 += 1;
        entry.1.push_str(body);
        if entry.0 < n {
            return None;
        }
        self.partial.remove(&key).map(|(_, whole)| whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_goes_in_parts_and_comes_back_whole() {
        let long: String = "é".repeat(PART_BODY) + "tail";
        let sent = parts(7, &long);
        assert_eq!(sent.len(), 3);
        assert!(sent.iter().all(|p| p.len() < 8000), "every part fits a notification");
        let mut heard = Reassembly::default();
        // Another sender's message in between is its own.
        assert_eq!(heard.add(2, &sent[0]), None);
        assert_eq!(heard.add(1, &parts(7, "short")[0]).as_deref(), Some("short"));
        assert_eq!(heard.add(2, &sent[1]), None);
        assert_eq!(heard.add(2, &sent[2]), Some(long));
        assert!(heard.partial.is_empty());
    }

    #[test]
    fn a_message_with_a_lost_part_is_dropped() {
        let long = "x".repeat(PART_BODY * 3);
        let sent = parts(1, &long);
        let mut heard = Reassembly::default();
        assert_eq!(heard.add(9, &sent[0]), None);
        assert_eq!(heard.add(9, &sent[2]), None);
        assert!(heard.partial.is_empty());
        assert_eq!(heard.add(9, "not a part"), None);
        assert_eq!(heard.add(9, "1 0 1 "), Some(String::new()));
    }
}
