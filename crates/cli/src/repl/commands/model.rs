//! `/model [NAME]`: the session's model, shown or chosen.

use crate::exit::Exit;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/model [name]`: shows the session's model, or sets it (`default`
    /// goes back to the configured one). A name is the configured
    /// provider's model id, or `provider/model` with that same provider.
    pub(in crate::repl) async fn model(&mut self, rest: &str) -> Result<(), Exit> {
        let configured = self.runtime.model().clone();
        if rest.is_empty() {
            let info = match self.session {
                Some(id) => Some(self.app.store.agent(&self.app.agent).info(id)?),
                None => None,
            };
            let model = info.as_ref().map_or_else(|| configured.clone(), |i| self.runtime.session_model(i));
            let whose = if model == configured { "the configured model" } else { "this session's choice" };
            println!("model        {}/{} ({whose})", model.provider, model.model);
            println!(
                "/model NAME sets another model of {} for this session; /model default goes back.",
                configured.provider
            );
            return Ok(());
        }
        let chosen = match rest {
            "default" | "-" => None,
            name => Some(model_named(name, &configured.provider)),
        };
        // A name the provider's list does not have is refused before
        // anything is recorded; without a list it is taken unchecked.
        let mut unchecked = None;
        if let Some(m) = chosen.as_ref().filter(|m| m.provider == configured.provider) {
            let answer = self.runtime.provider_models().await.map_err(|e| e.to_string());
            match crate::slash::check_model(&m.model, &m.provider, answer) {
                crate::slash::ModelCheck::Listed => {}
                crate::slash::ModelCheck::Unknown { nearest, listed } => {
                    let hint = match nearest {
                        Some(nearest) => format!("did you mean `{nearest}`?"),
                        None => format!("it lists {listed} models (`seri config` names the one in force)"),
                    };
                    println!("{}", self.style.red(&format!("{} has no model `{}`; {hint}", m.provider, m.model)));
                    return Ok(());
                }
                crate::slash::ModelCheck::NotChecked(why) => unchecked = Some(why),
            }
        }
        let session = self.session_or_new()?;
        match self.runtime.set_model(session, chosen.clone()) {
            Ok(()) => match chosen {
                Some(m) => {
                    println!("From the next request on, this session talks to {}/{}.", m.provider, m.model);
                    if let Some(why) = unchecked {
                        println!("{}", self.style.dim(&format!("(The name was not checked: {why}.)")));
                    }
                }
                None => println!(
                    "This session talks to the configured model again ({}/{}).",
                    configured.provider, configured.model
                ),
            },
            Err(e) => println!("{}", self.style.red(&e.to_string())),
        }
        Ok(())
    }
}

/// The model `/model NAME` names: `provider/model` when the text before
/// the first `/` is a provider seri knows, else a model id of `provider`.
/// On OpenRouter, whose model ids are `vendor/model`, only `openrouter/`
/// names a provider.
pub(in crate::repl) fn model_named(name: &str, provider: &str) -> seri_core::ModelRef {
    const PROVIDERS: &[&str] = &["anthropic", "openai", "openrouter", "ollama", "openai-compatible", "script"];
    match name.split_once('/') {
        Some((head, model)) if head == provider => seri_core::ModelRef::new(provider, model),
        Some((head, model)) if PROVIDERS.contains(&head) && provider != "openrouter" => {
            seri_core::ModelRef::new(head, model)
        }
        _ => seri_core::ModelRef::new(provider, name),
    }
}
