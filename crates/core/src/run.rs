//! The run vocabulary: how a run ended ([`RunStatus`]), which queue it
//! waited in ([`Lane`]) and what kind of run it was ([`RunKindName`]), as
//! closed enums. The store keeps each as its snake_case name; every other
//! crate compares the enums, never the text.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a run stands, as the `runs` table records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// It holds its session and has not finished.
    Running,
    /// The model ended its turn, or the session continued into a successor.
    Succeeded,
    /// The turn budget ran out first.
    MaxTurns,
    /// A provider, tool-pairing or store error ended it.
    Failed,
    /// Someone cancelled it.
    Cancelled,
    /// Its process stopped before it finished (a crash, `kill -9`): found so
    /// by the next run that took its session.
    Interrupted,
}

/// How a run kept in the store says what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKindName {
    /// A person's turn.
    Interactive,
    /// A child run whose final message goes back to its parent.
    DelegatedChild,
    /// A child run that ends with `return_result`.
    TypedChild,
    /// A run started by a script or automation.
    Script,
}

/// Which queue a run waits in. Interactive runs (someone is waiting) go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// A person is waiting for the answer.
    Interactive,
    /// Nobody is waiting.
    Background,
}

/// A stored name that is none of an enum's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a {what}; expected one of: {}", .expected.join(", "))]
pub struct UnknownName {
    /// What was read.
    pub text: String,
    /// Which vocabulary.
    pub what: &'static str,
    /// Its names.
    pub expected: &'static [&'static str],
}

/// `as_str`, `FromStr` and `Display` over the names in `NAMES`, in order.
macro_rules! names {
    ($ty:ident, $what:literal, [$($variant:ident => $name:literal),+ $(,)?]) => {
        impl $ty {
            /// Every name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The stored (snake_case) name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl FromStr for $ty {
            type Err = UnknownName;

            fn from_str(text: &str) -> Result<Self, UnknownName> {
                match text {
                    $($name => Ok($ty::$variant),)+
                    _ => Err(UnknownName { text: text.to_owned(), what: $what, expected: Self::NAMES }),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

names!(RunStatus, "run status", [
    Running => "running",
    Succeeded => "succeeded",
    MaxTurns => "max_turns",
    Failed => "failed",
    Cancelled => "cancelled",
    Interrupted => "interrupted",
]);

names!(RunKindName, "run kind", [
    Interactive => "interactive",
    DelegatedChild => "delegated_child",
    TypedChild => "typed_child",
    Script => "script",
]);

names!(Lane, "lane", [Interactive => "interactive", Background => "background"]);

impl RunStatus {
    /// Whether the run has ended, however it ended.
    pub const fn is_finished(self) -> bool {
        !matches!(self, RunStatus::Running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_json() {
        for name in RunStatus::NAMES {
            let status: RunStatus = name.parse().unwrap();
            assert_eq!(status.as_str(), *name);
            assert_eq!(serde_json::to_value(status).unwrap(), serde_json::json!(name));
        }
        for name in RunKindName::NAMES {
            assert_eq!(name.parse::<RunKindName>().unwrap().to_string(), *name);
        }
        for name in Lane::NAMES {
            assert_eq!(name.parse::<Lane>().unwrap().to_string(), *name);
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_names_it_could_have_been() {
        let err = "paused".parse::<RunStatus>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "`paused` is not a run status; expected one of: running, succeeded, max_turns, failed, cancelled, interrupted"
        );
    }
}
