//! Model-supplied patterns (globs, regular expressions) and names are
//! bounded: nothing the model sends panics seri, and no error or result
//! quotes more than a few hundred bytes of it.

use serde_json::{Value, json};
use seri_tools::error::MAX_PROBLEM_BYTES;
use seri_tools::pattern::MAX_PATTERN_BYTES;

use super::world::{World, shown};

fn small_project() -> World {
    let world = World::new();
    world.write("src/lib.rs", "pub fn run() {}\n");
    world
}

/// The result, checked to be short, with its length in the message.
#[track_caller]
fn short(result: String) -> String {
    assert!(result.len() < MAX_PROBLEM_BYTES + 100, "{} bytes: {}", result.len(), &result[..300]);
    result
}

#[tokio::test]
async fn a_glob_of_87000_stars_is_an_input_error_not_a_panic() {
    // globset's matcher panicked on this (its regex went past globset's
    // size limit), taking the CLI and the server's run down with it.
    let world = small_project();
    for stars in [87_000, 150_000] {
        let glob = "*".repeat(stars);
        let in_src = format!("src/{glob}");
        for (tool, input, bytes) in [
            ("list", json!({"path": ".", "glob": glob}), stars),
            ("grep", json!({"pattern": "fn", "glob": glob}), stars),
            ("grep", json!({"pattern": "fn", "glob": in_src}), stars + 4),
        ] {
            let result = short(shown(world.call(tool, input).await));
            assert!(result.starts_with(&format!("error: `glob`: {bytes} bytes long")), "{tool}: {result}");
            assert!(result.contains(&format!("at most {MAX_PATTERN_BYTES}")), "{tool}: {result}");
            assert!(result.contains("bytes left out"), "{tool}: {result}");
        }
    }
}

#[tokio::test]
async fn the_longest_glob_accepted_still_works() {
    let world = small_project();
    let glob = "*".repeat(MAX_PATTERN_BYTES);
    assert_eq!(shown(world.call("list", json!({"path": ".", "glob": glob})).await), "ok: src/lib.rs");
    let glob = format!("{}.py", "*".repeat(MAX_PATTERN_BYTES - 3));
    let result = short(shown(world.call("list", json!({"path": ".", "glob": glob})).await));
    assert!(result.starts_with("ok: (no files match `****"), "{result}");
    assert!(result.ends_with("***.py` in .)"), "{result}");
}

#[tokio::test]
async fn a_long_or_complex_regex_is_an_input_error_quoted_short() {
    let world = small_project();
    let check = |input: Value| {
        let world = &world;
        async move { short(shown(world.call("grep", input).await)) }
    };
    // 100 KB of pattern.
    let result = check(json!({"pattern": "a".repeat(100_000)})).await;
    assert!(
        result.starts_with("error: `pattern`: 100000 bytes long; a pattern may have at most 4096: `aaa"),
        "{result}"
    );
    // Short, but it compiles to megabytes.
    let result = check(json!({"pattern": r"\w{1000}\w{1000}"})).await;
    assert!(result.starts_with(r"error: `pattern`: `\w{1000}\w{1000}` is too complex"), "{result}");
    // Nested past the limit.
    let result = check(json!({"pattern": format!("{}a{}", "(".repeat(1000), ")".repeat(1000))})).await;
    assert!(result.starts_with("error: `pattern`: not a valid regular expression"), "{result}");
    // A long pattern that is accepted and finds nothing is quoted short.
    let result = check(json!({"pattern": "z".repeat(MAX_PATTERN_BYTES)})).await;
    assert!(result.starts_with("ok: (no matches for `zzz"), "{result}");
    assert!(result.ends_with("zzz` in .)"), "{result}");
}

#[tokio::test]
async fn an_unknown_tool_name_is_quoted_short() {
    let world = small_project();
    let name = format!("{}_tool", "x".repeat(1_000_000));
    let result = short(shown(world.call(&name, json!({})).await));
    assert!(result.starts_with("error: there is no tool named `xxx"), "{result}");
    assert!(result.ends_with("xxx_tool`"), "{result}");
}
