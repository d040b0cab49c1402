//! What a change to a file looks like to a person: a unified diff, in the
//! question before `write_file` or `edit` acts and in the transcript after.
//! Pure: text in, text out.

use similar::{ChangeTag, TextDiff};

/// Lines of unchanged text kept around each change.
pub const CONTEXT_LINES: usize = 3;

/// Most lines of a change's whole diff a call's facts keep (past the
/// shown diff's cut): enough for any edit a person reads through.
pub const MAX_WHOLE_LINES: usize = 10_000;

/// `before` → `after` as unified-diff hunks (`@@ -a,b +c,d @@`, then
/// ` `/`-`/`+` lines), at most `max_lines` lines, then `… N more lines`.
/// Empty when nothing changed. A line without its newline at the end of
/// the file is shown like any other.
pub fn unified(before: &str, after: &str, max_lines: usize) -> String {
    cap(unified_lines(before, after), max_lines)
}

/// `before` → `after` as a call's facts keep it: the diff cut at
/// `max_lines`, and the whole diff (up to [`MAX_WHOLE_LINES`]) when that
/// cut some of it.
pub fn unified_kept(before: &str, after: &str, max_lines: usize) -> (String, Option<String>) {
    kept(unified_lines(before, after), max_lines)
}

/// A new file as a call's facts keep it, like [`unified_kept`].
pub fn created_kept(content: &str, max_lines: usize) -> (String, Option<String>) {
    kept(created_lines(content), max_lines)
}

fn kept(lines: Vec<String>, max_lines: usize) -> (String, Option<String>) {
    let whole = (lines.len() > max_lines).then(|| cap(lines.clone(), MAX_WHOLE_LINES));
    (cap(lines, max_lines), whole)
}

fn unified_lines(before: &str, after: &str) -> Vec<String> {
    let diff = TextDiff::from_lines(before, after);
    let mut lines = Vec::new();
    for hunk in diff.unified_diff().context_radius(CONTEXT_LINES).iter_hunks() {
        lines.push(hunk.header().to_string());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let text = change.value();
            lines.push(format!("{sign}{}", text.strip_suffix('\n').unwrap_or(text)));
        }
    }
    lines
}

/// Lines added and removed going from `before` to `after`, over the whole
/// change (a diff shown is cut; these are not).
pub fn counts(before: &str, after: &str) -> (u64, u64) {
    let diff = TextDiff::from_lines(before, after);
    diff.iter_all_changes().fold((0, 0), |(added, removed), change| match change.tag() {
        ChangeTag::Insert => (added + 1, removed),
        ChangeTag::Delete => (added, removed + 1),
        ChangeTag::Equal => (added, removed),
    })
}

/// A new file's first `max_lines` lines, each as an added line.
pub fn created(content: &str, max_lines: usize) -> String {
    cap(created_lines(content), max_lines)
}

fn created_lines(content: &str) -> Vec<String> {
    let count = content.lines().count();
    let mut lines = vec![format!("@@ -0,0 +1,{count} @@")];
    lines.extend(content.lines().map(|l| format!("+{l}")));
    lines
}

fn cap(mut lines: Vec<String>, max_lines: usize) -> String {
    let more = lines.len().saturating_sub(max_lines);
    lines.truncate(max_lines);
    let mut out = lines.join("\n");
    if more > 0 {
        out.push_str(&format!("\n… {more} more line{}", if more == 1 { "" } else { "s" }));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counts_cover_the_whole_change_however_much_is_shown() {
        let before: String = (1..=100).map(|n| format!("{n}\n")).collect();
        let after = before.replace("5\n", "five\n");
        // 5, 15, 25 … 95: ten lines changed, far apart.
        assert_eq!(counts(&before, &after), (10, 10));
        assert!(unified(&before, &after, 8).contains("more lines"));
        assert_eq!(counts("", "a\nb\n"), (2, 0));
        assert_eq!(counts("a\n", "a\n"), (0, 0));
    }

    #[test]
    fn a_change_in_the_middle_keeps_three_lines_of_context() {
        let before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        insta::assert_snapshot!(unified(before, after, 40), @r"
        @@ -2,7 +2,7 @@
         2
         3
         4
        -5
        +five
         6
         7
         8
        ");
    }

    #[test]
    fn a_new_file_is_its_head_and_long_diffs_are_cut() {
        insta::assert_snapshot!(created("a\nb\nc\n", 3), @r"
        @@ -0,0 +1,3 @@
        +a
        +b
        … 1 more line
        ");
        assert_eq!(unified("same\n", "same\n", 10), "");
    }

    #[test]
    fn what_is_kept_is_the_shown_diff_and_the_whole_one_only_when_that_was_cut() {
        assert_eq!(created_kept("a\nb\n", 3), (created("a\nb\n", 3), None));
        let (shown, whole) = created_kept("a\nb\nc\n", 3);
        assert_eq!(shown, created("a\nb\nc\n", 3));
        assert_eq!(whole.as_deref(), Some("@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"));
        let before: String = (1..=100).map(|n| format!("{n}\n")).collect();
        let after = before.replace("5\n", "five\n");
        let (shown, whole) = unified_kept(&before, &after, 8);
        assert_eq!(shown, unified(&before, &after, 8));
        assert_eq!(whole, Some(unified(&before, &after, usize::MAX)));
    }

    proptest! {
        /// Every removed line was in `before` and every added one is in
        /// `after`; the hunks' removed and kept lines are `before`'s, in
        /// order, when nothing is cut.
        #[test]
        fn the_diff_only_names_lines_of_its_sides(
            before in proptest::collection::vec("[a-c]{0,2}", 0..12),
            after in proptest::collection::vec("[a-c]{0,2}", 0..12),
        ) {
            let (before, after) = (before.join("\n"), after.join("\n"));
            let diff = unified(&before, &after, usize::MAX);
            prop_assert_eq!(diff.is_empty(), before == after);
            let before_lines: Vec<&str> = before.lines().collect();
            let after_lines: Vec<&str> = after.lines().collect();
            for line in diff.lines() {
                if let Some(removed) = line.strip_prefix('-') {
                    prop_assert!(before_lines.contains(&removed), "{line}");
                } else if let Some(added) = line.strip_prefix('+') {
                    prop_assert!(after_lines.contains(&added), "{line}");
                }
            }
            let added = diff.lines().filter(|l| l.starts_with('+')).count();
            let removed = diff.lines().filter(|l| l.starts_with('-')).count();
            prop_assert_eq!(after_lines.len() as i64 - before_lines.len() as i64, added as i64 - removed as i64);
        }
    }
}
