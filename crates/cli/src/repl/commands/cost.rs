//! `/cost`: the session's tokens and what they cost, priced per model;
//! usage a provider did not report is unknown, not zero.

use std::collections::BTreeSet;

use seri_core::SessionId;

use crate::app::App;
use crate::exit::Exit;
use crate::repl::Repl;

/// A session's tokens and their price, over its model turns: a fold of its
/// events, which [`totals_from`] carries on from where it stopped.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Totals {
    /// The session folded, and the last of its events folded in.
    through: Option<(SessionId, seri_core::Seq)>,
    pub(crate) usage: seri_core::Usage,
    /// Model turns that reported usage.
    pub(crate) turns: u64,
    /// Answers whose provider reported no usage: unknown, not zero.
    pub(crate) unreported: u64,
    /// At the prices in `config.json`; `None` when a model has none.
    pub(crate) cost: Option<f64>,
    /// The models without a price.
    pub(crate) unpriced: BTreeSet<String>,
}

/// The totals of session `id`, read as a stream: a long session's history
/// is never held whole. Priced per model: a session may have changed model.
pub(crate) fn totals(app: &App, id: SessionId) -> Result<Totals, Exit> {
    totals_from(app, id, Totals::default())
}

/// `known` (totals of `id` folded so far, or the default: none) carried on
/// over the events after the last it folded: what the status line reads
/// again and again while a session grows costs only what is new. Equal to
/// [`totals`] read whole.
pub(crate) fn totals_from(app: &App, id: SessionId, known: Totals) -> Result<Totals, Exit> {
    let (mut totals, range) = match known.through {
        Some((session, seq)) if session == id => (known, seri_store::SeqRange::starting_at(seq.next())),
        _ => (Totals { cost: Some(0.0), ..Totals::default() }, seri_store::SeqRange::ALL),
    };
    let prices = &app.config.prices;
    let mut add = |seq, body: seri_core::EventBody| {
        totals.through = Some((id, seq));
        let Some(message) = body.as_message() else { return };
        let meta = message.meta();
        let Some(usage) = meta.usage else {
            if message.role == seri_core::Role::Assistant {
                totals.unreported += 1;
            }
            return;
        };
        totals.usage.input += usage.input;
        totals.usage.cache_read += usage.cache_read;
        totals.usage.cache_write += usage.cache_write;
        totals.usage.output += usage.output;
        totals.turns += 1;
        let name = meta.model.as_ref().map(|m| format!("{}/{}", m.provider, m.model));
        match name.as_ref().and_then(|n| prices.get(n)) {
            Some(price) => totals.cost = totals.cost.map(|c| c + price.of(&usage)),
            None => {
                totals.cost = None;
                totals.unpriced.insert(name.unwrap_or_else(|| "an unnamed model".to_owned()));
            }
        }
    };
    app.store.agent(&app.agent).each_body(id, range, &mut add)?;
    Ok(totals)
}

impl Repl<'_> {
    /// `/cost`: tokens in and out over the session's model turns, and their price.
    pub(in crate::repl) fn cost(&self) -> Result<(), Exit> {
        let Some(id) = self.session else {
            println!("No session yet: send a message first.");
            return Ok(());
        };
        let Totals { usage: total, turns, unreported, cost, unpriced, .. } = totals(self.app, id)?;
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
