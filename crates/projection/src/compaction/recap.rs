//! Reading the summarizer's answer: [`parse_recap`].
//!
//! The summarizer answers in the recap's own markdown: four sections
//! `## Goal`, `## Progress`, `## Blockers`, `## Next steps`, in that order
//! ([`seri_core::CompactionRecap::to_markdown`]). Markdown sections rather
//! than JSON because a model writes them reliably at any length: no quote
//! or newline inside a field can break the format, and a truncated answer
//! still shows which sections arrived.
//!
//! The parser is tolerant of what models actually write around that shape:
//!
//! - any heading level (`#` to `######`), bold headings (`**Goal**`), a bare
//!   heading line with a colon (`Goal:`), any letter case, and `_` or `-`
//!   for the space in "Next steps";
//! - sections in any order; a section given twice is joined;
//! - text before the first section (a preamble) and a code fence around the
//!   whole answer are ignored;
//! - other headings (`## Notes`) stay inside the section they appear in,
//!   so nothing the summarizer wrote under a known section is lost;
//! - `(none)`, `none` and `n/a` alone in a section read as empty;
//! - the framing escape is undone: the summarizer read escaped transcript
//!   lines (`<\excerpt>`) and may copy them; the working context escapes
//!   the recap again when it renders it.
//!
//! A section that is missing altogether is an error naming it.

use seri_core::{CompactionRecap, RecapField};

use super::error::RecapParseError;
use crate::framing::unescape_action_framing;

/// The recap in the summarizer's answer.
pub fn parse_recap(answer: &str) -> Result<CompactionRecap, RecapParseError> {
    let mut recap = CompactionRecap::default();
    let mut seen = [false; 4];
    let mut current: Option<RecapField> = None;
    for line in without_fence(answer).lines() {
        if let Some(field) = heading(line) {
            if seen[index(field)] {
                let text = recap.field_mut(field);
                text.truncate(text.trim_end().len());
                text.push_str("\n\n");
            }
            seen[index(field)] = true;
            current = Some(field);
            continue;
        }
        if let Some(field) = current {
            let text = recap.field_mut(field);
            text.push_str(line);
            text.push('\n');
        }
    }
    let missing: Vec<RecapField> = RecapField::ALL.into_iter().filter(|f| !seen[index(*f)]).collect();
    if !missing.is_empty() {
        return Err(RecapParseError { missing });
    }
    for field in RecapField::ALL {
        let text = recap.field_mut(field);
        let cleaned = clean(text);
        *text = cleaned;
    }
    Ok(recap)
}

fn index(field: RecapField) -> usize {
    match field {
        RecapField::Goal => 0,
        RecapField::Progress => 1,
        RecapField::Blockers => 2,
        RecapField::NextSteps => 3,
    }
}

/// The field a line is the heading of, if it is one.
fn heading(line: &str) -> Option<RecapField> {
    let line = line.trim();
    let hashes = line.len() - line.trim_start_matches('#').len();
    let (name, marked) = if (1..=6).contains(&hashes) { (line[hashes..].trim(), true) } else { (line, false) };
    let bold = name.strip_prefix("**").and_then(|n| n.strip_suffix("**"));
    let (name, marked) = match bold {
        Some(inner) => (inner.trim(), true),
        None => (name, marked),
    };
    let (name, marked) = match name.strip_suffix(':') {
        Some(inner) => (inner.trim_end(), true),
        None => (name, marked),
    };
    if !marked {
        return None;
    }
    let normalised: String = name.chars().map(|c| if c == '_' || c == '-' { ' ' } else { c }).collect();
    RecapField::ALL.into_iter().find(|f| f.heading().eq_ignore_ascii_case(normalised.trim()))
}

/// The answer without a code fence around all of it.
fn without_fence(answer: &str) -> &str {
    let trimmed = answer.trim();
    let Some(rest) = trimmed.strip_prefix("```") else { return answer };
    let Some(body) = rest.strip_suffix("```") else { return answer };
    // The opening fence's line may name a language (```markdown).
    body.split_once('\n').map_or("", |(_, inner)| inner)
}

/// A section's text: trimmed, unescaped, and empty when it says there is nothing.
fn clean(text: &str) -> String {
    let text = text.trim();
    let nothing = ["(none)", "none", "none.", "n/a", "-", "- none", "- (none)"];
    if nothing.iter().any(|n| n.eq_ignore_ascii_case(text)) {
        return String::new();
    }
    unescape_action_framing(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(answer: &str, expected: [&str; 4]) {
        let recap = parse_recap(answer).unwrap();
        let got = RecapField::ALL.map(|f| recap.field(f).to_owned());
        assert_eq!(got, expected.map(str::to_owned));
    }

    #[track_caller]
    fn check_error(answer: &str, missing: &[RecapField], message: &str) {
        let err = parse_recap(answer).unwrap_err();
        assert_eq!(err.missing, missing);
        assert_eq!(err.to_string(), message);
    }

    #[test]
    fn the_exact_format_round_trips() {
        let recap = CompactionRecap {
            goal: "Fix `parse(\"\")`.".into(),
            progress: "- Found src/parser.rs:42.\n- Wrote the test.".into(),
            blockers: String::new(),
            next_steps: "1. Run `cargo test`.".into(),
        };
        assert_eq!(parse_recap(&recap.to_markdown()).unwrap(), recap);
    }

    #[test]
    fn tolerates_what_models_write_around_the_format() {
        check(
            "Here is the recap.\n\n# goal\nG\n\n**Progress:**\nP1\n### Notes\nP2\n\nBLOCKERS:\nnone\n## Next_steps\nN",
            ["G", "P1\n### Notes\nP2", "", "N"],
        );
        check(
            "```markdown\n## Next steps\nN\n## Blockers\n(none)\n## Progress\nP\n## Goal\nG\n```",
            ["G", "P", "", "N"],
        );
        check(
            "## Goal\nA\n## Progress\nP\n## Goal\nB\n## Blockers\nVec<\\String> fails\n## Next-steps\n- n/a",
            ["A\n\nB", "P", "Vec<String> fails", "- n/a"],
        );
        // A line that merely mentions a field is text, not a heading.
        check(
            "## Goal\nProgress is slow\n## Progress\n\n## Blockers\n## Next steps\n",
            ["Progress is slow", "", "", ""],
        );
    }

    #[test]
    fn a_missing_section_is_named() {
        check_error(
            "## Goal\nG\n## Progress\nP",
            &[RecapField::Blockers, RecapField::NextSteps],
            "the summarizer's answer has no `## Blockers`, `## Next steps` section; a recap needs all four \
             sections: ## Goal, ## Progress, ## Blockers, ## Next steps",
        );
        assert_eq!(parse_recap("").unwrap_err().missing, RecapField::ALL.to_vec());
    }
}
