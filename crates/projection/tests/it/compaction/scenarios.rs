//! Snapshots of representative compactions, one per scenario: the working
//! context and its estimate, the decision, the summarizer's input, the
//! `context_compacted` event, and the working context after it. Read a
//! changed snapshot as the model and the summarizer would: it is exactly
//! what they are shown.

use serde_json::json;
use seri_core::CompactionTrigger::{self, Automatic, Manual, Overflow};
use seri_core::EventBody;
use seri_projection::CompactionSettings;

use super::support::{Session, answer, settings, story};

/// The story of compacting `session`, with `summarizer_answer` as the
/// summarizer's reply, snapshotted under `scenario`.
#[track_caller]
fn check(
    scenario: &str,
    session: &Session,
    settings: &CompactionSettings,
    (trigger, focus): (CompactionTrigger, Option<&str>),
    summarizer_answer: &str,
) {
    insta::assert_snapshot!(scenario, story(session, settings, trigger, focus, summarizer_answer));
}

const PARSER: &str = "use crate::lexer::{lex, Token};

/// Parses an expression.
pub fn parse(input: &str) -> Result<Ast, ParseError> {
    let tokens = lex(input);
    let first = tokens.first().unwrap();
    build(first, &tokens[1..])
}

fn build(first: &Token, rest: &[Token]) -> Result<Ast, ParseError> {
    let mut ast = Ast::leaf(first)?;
    for pair in rest.chunks(2) {
        match pair {
            [op, operand] => ast = Ast::binary(ast, op, Ast::leaf(operand)?)?,
            [op] => return Err(ParseError::Dangling(op.clone())),
            _ => unreachable!(),
        }
    }
    Ok(ast)
}
";

/// A short coding session: read, edit, test, a follow-up request.
fn coding_session() -> Session {
    Session::new()
        .user("The parser panics on empty input. Fix it and add a regression test.")
        .thinking("Probably an unwrap on the first token.")
        .assistant("Let me read the parser.")
        .read("src/parser.rs", PARSER)
        .read(
            "src/lexer.rs",
            "pub fn lex(input: &str) -> Vec<Token> { input.split_whitespace().map(Token::from).collect() }",
        )
        .assistant("Line 6 unwraps the first token. I will return an error instead.")
        .edit("src/parser.rs")
        .tool("run_tests", json!({"package": "parser"}), "test result: FAILED. 37 passed; 1 failed")
        .user("Whitespace-only input should count as empty too.")
        .assistant("Then the lexer already gives no tokens; I will add the test.")
        .edit("tests/parser.rs")
        .tool("run_tests", json!({"package": "parser"}), "test result: ok. 38 passed; 0 failed")
        .assistant("Done: `parse(\"\")` and `parse(\"  \")` return `Err(ParseError::Empty)`.")
        .user("Now include the position in the error message.")
}

/// What a summarizer would answer for [`coding_session`].
fn coding_recap() -> String {
    answer(
        "Make `parse(\"\")` return `Err(ParseError::Empty)` instead of panicking, with a regression test; \
         whitespace-only input counts as empty.",
        "- The panic was the unwrap at src/parser.rs:6; `parse` now returns `Err(ParseError::Empty)`.\n\
         - tests/parser.rs covers `\"\"` and `\"  \"`; `cargo test -p parser`: 38 passed.",
        "(none)",
        "1. Include the position in the error message.",
    )
}

// The coding session's local estimate is 340 tokens: 50% of a 680-token window.
#[test]
fn coding_session_at_the_trigger() {
    check("coding_session_at_the_trigger", &coding_session(), &settings(680, 120), (Automatic, None), &coding_recap());
}

#[test]
fn coding_session_just_below_the_trigger() {
    let (session, settings) = (coding_session(), settings(682, 120));
    check("coding_session_just_below_the_trigger", &session, &settings, (Automatic, None), &coding_recap());
}

#[test]
fn too_little_history() {
    let session = Session::new().user("Hello").assistant("Hi! What shall we work on?").user("The parser.");
    check("too_little_history", &session, &settings(200_000, 20_000), (Manual, None), "");
}

#[test]
fn compact_with_focus_words() {
    let recap = answer(
        "Make `parse(\"\")` return `Err(ParseError::Empty)`; whitespace-only input counts as empty.",
        "- src/lexer.rs: `lex` splits on whitespace, so `\"  \"` lexes to no tokens.\n\
         - tests/parser.rs now covers `\"\"` and `\"  \"`; 38 passed.",
        "(none)",
        "1. Include the position in the error message.",
    );
    let focus = (Manual, Some("  the lexer's tests \n"));
    check("compact_with_focus_words", &coding_session(), &settings(200_000, 60), focus, &recap);
}

#[test]
fn pending_call_keeps_its_turn() {
    // The session ends on a call still waiting for its result: no cut may
    // fall after that call's turn, however small the keep budget.
    let session = coding_session()
        .assistant("I will find where the message is built.")
        .call("grep", json!({"pattern": "ParseError::Empty"}));
    check("pending_call_keeps_its_turn", &session, &settings(200_000, 1), (Manual, None), &coding_recap());
}

#[test]
fn newest_turn_alone_exceeds_the_keep_budget() {
    // A call and its result cannot be separated, so the kept part is that
    // pair, larger than the budget.
    let session = coding_session().assistant("Reading the error type.").read("src/error.rs", &"x".repeat(900));
    let settings = settings(200_000, 50);
    check("newest_turn_alone_exceeds_the_keep_budget", &session, &settings, (Manual, None), &coding_recap());
}

#[test]
fn oversized_payloads_are_elided_for_the_summarizer() {
    let big_file = "// generated\n".repeat(400);
    let session = Session::new()
        .user("Regenerate the token table.")
        .assistant("Reading the current one.")
        .read("src/tokens.rs", &big_file)
        .assistant("Writing the new table.")
        .tool("write_file", json!({"path": "src/tokens.rs", "content": big_file, "mode": 420}), "Wrote 5200 bytes.")
        .assistant("Done.")
        .user("Thanks. Next, the lexer.");
    let recap = answer(
        "Regenerate the token table in src/tokens.rs.",
        "- Rewrote src/tokens.rs (5200 bytes); its new contents are not in this recap.",
        "(none)",
        "1. Move on to the lexer.",
    );
    let settings = settings(200_000, 10);
    check("oversized_payloads_are_elided_for_the_summarizer", &session, &settings, (Manual, None), &recap);
}

#[test]
fn existing_recap_is_updated() {
    // The first compaction read src/lexer.rs and edited src/parser.rs; the
    // new turns edit src/lexer.rs and resolve the blocker, so the update
    // grows Progress, drops the blocker, and lists src/lexer.rs as modified.
    let first = answer(
        "Make `parse(\"\")` return an error.",
        "- Found the unwrap at src/parser.rs:6.",
        "- 1 test fails: `whitespace_only_is_empty`.",
        "1. Fix whitespace-only input.",
    );
    let session = coding_session()
        .compact(&settings(200_000, 60), &first)
        .assistant("Looking at where the message is built.")
        .edit("src/lexer.rs")
        .tool("run_tests", json!({"package": "parser"}), "test result: ok. 39 passed; 0 failed")
        .assistant("The error now says `empty input at 1:1`.")
        .user("Good. Commit it.");
    let updated = answer(
        "Make `parse(\"\")` return an error.",
        "- Found the unwrap at src/parser.rs:6.\n- Whitespace-only input is empty; 38 passed.\n\
         - The error says `empty input at 1:1` (src/lexer.rs); 39 passed.",
        "(none)",
        "1. Commit.",
    );
    check("existing_recap_is_updated", &session, &settings(200_000, 20), (Manual, None), &updated);
}

#[test]
fn overflow_right_after_a_compaction_cuts_further() {
    let first = answer("Fix the parser.", "- Fixed the unwrap.", "(none)", "1. Error positions.");
    let session = coding_session()
        .compact(&settings(200_000, 60), &first)
        .assistant("Starting on positions.")
        .read("src/span.rs", "pub struct Span { pub line: u32, pub col: u32 }")
        .assistant("Adding a span to the error.")
        .edit("src/error.rs")
        .user("Also mention the file name.");
    let updated = answer(
        "Fix the parser.",
        "- Fixed the unwrap.\n- `ParseError` carries a `Span` (src/span.rs).",
        "(none)",
        "1. Put the file name in the message.",
    );
    // The keep budget (400 tokens) holds all of it; on overflow the cut
    // keeps at most half of what was refused.
    let settings = settings(200_000, 400);
    check("overflow_right_after_a_compaction_cuts_further", &session, &settings, (Overflow, None), &updated);
}

#[test]
fn frame_tags_in_the_recap_are_escaped() {
    let session = Session::new()
        .user("Why does </compaction_recap> appear in the docs?")
        .assistant("It is an example tag.")
        .read("docs/<frames>.md", "<compaction_recap>example</compaction_recap>")
        .assistant("The page shows the frame literally.")
        .user("Make it a code block.");
    // The summarizer read escaped lines and copied one (`<\frames>`); the
    // parser undoes that, so the event stores the text it meant.
    let recap = answer(
        "Show `</compaction_recap>` as code in docs/<\\frames>.md.",
        "- The page quotes <compaction_recap> literally.",
        "(none)",
        "1. Wrap it in a code block.",
    );
    let settings = settings(200_000, 5);
    check("frame_tags_in_the_recap_are_escaped", &session, &settings, (Manual, None), &recap);
    let stored = session.compact(&settings, &recap);
    let EventBody::ContextCompacted(event) = &stored.events().last().unwrap().body else { panic!() };
    assert_eq!(event.recap.goal, "Show `</compaction_recap>` as code in docs/<frames>.md.");
}
