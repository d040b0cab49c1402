//! Tidy checks over the whole workspace, run as ordinary tests.
//!
//! They guard habits a reviewer would otherwise have to remember: every Rust
//! file says what it is for in a `//!` line, no test is switched off, no stub
//! is left behind, every crate takes the workspace's lints and version,
//! every library crate has an example, and the pure crates (core,
//! projection, prompt) force no IO dependency on their users.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{walk, workspace_root};

fn files_with_extension(ext: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let root = workspace_root();
    for dir in ["crates", "xtask"] {
        walk(&root.join(dir), &mut |path| {
            if path.extension().and_then(|e| e.to_str()) == Some(ext) {
                files.push(path.to_path_buf());
            }
        });
    }
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(workspace_root()).unwrap_or(path).display().to_string()
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let missing: Vec<String> = files_with_extension("rs")
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|p| relative(&p))
        .collect();
    assert!(missing.is_empty(), "these files do not open with a `//!` doc comment:\n{}", missing.join("\n"));
}

#[test]
fn no_switched_off_tests_or_stubs() {
    // Spelled in pieces so this file does not match itself.
    let banned =
        [concat!("#[", "ignore"), concat!("#[", "should_panic"), concat!("todo", "!("), concat!("unimplemented", "!(")];
    let mut hits = Vec::new();
    for path in files_with_extension("rs") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                hits.push(format!("{}:{}: {b}", relative(&path), n + 1));
            }
        }
    }
    assert!(hits.is_empty(), "a switched-off test or a stub is not done:\n{}", hits.join("\n"));
}

#[test]
fn every_crate_uses_workspace_lints_and_version() {
    let mut problems = Vec::new();
    for path in files_with_extension("toml") {
        if path.file_name().and_then(|n| n.to_str()) != Some("Cargo.toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for needle in ["[lints]\nworkspace = true", "version.workspace = true"] {
            if !text.contains(needle) {
                problems.push(format!("{}: missing `{}`", relative(&path), needle.replace('\n', " ")));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_pending_snapshots() {
    let pending = super::pending_snapshots(&workspace_root());
    assert!(pending.is_empty(), "pending insta snapshots: {pending:?}");
}

#[test]
fn every_crate_has_an_architecture_section() {
    let arch = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap_or_default();
    let crates = std::fs::read_dir(workspace_root().join("crates")).map(|d| {
        d.filter_map(Result::ok)
            .filter(|e| e.path().join("Cargo.toml").exists())
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    });
    let missing: Vec<String> = crates
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| name.to_str().map(|n| format!("crates/{n}")))
        .filter(|folder| !arch.contains(&format!("`{folder}`")))
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md has no section naming {missing:?}");
}

/// The crates whose users must never be handed IO: they are pure by
/// design (ARCHITECTURE.md), so depending on one must not pull in a
/// runtime, a database, a network stack or the operating system.
const PURE_CRATES: &[&str] = &["seri-core", "seri-projection", "seri-prompt"];

/// Crates that do IO or exist to reach it: async runtimes and sockets, HTTP
/// and TLS, SQLite, files and directory walks, processes and system calls,
/// randomness, and the clocks of time and id libraries.
const IO_CRATES: &[&str] = &[
    "tokio",
    "mio",
    "socket2",
    "async-std",
    "smol",
    "futures-io",
    "reqwest",
    "hyper",
    "hyper-util",
    "h2",
    "rustls",
    "ring",
    "rusqlite",
    "libsqlite3-sys",
    "tempfile",
    "ignore",
    "walkdir",
    "rustix",
    "libc",
    "nix",
    "getrandom",
    "rand",
    "uuid",
    "chrono",
    "time",
];

/// The full metadata for this machine's platform, so cargo needs nothing it
/// has not downloaded for the build.
fn full_metadata() -> serde_json::Value {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = std::process::Command::new(rustc).arg("-vV").output().unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    let host = version.lines().find_map(|l| l.strip_prefix("host: ")).unwrap().trim().to_owned();
    crate::metadata::cargo_metadata(&workspace_root(), &["--locked", "--offline", "--filter-platform", &host]).unwrap()
}

#[test]
fn pure_crates_force_no_io_crate_on_their_users() {
    let metadata = full_metadata();
    let mut problems = Vec::new();
    for package in PURE_CRATES {
        let dependencies = crate::metadata::normal_dependencies(&metadata, package).unwrap();
        // A sanity check that the walk found something: every one depends on serde_json.
        assert!(dependencies.contains_key("serde_json"), "{package}: {dependencies:?}");
        for (name, chain) in dependencies {
            if IO_CRATES.contains(&name.as_str()) {
                problems.push(format!("{package} depends on {name}: {}", chain.join(" → ")));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "a pure crate reaches an IO crate through its normal dependencies; move the dependency to a crate \
         that does IO, or make it a dev-dependency:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_library_crate_has_an_example_and_example_names_are_unique() {
    let metadata = crate::metadata::cargo_metadata(&workspace_root(), &["--no-deps", "--locked", "--offline"]).unwrap();
    let examples = crate::metadata::workspace_examples(&metadata);
    let without: Vec<String> = crate::metadata::library_packages(&metadata)
        .into_iter()
        .filter(|lib| !examples.iter().any(|e| &e.package == lib))
        .collect();
    assert!(
        without.is_empty(),
        "these library crates have no example under examples/ that uses them through their public API: {without:?}"
    );
    // `cargo xtask ci` runs them as `cargo run --example NAME`, without `-p`.
    let mut names: Vec<&str> = examples.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    let mut repeated: Vec<&str> = names.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    repeated.dedup();
    assert!(repeated.is_empty(), "example names must be unique in the workspace: {repeated:?}");
}

/// The database drivers, spelled in pieces so this file does not match itself.
const DRIVERS: [&str; 2] = [concat!("rus", "qlite"), concat!("tokio_", "postgres")];

#[test]
fn no_database_engine_type_appears_in_the_store_api() {
    // The store stands on either backend behind the same API only if no
    // driver type is part of it: a public item of seri-store naming one
    // would make every caller depend on that database.
    let mut hits = Vec::new();
    for path in files_with_extension("rs") {
        if !relative(&path).starts_with("crates/store/src") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // Unit tests at the end of a file are not the API.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            let public = line.starts_with("pub ") || line.starts_with("pub fn") || line.starts_with("pub struct");
            let names_driver = DRIVERS.iter().any(|d| line.contains(d));
            // A field of the public error enum is public whatever its line says.
            let error_field = relative(&path).ends_with("store/src/error.rs")
                && line.split_once(':').is_some_and(|(name, _)| !name.contains(' ') && !name.is_empty())
                && names_driver;
            if (public && names_driver) || error_field {
                hits.push(format!("{}:{}: {line}", relative(&path), n + 1));
            }
        }
    }
    assert!(hits.is_empty(), "the store's public API names a database driver:\n{}", hits.join("\n"));
}

#[test]
fn only_the_db_module_of_the_store_knows_sql_and_only_its_backends_the_drivers() {
    // Every query of the store is in `crates/store/src/db/`, written once
    // for both backends; the drivers are named only where a backend
    // connects and runs statements (`db/sqlite/`, `db/postgres/`) and in
    // the one module that runs statements on either (`db/sql.rs`). Code and
    // comments alike: a comment that needs a driver's name describes code
    // that belongs there. SQL is looked for where it would run, at the
    // start of a string literal, so that docs may still say what the store
    // guarantees in SQL's terms (`PRAGMA user_version`, `BEGIN IMMEDIATE`).
    let db_dir = "crates/store/src/db/";
    let driver_places = ["crates/store/src/db/sql.rs", "crates/store/src/db/sqlite/", "crates/store/src/db/postgres/"];
    let keywords = ["SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "ALTER ", "DROP ", "PRAGMA", "BEGIN"];
    let mut hits = Vec::new();
    for path in files_with_extension("rs") {
        let name = relative(&path);
        if !name.starts_with("crates/store/src/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let sql = keywords.iter().find(|k| line.contains(&format!("\"{k}")) || line.contains(&format!("r#\"{k}")));
            if let Some(k) = sql
                && !name.starts_with(db_dir)
            {
                hits.push(format!("{name}:{}: SQL in a string literal ({})", n + 1, k.trim_end()));
            }
            for driver in DRIVERS {
                if line.contains(driver) && !driver_places.iter().any(|p| name.starts_with(p)) {
                    hits.push(format!("{name}:{}: names {driver}", n + 1));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "only {db_dir} may build SQL, and only {driver_places:?} name a driver:\n{}",
        hits.join("\n")
    );
}

/// A client of the wire depends on `seri-protocol` alone; it must build
/// without the engine and without a database driver (the `engine` feature
/// adds the conversions for the CLI and the server). Cargo's own tree for
/// that package alone, as a user's build resolves it.
#[test]
fn the_wire_types_build_without_the_engine_or_a_database() {
    let output = std::process::Command::new(super::cargo())
        .args(["tree", "--locked", "--offline", "-p", "seri-protocol", "-e", "normal", "--prefix", "none"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    let tree = String::from_utf8(output.stdout).unwrap();
    let crates: BTreeSet<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(crates.contains("seri-core"), "{tree}");
    let heavy: Vec<&&str> = ["rusqlite", "tokio-postgres", "tokio", "seri-runloop", "seri-store", "seri-providers"]
        .iter()
        .filter(|name| crates.contains(**name))
        .collect();
    assert!(heavy.is_empty(), "seri-protocol without features reaches {heavy:?}:\n{tree}");
}

/// The longest a source file may grow: past it a module holds more than a
/// reader keeps in mind at once, and is split by what its parts do.
const MAX_FILE_LINES: usize = 800;

/// Whether `path` is a test's file (a `tests/` folder, a `tests.rs` beside
/// its module) or a vendored one: neither is held to the length rule.
fn test_or_vendored(path: &Path) -> bool {
    let text = relative(path);
    text.split('/').any(|part| part == "tests" || part == "vendor" || part == "snapshots")
        || path.file_name().is_some_and(|n| n == "tests.rs")
}

#[test]
fn no_source_file_is_longer_than_the_rule() {
    let mut long: Vec<String> = ["rs", "js"]
        .into_iter()
        .flat_map(files_with_extension)
        .filter(|path| !test_or_vendored(path))
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).unwrap_or_default().lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{} ({lines} lines)", relative(&path)))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "split these by what their parts do (at most {MAX_FILE_LINES} lines):\n{}",
        long.join("\n")
    );
}

/// Every method of the run loop's `Runtime` is written under `runtime/`
/// (or `runtime.rs`), so a reader finds what the runtime does in one folder.
#[test]
fn runtime_methods_live_under_runtime() {
    let src = workspace_root().join("crates/runloop/src");
    let mut elsewhere = Vec::new();
    super::walk(&src, &mut |path| {
        let text = relative(path);
        let at_home = text.ends_with("src/runtime.rs") || text.contains("src/runtime/");
        let source = std::fs::read_to_string(path).unwrap_or_default();
        if !at_home && source.lines().any(|l| l.starts_with("impl Runtime") || l.starts_with("impl<'a> Runtime")) {
            elsewhere.push(text);
        }
    });
    assert!(elsewhere.is_empty(), "impl Runtime outside crates/runloop/src/runtime/: {elsewhere:?}");
}
