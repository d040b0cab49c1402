//! `/fork [SEQ]`: a fork by reference, and the last message back at the prompt.

use seri_core::Seq;

use crate::exit::Exit;
use crate::inspect;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/fork [SEQ]`: switches to a new session that shares this one's
    /// events up to SEQ by reference. Without SEQ it forks before the last
    /// message sent, and that message waits at the prompt to be edited and
    /// sent again (the "edit and resend" of chat products). The session
    /// forked from stays as it is, resumable.
    pub(in crate::repl) fn fork(&mut self, rest: &str) -> Result<(), Exit> {
        let Some(session) = self.session else {
            println!("{}", self.style.red("Nothing to fork yet: this session has no messages."));
            return Ok(());
        };
        let store = self.app.store.agent(&self.app.agent);
        let (at, edit) = if rest.is_empty() {
            match store.newest_user_message(session)? {
                Some(event) => {
                    let text = event.body.as_message().map(|m| m.content.clone()).unwrap_or_default();
                    (Seq(event.seq.get() - 1), Some(text))
                }
                None => (Seq(store.event_count(session)?), None),
            }
        } else {
            match rest.parse::<u64>() {
                Ok(seq) => (Seq(seq), None),
                Err(_) => {
                    println!(
                        "{}",
                        self.style.red(&format!("usage: /fork [SEQ], with SEQ a seq `/thread` shows, not `{rest}`"))
                    );
                    return Ok(());
                }
            }
        };
        let fork = match store.fork_session(session, Some(at), seri_core::ForkVia::Repl) {
            Ok(fork) => fork,
            Err(e) => {
                println!("{}", self.style.red(&e.to_string()));
                return Ok(());
            }
        };
        self.session = Some(fork.id);
        println!(
            "Forked {} at [{}] into {}; the original stays: seri --resume {}",
            inspect::short(self.app, session),
            at,
            inspect::short(self.app, fork.id),
            inspect::short(self.app, session)
        );
        if let Some(text) = edit.filter(|t| !t.is_empty()) {
            println!("{}", self.style.dim("Your last message is at the prompt: edit it, Enter sends it."));
            self.initial = Some(text);
        }
        Ok(())
    }
}
