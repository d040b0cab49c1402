//! Everything seri says to a model, as typed fragments.
//!
//! - [`text`]: the prompt pieces as markdown files under `prompts/`, compiled
//!   in with `include_str!` so a reviewer reads exactly what the model reads:
//!   the base instructions, [`SESSION_CONTINUATION_PROMPT`], and the verb
//!   contracts and coding-tool contracts that the tools crate uses as tool
//!   descriptions.
//! - [`system_prompt`]: [`SystemPrompt`], built once at session start and
//!   frozen: base instructions, the continuation prompt when the continue
//!   strategy is on, then the AGENTS.md, rule and memory files the caller read.
//! - [`context_usage`], [`session_status`], [`plan_state`] and
//!   [`turn_blocks`]: the per-turn blocks, rendered fresh for every request and
//!   never stored.
//! - [`summarizer`]: the compaction summarizer's instructions and its user
//!   message, [`SummarizerMessage`].
//! - [`call_result`]: the tool results the run loop writes itself that
//!   carry values ([`Continued`], [`ChildEnded`]); the fixed ones are in
//!   [`text::results`].
//! - [`child_task`]: a child run's first message, [`ChildTask`]: the task
//!   its parent delegated and what the child is told about its answer.
//! - [`rule`]: rule files' front matter ([`parse_rule`]) and the message a
//!   glob rule arrives in, [`FiredRule`].
//! - [`environment`]: where the session started ([`Environment`]), frozen
//!   into its system prompt.
//! - [`window`]: the context window in force, with the user's override.
//! - [`escape`]: how model- and user-written text is placed inside a frame.
//!
//! `PROMPT_MAP.md` beside this crate says where each piece goes in a request,
//! when it changes and whether it sits in the cacheable prefix.
//!
//! This crate does no IO and keeps no state: the caller reads files, clocks
//! and the store, and passes values in. Prompt text lives here and nowhere
//! else; the run loop never assembles prompt strings of its own.
//!
//! # Example
//!
//! The per-turn blocks for a billed usage and a session status
//! (`cargo run -p seri-prompt --example turn_blocks` renders more):
//!
//! ```
//! use std::num::NonZeroU64;
//!
//! use seri_core::Usage;
//! use seri_prompt::{ContextPressure, ContextUsage, PlanState, SessionStatus, TurnBlocks};
//!
//! let window = NonZeroU64::new(200_000).ok_or("a window is never zero")?;
//! let billed = Usage { input: 2_000, cache_read: 148_000, ..Usage::default() };
//! let usage = ContextUsage::from_last_usage(Some(&billed), window);
//! assert_eq!((usage.percent(), usage.pressure()), (75, ContextPressure::Filling));
//!
//! let blocks = TurnBlocks {
//!     session_status: SessionStatus { title: "Fix the <parser>", description: "Reproduced the panic" },
//!     plan_state: PlanState::new(None, None),
//!     context_usage: Some(usage),
//! };
//! let text = blocks.to_string();
//! let status = r#"<session_status title="Fix the &lt;parser&gt;">Reproduced the panic</session_status>"#;
//! assert!(text.starts_with(status));
//! assert!(text.contains("<plan_state>No plan.</plan_state>"));
//! assert!(text.contains(r#"<context_usage tokens="150000" window="200000" percent="75">"#));
//! # Ok::<(), &'static str>(())
//! ```

pub mod call_result;
pub mod child_task;
pub mod context_usage;
pub mod continuation_estimate;
pub mod continue_request;
pub mod environment;
pub mod escape;
pub mod hook_words;
pub mod permission_mode;
pub mod plan_state;
pub mod rule;
pub mod session_status;
pub mod strategy;
pub mod summarizer;
pub mod system_prompt;
pub mod text;
pub mod turn_blocks;
pub mod window;

pub use call_result::{ChildEnded, Continued, ContinuedBeforeStop, PictureNotSent, ToolPictures};
pub use child_task::ChildTask;
pub use context_usage::{ContextPressure, ContextUsage, SuccessorEstimate};
pub use continuation_estimate::{ContinuationEstimate, EstimatedRange, ProposedSource};
pub use continue_request::{continue_request, mentioned_file};
pub use environment::Environment;
pub use permission_mode::PermissionModeBlock;
pub use plan_state::PlanState;
pub use rule::{FiredRule, RuleFile, RuleFileError, parse_rule};
pub use session_status::SessionStatus;
pub use strategy::{ContextStrategy, ParseContextStrategyError};
pub use summarizer::{SUMMARIZER_INSTRUCTIONS, SummarizerMessage};
pub use system_prompt::{ContextFile, ContextFileKind, SkillEntry, SystemPrompt, SystemPromptBuilder};
pub use text::SESSION_CONTINUATION_PROMPT;
pub use text::results::SECOND_CONTINUATION_REFUSED;
pub use turn_blocks::TurnBlocks;
pub use window::{EffectiveWindow, WindowSource, effective_context_window};
