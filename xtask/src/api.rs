//! The API document checked from outside (`cargo xtask api`, and a step of
//! `cargo xtask ci`): the committed `crates/server/openapi.json` is
//!
//! 1. valid OpenAPI 3.1 by an outside validator (PyPI's
//!    `openapi-spec-validator`);
//! 2. enough to generate a working client: `openapi-python-client`
//!    generates one, and `xtask/api/client_check.py` uses it against a
//!    real `seri serve` (scripted model, 127.0.0.1, a token): typed models
//!    for every frame, sessions and events, and real frames read from the
//!    WebSocket parsed by them;
//! 3. what the server does: schemathesis drives that server with a bounded
//!    number of generated requests per operation (and, following the
//!    document's links, sequences of them over sessions it made) and fails
//!    on a 5xx or an answer the document does not describe (status, content
//!    type, body).
//!
//! The tools are pinned and installed with pip into a virtual environment
//! cached outside the checkout (`$XDG_CACHE_HOME/seri`, else
//! `~/.cache/seri`), named after the pins, so a second run only checks that
//! it is there.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The tools, pinned: a new pin is a new environment.
const TOOLS: &[&str] =
    &["openapi-spec-validator==0.9.0", "schemathesis==4.32.5", "openapi-python-client==0.29.1", "websockets==15.0.1"];

/// Generated requests per operation and phase: the whole run stays well
/// under a minute on two cores.
const CASES_PER_OPERATION: &str = "40";

/// The token the server is started with.
const TOKEN: &str = "xtask-api-token";

/// `cargo xtask api`: every check above.
pub(crate) fn run(root: &Path) -> Result<(), String> {
    let started = std::time::Instant::now();
    let tools = ensure_tools()?;
    let document = root.join("crates/server/openapi.json");
    let document_arg = document.display().to_string();
    println!("xtask api: openapi-spec-validator {}", document.display());
    run_tool(&tools.join("bin/openapi-spec-validator"), &[&document_arg], root)?;

    let work = root.join("target/xtask-api");
    recreate(&work)?;
    // No post-hooks: the generated code is read, not kept (ruff is not needed).
    let config = work.join("client-config.json");
    std::fs::write(&config, r#"{"post_hooks": []}"#).map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    println!("xtask api: openapi-python-client generate");
    run_tool(
        &tools.join("bin/openapi-python-client"),
        &[
            "generate",
            "--path",
            &document_arg,
            "--output-path",
            &work.join("seri_client").display().to_string(),
            "--meta",
            "none",
            "--config",
            &config.display().to_string(),
            "--overwrite",
        ],
        &work,
    )?;

    let server = Server::start(root, &work)?;
    println!("xtask api: seri serve at {}", server.url);
    println!("xtask api: the generated client against it (xtask/api/client_check.py)");
    let status = Command::new(tools.join("bin/python"))
        .arg(root.join("xtask/api/client_check.py"))
        .args([&server.url, TOKEN, &document_arg])
        .env("PYTHONPATH", &work)
        .current_dir(&work)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run the client check: {e}"))?;
    if !status.success() {
        return Err(format!("the generated client's check failed ({status})"));
    }

    println!("xtask api: schemathesis, {CASES_PER_OPERATION} cases an operation and phase, every check but one");
    let header = format!("Authorization: Bearer {TOKEN}");
    let st_args = [
        "run",
        &document_arg,
        "--url",
        &server.url,
        "--header",
        &header,
        "--checks",
        "all",
        // Input the document allows but the server refuses with a
        // documented 4xx (a session id no one has, `fromSeq` after
        // `toSeq`, a `cwd` that is not a directory there) is expected.
        "--exclude-checks",
        "positive_data_acceptance",
        "--max-examples",
        CASES_PER_OPERATION,
        "--seed",
        "34",
        "--generation-database",
        "none",
        // One worker: two hit a CPython fault inside schemathesis
        // ("AST constructor recursion depth mismatch") once in three runs.
        "--workers",
        "1",
        // Stateful follows the document's links: sessions it made
        // itself, so the routes on a session see real ones, not 404s.
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--no-color",
        "--report-dir",
        &work.join("schemathesis").display().to_string(),
    ];
    schemathesis(&tools.join("bin/st"), &st_args, &work)?;
    drop(server);
    println!("xtask api: all checks passed in {} s", started.elapsed().as_secs());
    Ok(())
}

/// Runs schemathesis, printing what it printed. A run that found nothing
/// wrong with the server but stopped on an error of schemathesis's own (a
/// `Runtime Error`, such as a fault inside CPython) is run once more; a
/// failure of the server's is never retried.
fn schemathesis(program: &Path, args: &[&str], dir: &Path) -> Result<(), String> {
    for attempt in 1..=2 {
        let output = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("could not run {}: {e}", program.display()))?;
        let printed = String::from_utf8_lossy(&output.stdout);
        print!("{printed}");
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
        if output.status.success() {
            return Ok(());
        }
        let own_fault = printed.contains("Runtime Error") && !printed.contains("Failures:");
        if !own_fault || attempt == 2 {
            return Err(format!("schemathesis found the server or the document wrong ({})", output.status));
        }
        println!("xtask api: schemathesis stopped on an error of its own; once more");
    }
    Ok(())
}

/// The virtual environment with [`TOOLS`], made when missing.
fn ensure_tools() -> Result<PathBuf, String> {
    let key = TOOLS.join(" ");
    let venv = crate::llama::cache_root()?.join(format!("api-tools-{}", short_hash(&key)));
    // Written last: a cut install never looks finished.
    let complete = venv.join("seri-complete");
    if complete.is_file() {
        return Ok(venv);
    }
    let _ = std::fs::remove_dir_all(&venv);
    println!("xtask api: installing {} into {}", TOOLS.join(" "), venv.display());
    let venv_arg = venv.display().to_string();
    let made = Command::new("python3")
        .args(["-m", "venv", &venv_arg])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run python3 (Python 3.10 or newer is needed): {e}"))?;
    if !made.success() {
        return Err(format!("python3 -m venv failed ({made}): on Debian, apt-get install python3-venv"));
    }
    let mut pip = vec!["-m", "pip", "install", "--quiet", "--disable-pip-version-check"];
    pip.extend_from_slice(TOOLS);
    let installed = Command::new(venv.join("bin/python"))
        .args(&pip)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run pip: {e}"))?;
    if !installed.success() {
        return Err(format!("pip could not install the API tools ({installed})"));
    }
    std::fs::write(&complete, key).map_err(|e| format!("cannot write {}: {e}", complete.display()))?;
    Ok(venv)
}

/// A short, stable name for `text` (FNV-1a).
fn short_hash(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
}

fn run_tool(program: &Path, args: &[&str], dir: &Path) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not run {}: {e}", program.display()))?;
    if status.success() { Ok(()) } else { Err(format!("{} failed ({status})", program.display())) }
}

fn recreate(dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// `seri serve` on a fresh profile, with a scripted model, stopped on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(root: &Path, work: &Path) -> Result<Self, String> {
        let built = Command::new(crate::cargo())
            .args(["build", "--quiet", "--locked", "-p", "seri"])
            .current_dir(root)
            .stdin(Stdio::null())
            .status()
            .map_err(|e| format!("could not run cargo build: {e}"))?;
        if !built.success() {
            return Err(format!("cargo build -p seri failed ({built})"));
        }
        let home = work.join("home");
        let project = work.join("project");
        for dir in [&home, &project] {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        // The client check's turns first; schemathesis's messages find the
        // script spent and get a failed run, which is an answer too.
        let script = work.join("script.json");
        let turns = r#"{"turns": [{"text": "Hello from the scripted model.", "usage": {"input": 1200, "cache_read": 0, "cache_write": 0, "output": 8}}]}"#;
        std::fs::write(&script, turns).map_err(|e| format!("cannot write {}: {e}", script.display()))?;
        let log = std::fs::File::create(work.join("serve.log")).map_err(|e| format!("cannot create serve.log: {e}"))?;
        let log_err = log.try_clone().map_err(|e| format!("cannot share serve.log: {e}"))?;
        let child = Command::new(root.join("target/debug/seri"))
            .args(["serve", "--host", "127.0.0.1", "--port", "0", "--provider", "script", "--script"])
            .arg(&script)
            .env("SERI_HOME", &home)
            .env("SERI_SERVER_TOKEN", TOKEN)
            .current_dir(&project)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|e| format!("could not start seri serve: {e}"))?;
        let mut server = Self { child, url: String::new() };
        // `server.json` is written once it listens.
        let told = home.join("server.json");
        for _ in 0..600 {
            if let Ok(text) = std::fs::read_to_string(&told)
                && let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
                && let Some(url) = value["url"].as_str()
            {
                server.url = url.to_owned();
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("seri serve stopped ({status}); see {}", work.join("serve.log").display()));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Err(format!("seri serve did not start listening within a minute; see {}", work.join("serve.log").display()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
