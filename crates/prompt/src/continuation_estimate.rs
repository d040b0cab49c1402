//! The result of `continue_session` with `dryRun: true`: what a
//! continuation with that input would carry, and nothing created.
//!
//! The run loop measures (it compiles the projection exactly as the real
//! call would and proposes ranges by the projection crate's rules); this
//! module only words it.

use std::fmt;

/// A range of the thread, with its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstimatedRange {
    /// The first seq.
    pub from: u64,
    /// The last seq, inclusive.
    pub to: u64,
    /// Bytes of its rendered lines.
    pub bytes: u64,
    /// `cited` or `recent`.
    pub what: &'static str,
}

/// A range worth citing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedSource {
    /// The first seq.
    pub from: u64,
    /// The last seq, inclusive.
    pub to: u64,
    /// Why, in a few words (`files changed: a.rs`, `decisions`, `the latest exchange`).
    pub why: String,
}

/// What a continuation would carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuationEstimate {
    /// Bytes of history the projection would load.
    pub used_bytes: u64,
    /// Its budget, in bytes.
    pub budget_bytes: u64,
    /// The ranges it would load.
    pub included: Vec<EstimatedRange>,
    /// The ranges it would leave out for lack of budget.
    pub omitted: Vec<EstimatedRange>,
    /// The successor's first request, estimated, in tokens.
    pub needed_tokens: u64,
    /// The successor model's window, in tokens.
    pub window: u64,
    /// Ranges worth citing.
    pub proposed: Vec<ProposedSource>,
}

fn ranges(f: &mut fmt::Formatter<'_>, ranges: &[EstimatedRange]) -> fmt::Result {
    for (i, r) in ranges.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(f, "{sep}seq {} to {} ({}, {} bytes)", r.from, r.to, r.what, r.bytes)?;
    }
    Ok(())
}

impl fmt::Display for ContinuationEstimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Estimate only: nothing was created, and this turn goes on.")?;
        write!(
            f,
            "A continuation with this input would carry {} of {} bytes of history",
            self.used_bytes, self.budget_bytes
        )?;
        if self.included.is_empty() {
            writeln!(f, " (no ranges).")?;
        } else {
            write!(f, ": ")?;
            ranges(f, &self.included)?;
            writeln!(f, ".")?;
        }
        if self.omitted.is_empty() {
            writeln!(f, "Nothing would be left out.")?;
        } else {
            write!(f, "Left out for lack of budget (linked, not loaded): ")?;
            ranges(f, &self.omitted)?;
            writeln!(f, ".")?;
        }
        let percent = u128::from(self.needed_tokens) * 100 / u128::from(self.window.max(1));
        if self.needed_tokens > self.window {
            writeln!(
                f,
                "The successor's first request would be about {} tokens, more than its {}-token window by {}: cite less or shorten the handoff.",
                self.needed_tokens,
                self.window,
                self.needed_tokens - self.window
            )?;
        } else {
            writeln!(
                f,
                "The successor's first request would be about {} tokens, {percent}% of its {}-token window.",
                self.needed_tokens, self.window
            )?;
        }
        if self.proposed.is_empty() {
            write!(f, "No range stands out to cite.")
        } else {
            write!(f, "Worth citing as sources (session_events, as they are):")?;
            for p in &self.proposed {
                write!(f, "\n- seq {} to {}: {}", p.from, p.to, p.why)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_says_what_fits_what_is_left_out_and_what_to_cite() {
        let estimate = ContinuationEstimate {
            used_bytes: 1_200,
            budget_bytes: 32_768,
            included: vec![
                EstimatedRange { from: 5, to: 9, bytes: 800, what: "cited" },
                EstimatedRange { from: 30, to: 39, bytes: 400, what: "recent" },
            ],
            omitted: vec![EstimatedRange { from: 10, to: 14, bytes: 40_000, what: "cited" }],
            needed_tokens: 4_300,
            window: 32_000,
            proposed: vec![ProposedSource { from: 5, to: 9, why: "files changed: src/a.rs".into() }],
        };
        insta::assert_snapshot!("continuation_estimate", estimate.to_string());
        let over = ContinuationEstimate {
            needed_tokens: 40_000,
            included: Vec::new(),
            omitted: Vec::new(),
            proposed: Vec::new(),
            ..estimate
        };
        let text = over.to_string();
        assert!(text.contains("(no ranges)") && text.contains("Nothing would be left out."), "{text}");
        assert!(text.contains("more than its 32000-token window by 8000"), "{text}");
        assert!(text.ends_with("No range stands out to cite."), "{text}");
    }
}
