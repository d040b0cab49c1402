//! `/sandbox [MODE] [network on|off]`: the session's stored sandbox choice,
//! shown or changed.

use crate::exit::Exit;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/sandbox …`: the session's sandbox, changed when asked, then shown.
    pub(in crate::repl) fn sandbox(&self, rest: &str) -> Result<(), Exit> {
        let Some(id) = self.session else {
            println!("No session yet: send a message first.");
            return Ok(());
        };
        // The choice is the session's, stored: every server on
        // the database, a restart and `seri -r` apply it.
        let store = self.app.store.agent(&self.app.agent);
        let chosen = seri_tools::SessionSandbox::of(&store.info(id)?);
        match crate::sandbox::slash_change(rest) {
            Ok(Some(change))
                if change.mode.is_some_and(|m| chosen.mode != Some(m))
                    || change.network.is_some_and(|n| chosen.network != Some(n)) =>
            {
                if let Err(e) = self.runtime.set_sandbox(id, change.mode, change.network) {
                    println!("{}", self.style.red(&e.to_string()));
                }
            }
            Ok(_) => {}
            Err(line) => println!("{}", self.style.red(&line)),
        }
        let chosen = seri_tools::SessionSandbox::of(&store.info(id)?);
        println!("sandbox      {}", self.app.sandbox.describe(chosen));
        Ok(())
    }
}
