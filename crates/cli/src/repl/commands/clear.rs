//! `/clear`: a new session; the previous one stays, resumable.

use crate::exit::Exit;
use crate::inspect;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/clear`: the next message starts a new session.
    pub(in crate::repl) fn clear(&mut self) -> Result<(), Exit> {
        crate::trajectory::prune(self.app, None)?;
        if let Some(old) = self.session.take() {
            println!("Started a new session. The previous one stays: seri --resume {}", inspect::short(self.app, old));
        } else {
            println!("Started a new session.");
        }
        Ok(())
    }
}
