//! `/resume [ID]`: another session, picked or named.

use crate::exit::Exit;
use crate::repl::{Repl, pick_session};

impl Repl<'_> {
    /// `/resume [ID]`: switches to the session named, or to one picked.
    pub(in crate::repl) fn resume(&mut self, rest: &str) {
        let picked = if rest.trim().is_empty() {
            pick_session(self.app)
        } else {
            self.app.store.agent(&self.app.agent).resolve_session(rest.trim()).map_err(Exit::from)
        };
        match picked.and_then(|id| crate::slash_search::resume(self.app, id)) {
            Ok(None) => {}
            Ok(Some(id)) => self.session = Some(id),
            Err(e) => println!("{}", self.style.red(&e.message())),
        }
    }
}
