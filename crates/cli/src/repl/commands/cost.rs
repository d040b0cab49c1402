//! `/cost`: the session's tokens and what they cost, priced per model;
//! usage a provider did not report is unknown, not zero.

use crate::exit::Exit;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/cost`: tokens in and out over the session's model turns, and their price.
    pub(in crate::repl) fn cost(&self) -> Result<(), Exit> {
        let Some(id) = self.session else {
            println!("No session yet: send a message first.");
            return Ok(());
        };
        let (mut total, mut turns) = (seri_core::Usage::default(), 0u64);
        // Answers whose provider reported no usage: unknown, not zero.
        let mut unreported = 0u64;
        // Priced per model: a session may have changed model (`/model`).
        let mut cost: Option<f64> = Some(0.0);
        let mut unpriced = std::collections::BTreeSet::new();
        let prices = &self.app.config.prices;
        // Streamed: a long session's history is never held whole.
        let mut add = |_, body: seri_core::EventBody| {
            let Some(message) = body.as_message() else { return };
            let meta = message.meta();
            let Some(usage) = meta.usage else {
                if message.role == seri_core::Role::Assistant {
                    unreported += 1;
                }
                return;
            };
            total.input += usage.input;
            total.cache_read += usage.cache_read;
            total.cache_write += usage.cache_write;
            total.output += usage.output;
            turns += 1;
            let name = meta.model.as_ref().map(|m| format!("{}/{}", m.provider, m.model));
            match name.as_ref().and_then(|n| prices.get(n)) {
                Some(price) => cost = cost.map(|c| c + price.of(&usage)),
                None => {
                    cost = None;
                    unpriced.insert(name.unwrap_or_else(|| "an unnamed model".to_owned()));
                }
            }
        };
        self.app.store.agent(&self.app.agent).each_body(id, seri_store::SeqRange::ALL, &mut add)?;
        println!("model turns  {turns}");
        println!(
            "input        {} tokens ({} read from the cache, {} written to it)",
            total.input + total.cache_read + total.cache_write,
            total.cache_read,
            total.cache_write
        );
        println!("output       {} tokens", total.output);
        if unreported > 0 {
            println!("unreported   {unreported} model turns: the provider reported no usage for them");
        }
        match cost {
            Some(cost) if turns > 0 => println!("cost         {cost:.4} (at the prices in config.json)"),
            _ if turns == 0 => println!("cost         nothing yet"),
            _ => println!(
                "cost         not known: config.json \"prices\" has no price for {}",
                unpriced.into_iter().collect::<Vec<_>>().join(", ")
            ),
        }
        Ok(())
    }
}
