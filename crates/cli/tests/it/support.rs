//! Running the real `seri` binary on a temporary profile.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary profile and working directory for `seri` runs.
pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Self {
        let env = Self { dir: tempfile::tempdir().unwrap() };
        std::fs::create_dir_all(env.home()).unwrap();
        std::fs::create_dir_all(env.work()).unwrap();
        env
    }

    /// `SERI_HOME`.
    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The working directory seri runs in.
    pub(crate) fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Writes a script of `turns` and returns its path.
    pub(crate) fn script(&self, name: &str, turns: serde_json::Value) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, serde_json::json!({ "turns": turns }).to_string()).unwrap();
        path
    }

    /// A `seri` command with a clean environment (only this profile, no
    /// keys) and no standard input.
    pub(crate) fn seri(&self) -> Command {
        let mut command = self.seri_on_terminal();
        command.stdin(Stdio::null());
        command
    }

    /// The same, with standard input left for a pseudo-terminal to provide.
    pub(crate) fn seri_on_terminal(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_seri"));
        command.current_dir(self.work()).env_clear().env("SERI_HOME", self.home()).env("HOME", self.dir.path());
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        command
    }

    /// Runs `seri ARGS` and returns what happened.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        Run::of(self.seri().args(args).output().unwrap())
    }

    /// Runs `seri ARGS` with extra environment variables.
    pub(crate) fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut command = self.seri();
        command.args(args);
        for (k, v) in vars {
            command.env(k, v);
        }
        Run::of(command.output().unwrap())
    }

    pub(crate) fn request_log(&self) -> PathBuf {
        self.dir.path().join("requests.jsonl")
    }

    pub(crate) fn requests(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.request_log()).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

/// A finished `seri` process.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    fn of(output: Output) -> Self {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Standard output as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }

    #[track_caller]
    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

pub(crate) fn text(text: &str) -> serde_json::Value {
    serde_json::json!({ "text": text })
}

pub(crate) fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The PostgreSQL database the PostgreSQL tests may use
/// (`SERI_TEST_POSTGRES_URL`, set by `cargo xtask ci` and `cargo xtask
/// postgres`); with `SERI_REQUIRE_POSTGRES=1` a missing one fails the test.
pub(crate) fn postgres_url() -> Option<String> {
    let url = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty());
    if url.is_none() && std::env::var_os("SERI_REQUIRE_POSTGRES").is_some_and(|v| v == "1") {
        panic!("SERI_REQUIRE_POSTGRES=1 but SERI_TEST_POSTGRES_URL is not set: run `cargo xtask postgres`");
    }
    url
}

/// The PostgreSQL database with the connection's search_path set to a
/// fresh schema (which the store creates): an empty store of its own.
pub(crate) fn fresh_postgres_url() -> Option<String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = postgres_url()?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let schema = format!("cli{}_{nanos}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let join = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{join}options=-csearch_path%3D{schema}"))
}

/// A folder outside the system's temporary folder (which the sandbox lets
/// commands write) and outside every test workspace: cargo's target
/// folder, unless the checkout itself lies in the temporary folder (a clone
/// under `/tmp`), then `/var/tmp` or the home folder, whichever is not in it.
pub(crate) fn outside_temp() -> tempfile::TempDir {
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let candidates = [Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))), Some("/var/tmp".into()), home];
    let chosen = candidates
        .into_iter()
        .flatten()
        .filter_map(|dir| std::fs::canonicalize(&dir).ok())
        .find(|dir| !dir.starts_with(&temp) && std::fs::metadata(dir).is_ok_and(|m| m.is_dir()))
        .expect("a folder outside the temporary folder: cargo's target folder, /var/tmp or HOME");
    tempfile::tempdir_in(chosen).unwrap()
}

/// Whether this kernel enforces the default sandbox (network off); when
/// not, says why on stderr, for the test to check the refusal instead.
#[allow(clippy::print_stderr, reason = "why a test checks less, kept with its output")]
pub(crate) fn sandbox_enforced() -> bool {
    match seri_tools::sandbox::probe(false) {
        Ok(()) => true,
        Err(why) => {
            eprintln!("the sandbox is not enforced here ({why}): commands are refused instead");
            false
        }
    }
}
