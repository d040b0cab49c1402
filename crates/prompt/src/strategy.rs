//! The context strategy in force for a session: how seri keeps the working
//! context right when it stops being right.

use std::fmt;
use std::str::FromStr;

/// How a session's working context is kept right.
///
/// The strategy decides which system prompt a session gets and whether
/// `continue_session` is offered. A session whose runs cannot continue (a
/// delegated or typed child's) is in effect on [`ContextStrategy::Compact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ContextStrategy {
    /// The agent calls `continue_session` and a successor starts from a
    /// projection; transcripts are never compacted. The default.
    #[default]
    Continue,
    /// seri's prefix summarizer replaces the oldest part of the working
    /// context with one recap.
    Compact,
}

impl ContextStrategy {
    /// The name used by `--context-strategy` and `config.json`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ContextStrategy::Continue => "continue",
            ContextStrategy::Compact => "compact",
        }
    }
}

impl fmt::Display for ContextStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a text is not a context strategy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a context strategy: expected `continue` or `compact`")]
pub struct ParseContextStrategyError {
    /// The text that was refused.
    pub text: String,
}

impl FromStr for ContextStrategy {
    type Err = ParseContextStrategyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "continue" => Ok(ContextStrategy::Continue),
            "compact" => Ok(ContextStrategy::Compact),
            _ => Err(ParseContextStrategyError { text: s.to_owned() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_refused() {
        for strategy in [ContextStrategy::Continue, ContextStrategy::Compact] {
            assert_eq!(strategy.as_str().parse::<ContextStrategy>(), Ok(strategy));
        }
        let error = "summarize".parse::<ContextStrategy>().unwrap_err();
        assert_eq!(error.to_string(), "`summarize` is not a context strategy: expected `continue` or `compact`");
        assert_eq!(ContextStrategy::default(), ContextStrategy::Continue);
    }
}
