//! `/compact [FOCUS]` and `/continue [FOCUS]`: each strategy's own way to make room, and the other's refused with why.

use seri_core::Message;
use seri_prompt::ContextStrategy;
use seri_runloop::{Command, Quiet, Submitted};

use crate::exit::Exit;
use crate::render::Terminal;
use crate::repl::{Flow, Repl};

impl Repl<'_> {
    /// `/compact [FOCUS]`: the oldest context summarised into a recap,
    /// on the compact strategy; on continue, why not and what instead.
    pub(in crate::repl) async fn compact_command(&mut self, focus: &str) -> Result<(), Exit> {
        if self.runtime.settings().strategy == ContextStrategy::Continue {
            println!(
                "This session uses the continue strategy: its transcript is never compacted. \
                 /continue [focus] carries the conversation into a successor session instead \
                 (this one keeps its whole transcript); --context-strategy compact starts seri compacting."
            );
            return Ok(());
        }
        println!("{}", self.compact(focus).await?);
        Ok(())
    }

    /// `/continue [FOCUS]`: only the agent can write the handoff, so it is
    /// asked to continue now; on the compact strategy, why not.
    pub(in crate::repl) async fn continue_command(&mut self, rest: &str) -> Result<Flow, Exit> {
        if self.runtime.settings().strategy == ContextStrategy::Compact {
            println!(
                "This session uses the compact strategy, which never continues into a successor: \
                 /compact summarises the oldest context into a recap instead."
            );
            return Ok(Flow::Stay);
        }
        let typed = format!("/continue {rest}");
        let message = Message {
            raw_markdown: Some(typed.trim_end().to_owned()),
            ..Message::user(seri_prompt::continue_request(rest))
        };
        self.send(message).await.map(|()| Flow::Stay)
    }

    async fn compact(&mut self, focus: &str) -> Result<String, Exit> {
        let Some(session) = self.session else {
            return Ok(seri_projection::compaction::NOT_ENOUGH_HISTORY.to_owned());
        };
        // The model writes the recap: the spinner says so meanwhile.
        let terminal = Terminal::new(self.style);
        terminal.waiting_for("compacting");
        let submitted =
            self.runtime.submit(Command::Compact { session_id: session, focus: focus.to_owned() }, &Quiet).await;
        terminal.finish();
        match submitted? {
            Submitted::Compacted(message) => Ok(message),
            _ => Ok(String::new()),
        }
    }
}
