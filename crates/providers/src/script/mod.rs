//! The scripted provider: deterministic replay of a JSON file of turns, for
//! tests and demos (`seri --provider script --script FILE`).
//!
//! - [`file`](mod@file): the file format, exactly as the design contract fixes it,
//!   and its loading with errors that name the file and the JSON path.
//! - [`replay`]: the provider that answers each request with the next turn.

pub mod file;
pub mod replay;

pub use file::{Script, ScriptError, ScriptErrorKind, ScriptReply, ScriptTurn};
pub use replay::ScriptedProvider;
