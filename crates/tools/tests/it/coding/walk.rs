//! `list` and `grep` on a real tree with a `.gitignore`: ignored files are
//! skipped, symlinks are not followed, and output is capped with a count.

use serde_json::json;
use seri_tools::coding::grep::MAX_MATCH_LINES;
use seri_tools::coding::list::MAX_ENTRIES;

use super::world::{World, shown};

/// A small project: sources, an ignored build folder and log, a hidden
/// folder, and `.git`.
fn project() -> World {
    let world = World::new();
    world.write(".gitignore", "target/\n*.log\n");
    world.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    world.write("src/main.rs", "fn main() {\n    demo::run();\n}\n");
    world.write("src/lib.rs", "pub fn run() {\n    // TODO: run\n}\n");
    world.write("src/deep/util.rs", "// TODO: util\n");
    world.write("target/debug/demo.rs", "// TODO: generated\n");
    world.write("build.log", "TODO: ignored log\n");
    world.write(".github/ci.yml", "# TODO: ci\n");
    world.write(".git/HEAD", "ref: refs/heads/main # TODO\n");
    world.write("logo.png", b"\x89PNG\0TODO");
    world
}

#[tokio::test]
async fn list_skips_ignored_files_and_git() {
    let world = project();
    let result = shown(world.call("list", json!({"path": "."})).await);
    let expected = "ok: .github/\n.github/ci.yml\n.gitignore\nCargo.toml\nlogo.png\nsrc/\nsrc/deep/\nsrc/deep/util.rs\nsrc/lib.rs\nsrc/main.rs";
    assert_eq!(result, expected);
}

#[tokio::test]
async fn list_a_subfolder_with_a_glob() {
    let world = project();
    assert_eq!(
        shown(world.call("list", json!({"path": "src", "glob": "*.rs"})).await),
        "ok: src/deep/util.rs\nsrc/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        shown(world.call("list", json!({"path": ".", "glob": "src/*.rs"})).await),
        "ok: src/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        shown(world.call("list", json!({"path": "src", "glob": "*.py"})).await),
        "ok: (no files match `*.py` in src)"
    );
    // An ignored folder named directly is listed: .gitignore hides, it does not forbid.
    assert_eq!(shown(world.call("list", json!({"path": "target"})).await), "ok: target/debug/\ntarget/debug/demo.rs");
}

#[tokio::test]
async fn list_refuses_files_and_missing_folders() {
    let world = project();
    assert_eq!(
        shown(world.call("list", json!({"path": "Cargo.toml"})).await),
        "error: `path`: `Cargo.toml` is a file; read it with read_file"
    );
    assert_eq!(shown(world.call("list", json!({"path": "nope"})).await), "error: `path`: `nope` does not exist");
    assert_eq!(
        shown(world.call("list", json!({"path": ".", "glob": "[z"})).await),
        "error: `glob`: `[z` is not a glob: unclosed character class; missing ']'"
    );
    std::fs::create_dir(world.root.join("empty")).unwrap();
    assert_eq!(shown(world.call("list", json!({"path": "empty"})).await), "ok: (empty is empty)");
}

#[tokio::test]
async fn list_output_is_capped_with_a_count() {
    let world = World::new();
    for i in 0..MAX_ENTRIES + 50 {
        world.write(&format!("many/f{i:05}.txt"), "");
    }
    let result = shown(world.call("list", json!({"path": "many"})).await);
    let lines: Vec<&str> = result.lines().collect();
    assert_eq!(lines[0], "ok: many/f00000.txt");
    assert_eq!(lines[MAX_ENTRIES - 1], "many/f00999.txt");
    assert_eq!(lines[MAX_ENTRIES], "");
    assert_eq!(lines[MAX_ENTRIES + 1], "(1,000 of 1,050 entries shown; list a subfolder, or narrow with glob)");
    assert_eq!(lines.len(), MAX_ENTRIES + 2);
}

#[tokio::test]
async fn grep_skips_ignored_and_binary_files() {
    let world = project();
    let result = shown(world.call("grep", json!({"pattern": "TODO"})).await);
    let expected = "ok: .github/ci.yml:1:# TODO: ci\nsrc/deep/util.rs:1:// TODO: util\nsrc/lib.rs:2:    // TODO: run";
    assert_eq!(result, expected);
}

#[tokio::test]
async fn grep_narrowed_by_path_glob_and_flags() {
    let world = project();
    let check = |input| {
        let world = &world;
        async move { shown(world.call("grep", input).await) }
    };
    assert_eq!(check(json!({"pattern": "todo", "path": "src"})).await, "ok: (no matches for `todo` in src)");
    assert_eq!(
        check(json!({"pattern": "(?i)todo", "path": "src", "glob": "src/*.rs"})).await,
        "ok: (no matches for `(?i)todo` in src)",
        "the glob is relative to the folder searched"
    );
    assert_eq!(
        check(json!({"pattern": "(?i)todo", "path": "src", "glob": "*.rs"})).await,
        "ok: src/deep/util.rs:1:// TODO: util\nsrc/lib.rs:2:    // TODO: run"
    );
    assert_eq!(check(json!({"pattern": "^fn", "path": "src/main.rs"})).await, "ok: src/main.rs:1:fn main() {");
    assert_eq!(
        check(json!({"pattern": "run\\(\\)", "path": "target"})).await,
        "ok: (no matches for `run\\(\\)` in target)"
    );
    assert_eq!(
        check(json!({"pattern": "generated", "path": "target"})).await,
        "ok: target/debug/demo.rs:1:// TODO: generated"
    );
    let bad = check(json!({"pattern": "fn ("})).await;
    assert!(bad.starts_with("error: `pattern`: not a valid regular expression: regex parse error:"), "{bad}");
    assert_eq!(check(json!({"pattern": ""})).await, "error: `pattern`: empty; give a regular expression");
    assert_eq!(check(json!({"pattern": "x", "path": "nope"})).await, "error: `path`: `nope` does not exist");
}

#[tokio::test]
async fn grep_output_is_capped_with_counts() {
    let world = World::new();
    let text: String = (1..=300).map(|i| format!("match {i}\n")).collect();
    world.write("a.txt", &text);
    world.write("b.txt", "match in b\n");
    let result = shown(world.call("grep", json!({"pattern": "^match"})).await);
    let lines: Vec<&str> = result.lines().collect();
    assert_eq!(lines[0], "ok: a.txt:1:match 1");
    assert_eq!(lines[MAX_MATCH_LINES - 1], "a.txt:250:match 250");
    assert_eq!(
        lines[MAX_MATCH_LINES + 1],
        "(250 of 301 matching lines shown, in 2 files; narrow with path, glob or a stricter pattern)"
    );
    assert_eq!(lines.len(), MAX_MATCH_LINES + 2);
    let long = format!("needle {}", "z".repeat(400));
    world.write("long.txt", &long);
    let result = shown(world.call("grep", json!({"pattern": "needle"})).await);
    assert_eq!(result, format!("ok: long.txt:1:needle {}… [107 more characters]", "z".repeat(293)));
}
