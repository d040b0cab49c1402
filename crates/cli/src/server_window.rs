//! A local model server's context window, asked of the server once per
//! model and remembered in the profile (`windows.json`).
//!
//! A local model runs with the window its server was started with, which
//! no table of model names knows; assuming seri's default (128000) against
//! a `llama-server -c 2048` means compaction never triggers and the meter
//! reads 1%. So when neither `--context-window` nor `context.window` gives
//! one, and the provider is a local kind (`ollama`, `openai-compatible`),
//! seri asks the server (`seri_providers::window`), remembers the answer
//! under the provider, base URL and model, and `seri config` names where it
//! came from. The configuration always wins; a server that answers nothing
//! leaves the default in force, and is asked again at the next start.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use seri_providers::{ProviderKind, ServerWindow, Settings, WindowSource};

/// The file, in the profile root.
pub(crate) const FILE: &str = "windows.json";

/// How long each question to the server may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Remembered {
    /// Keyed by `provider base-url model`.
    windows: BTreeMap<String, Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    tokens: u64,
    source: String,
}

/// Whether `kind` serves local models whose window only the server knows.
pub(crate) fn applies_to(kind: ProviderKind) -> bool {
    matches!(kind, ProviderKind::Ollama | ProviderKind::OpenAiCompatible)
}

/// The window of `model` on `kind`'s server: remembered, else asked (and
/// remembered). `None` when the server cannot say.
pub(crate) fn window(
    root: &Path,
    kind: ProviderKind,
    model: &str,
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ServerWindow> {
    let base = seri_providers::base_url(kind, settings, env).ok()?;
    let key = format!("{} {} {model}", kind.as_str(), base.trim_end_matches('/'));
    let path = root.join(FILE);
    let mut remembered = read(&path);
    if let Some(entry) = remembered.windows.get(&key)
        && let Some(source) = WindowSource::parse(&entry.source)
        && entry.tokens > 0
    {
        return Some(ServerWindow { tokens: entry.tokens, source });
    }
    let api_key = seri_providers::api_key(kind, settings, env).ok().flatten();
    let found = ask(&base, model, api_key)?;
    remembered.windows.insert(key, Entry { tokens: found.tokens, source: found.source.as_str().to_owned() });
    if let Err(e) = write(&path, &remembered) {
        tracing::warn!(path = %path.display(), error = %e, "could not remember the server's context window");
    }
    Some(found)
}

/// Asks on a thread of its own, so it works whether or not the caller is
/// already inside a tokio runtime.
fn ask(base: &str, model: &str, api_key: Option<String>) -> Option<ServerWindow> {
    let (base, model) = (base.to_owned(), model.to_owned());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
        runtime.block_on(seri_providers::detect_window(&base, &model, api_key.as_deref(), PROBE_TIMEOUT))
    })
    .join()
    .ok()
    .flatten()
}

fn read(path: &Path) -> Remembered {
    // A file that cannot be read is a cache miss: the server is asked again.
    std::fs::read(path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
}

fn write(path: &Path, remembered: &Remembered) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(remembered).map_err(std::io::Error::other)?;
    // Written beside and renamed, so a reader never sees half a file.
    let partial = PathBuf::from(format!("{}.partial", path.display()));
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}
