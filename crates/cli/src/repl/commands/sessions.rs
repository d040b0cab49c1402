//! `/sessions`: the ten newest sessions, the current one starred.

use seri_store::SessionQuery;

use crate::exit::Exit;
use crate::inspect;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/sessions`: the newest sessions of this agent.
    pub(in crate::repl) fn sessions(&self) -> Result<(), Exit> {
        let query = SessionQuery { cwd: None, limit: Some(10), without_children: false, ..SessionQuery::default() };
        for s in self.app.store.agent(&self.app.agent).list_sessions(&query)? {
            let current = if Some(s.id) == self.session { "*" } else { " " };
            println!("{current} {}  {}  {}", inspect::short(self.app, s.id), s.updated_at, s.title);
        }
        Ok(())
    }
}
