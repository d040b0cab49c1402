//! `/max-turns N`: the turn budget for the rest of this session.

use crate::repl::Repl;

impl Repl<'_> {
    /// `/max-turns N`: up to N model turns per task from now on.
    pub(in crate::repl) fn max_turns(&mut self, rest: &str) {
        match rest.parse::<u32>() {
            Ok(n) if n > 0 => {
                self.max_turns = n;
                println!("Up to {n} model turns per task for the rest of this session.");
            }
            _ => println!("{}", self.style.red("usage: /max-turns N, with N a positive number")),
        }
    }
}
