//! seri's automation, as ordinary Rust so it runs wherever cargo does.
//!
//! - `cargo xtask ci`: everything CI checks, in the order that fails fastest:
//!   formatting, clippy with `-D warnings`, the API docs with rustdoc's
//!   warnings denied, the book built and its links checked, every test (doc tests included), no pending `insta`
//!   snapshot (the MCP tests against the reference server, which it installs
//!   with `npm ci` first; the web UI's tests in a headless Chromium, which it
//!   installs with apt-get when missing and it may, checked by axe-core from
//!   `xtask/webui`'s lock (`npm ci`); the PostgreSQL half of
//!   the store's suite and the server's whole suite again on a throw-away
//!   PostgreSQL cluster it starts), that the
//!   web UI's vendored markdown-it is the locked version's file, every example of every workspace crate, run offline as an
//!   outsider would run it, and `cargo check -p` of each library crate on
//!   its own features, and last a bounded run of the fault suite (a
//!   violation fails it). Green here means green in CI.
//! - `cargo xtask docs [--open]`: builds the book (`docs/`) with a pinned
//!   mdBook, which it installs once into the tool cache, and checks every
//!   link and anchor in it offline (`docs.rs`); `--open` opens it. `ci`
//!   runs it after the API docs.
//! - `cargo xtask examples`: only the examples step of `ci`.
//! - `cargo xtask api`: the OpenAPI document checked from outside
//!   (`api.rs`): PyPI's openapi-spec-validator, a Python client generated
//!   by openapi-python-client used against a real `seri serve`, and a
//!   bounded schemathesis run against it; `ci` runs it after the examples.
//! - `cargo xtask llama`: builds `llama-server` from the llama.cpp source in
//!   PyPI's llama-cpp-python sdist and fetches the SmolLM2 model (`llama.rs`),
//!   both cached outside the checkout, and prints their paths; `ci` does it
//!   before the tests and passes them on (`SERI_TEST_LLAMA_*`).
//! - `cargo xtask postgres [CARGO ARGS…]`: starts a throw-away PostgreSQL
//!   cluster, runs `cargo CARGO ARGS…` (default `test --workspace`) with
//!   `SERI_TEST_POSTGRES_URL` pointing at it, and stops it: the PostgreSQL
//!   half of the tests on their own.
//! - `cargo xtask bench`: runs every benchmark of the workspace and prints
//!   each figure beside the baseline measured in the same run, as a ratio.
//! - `cargo xtask peers [--peers LIST]`: records the import fixtures by
//!   running Claude Code, Codex, pi and opencode (from npm) against a
//!   scripted model server (`peers.rs`, `xtask/peers/`); needs the network,
//!   never run by `ci`.
//! - `cargo xtask faults`: the fault-schedule suite (`faults.rs`): random
//!   schedules of kills, outages and a misbehaving model against real
//!   `seri` processes, then the exactly-once invariants checked over the
//!   store.
//!
//! The tidy checks (every `.rs` file opens with `//!`, no ignored tests…) are
//! ordinary tests in `tidy.rs`, so `cargo test` runs them too.

// The binary talks to a person on a terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

mod api;
mod bench;
mod docs;
mod examples;
mod faults;
mod llama;
mod metadata;
mod peers;
mod postgres;
mod sqlite_shell;
#[cfg(test)]
mod tidy;

const USAGE: &str = "usage: cargo xtask <ci|docs|examples|api|llama|postgres|bench|faults|peers>

  ci        fmt --check, clippy -D warnings, docs without warnings, all tests,
            no pending snapshots, the book and its links, then every example
  docs      [--open] build the book (docs/) with mdBook into target/book and
            check every link and anchor in it; --open opens it
  examples  run every example of every workspace crate (offline), as ci does
  api       the OpenAPI document checked from outside: openapi-spec-validator,
            a generated Python client and schemathesis against seri serve
  postgres  [CARGO ARGS…] run cargo (default: test --workspace) against a
            throw-away PostgreSQL cluster (SERI_TEST_POSTGRES_URL)
  llama     build or find llama-server and its test model, print their paths
  bench     [--quick] [CARGO BENCH ARGS…] run the workspace benchmarks and print each
            figure against its baseline (--quick: smaller sizes, fewer runs)
  faults    [--backend sqlite|postgres|both] [--count N] [--seed S] [--replay SEED] [--jobs N]
            random fault schedules against real seri processes, checked for
            exactly-once (see cargo xtask faults --help)
  peers     [--peers claude-code,codex,pi,opencode] [--install DIR] [--no-install]
            record the import fixtures: each peer from npm, run against a mock
            model server (needs the network; not part of ci)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("examples") => examples::run_all(&workspace_root()),
        Some("docs") => docs::run(&workspace_root(), &args[1..]),
        Some("api") => api::run(&workspace_root()),
        Some("llama") => llama::run(),
        Some("bench") => bench::run(&workspace_root(), &args[1..]),
        Some("postgres") => with_postgres(&workspace_root(), &args[1..]),
        Some("faults") => faults::run(&workspace_root(), &args[1..]),
        Some("peers") => peers::run(&workspace_root(), &args[1..]),
        // The MCP server the fault suite configures seri with.
        Some("faults-mcp") => faults::mcp_server(),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

fn ci() -> Result<(), String> {
    let root = workspace_root();
    step(&root, "formatting", &["fmt", "--all", "--", "--check"])?;
    step(&root, "clippy", &["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"])?;
    // A broken intra-doc link or an unclosed HTML tag in a doc comment fails
    // like a clippy warning: the docs are how the crates are used on their own.
    step_with_env(&root, "docs", &["doc", "--workspace", "--no-deps", "--locked"], &[("RUSTDOCFLAGS", "-D warnings")])?;
    // The book, built with a pinned mdBook (installed once into the tool
    // cache), with every link and anchor checked offline. Its reference
    // pages are checked fresh by the tests below.
    println!("xtask ci: book: cargo xtask docs");
    docs::build(&root)?;
    // The MCP tests run against the reference server, installed from the
    // committed lock file; SERI_REQUIRE_MCP makes a missing one a failure,
    // as SERI_REQUIRE_BROWSER does a missing Chromium for the web UI's tests.
    install_mcp_reference_server(&root)?;
    // `seri acp`'s tests run outside clients: acpx and a client on the
    // official TypeScript SDK, installed from the committed lock file.
    let acp_modules = npm_install(&root, "acp-clients", "acpx/dist/cli.js", "the ACP clients")?.display().to_string();
    // The same install holds axe-core, which the browser tests inject into
    // every page state they check (SERI_TEST_AXE names its file).
    let axe = check_vendored_ui(&root)?.join("axe-core/axe.min.js").display().to_string();
    ensure_browser()?;
    // The multi-server test puts two servers behind a real HAProxy.
    ensure_haproxy()?;
    // The store's contract suite and the multi-server tests run on SQLite
    // and on this cluster; SERI_REQUIRE_POSTGRES makes a missing URL a failure.
    let cluster = postgres::Cluster::start()?;
    // The providers' tests against a real llama-server (built once, cached).
    let llama = llama::ensure()?;
    let (llama_server, llama_model) = (llama.server.display().to_string(), llama.model.display().to_string());
    // INSTA_UPDATE=no: a snapshot that changed fails the run instead of
    // quietly writing a `.snap.new` next to the committed one.
    step_with_env(
        &root,
        "tests",
        &["test", "--workspace", "--locked"],
        &[
            ("INSTA_UPDATE", "no"),
            ("SERI_REQUIRE_MCP", "1"),
            ("SERI_REQUIRE_ACP", "1"),
            ("SERI_ACP_MODULES", &acp_modules),
            ("SERI_REQUIRE_BROWSER", "1"),
            ("SERI_REQUIRE_HAPROXY", "1"),
            ("SERI_TEST_AXE", &axe),
            ("SERI_REQUIRE_POSTGRES", "1"),
            ("SERI_TEST_POSTGRES_URL", &cluster.url),
            ("SERI_REQUIRE_LLAMA", "1"),
            ("SERI_TEST_LLAMA_SERVER", &llama_server),
            ("SERI_TEST_LLAMA_MODEL", &llama_model),
        ],
    )?;
    // The server's suite once more, every test on PostgreSQL: its frames
    // come from the store's change feed there, not from the runtimes.
    step_with_env(
        &root,
        "server tests on PostgreSQL",
        &["test", "--locked", "-p", "seri-server", "--test", "it"],
        &[("INSTA_UPDATE", "no"), ("SERI_TEST_SERVER_ON", "postgres"), ("SERI_TEST_POSTGRES_URL", &cluster.url)],
    )?;
    drop(cluster);
    let pending = pending_snapshots(&root);
    if !pending.is_empty() {
        let list: Vec<String> = pending.iter().map(|p| p.display().to_string()).collect();
        return Err(format!(
            "pending insta snapshots (review them, then commit the .snap files):\n  {}",
            list.join("\n  ")
        ));
    }
    // After the tests, which built every example with the same features.
    examples::run_all(&root)?;
    // The API document from outside: an OpenAPI validator, a client
    // generated from it, and schemathesis against a real server.
    api::run(&root)?;
    // Each library crate on its own, with only the features it asks for: a
    // crate that compiles only thanks to a sibling's features fails here.
    let metadata = metadata::cargo_metadata(&root, &["--no-deps"])?;
    for package in metadata::library_packages(&metadata) {
        step(&root, &format!("{package} builds alone"), &["check", "--quiet", "--locked", "-p", &package])?;
    }
    // Last, as it takes longest: the fault suite, a handful of schedules a
    // backend within a bounded time.
    fault_suite(&root)?;
    println!("xtask ci: all green");
    Ok(())
}

/// `cargo xtask faults --count 4 --time-limit 300` on both backends: a
/// violation of exactly-once fails CI and prints the seed that replays it.
fn fault_suite(root: &Path) -> Result<(), String> {
    println!("xtask ci: fault suite: cargo xtask faults --count 4 --time-limit 300");
    let args = ["--count", "4", "--time-limit", "300"].map(str::to_owned);
    faults::run(root, &args).map_err(|e| format!("fault suite: {e}"))
}

/// `cargo ARGS` with a throw-away PostgreSQL cluster for the tests.
fn with_postgres(root: &Path, args: &[String]) -> Result<(), String> {
    let cluster = postgres::Cluster::start()?;
    let default = ["test".to_owned(), "--workspace".to_owned()];
    let args: Vec<&str> = if args.is_empty() { &default[..] } else { args }.iter().map(String::as_str).collect();
    step_with_env(root, "cargo", &args, &[("SERI_REQUIRE_POSTGRES", "1"), ("SERI_TEST_POSTGRES_URL", &cluster.url)])
}

/// `npm ci` of `xtask/NAME` into `target/NAME`, unless the lock file there
/// is already the committed one and `installed` (a path under
/// `node_modules`) exists.
fn npm_install(root: &Path, name: &str, installed: &str, what: &str) -> Result<PathBuf, String> {
    let source = root.join("xtask").join(name);
    let target = root.join("target").join(name);
    let lock = std::fs::read(source.join("package-lock.json"))
        .map_err(|e| format!("cannot read the lock file of {what}: {e}"))?;
    let modules = target.join("node_modules");
    if modules.join(installed).exists()
        && std::fs::read(target.join("package-lock.json")).ok().as_deref() == Some(lock.as_slice())
    {
        return Ok(modules);
    }
    std::fs::create_dir_all(&target).map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(source.join(file), target.join(file)).map_err(|e| format!("cannot copy {file}: {e}"))?;
    }
    println!("xtask ci: {what}: npm ci in {}", target.display());
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&target)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run npm (Node.js and npm are needed for {what}): {e}"))?;
    if status.success() { Ok(modules) } else { Err(format!("npm ci of {what} failed ({status})")) }
}

/// Debian's `chromium` and `chromium-driver`, for the web UI's tests:
/// installed with apt-get when missing and this user may (root, or sudo
/// without a password); otherwise a clear error saying what to install.
fn ensure_browser() -> Result<(), String> {
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
    };
    if on_path("chromedriver") && on_path("chromium") {
        return Ok(());
    }
    apt_install(
        &["chromium", "chromium-driver"],
        "the web UI's tests need a headless Chromium: install Debian's chromium and chromium-driver",
    )
}

/// Debian's `haproxy`, for the multi-server test (two `seri serve` behind
/// a load balancer): installed with apt-get when missing and this user
/// may; otherwise a clear error saying what to install.
fn ensure_haproxy() -> Result<(), String> {
    let installed = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(["/usr/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .any(|dir| dir.join("haproxy").is_file());
    if installed {
        return Ok(());
    }
    apt_install(&["haproxy"], "the multi-server test puts two servers behind HAProxy: install Debian's haproxy")
}

/// Whether this process runs as root.
pub(crate) fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs Debian `packages` with apt-get when this user may (root, or
/// sudo without a password); otherwise fails with `why` and what to install.
pub(crate) fn apt_install(packages: &[&str], why: &str) -> Result<(), String> {
    let missing = format!("{why} (apt-get install {})", packages.join(" "));
    let quiet = |program: &str, args: &[&str]| {
        Command::new(program).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status()
    };
    let root = is_root();
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
    };
    let sudo = !root && quiet("sudo", &["-n", "true"]).is_ok_and(|s| s.success());
    if !on_path("apt-get") || !(root || sudo) {
        return Err(missing);
    }
    println!("xtask: installing {} with apt-get", packages.join(" "));
    let apt = |args: &[&str]| {
        let mut command = if root { Command::new("apt-get") } else { Command::new("sudo") };
        if !root {
            command.arg("apt-get");
        }
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive").stdin(Stdio::null()).status()
    };
    let mut install = vec!["install", "-y", "-qq"];
    install.extend_from_slice(packages);
    let installed = apt(&["update", "-qq"]).is_ok_and(|s| s.success()) && apt(&install).is_ok_and(|s| s.success());
    if installed { Ok(()) } else { Err(format!("apt-get could not install them: {missing}")) }
}

/// The MCP reference server, for the MCP tests.
fn install_mcp_reference_server(root: &Path) -> Result<(), String> {
    npm_install(root, "mcp-everything", "@modelcontextprotocol/server-everything", "the MCP reference server").map(drop)
}

/// The web UI's one third-party file is markdown-it's browser build, kept in
/// `crates/server/ui/vendor/`. It must be byte for byte the file of the
/// version `xtask/webui`'s lock names: a hand edit, or a lock bumped without
/// copying the new file, fails here. Returns the install's `node_modules`,
/// which also holds the browser tests' axe-core at the locked version.
fn check_vendored_ui(root: &Path) -> Result<PathBuf, String> {
    const FILE: &str = "markdown-it/dist/browser/markdown-it.esm.min.mjs";
    // Both files must be there: a lock that gained axe-core installs again.
    let modules = npm_install(root, "webui", "axe-core/axe.min.js", "the web UI's vendored markdown-it and axe-core")?;
    let fresh = std::fs::read(modules.join(FILE)).map_err(|e| format!("cannot read {FILE}: {e}"))?;
    let vendored_path = root.join("crates/server/ui/vendor/markdown-it.esm.min.mjs");
    let vendored =
        std::fs::read(&vendored_path).map_err(|e| format!("cannot read {}: {e}", vendored_path.display()))?;
    if fresh == vendored {
        Ok(modules)
    } else {
        Err(format!(
            "{} is stale: copy target/webui/node_modules/{FILE} over it (the version xtask/webui/package-lock.json names)",
            vendored_path.display()
        ))
    }
}

fn step(root: &Path, what: &str, args: &[&str]) -> Result<(), String> {
    step_with_env(root, what, args, &[])
}

fn step_with_env(root: &Path, what: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    println!("xtask ci: {what}: cargo {}", args.join(" "));
    let status = Command::new(cargo())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run cargo for {what}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed ({status})")) }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// `.snap.new` and `.pending-snap` files anywhere outside `target/`.
pub(crate) fn pending_snapshots(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(root, &mut |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            found.push(path.to_path_buf());
        }
    });
    found
}

/// Calls `visit` for every file under `dir`, skipping `target/` and hidden folders.
pub(crate) fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(&path, visit);
            }
        } else {
            visit(&path);
        }
    }
}
