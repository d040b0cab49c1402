//! `/context`: the measured figure, then each part of the next request.

use crate::exit::Exit;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/context`: what the next request holds, part by part.
    pub(in crate::repl) fn context(&self) -> Result<(), Exit> {
        match self.session {
            Some(id) => println!("{}", crate::slash::context_lines(&self.runtime.context_report(id)?)),
            None => println!("No session yet: send a message first."),
        }
        Ok(())
    }
}
