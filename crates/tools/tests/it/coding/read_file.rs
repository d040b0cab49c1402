//! `read_file` on real files: numbering, pages, the size cap, and what it refuses.

use serde_json::json;
use seri_tools::coding::read_file::{DEFAULT_LINES, MAX_LINE_CHARS, MAX_OUTPUT_BYTES};

use super::world::{World, shown};

#[track_caller]
fn expect_ok(result: String, expected: &str) {
    assert_eq!(result, format!("ok: {expected}"));
}

#[tokio::test]
async fn lines_are_numbered_like_cat_n() {
    let world = World::new();
    world.write("src/lib.rs", "fn a() {}\r\n\n    indented\nlast without newline");
    let result = shown(world.call("read_file", json!({"path": "src/lib.rs"})).await);
    expect_ok(result, "     1\tfn a() {}\n     2\t\n     3\t    indented\n     4\tlast without newline");
}

#[tokio::test]
async fn offset_and_limit_pick_a_range_and_say_where_to_continue() {
    let world = World::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    world.write("ten.txt", text);
    let result = shown(world.call("read_file", json!({"path": "ten.txt", "offset": 3, "limit": 2})).await);
    expect_ok(result, "     3\tline 3\n     4\tline 4\n\n(showing lines 3–4 of 10; continue with offset 5)");
    let result = shown(world.call("read_file", json!({"path": "ten.txt", "offset": 9})).await);
    expect_ok(result, "     9\tline 9\n    10\tline 10");
    let result = shown(world.call("read_file", json!({"path": "ten.txt", "offset": 11})).await);
    assert_eq!(result, "error: `offset`: 11 is past the end of `ten.txt`, which has 10 lines");
    let result = shown(world.call("read_file", json!({"path": "ten.txt", "limit": 0})).await);
    assert_eq!(result, "error: `limit`: expected a whole number of at least 1, got 0");
}

#[tokio::test]
async fn the_default_page_is_capped_by_lines() {
    let world = World::new();
    let text: String = (1..=DEFAULT_LINES + 5).map(|i| format!("{i}\n")).collect();
    world.write("long.txt", text);
    let result = shown(world.call("read_file", json!({"path": "long.txt"})).await);
    assert!(result.ends_with("\n\n(showing lines 1–2,000 of 2,005; continue with offset 2001)"), "{}", tail(&result));
}

#[tokio::test]
async fn the_output_is_capped_by_size_and_the_rest_is_reachable() {
    let world = World::new();
    let line = "x".repeat(100);
    let text: String = (1..=1_000).map(|i| format!("{i:04} {line}\n")).collect();
    world.write("wide.txt", text);
    let first = shown(world.call("read_file", json!({"path": "wide.txt"})).await);
    assert!(first.len() <= MAX_OUTPUT_BYTES + 200, "{} bytes", first.len());
    // Each numbered line is 7 + 105 + 1 = 113 bytes: 579 of them fit in 64 KiB.
    assert!(
        first.ends_with("\n\n(output cut at 64.0 KiB: showing lines 1–579 of 1,000; continue with offset 580)"),
        "{}",
        tail(&first)
    );
    let next = shown(world.call("read_file", json!({"path": "wide.txt", "offset": 580, "limit": 1})).await);
    expect_ok(next, &format!("   580\t0580 {line}\n\n(showing line 580 of 1,000; continue with offset 581)"));
}

#[tokio::test]
async fn a_very_long_line_is_cut_with_a_count() {
    let world = World::new();
    world.write("min.js", "y".repeat(MAX_LINE_CHARS + 500));
    let result = shown(world.call("read_file", json!({"path": "min.js"})).await);
    expect_ok(result, &format!("     1\t{}… [500 more characters]", "y".repeat(MAX_LINE_CHARS)));
}

#[tokio::test]
async fn binary_files_folders_and_missing_files_are_refused() {
    let world = World::new();
    world.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    world.write("src/main.rs", "");
    let check = |path: &'static str| {
        let world = &world;
        async move { shown(world.call("read_file", json!({"path": path})).await) }
    };
    assert_eq!(
        check("logo.png").await,
        "error: `path`: `logo.png` is a binary file (16 bytes); read_file reads text only"
    );
    assert_eq!(check("src").await, "error: `path`: `src` is a folder; use list to see what it holds");
    assert_eq!(check("nope.txt").await, "error: `path`: `nope.txt` does not exist");
    assert_eq!(check("src/main.rs").await, "ok: (`src/main.rs` is empty)");
    let bad = shown(world.call("read_file", json!({"path": "a", "lines": 3})).await);
    assert_eq!(bad, "error: `lines`: not a field of this input (expected one of: path, offset, limit)");
    let none = shown(world.call("read_file", json!({})).await);
    assert_eq!(none, "error: `path`: required");
}

fn tail(text: &str) -> &str {
    &text[text.len().saturating_sub(160)..]
}
