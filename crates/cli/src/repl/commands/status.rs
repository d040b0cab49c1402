//! `/status`: the session, its model, strategy, window, turn budget and sandbox.

use crate::exit::Exit;
use crate::inspect;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/status`: the session as `seri show` shows it, then what is in force.
    pub(in crate::repl) fn status(&self) -> Result<(), Exit> {
        let Some(id) = self.session else {
            println!("No messages yet in this session.");
            return Ok(());
        };
        let info = self.app.store.agent(&self.app.agent).info(id)?;
        let window = self.runtime.session_context_window(&info);
        let show = inspect::show(self.app, &id.to_string(), false, window)?;
        println!("{show}");
        let model = self.runtime.session_model(&info);
        println!("model        {}/{}", model.provider, model.model);
        println!("strategy     {}", self.runtime.settings().strategy);
        // Where the window came from: a flag, config.json, the
        // server (remembered), or seri's table of models.
        let origin = match self.app.effective.context_window.value {
            Some(_) => self.app.effective.context_window.origin.to_string(),
            None => "the model's, from seri's table".to_owned(),
        };
        println!("window       {window} tokens ({origin})");
        println!("max turns    {}", self.max_turns);
        println!("sandbox      {}", self.app.sandbox.describe(seri_tools::SessionSandbox::of(&info)));
        Ok(())
    }
}
