//! A local server's context window, asked of the server itself.
//!
//! A local model runs with whatever window its server was started with
//! (`llama-server -c 2048`, Ollama's `num_ctx`, vLLM's `--max-model-len`,
//! LM Studio's load setting), which no table of model names can know. Each
//! server says it somewhere else:
//!
//! | server | where | field |
//! |---|---|---|
//! | llama.cpp `llama-server` | `GET /props` | `default_generation_settings.n_ctx` |
//! | Ollama | `POST /api/show` `{"model"}` | `num_ctx` in `parameters`, else Ollama's default (4096) within `model_info["<arch>.context_length"]` |
//! | LM Studio | `GET /api/v0/models/{model}` | `loaded_context_length`, else `max_context_length` |
//! | vLLM, llama.cpp, others | `GET {base}/models` | the model's `max_model_len`, `meta.n_ctx` or `context_length` |
//!
//! [`probes`] lists the questions in that order and [`read_answer`] reads
//! an answer; both are pure. [`detect_window`] asks them over HTTP and
//! takes the first answer that names a window. Nothing is guessed from a
//! model's name: a server that answers none of them leaves the window to
//! the configuration (or seri's default).

use std::time::Duration;

use serde_json::{Value, json};

/// Where a detected window was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// llama.cpp's `GET /props`.
    LlamaCppProps,
    /// Ollama's `POST /api/show`.
    OllamaShow,
    /// LM Studio's `GET /api/v0/models/{model}`.
    LmStudioModel,
    /// The OpenAI-compatible `GET /models` listing (vLLM, llama.cpp).
    ModelListing,
}

impl WindowSource {
    /// How `seri config` and `/status` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            WindowSource::LlamaCppProps => "llama.cpp /props",
            WindowSource::OllamaShow => "Ollama /api/show",
            WindowSource::LmStudioModel => "LM Studio /api/v0/models",
            WindowSource::ModelListing => "the server's /models listing",
        }
    }

    /// The inverse of [`WindowSource::as_str`], for a remembered window.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::LlamaCppProps, Self::OllamaShow, Self::LmStudioModel, Self::ModelListing]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// A window a server reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerWindow {
    /// The window in tokens.
    pub tokens: u64,
    /// Where it was read.
    pub source: WindowSource,
}

/// One question to a server: a GET, or a POST with a JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// What it asks, and so how its answer is read.
    pub source: WindowSource,
    /// The full URL.
    pub url: String,
    /// `Some` for a POST.
    pub body: Option<Value>,
}

/// Ollama's context size when a model's parameters set none.
pub const OLLAMA_DEFAULT_NUM_CTX: u64 = 4096;

/// The questions to ask, most specific first, for a server whose
/// OpenAI-compatible base URL is `base_url` (for example
/// `http://127.0.0.1:8080/v1`).
pub fn probes(base_url: &str, model: &str) -> Vec<Probe> {
    let base = base_url.trim_end_matches('/');
    // The server's root: the base URL without its `/v1`.
    let root = base.strip_suffix("/v1").unwrap_or(base);
    vec![
        Probe { source: WindowSource::LlamaCppProps, url: format!("{root}/props"), body: None },
        Probe {
            source: WindowSource::OllamaShow,
            url: format!("{root}/api/show"),
            body: Some(json!({"model": model})),
        },
        Probe { source: WindowSource::LmStudioModel, url: format!("{root}/api/v0/models/{model}"), body: None },
        Probe { source: WindowSource::ModelListing, url: format!("{base}/models"), body: None },
    ]
}

/// The window an answer to a `source` question names for `model`, if any.
pub fn read_answer(source: WindowSource, answer: &Value, model: &str) -> Option<u64> {
    let positive = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|n| *n > 0);
    match source {
        WindowSource::LlamaCppProps => positive(answer.pointer("/default_generation_settings/n_ctx")),
        WindowSource::OllamaShow => {
            // `parameters` is Modelfile text: "num_ctx 8192\nstop ...".
            let set = answer.get("parameters").and_then(Value::as_str).and_then(|text| {
                text.lines().find_map(|line| {
                    let mut words = line.split_whitespace();
                    (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u64>().ok()).flatten()
                })
            });
            let trained = answer.get("model_info").and_then(Value::as_object).and_then(|info| {
                info.iter().find(|(key, _)| key.ends_with(".context_length")).and_then(|(_, v)| v.as_u64())
            });
            match (set, trained) {
                (Some(n), _) if n > 0 => Some(n),
                (_, Some(trained)) if trained > 0 => Some(trained.min(OLLAMA_DEFAULT_NUM_CTX)),
                _ => None,
            }
        }
        WindowSource::LmStudioModel => {
            positive(answer.get("loaded_context_length")).or_else(|| positive(answer.get("max_context_length")))
        }
        WindowSource::ModelListing => {
            let models = answer.get("data").and_then(Value::as_array)?;
            let entry = models.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(model)).or_else(|| {
                // A server with one model (llama.cpp) serves it whatever
                // name the request gives.
                if models.len() == 1 { models.first() } else { None }
            })?;
            positive(entry.get("max_model_len"))
                .or_else(|| positive(entry.pointer("/meta/n_ctx")))
                .or_else(|| positive(entry.get("context_length")))
        }
    }
}

/// Asks the server at `base_url` for `model`'s window; `None` when no
/// question was answered with one. Each question waits at most `timeout`.
pub async fn detect_window(
    base_url: &str,
    model: &str,
    api_key: Option<&str>,
    timeout: Duration,
) -> Option<ServerWindow> {
    crate::http::install_crypto_provider();
    let client = reqwest::Client::builder().timeout(timeout).build().ok()?;
    for probe in probes(base_url, model) {
        let request = match &probe.body {
            Some(body) => client.post(&probe.url).json(body),
            None => client.get(&probe.url),
        };
        let request = match api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        };
        let answer = match request.send().await {
            Ok(response) if response.status().is_success() => response.json::<Value>().await.ok(),
            Ok(response) => {
                tracing::debug!(url = %probe.url, status = %response.status(), "no window here");
                None
            }
            // A server that cannot be reached answers no other question
            // either: stop, so a stopped server costs one refusal, not four.
            Err(e) if e.is_connect() || e.is_timeout() => {
                tracing::debug!(url = %probe.url, error = %e, "the server is out of reach; no window");
                return None;
            }
            Err(e) => {
                tracing::debug!(url = %probe.url, error = %e, "no window here");
                None
            }
        };
        if let Some(tokens) = answer.and_then(|a| read_answer(probe.source, &a, model)) {
            return Some(ServerWindow { tokens, source: probe.source });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(source: WindowSource, answer: &str, model: &str, expected: Option<u64>) {
        let answer: Value = serde_json::from_str(answer).unwrap();
        assert_eq!(read_answer(source, &answer, model), expected);
    }

    #[test]
    fn each_servers_answer() {
        check(
            WindowSource::LlamaCppProps,
            r#"{"default_generation_settings":{"n_ctx":2048},"total_slots":1}"#,
            "m",
            Some(2048),
        );
        check(WindowSource::LlamaCppProps, r#"{"detail":"Not Found"}"#, "m", None);
        check(
            WindowSource::OllamaShow,
            r#"{"parameters":"stop \"<|eot|>\"\nnum_ctx 8192","model_info":{"llama.context_length":131072}}"#,
            "m",
            Some(8192),
        );
        check(
            WindowSource::OllamaShow,
            r#"{"parameters":"stop \"<|eot|>\"","model_info":{"llama.context_length":131072}}"#,
            "m",
            Some(4096),
        );
        check(WindowSource::OllamaShow, r#"{"model_info":{"qwen2.context_length":2048}}"#, "m", Some(2048));
        check(
            WindowSource::LmStudioModel,
            r#"{"id":"qwen","loaded_context_length":8192,"max_context_length":32768}"#,
            "qwen",
            Some(8192),
        );
        check(
            WindowSource::LmStudioModel,
            r#"{"id":"qwen","state":"not-loaded","max_context_length":32768}"#,
            "qwen",
            Some(32768),
        );
        check(
            WindowSource::ModelListing,
            r#"{"object":"list","data":[{"id":"a","max_model_len":4096},{"id":"b","max_model_len":8192}]}"#,
            "b",
            Some(8192),
        );
        check(
            WindowSource::ModelListing,
            r#"{"object":"list","data":[{"id":"a","max_model_len":4096},{"id":"b","max_model_len":8192}]}"#,
            "c",
            None,
        );
        check(
            WindowSource::ModelListing,
            r#"{"data":[{"id":"x.gguf","meta":{"n_ctx":2048,"n_ctx_train":8192}}]}"#,
            "any",
            Some(2048),
        );
        check(WindowSource::ModelListing, r#"{"data":[{"id":"gpt-4.1","object":"model"}]}"#, "gpt-4.1", None);
    }

    #[test]
    fn probes_start_at_the_servers_root() {
        let urls: Vec<String> = probes("http://127.0.0.1:8080/v1/", "m").into_iter().map(|p| p.url).collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:8080/props",
                "http://127.0.0.1:8080/api/show",
                "http://127.0.0.1:8080/api/v0/models/m",
                "http://127.0.0.1:8080/v1/models",
            ]
        );
    }

    #[test]
    fn a_source_reads_back_from_its_name() {
        for source in [
            WindowSource::LlamaCppProps,
            WindowSource::OllamaShow,
            WindowSource::LmStudioModel,
            WindowSource::ModelListing,
        ] {
            assert_eq!(WindowSource::parse(source.as_str()), Some(source));
        }
    }
}
