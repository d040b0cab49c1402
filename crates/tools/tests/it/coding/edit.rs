//! `edit` on real files: exactly one match, none, several, `replaceAll`,
//! and never a partial write.

use serde_json::{Value, json};
use seri_tools::Decision;

use super::world::{Person, World, interactive, policy, shown};

const SOURCE: &str = "fn main() {\n    let x = 1;\n    let y = x;\n    println!(\"{x} {y}\");\n}\n";

fn edit(old: &str, new: &str) -> Value {
    json!({"path": "src/main.rs", "old": old, "new": new})
}

#[tokio::test]
async fn one_match_is_replaced() {
    let world = World::new();
    world.write("src/main.rs", SOURCE);
    let result = shown(world.call("edit", edit("let y = x;", "let y = x + 1;")).await);
    assert_eq!(result, "ok: Edited src/main.rs: replaced 1 occurrence (line 3).");
    assert_eq!(world.read("src/main.rs"), SOURCE.replace("let y = x;", "let y = x + 1;"));
    assert_eq!(world.names_in(&world.root.join("src")), ["main.rs"]);
}

#[tokio::test]
async fn zero_matches_is_an_error_and_nothing_changes() {
    let world = World::new();
    world.write("src/main.rs", SOURCE);
    let result = shown(world.call("edit", edit("let z = 2;", "let z = 3;")).await);
    assert_eq!(
        result,
        "error: `old`: not found in `src/main.rs` (0 matches). Copy the text exactly as it is in the file, whitespace included and without read_file's line numbers"
    );
    assert_eq!(world.read("src/main.rs"), SOURCE);
}

#[tokio::test]
async fn several_matches_are_an_error_that_counts_them() {
    let world = World::new();
    world.write("src/main.rs", SOURCE);
    let result = shown(world.call("edit", edit("x", "value")).await);
    assert_eq!(
        result,
        "error: `old`: found 3 matches in `src/main.rs` (lines 2, 3, 4); include more surrounding text so it matches once, or set replaceAll to replace all 3"
    );
    assert_eq!(world.read("src/main.rs"), SOURCE);
}

#[tokio::test]
async fn replace_all_replaces_every_match() {
    let world = World::new();
    world.write("src/main.rs", SOURCE);
    let mut input = edit("x", "value");
    input["replaceAll"] = json!(true);
    let result = shown(world.call("edit", input).await);
    assert_eq!(result, "ok: Edited src/main.rs: replaced 3 occurrences (lines 2, 3, 4).");
    assert_eq!(world.read("src/main.rs"), SOURCE.replace('x', "value"));
    // replaceAll with a single match is a plain edit.
    let mut input = edit("fn main()", "fn start()");
    input["replaceAll"] = json!(true);
    assert_eq!(shown(world.call("edit", input).await), "ok: Edited src/main.rs: replaced 1 occurrence (line 1).");
}

#[tokio::test]
async fn windows_line_endings_are_named_when_nothing_matches() {
    let world = World::new();
    world.write("src/main.rs", SOURCE.replace('\n', "\r\n"));
    let result = shown(world.call("edit", edit("let x = 1;\n    let y = x;", "let x = 2;")).await);
    assert!(
        result.ends_with("; the file has Windows line endings, so `old` must contain \\r\\n where it spans lines"),
        "{result}"
    );
    let result = shown(world.call("edit", edit("let x = 1;\r\n    let y = x;", "let x = 2;")).await);
    assert_eq!(result, "ok: Edited src/main.rs: replaced 1 occurrence (line 2).");
}

#[tokio::test]
async fn inputs_that_cannot_edit_anything_are_refused() {
    let world = World::new();
    world.write("src/main.rs", SOURCE);
    world.write("data.bin", b"\0\x01\x02");
    world.write("latin1.txt", b"caf\xe9");
    let check = |input: Value| {
        let world = &world;
        async move { shown(world.call("edit", input).await) }
    };
    assert_eq!(
        check(edit("", "x")).await,
        "error: `old`: empty; give the exact text to replace (to write a whole file, use write_file)"
    );
    assert_eq!(check(edit("main", "main")).await, "error: `new`: the same as `old`; nothing would change");
    assert_eq!(
        check(json!({"path": "nope.rs", "old": "a", "new": "b"})).await,
        "error: `path`: `nope.rs` does not exist; create it with write_file"
    );
    assert_eq!(
        check(json!({"path": "data.bin", "old": "a", "new": "b"})).await,
        "error: `path`: `data.bin` is a binary file (3 bytes); edit changes text only"
    );
    assert_eq!(
        check(json!({"path": "latin1.txt", "old": "caf", "new": "cafe"})).await,
        "error: `path`: `latin1.txt` is not UTF-8 text; edit cannot change it without corrupting it"
    );
    assert_eq!(
        check(json!({"path": "src/main.rs", "old": "a", "new": "b", "replaceAll": "yes"})).await,
        "error: `replaceAll`: expected a boolean, got a string"
    );
}

#[tokio::test]
async fn a_file_changed_while_waiting_for_approval_is_not_overwritten() {
    let world = World::new();
    let path = world.write("src/main.rs", SOURCE);
    // The person edits the file in their editor before saying yes.
    let person = Person::answering_after(Decision::Allow, move || {
        std::fs::write(&path, "fn main() { let y = x; /* theirs */ }\n").unwrap();
    });
    let permissions = interactive(&person, policy(&[], &[], false));
    let result = shown(world.call_with(&permissions, "edit", edit("let y = x;", "let y = 2;")).await);
    assert_eq!(
        result,
        "error: `path`: `src/main.rs` changed while the edit waited for approval; read it again and redo the edit"
    );
    assert_eq!(world.read("src/main.rs"), "fn main() { let y = x; /* theirs */ }\n");
}
