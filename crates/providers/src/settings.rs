//! Provider settings: the provider types, what configuration may say about
//! them, and the errors of a setting that cannot work.
//!
//! Keys and URLs come from the environment or from configuration; the
//! environment wins, so a variable set in the shell overrides the file.
//! The environment is read through a lookup function handed in by the
//! caller, so tests never touch the process environment.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::http::HttpOptions;
use crate::openai::ProviderPin;
use crate::retry::{RetryPolicy, Sleeper, TokioSleeper};
use crate::script::ScriptError;

/// The provider types, as `--provider` and `config.json` name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// Deterministic replay of a script file.
    Script,
    /// OpenAI's API (or any server at `OPENAI_BASE_URL`).
    OpenAi,
    /// OpenRouter, optionally pinned to upstream providers.
    OpenRouter,
    /// Anthropic's Messages API.
    Anthropic,
    /// A local Ollama server's OpenAI-compatible API; no key.
    Ollama,
    /// Any other OpenAI-compatible server (vLLM, llama.cpp, …) at the configured `baseUrl`.
    OpenAiCompatible,
}

impl ProviderKind {
    /// Every provider type, in the order help text lists them.
    pub const ALL: [ProviderKind; 6] = [
        ProviderKind::Script,
        ProviderKind::OpenAi,
        ProviderKind::OpenRouter,
        ProviderKind::Anthropic,
        ProviderKind::Ollama,
        ProviderKind::OpenAiCompatible,
    ];

    /// The name as typed.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Script => "script",
            ProviderKind::OpenAi => "openai",
            ProviderKind::OpenRouter => "openrouter",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The environment variable holding this provider's key, if it has a standard one.
    pub fn key_variable(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::OpenRouter => Some("OPENROUTER_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Script | ProviderKind::Ollama | ProviderKind::OpenAiCompatible => None,
        }
    }

    /// The environment variable overriding this provider's base URL, if any.
    pub fn base_url_variable(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_BASE_URL"),
            ProviderKind::Anthropic => Some("ANTHROPIC_BASE_URL"),
            // `openai-compatible` names its server in configuration only: a
            // stray OPENAI_BASE_URL in the shell must not redirect it.
            ProviderKind::Script | ProviderKind::OpenRouter | ProviderKind::Ollama | ProviderKind::OpenAiCompatible => {
                None
            }
        }
    }

    /// The base URL used when neither the environment nor configuration gives one.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::OpenRouter => Some("https://openrouter.ai/api/v1"),
            ProviderKind::Anthropic => Some("https://api.anthropic.com"),
            ProviderKind::Ollama => Some("http://127.0.0.1:11434/v1"),
            ProviderKind::Script | ProviderKind::OpenAiCompatible => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = SettingsError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ProviderKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| SettingsError::UnknownProvider { name: name.to_owned() })
    }
}

/// What configuration may say about a provider (camelCase in `config.json`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfig {
    /// The base URL, e.g. `http://127.0.0.1:8000/v1` for a vLLM server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The API key itself. Prefer the environment or `apiKeyEnv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// The environment variable to read the key from, instead of the
    /// provider's standard one (the only way to give `openai-compatible` a
    /// key from the environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// OpenRouter only: the provider pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<ProviderPin>,
    /// The OpenAI wire format to speak (`"chat-completions"`, the default,
    /// or `"responses"`); OpenAI-compatible provider types only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<OpenAiApi>,
    /// Whether pictures are sent as image parts. Default: yes for
    /// `anthropic`, `openai`, `openrouter` and `script`; no for `ollama` and
    /// `openai-compatible` (a local model without vision refuses a request
    /// with one), whose model then reads a short note in each picture's place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
}

/// Which of OpenAI's two wire formats a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpenAiApi {
    /// `POST {baseUrl}/chat/completions`: what every OpenAI-compatible server speaks.
    #[default]
    ChatCompletions,
    /// `POST {baseUrl}/responses`: OpenAI's Responses API, whose reasoning
    /// models carry their encrypted reasoning from one request to the next.
    Responses,
}

impl OpenAiApi {
    /// The name as configured.
    pub fn as_str(self) -> &'static str {
        match self {
            OpenAiApi::ChatCompletions => "chat-completions",
            OpenAiApi::Responses => "responses",
        }
    }
}

/// Everything the factory needs beyond the provider type and model.
#[derive(Clone)]
pub struct Settings {
    /// The provider's configuration.
    pub config: ProviderConfig,
    /// The script file, for the `script` provider (`--script FILE`).
    pub script: Option<PathBuf>,
    /// Where to log every request (`SERI_REQUEST_LOG`), if anywhere.
    pub request_log: Option<PathBuf>,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// HTTP timeouts.
    pub http: HttpOptions,
    /// How retries wait; tests substitute one that does not.
    pub sleeper: Arc<dyn Sleeper>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            config: ProviderConfig::default(),
            script: None,
            request_log: None,
            retry: RetryPolicy::default(),
            http: HttpOptions::default(),
            sleeper: Arc::new(TokioSleeper),
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key is left out: settings end up in logs.
        f.debug_struct("Settings")
            .field("base_url", &self.config.base_url)
            .field("api_key", &self.config.api_key.as_ref().map(|_| "<set>"))
            .field("api_key_env", &self.config.api_key_env)
            .field("pin", &self.config.pin)
            .field("api", &self.config.api)
            .field("script", &self.script)
            .field("request_log", &self.request_log)
            .field("retry", &self.retry)
            .field("http", &self.http)
            .finish()
    }
}

/// Why a provider could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The provider type is not one seri knows.
    #[error(
        "unknown provider `{name}`: expected one of script, openai, openrouter, anthropic, ollama, openai-compatible"
    )]
    UnknownProvider {
        /// What was given.
        name: String,
    },
    /// No key was found.
    #[error("the `{provider}` provider needs an API key: set {variable} (or `apiKey` in the provider's configuration)")]
    MissingKey {
        /// The provider type.
        provider: ProviderKind,
        /// The environment variable to set.
        variable: String,
    },
    /// No base URL was found.
    #[error("the `{provider}` provider needs a base URL: set `baseUrl` in the provider's configuration")]
    MissingBaseUrl {
        /// The provider type.
        provider: ProviderKind,
    },
    /// The base URL does not parse.
    #[error("the base URL `{url}` of the `{provider}` provider is not a URL: {reason}")]
    InvalidBaseUrl {
        /// The provider type.
        provider: ProviderKind,
        /// What was given.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// No model was named.
    #[error("the `{provider}` provider needs a model: pass --model or set `model` in config.json")]
    MissingModel {
        /// The provider type.
        provider: ProviderKind,
    },
    /// The `script` provider was chosen without a script.
    #[error("the `script` provider needs a script file: pass --script FILE")]
    MissingScript,
    /// The script could not be loaded.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A provider pin was configured for a provider other than OpenRouter.
    #[error("a provider pin (`pin`) only applies to `openrouter`, not to `{provider}`")]
    PinNotForProvider {
        /// The provider type.
        provider: ProviderKind,
    },
    /// An OpenAI wire format was configured for a provider that speaks another.
    #[error("`api: \"{api}\"` only applies to OpenAI-compatible providers, not to `{provider}`")]
    ApiNotForProvider {
        /// The provider type.
        provider: ProviderKind,
        /// The wire format configured.
        api: &'static str,
    },
    /// The HTTP client could not be built.
    #[error("cannot set up HTTP for the `{provider}` provider: {reason}")]
    Http {
        /// The provider type.
        provider: ProviderKind,
        /// What went wrong.
        reason: String,
    },
}
