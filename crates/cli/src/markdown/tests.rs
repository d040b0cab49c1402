//! Tests of `markdown`, beside it so the module itself stays short.

use super::*;
use proptest::prelude::*;

/// The codes as tags, so a snapshot reads.
fn tags(text: &str) -> String {
    [
        (BOLD, "<b>"),
        (NOT_BOLD, "</b>"),
        (ITALIC, "<i>"),
        (NOT_ITALIC, "</i>"),
        (UNDERLINE, "<u>"),
        (NOT_UNDERLINE, "</u>"),
        (CODE, "<code>"),
        (DIM, "<dim>"),
        (PLAIN, "</>"),
    ]
    .iter()
    .fold(text.to_owned(), |t, (code, tag)| t.replace(code, tag))
}

#[test]
fn blocks_are_drawn_for_a_terminal() {
    let text = "# Plan\n\nFirst we **build** it, then we `test` it, and then we look at what *failed* in the \
                    logs, which takes a while.\n\n- one\n- two\n  1. nested\n\n```text\nfn main() {}\n```\n\n\
                    > quoted\n\nSee [the docs](https://example.com).\n";
    insta::assert_snapshot!(tags(&render(text, 40, true)), @r"
        <b><u>Plan</u></b>

        First we <b>build</b> it, then we <code>test</> it, and
        then we look at what <i>failed</i> in the logs,
        which takes a while.

        • one
        • two
          1. nested

        <dim>text</>
          <code>fn main() {}</>

        <dim>│</> quoted

        See <u>the docs</u> <dim>(https://example.com)</>.
        ");
}

#[test]
fn a_table_is_drawn_as_aligned_columns_in_a_frame() {
    let text = "| Tool | Calls | Notes |\n|:-----|------:|:-----:|\n| read_file | 12 | the most |\n\
                    | bash | 3 | **slow** |\n";
    insta::assert_snapshot!(tags(&render(text, 80, true)), @r"
        <dim>┌───────────┬───────┬──────────┐</>
        <dim>│</> <b>Tool</b>      <dim>│</> <b>Calls</b> <dim>│</>  <b>Notes</b>   <dim>│</>
        <dim>├───────────┼───────┼──────────┤</>
        <dim>│</> read_file <dim>│</>    12 <dim>│</> the most <dim>│</>
        <dim>│</> bash      <dim>│</>     3 <dim>│</>   <b>slow</b>   <dim>│</>
        <dim>└───────────┴───────┴──────────┘</>
        ");
}

#[test]
fn a_wide_table_wraps_its_cells_to_fit_the_terminal() {
    let text = "| Step | What happens |\n|---|---|\n| 1 | The parser reads the whole input before it \
                    looks at the first token, which is why an empty input fails |\n| 2 | Done |\n";
    let drawn = render(text, 40, false);
    insta::assert_snapshot!(drawn, @r"
        ┌──────┬───────────────────────────────┐
        │ Step │ What happens                  │
        ├──────┼───────────────────────────────┤
        │ 1    │ The parser reads the whole    │
        │      │ input before it looks at the  │
        │      │ first token, which is why an  │
        │      │ empty input fails             │
        │ 2    │ Done                          │
        └──────┴───────────────────────────────┘
        ");
    for line in drawn.lines() {
        assert!(console::measure_text_width(line) <= 40, "{line}");
    }
}

#[test]
fn line_breaks_the_model_wrote_are_kept() {
    let haiku = "An old silent pond\nA frog jumps into the pond—\nSplash! Silence again.\n";
    assert_eq!(render(haiku, 80, false), haiku);
    assert_eq!(render("one  \ntwo\\\nthree\n", 80, false), "one\ntwo\nthree\n", "hard breaks too");
}

#[test]
fn without_colour_the_structure_is_the_same() {
    let text = "# Plan\n\n- **first** step\n- second\n\n```rust\nlet a = 1;\n```\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
    let plain = render(text, 60, false);
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert_eq!(plain, console::strip_ansi_codes(&render(text, 60, true)));
    insta::assert_snapshot!(plain, @r"
        Plan

        • first step
        • second

        rust
          let a = 1;

        │ quoted

        ┌───┬───┐
        │ a │ b │
        ├───┼───┤
        │ 1 │ 2 │
        └───┴───┘
        ");
}

#[test]
fn deep_nesting_stops_indenting_at_half_the_width() {
    // Ten nested lists (what proptest found): at two columns a level the
    // last word would start at column 20 and end past 30. Each item that
    // opens with the next list keeps its bullet.
    let lists = render(&format!("{}aaaaaaaaaaa", "- ".repeat(10)), 30, false);
    insta::assert_snapshot!(lists, @r"
        •
          •
            •
              •
                •
                  •
                    •
                      •
                      •
                      • aaaaaaaaaaa
        ");
    // Quotes too: twenty bars would be 40 columns.
    let quotes = render(&format!("{} a word", "> ".repeat(20)), 30, false);
    assert_eq!(quotes, format!("{}a word\n", "│ ".repeat(7)), "{quotes:?}");
    // Shallow nesting is drawn as it was.
    assert_eq!(render("- a\n  - b\n", 30, false), "• a\n  • b\n");
}

#[test]
fn a_code_block_in_a_known_language_is_highlighted_and_keeps_its_text() {
    let drawn = render("```rust\nfn main() { let x = 1; }\n```\n", 80, true);
    assert!(drawn.contains("\x1b[38;2;"), "coloured per token: {drawn:?}");
    assert_eq!(console::strip_ansi_codes(&drawn), "rust\n  fn main() { let x = 1; }\n");
    let unknown = render("```nosuchlanguage\nbeep\n```\n", 80, true);
    assert_eq!(tags(&unknown), "<dim>nosuchlanguage</>\n  <code>beep</>\n");
}

proptest! {
    /// Prose never runs past the width, and no word is split.
    #[test]
    fn wrapping_keeps_words_whole_within_the_width(
        words in proptest::collection::vec("[a-z]{1,12}|\n\n|- ", 1..80),
    ) {
        let text: String = words.join(" ");
        let rendered = render(&text, 30, true);
        let mut letters_in = text.chars().filter(char::is_ascii_alphabetic).collect::<String>();
        let mut letters_out = console::strip_ansi_codes(&rendered).chars().filter(char::is_ascii_alphabetic).collect::<String>();
        letters_in.retain(|c| c != 'x');
        letters_out.retain(|c| c != 'x');
        prop_assert_eq!(letters_in, letters_out, "every word, in order, whole");
        for line in rendered.lines() {
            let plain = console::strip_ansi_codes(line);
            prop_assert!(console::measure_text_width(&plain) <= 30, "{line:?}");
        }
    }
}
