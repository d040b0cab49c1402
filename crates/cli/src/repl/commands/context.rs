//! `/context`: the measured figure, then each part of the next request.

use crate::exit::Exit;
use crate::repl::Repl;

impl Repl<'_> {
    /// `/context`: what the next request holds, part by part.
    pub(in crate::repl) fn context(&self) -> Result<(), Exit> {
        match self.session {
            Some(id) => println!("{}", context_lines(&self.runtime.context_report(id)?)),
            None => println!("No session yet: send a message first."),
        }
        Ok(())
    }
}

/// `/context`: the measured figure, then each part of the next request.
fn context_lines(report: &seri_runloop::ContextReport) -> String {
    let compact = crate::render::compact_count;
    let window = report.window.max(1);
    let mut out = match report.measured {
        Some(tokens) => format!(
            "context      {} of {} tokens on the last turn ({}%)\n",
            compact(tokens),
            compact(window),
            seri_prompt::ContextUsage::new(
                tokens,
                std::num::NonZeroU64::new(window).unwrap_or(std::num::NonZeroU64::MIN)
            )
            .percent()
        ),
        None => format!("context      nothing measured yet; the window is {} tokens\n", compact(window)),
    };
    let ratio = report.chars_per_token;
    if ratio == seri_core::tokens::CharsPerToken::DEFAULT {
        out.push_str("next request, estimated (characters / 4):\n");
    } else {
        let per_token = ratio.milli() as f64 / 1000.0;
        out.push_str(&format!(
            "next request, estimated (characters / {per_token:.2}, learned from this model's bills):\n"
        ));
    }
    for part in &report.parts {
        let name = match part.name {
            "system prompt" | "per-turn blocks" => part.name.to_owned(),
            name => format!("{name} ({})", part.items),
        };
        out.push_str(&format!("  {name:<44} {:>7}\n", compact(part.tokens)));
    }
    out.push_str(&format!("  {:<44} {:>7}", "total", compact(report.estimated)));
    out
}
