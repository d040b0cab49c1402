//! The run vocabulary every client of seri reads, typed once, below both
//! the CLI and the server.
//!
//! - [`StreamEvent`]: what a run reports while it runs, as one line of
//!   `seri -p … --output-format stream-json` and as the `event` of the
//!   server's `run-event` frame. Built from the run loop's
//!   run loop's `RunEvent` in one place (`StreamEvent::of`, in
//!   `to_proto.rs` behind the `engine` feature); the engine assembles no
//!   JSON.
//! - [`TaskStatus`]: how a task ended, in the three words of the headless
//!   contract (`succeeded`, `max_turns`, `failed`), mapped from a run's
//!   status once, for the CLI's JSON and the server's message answers.
//! - [`RunStatusWord`], [`JobStateWord`], [`ContinueReasonWord`],
//!   [`UsageCounts`]: run and job states and the other closed words, each
//!   mapped from the engine's or the store's own type once, and the usage
//!   figures as the stream family spells them.
//!
//! - [`SessionInfoView`], [`SessionSummaryView`]: the API family's session
//!   views as the document describes them (camelCase), checked against
//!   what core and the store send.
//!
//! One casing per document family: the stream-json
//! family is snake_case keys and `type` words, the names headless users'
//! scripts read (and the scripted provider's `usage` already uses); the
//! HTTP API's documents are camelCase (the views here,
//! `seri_server::protocol`).
//!
//! Every type derives `utoipa::ToSchema`, so the server's OpenAPI document
//! describes these same types. Nothing here does IO.
//!
//! Without features the crate depends on `seri-core` alone: a client that
//! reads the wire builds without the run loop, SQLite or PostgreSQL. The
//! `engine` feature adds the conversions from the engine's and the store's
//! types (`to_proto.rs`), which the CLI and the server turn on.

mod stream;
#[cfg(feature = "engine")]
mod to_proto;
pub mod view;
mod words;

pub use stream::StreamEvent;
pub use view::{SessionInfoView, SessionSummaryView};
pub use words::{ContinueReasonWord, JobStateWord, RunStatusWord, TaskStatus, UsageCounts};
