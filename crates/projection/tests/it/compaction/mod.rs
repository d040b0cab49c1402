//! The compaction planner as the run loop uses it.
//!
//! - `scenarios`: one snapshot per representative compaction, the whole
//!   story from working context to the context after the recap.
//! - `checks`: data-driven checks of each rule: the trigger, stale billed
//!   usage, the file lists, elision, trimming, the recap update, reading the
//!   working context.
//! - `properties`: proptest over random transcripts with tool pairs
//!   everywhere, against a brute-force oracle of the cut.
//! - `rewinds`: the working context and the summarizer after `/rewind`.
//! - `support`: the session builder and the story a snapshot tells.

mod checks;
mod properties;
mod rewinds;
mod scenarios;
mod support;
