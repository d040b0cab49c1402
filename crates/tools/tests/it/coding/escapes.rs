//! Attempts to leave the working directory: `..`, absolute paths, symlinks
//! to a file or a folder outside, a symlink reached through `..` after a
//! folder that does not exist, and broken symlinks. Each is resolved to
//! where it really leads, so a run that may not leave is refused and the
//! file outside is neither read nor written.

use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use seri_core::DenialReason;
use seri_tools::Permissions;

use super::world::{World, policy, shown};

/// A workspace with symlinks out: `link.txt` to a file outside, `up` to
/// the outside folder, `dangling` to nothing.
fn world_with_links() -> World {
    let world = World::new();
    std::fs::write(world.outside.join("secret.txt"), "secret").unwrap();
    symlink(world.outside.join("secret.txt"), world.root.join("link.txt")).unwrap();
    symlink(&world.outside, world.root.join("up")).unwrap();
    symlink(world.outside.join("missing.txt"), world.root.join("dangling")).unwrap();
    world.write("inside.txt", "inside");
    symlink(world.root.join("inside.txt"), world.root.join("alias.txt")).unwrap();
    world
}

/// Reading and writing allowed, nobody to ask: only a path outside is refused.
fn headless() -> Permissions {
    Permissions::headless(policy(&["write_file", "edit"], &[], false))
}

async fn reason(world: &World, tool: &str, input: Value) -> Option<DenialReason> {
    let result = world.call_with(&headless(), tool, input).await;
    result.err().and_then(|e| e.denial().map(|d| d.reason))
}

#[tokio::test]
async fn every_spelling_of_a_path_outside_is_refused() {
    let world = world_with_links();
    let secret = world.outside.join("secret.txt").display().to_string();
    let cases = [
        "link.txt",
        "up/secret.txt",
        "../outside/secret.txt",
        "./sub/../../outside/secret.txt",
        "missing/../link.txt",
        "missing/../up/secret.txt",
        secret.as_str(),
    ];
    for path in cases {
        for (tool, input) in [
            ("read_file", json!({"path": path})),
            ("write_file", json!({"path": path, "content": "overwritten"})),
            ("edit", json!({"path": path, "old": "secret", "new": "overwritten"})),
        ] {
            assert_eq!(reason(&world, tool, input).await, Some(DenialReason::OutsideWorkspace), "{tool} {path}");
        }
    }
    assert_eq!(std::fs::read_to_string(world.outside.join("secret.txt")).unwrap(), "secret");
    assert_eq!(world.names_in(&world.outside), ["secret.txt"], "nothing was created outside");
}

#[tokio::test]
async fn nothing_outside_is_read_before_the_answer() {
    let world = world_with_links();
    // Were the file read first, a wrong guess would come back as "0 matches"
    // and a right one as a denial, telling the model what the file holds.
    for old in ["secret", "guess"] {
        let input = json!({"path": "link.txt", "old": old, "new": "x"});
        assert_eq!(reason(&world, "edit", input).await, Some(DenialReason::OutsideWorkspace), "{old}");
    }
    let input = json!({"path": "up", "content": "x"});
    assert_eq!(reason(&world, "write_file", input).await, Some(DenialReason::OutsideWorkspace), "not: is a folder");
    assert_eq!(reason(&world, "list", json!({"path": "up/secret.txt"})).await, Some(DenialReason::OutsideWorkspace));
    assert_eq!(
        reason(&world, "grep", json!({"pattern": "x", "path": "up/none"})).await,
        Some(DenialReason::OutsideWorkspace)
    );
}

#[tokio::test]
async fn new_files_through_a_folder_link_are_refused_and_not_created() {
    let world = world_with_links();
    for path in ["up/new.txt", "up/deeper/new.txt", "missing/../up/new.txt"] {
        let input = json!({"path": path, "content": "x"});
        assert_eq!(reason(&world, "write_file", input).await, Some(DenialReason::OutsideWorkspace), "{path}");
    }
    assert_eq!(world.names_in(&world.outside), ["secret.txt"]);
    assert!(!world.root.join("missing").exists(), "no folder was created on the way");
}

#[tokio::test]
async fn the_refusal_names_where_the_path_really_leads() {
    let world = world_with_links();
    let result = shown(world.call_with(&headless(), "read_file", json!({"path": "up/secret.txt"})).await);
    let real = world.outside.join("secret.txt");
    assert!(result.contains(&format!("(read_file: {} (outside the working directory))", real.display())), "{result}");
}

#[tokio::test]
async fn links_that_stay_inside_are_fine_and_named_by_their_target() {
    let world = world_with_links();
    let absolute = world.root.join("inside.txt").display().to_string();
    for path in ["alias.txt", "sub/../inside.txt", absolute.as_str()] {
        assert_eq!(
            shown(world.call_with(&headless(), "read_file", json!({"path": path})).await),
            "ok:      1\tinside",
            "{path}"
        );
    }
    let result =
        shown(world.call_with(&headless(), "write_file", json!({"path": "alias.txt", "content": "new"})).await);
    assert_eq!(result, "ok: Replaced inside.txt (1 line, 3 bytes).");
    assert!(
        std::fs::symlink_metadata(world.root.join("alias.txt")).unwrap().file_type().is_symlink(),
        "the link stays a link"
    );
}

#[tokio::test]
async fn broken_links_and_unexpanded_home_are_input_errors() {
    let world = world_with_links();
    let result = shown(world.call_with(&headless(), "write_file", json!({"path": "dangling", "content": "x"})).await);
    assert_eq!(
        result,
        format!(
            "error: `path`: `dangling` goes through the symlink {} to `{}`, which does not exist",
            world.root.join("dangling").display(),
            world.outside.join("missing.txt").display()
        )
    );
    assert_eq!(world.names_in(&world.outside), ["secret.txt"]);
    let result = shown(world.call_with(&headless(), "read_file", json!({"path": "~/.ssh/id_ed25519"})).await);
    assert_eq!(
        result,
        "error: `path`: `~/.ssh/id_ed25519`: `~` is not expanded; write the path relative to the working directory, or absolute"
    );
    let result = shown(world.call_with(&headless(), "read_file", json!({"path": " "})).await);
    assert_eq!(result, "error: `path`: empty; write a path relative to the working directory");
}

#[tokio::test]
async fn list_and_grep_show_links_but_never_follow_them() {
    let world = world_with_links();
    let result = shown(world.call_with(&headless(), "list", json!({"path": "."})).await);
    let expected = format!(
        "ok: alias.txt -> {}\ndangling -> {}\ninside.txt\nlink.txt -> {}\nup -> {}",
        world.root.join("inside.txt").display(),
        world.outside.join("missing.txt").display(),
        world.outside.join("secret.txt").display(),
        world.outside.display()
    );
    assert_eq!(result, expected);
    let result = shown(world.call_with(&headless(), "grep", json!({"pattern": "secret|inside"})).await);
    assert_eq!(result, "ok: inside.txt:1:inside");
    let result = world.call_with(&headless(), "list", json!({"path": "up"})).await;
    assert_eq!(result.unwrap_err().denial().unwrap().reason, DenialReason::OutsideWorkspace);
}
