//! `write_file` on real folders: created folders, replaced files, nothing
//! left beside them, and what it refuses. (A failed rename leaving the
//! original and no temporary file is tested in `coding::atomic`, through
//! its seam.)

use serde_json::json;

use super::world::{World, shown};

#[tokio::test]
async fn creates_missing_folders() {
    let world = World::new();
    let result = shown(world.call("write_file", json!({"path": "a/b/c.txt", "content": "hello\nworld\n"})).await);
    assert_eq!(result, "ok: Created a/b/c.txt (2 lines, 12 bytes).");
    assert_eq!(world.read("a/b/c.txt"), "hello\nworld\n");
    assert_eq!(world.names_in(&world.root.join("a/b")), ["c.txt"]);
}

#[tokio::test]
async fn replaces_a_file_whole_and_leaves_no_temporary_file() {
    let world = World::new();
    world.write("notes.md", "old text that is longer than the new one");
    let result = shown(world.call("write_file", json!({"path": "./notes.md", "content": "new"})).await);
    assert_eq!(result, "ok: Replaced notes.md (1 line, 3 bytes).");
    assert_eq!(world.read("notes.md"), "new");
    assert_eq!(world.names_in(&world.root), ["notes.md"]);
}

#[tokio::test]
async fn an_empty_file_can_be_written() {
    let world = World::new();
    let result = shown(world.call("write_file", json!({"path": "empty", "content": ""})).await);
    assert_eq!(result, "ok: Created empty (0 lines, 0 bytes).");
}

#[tokio::test]
async fn folders_and_paths_through_files_are_refused() {
    let world = World::new();
    world.write("src/lib.rs", "");
    let result = shown(world.call("write_file", json!({"path": "src", "content": "x"})).await);
    assert_eq!(result, "error: `path`: `src` is a folder; write_file writes files");
    let result = shown(world.call("write_file", json!({"path": "src/lib.rs/inner.rs", "content": "x"})).await);
    assert_eq!(
        result,
        format!(
            "error: `path`: `src/lib.rs/inner.rs` goes through {}, which is a file, not a folder",
            world.root.join("src/lib.rs").display()
        )
    );
    let result = shown(world.call("write_file", json!({"path": "a.txt"})).await);
    assert_eq!(result, "error: `content`: required");
    let result = shown(world.call("write_file", json!({"path": "a.txt", "content": 3})).await);
    assert_eq!(result, "error: `content`: expected a string, got a number");
}
