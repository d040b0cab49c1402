//! Tests of `live`, beside it so the module itself stays short.

use proptest::prelude::*;

use super::*;

/// A terminal as tall as need be: what the bytes leave on it, line by
/// line (it knows the codes [`LiveText`] writes, and no others).
#[derive(Default)]
struct Screen {
    lines: Vec<String>,
    row: usize,
}

impl Screen {
    fn apply(&mut self, bytes: &str) {
        let mut rest = bytes;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("\r\x1b[J") {
                self.lines.truncate(self.row);
                rest = after;
            } else if let Some(after) = rest.strip_prefix("\x1b[") {
                let params: String = after.chars().take_while(|c| c.is_ascii_digit() || *c == ';').collect();
                let after = &after[params.len()..];
                if let Some(after) = after.strip_prefix('A') {
                    self.row -= params.parse::<usize>().unwrap();
                    rest = after;
                } else {
                    let after = after.strip_prefix('m').expect("only ESC[nA and colours are written");
                    self.put(&format!("\x1b[{params}m"));
                    rest = after;
                }
            } else {
                let end = rest.find(['\n', '\r', '\x1b']).unwrap_or(rest.len());
                let end = if end == 0 { 1 } else { end };
                let (text, after) = rest.split_at(end);
                if text == "\n" {
                    self.put("");
                    self.row += 1;
                } else {
                    self.put(text);
                }
                rest = after;
            }
        }
    }

    fn put(&mut self, text: &str) {
        while self.lines.len() <= self.row {
            self.lines.push(String::new());
        }
        self.lines[self.row].push_str(text);
    }

    fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// The bytes written for each delta, with the codes as words.
fn steps(deltas: &[&str], reach: usize) -> String {
    coloured_steps(deltas, reach, false)
}

fn coloured_steps(deltas: &[&str], reach: usize, color: bool) -> String {
    let mut live = LiveText::new(40, 40, reach, color);
    let mut out = String::new();
    for delta in deltas {
        out.push_str(&format!("{delta:?} →\n{}", readable(&live.push(delta))));
    }
    out.push_str(&format!("end →\n{}", readable(&live.finish())));
    out
}

fn readable(bytes: &str) -> String {
    let text = [("\x1b[1m", "<b>"), ("\x1b[22m", "</b>"), ("\x1b[4m", "<u>"), ("\x1b[24m", "</u>"), ("\x1b[0m", "</>")]
        .iter()
        .fold(bytes.replace("\r\x1b[J", "<clear>"), |t, (code, tag)| t.replace(code, tag));
    let text = (1..=9).fold(text, |t, n| t.replace(&format!("\x1b[{n}A"), &format!("<up {n}>")));
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[test]
fn a_paragraph_shows_as_it_comes_and_a_table_is_redrawn_once_it_is_one() {
    insta::assert_snapshot!(steps(
            &["The first ", "words.\n\n| Tool | Calls |\n", "|---|--:|\n", "| bash | 3 |\n| read_file | 12 |\n", "\nDone."],
            20
        ), @r#"
        "The first " →
          The first
        "words.\n\n| Tool | Calls |\n" →
          <up 1><clear>The first words.
          
          | Tool | Calls |
        "|---|--:|\n" →
          <up 1><clear>┌──────┬───────┐
          │ Tool │ Calls │
          └──────┴───────┘
        "| bash | 3 |\n| read_file | 12 |\n" →
          <up 3><clear>┌───────────┬───────┐
          │ Tool      │ Calls │
          ├───────────┼───────┤
          │ bash      │     3 │
          │ read_file │    12 │
          └───────────┴───────┘
        "\nDone." →
          
          Done.
        end →
        "#);
}

#[test]
fn a_code_block_streams_line_by_line_and_its_lines_are_never_redrawn() {
    insta::assert_snapshot!(steps(&["Here:\n\n```rust\nfn main() {\n    let x", " = 1;\n", "}\n```\n", "After."], 20), @r#"
        "Here:\n\n```rust\nfn main() {\n    let x" →
          Here:
          
          rust
            fn main() {
                let x
        " = 1;\n" →
          <up 1><clear>      let x = 1;
        "}\n```\n" →
            }
        "After." →
          
          After.
        end →
        "#);
}

#[test]
fn a_line_that_turns_out_to_be_a_heading_is_redrawn_as_one() {
    insta::assert_snapshot!(coloured_steps(&["Title\n", "=====\n\nText"], 20, true), @r#"
        "Title\n" →
          Title</>
        "=====\n\nText" →
          <up 1><clear><b><u>Title</u></b></>
          </>
          Text</>
        end →
        "#);
}

#[test]
fn on_a_terminal_that_cannot_rewrite_only_final_lines_are_drawn() {
    insta::assert_snapshot!(steps(&["A paragraph ", "goes on.\n\nNext", "\n\n```\nco", "de\n```\n"], 0), @r#"
        "A paragraph " →
        "goes on.\n\nNext" →
        "\n\n```\nco" →
          A paragraph goes on.
          
          Next
          
        "de\n```\n" →
            code
        end →
        "#);
}

fn thinking_steps(deltas: &[&str], color: bool) -> String {
    let mut live = LiveText::thinking(40, 40, 20, color);
    let mut out = String::new();
    for delta in deltas {
        out.push_str(&format!("{delta:?} →\n{}", readable(&live.push(delta))));
    }
    out.push_str(&format!("end →\n{}", readable(&live.finish())));
    out.replace(THOUGHT, "<thought>")
}

#[test]
fn thinking_streams_behind_a_gutter_dim_and_italic_in_colour() {
    let deltas = ["Let me **check** the ", "parser first.\n\n- one\n", "- two"];
    insta::assert_snapshot!(thinking_steps(&deltas, true), @r#"
        "Let me **check** the " →
          <thought>│ Let me check the</>
        "parser first.\n\n- one\n" →
          <up 1><clear><thought>│ Let me check the parser first.</>
          <thought>│</>
          <thought>│ • one</>
        "- two" →
          <thought>│ • two</>
        end →
        "#);
}

#[test]
fn thinking_without_colour_keeps_its_gutter_and_structure() {
    let deltas = ["Let me **check** the ", "parser first.\n\n- one\n", "- two"];
    insta::assert_snapshot!(thinking_steps(&deltas, false), @r#"
        "Let me **check** the " →
          │ Let me check the
        "parser first.\n\n- one\n" →
          <up 1><clear>│ Let me check the parser first.
          │
          │ • one
        "- two" →
          │ • two
        end →
        "#);
}

#[test]
fn a_resize_mid_answer_wraps_what_is_still_drawn_at_the_new_width() {
    let mut live = LiveText::new(40, 40, 20, false);
    let mut out = readable(&live.push("Done for good.\n\nThis paragraph is still being written "));
    live.resize(24, 24, 20);
    out.push_str("resized →\n");
    out.push_str(&readable(&live.push("and goes on.")));
    out.push_str(&readable(&live.finish()));
    // The line still being written took one row at 40 columns and
    // takes two at 24: the cursor goes up over both.
    insta::assert_snapshot!(out, @r"
          Done for good.
          
          This paragraph is still being written
        resized →
          <up 2><clear>This paragraph is still
          being written and goes
          on.
        ");
}

#[test]
fn a_code_block_in_colour_is_highlighted_as_the_whole_block_is() {
    let text = "```rust\n/* a comment\nover lines */ fn main() {}\n```\n";
    let mut live = LiveText::new(80, 80, 20, true);
    let mut screen = Screen::default();
    for piece in text.split_inclusive(['\n', ' ']) {
        screen.apply(&live.push(piece));
    }
    screen.apply(&live.finish());
    let whole = markdown::render(text, 80, true);
    assert_eq!(console::strip_ansi_codes(&screen.text()), console::strip_ansi_codes(&whole));
    assert_eq!(screen.text().replace(PLAIN, ""), whole.replace(PLAIN, ""));
}

#[test]
fn never_more_rows_are_redrawn_than_the_screen_reaches() {
    let mut live = LiveText::new(40, 40, 3, false);
    let rows: String = (1..=10).map(|n| format!("| {n} | x |\n")).collect();
    let _ = live.push(&format!("Before.\n\n| a | b |\n|---|---|\n{rows}"));
    let bytes = live.push("| 11 | a much wider cell |\n");
    assert!(!bytes.contains("\x1b[4A") && !bytes.contains("\x1b[5A"), "{bytes:?}");
}

#[test]
fn a_reference_link_is_drawn_as_one_once_its_definition_comes() {
    insta::assert_snapshot!(steps(
            &["See [the docs][1] first.\n\n", "Then more.\n\n", "[1]: https://example.com\n", "\nDone."],
            20
        ), @r#"
        "See [the docs][1] first.\n\n" →
          See [the docs][1] first.
        "Then more.\n\n" →
          
          Then more.
        "[1]: https://example.com\n" →
          <up 3><clear>See the docs (https://example.com)
          first.
          
          Then more.
        "\nDone." →
          
          Done.
        end →
        "#);
}

#[test]
fn a_reference_whose_definition_does_not_come_is_drawn_for_good_once_it_would_leave_the_screen() {
    let mut live = LiveText::new(40, 40, 3, false);
    let mut screen = Screen::default();
    for delta in ["See [the docs][1].\n\n", "One.\n\n", "Two.\n\n", "Three.\n\n", "[1]: https://example.com\n"] {
        screen.apply(&live.push(delta));
    }
    screen.apply(&live.finish());
    // Out of reach before its definition came: as it read then.
    assert_eq!(screen.text(), "See [the docs][1].\n\nOne.\n\nTwo.\n\nThree.\n");
}

/// A table taller than the screen reaches: redrawn at each row, its top
/// would stay behind in the old columns. Past that height its rows are
/// drawn for good in the columns it had, a wider cell wrapping in them.
#[test]
fn a_table_taller_than_the_screen_streams_its_rows_in_fixed_columns() {
    let rows: String = (1..=6).map(|n| format!("| {n} | x |\n")).collect();
    let text =
        format!("Rows:\n\n| n | what |\n|--:|---|\n{rows}| 7 | a much wider cell than the rest |\n| 8 | y |\n\nAfter.");
    let mut live = LiveText::new(30, 30, 6, false);
    let mut screen = Screen::default();
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let bytes = live.push(line);
        // The cursor never goes higher than the screen reaches.
        for n in 7..=20 {
            assert!(!bytes.contains(&format!("\x1b[{n}A")), "{bytes:?}");
        }
        screen.apply(&bytes);
        out.push_str(&format!("{line:?} →\n{}", readable(&bytes)));
    }
    screen.apply(&live.finish());
    insta::assert_snapshot!(screen.text(), @r"
        Rows:

        ┌─────┬──────────────────────┐
        │   n │ what                 │
        ├─────┼──────────────────────┤
        │   1 │ x                    │
        │   2 │ x                    │
        │   3 │ x                    │
        │   4 │ x                    │
        │   5 │ x                    │
        │   6 │ x                    │
        │   7 │ a much wider cell    │
        │     │ than the rest        │
        │   8 │ y                    │
        └─────┴──────────────────────┘

        After.
        ");
    let frame: Vec<&str> =
        screen.lines.iter().filter(|l| l.starts_with(['┌', '│', '├', '└'])).map(String::as_str).collect();
    let width = console::measure_text_width(frame[0]);
    assert!(frame.iter().all(|l| console::measure_text_width(l) == width), "{}", screen.text());
    insta::assert_snapshot!(out, @r#"
        "Rows:\n" →
          Rows:
        "\n" →
        "| n | what |\n" →
          
          | n | what |
        "|--:|---|\n" →
          <up 1><clear>┌───┬──────┐
          │ n │ what │
          └───┴──────┘
        "| 1 | x |\n" →
          <up 1><clear>├───┼──────┤
          │ 1 │ x    │
          └───┴──────┘
        "| 2 | x |\n" →
          <up 5><clear>┌─────┬──────────────────────┐
          │   n │ what                 │
          ├─────┼──────────────────────┤
          │   1 │ x                    │
          │   2 │ x                    │
          └─────┴──────────────────────┘
        "| 3 | x |\n" →
          <up 1><clear>│   3 │ x                    │
          └─────┴──────────────────────┘
        "| 4 | x |\n" →
          <up 1><clear>│   4 │ x                    │
          └─────┴──────────────────────┘
        "| 5 | x |\n" →
          <up 1><clear>│   5 │ x                    │
          └─────┴──────────────────────┘
        "| 6 | x |\n" →
          <up 1><clear>│   6 │ x                    │
          └─────┴──────────────────────┘
        "| 7 | a much wider cell than the rest |\n" →
          <up 1><clear>│   7 │ a much wider cell    │
          │     │ than the rest        │
          └─────┴──────────────────────┘
        "| 8 | y |\n" →
          <up 1><clear>│   8 │ y                    │
          └─────┴──────────────────────┘
        "\n" →
        "After." →
          
          After.
        "#);
}

/// Found by the property below: read whole, the line after the lazy
/// continuation line makes that line a paragraph of its own; read up to
/// it, the line belongs to the quote.
#[test]
fn a_block_is_drawn_for_good_only_once_the_text_after_it_cannot_change_it() {
    let text = "-  ===\n > | a | b |\n | a | b |\n > |---|---|\n";
    let mut live = LiveText::new(30, 10_000, 1000, false);
    let mut screen = Screen::default();
    for (at, c) in text.char_indices() {
        screen.apply(&live.push(&text[at..at + c.len_utf8()]));
    }
    screen.apply(&live.finish());
    assert_eq!(screen.text(), markdown::render(text, 30, false));
}

proptest! {
    /// However the answer is cut into deltas, the screen ends up showing
    /// what drawing the whole answer at once shows.
    #[test]
    fn streamed_or_whole_the_screen_is_the_same(
        words in proptest::collection::vec(
            "[a-z]{1,8}|\n|\n\n|```\n|```rust\n|- |1\\. |# |> |\\| a \\| b \\|\n|\\|---\\|---\\|\n|  |===\n|---\n|\\[a\\]\\[1\\]|\\[b\\]\\[\\]|\\[b\\]|\\[c\\]\\(http://z\\)|\n\\[1\\]: http://x\n|\n\\[b\\]: http://y\n",
            0..60,
        ),
        cuts in proptest::collection::vec(1usize..12, 1..20),
    ) {
        // A label defined twice is a known limit: the parser lists only
        // its first definition, so a paragraph the second one starts may
        // be cut from it. Each label is defined once here.
        let mut defined = Vec::new();
        let words: Vec<String> = words
            .into_iter()
            .map(|w| {
                if !w.contains("]: ") { return w; }
                if defined.contains(&w) { return "\n".to_owned(); }
                defined.push(w.clone());
                w
            })
            .collect();
        let text: String = words.join(" ");
        // A terminal wide enough that no line wraps (the emulator does not wrap).
        let mut live = LiveText::new(30, 10_000, 1000, false);
        let mut screen = Screen::default();
        let mut rest = text.as_str();
        for cut in cuts.iter().cycle() {
            if rest.is_empty() { break; }
            let mut at = (*cut).min(rest.len());
            while !rest.is_char_boundary(at) { at += 1; }
            screen.apply(&live.push(&rest[..at]));
            rest = &rest[at..];
        }
        screen.apply(&live.finish());
        prop_assert_eq!(screen.text(), markdown::render(&text, 30, false), "{:?}", text);
    }
}
