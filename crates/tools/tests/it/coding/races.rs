//! A second process changing the tree while the tools run: a folder inside
//! the working directory swapped, again and again, with a symlink to a
//! folder outside (`renameat2` with `RENAME_EXCHANGE`, atomic). Whatever the
//! timing, no tool reads, lists, searches or writes outside: each call sees
//! the folder inside, or fails. The swapping loop is bounded in count and
//! time, on local files only.

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use seri_tools::Permissions;

use super::world::{World, policy, shown};

/// `d` is a folder inside holding `secret.txt` = `inside`; `s` is a symlink
/// to the folder outside, holding `secret.txt` = `OUTSIDE` and a name that
/// exists only there.
fn world() -> World {
    let world = World::new();
    world.write("d/secret.txt", "inside");
    std::fs::write(world.outside.join("secret.txt"), "OUTSIDE").unwrap();
    std::fs::write(world.outside.join("only-outside.txt"), "x").unwrap();
    symlink(&world.outside, world.root.join("s")).unwrap();
    world
}

/// Swaps `d` and `s` until told to stop (or for five seconds at most).
fn swapping(world: &World) -> (Arc<AtomicBool>, std::thread::JoinHandle<u64>) {
    let stop = Arc::new(AtomicBool::new(false));
    let (d, s) = (world.root.join("d"), world.root.join("s"));
    let flag = stop.clone();
    let swaps = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut swaps = 0;
        while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
            rustix::fs::renameat_with(rustix::fs::CWD, &d, rustix::fs::CWD, &s, rustix::fs::RenameFlags::EXCHANGE)
                .unwrap();
            swaps += 1;
        }
        swaps
    });
    (stop, swaps)
}

fn permissive() -> Permissions {
    Permissions::headless(policy(&["write_file", "edit"], &[], false))
}

#[tokio::test]
async fn no_read_list_search_or_write_lands_outside_while_a_folder_is_swapped_for_a_symlink() {
    let world = world();
    let permissions = permissive();
    let (stop, swapper) = swapping(&world);
    let mut seen_inside = 0;
    for i in 0..200 {
        let read = shown(world.call_with(&permissions, "read_file", json!({ "path": "d/secret.txt" })).await);
        assert!(!read.contains("OUTSIDE"), "read_file read a file outside: {read}");
        seen_inside += usize::from(read.contains("inside"));
        let listed = shown(world.call_with(&permissions, "list", json!({ "path": "." })).await);
        assert!(!listed.contains("only-outside.txt"), "list showed a name from outside: {listed}");
        let found = shown(world.call_with(&permissions, "grep", json!({ "pattern": "OUTSIDE", "path": "." })).await);
        assert!(!found.contains("secret.txt:1:"), "grep read a file outside: {found}");
        let name = format!("d/new-{i}.txt");
        let _ = world.call_with(&permissions, "write_file", json!({ "path": name, "content": "written" })).await;
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0, "the folder was swapped while the tools ran");
    assert!(seen_inside > 0, "some reads saw the folder inside");
    let outside = world.names_in(&world.outside);
    assert_eq!(outside, ["only-outside.txt", "secret.txt"], "nothing was written outside, no temporary file left");
}

#[tokio::test]
async fn a_file_swapped_for_a_symlink_is_never_replaced_through_or_given_the_links_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::new();
    let file = world.write("f.txt", "mine");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(world.outside.join("target.txt"), "OUTSIDE").unwrap();
    let link = world.root.join("l");
    symlink(world.outside.join("target.txt"), &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (f, l) = (file.clone(), link.clone());
    let swapper = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut swaps = 0u64;
        while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
            rustix::fs::renameat_with(rustix::fs::CWD, &f, rustix::fs::CWD, &l, rustix::fs::RenameFlags::EXCHANGE)
                .unwrap();
            swaps += 1;
        }
        swaps
    });
    let permissions = permissive();
    for i in 0..200 {
        let _ =
            world.call_with(&permissions, "write_file", json!({ "path": "f.txt", "content": format!("v{i}") })).await;
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swapper.join().unwrap() > 0);
    // Whichever name each ended under: one symlink, still to the file
    // outside, and one file, still 0600.
    let kinds: Vec<std::fs::Metadata> = [&file, &link].iter().map(|p| std::fs::symlink_metadata(p).unwrap()).collect();
    assert_eq!(kinds.iter().filter(|m| m.file_type().is_symlink()).count(), 1, "the link was never replaced");
    let regular = kinds.iter().find(|m| m.file_type().is_file()).unwrap();
    assert_eq!(regular.permissions().mode() & 0o777, 0o600, "the file kept its mode");
    assert_eq!(std::fs::read_to_string(world.outside.join("target.txt")).unwrap(), "OUTSIDE");
    assert_eq!(world.names_in(&world.outside), ["target.txt"]);
}
