//! `/expand [N]`: an output shown cut short, in full.

use crate::exit::Exit;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/expand [N]`: the Nth output shown cut short (the newest without
    /// N), in full, as its `tool_result` stored it: never run again.
    pub(in crate::repl) fn expand(&self, rest: &str) -> Result<(), Exit> {
        let n = match rest {
            "" => None,
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    let usage = format!("usage: /expand [N], with N the number under an output, not `{n}`");
                    println!("{}", self.style.red(&usage));
                    return Ok(());
                }
            },
        };
        let Some((n, session, call)) = self.collapsed.get(n) else {
            match n {
                Some(n) => println!("{}", self.style.red(&format!("No output number {n} was cut short here."))),
                None => println!("No output was cut short yet."),
            }
            return Ok(());
        };
        let mut found = None;
        let mut find = |_, body| {
            if let seri_core::EventBody::ToolResult(result) = body
                && result.tool_call_id == call
            {
                found = Some(result);
            }
        };
        self.app.store.agent(&self.app.agent).each_body(session, seri_store::SeqRange::ALL, &mut find)?;
        match found {
            Some(result) => {
                for line in crate::tool_line::expanded(self.style, &result) {
                    println!("{line}");
                }
            }
            None => println!("{}", self.style.red(&format!("Output {n} is no longer in its session."))),
        }
        Ok(())
    }
}
