//! The factory: a provider type, a model and [`Settings`] become a ready
//! provider, wrapped in the request log (when configured) and the retry
//! policy, so every caller gets the same behaviour whatever the provider.

use std::sync::Arc;

use seri_core::ModelRef;

use crate::anthropic::Anthropic;
use crate::openai::{OpenAiCompatible, OpenAiDialect, OpenAiResponses};
use crate::provider::Provider;
use crate::request_log::{Logged, RequestLog};
use crate::retry::Retrying;
use crate::script::{Script, ScriptedProvider};
use crate::settings::{OpenAiApi, ProviderKind, Settings, SettingsError};

/// The model id the scripted provider reports when none is given.
pub const SCRIPTED_MODEL: &str = "scripted";

/// A provider ready to serve requests for one model.
#[derive(Clone)]
pub struct ConfiguredProvider {
    /// The provider type and model, for `MessageMeta::model` and context windows.
    pub model: ModelRef,
    /// The provider, retrying and logging as configured.
    pub provider: Arc<dyn Provider>,
}

/// Reads the process environment: what the CLI passes as the lookup.
/// An empty variable counts as unset.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// Builds the provider of type `kind` for `model`. `env` looks up
/// environment variables ([`process_env`] outside tests).
pub fn build_provider(
    kind: ProviderKind,
    model: &str,
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ConfiguredProvider, SettingsError> {
    let config = &settings.config;
    if config.pin.is_some() && kind != ProviderKind::OpenRouter {
        return Err(SettingsError::PinNotForProvider { provider: kind });
    }
    if let Some(api) = config.api
        && matches!(kind, ProviderKind::Script | ProviderKind::Anthropic)
    {
        return Err(SettingsError::ApiNotForProvider { provider: kind, api: api.as_str() });
    }
    let model = match (kind, model.trim()) {
        (ProviderKind::Script, "") => SCRIPTED_MODEL.to_owned(),
        (_, "") => return Err(SettingsError::MissingModel { provider: kind }),
        (_, model) => model.to_owned(),
    };
    let http_error = |e: reqwest::Error| SettingsError::Http { provider: kind, reason: e.to_string() };
    let (inner, retry): (Arc<dyn Provider>, _) = match kind {
        ProviderKind::Script => {
            let path = settings.script.as_ref().ok_or(SettingsError::MissingScript)?;
            (Arc::new(ScriptedProvider::new(Script::load(path)?)), settings.retry.without_waiting())
        }
        ProviderKind::Anthropic => {
            let key = api_key(kind, settings, env)?.unwrap_or_default();
            let base = base_url(kind, settings, env)?;
            (Arc::new(Anthropic::new(&base, key, settings.http).map_err(http_error)?), settings.retry)
        }
        ProviderKind::OpenAi | ProviderKind::OpenRouter | ProviderKind::Ollama | ProviderKind::OpenAiCompatible => {
            let key = api_key(kind, settings, env)?;
            let base = base_url(kind, settings, env)?;
            let dialect = match kind {
                ProviderKind::OpenAi => OpenAiDialect::openai(),
                ProviderKind::OpenRouter => OpenAiDialect::openrouter(config.pin.clone()),
                _ => OpenAiDialect::local(),
            };
            let provider: Arc<dyn Provider> = match config.api.unwrap_or_default() {
                OpenAiApi::ChatCompletions => {
                    let provider = OpenAiCompatible::new(kind.as_str(), &base, key, dialect, settings.http);
                    Arc::new(provider.map_err(http_error)?)
                }
                OpenAiApi::Responses => {
                    let provider = OpenAiResponses::new(kind.as_str(), &base, key, dialect, settings.http);
                    Arc::new(provider.map_err(http_error)?)
                }
            };
            (provider, settings.retry)
        }
    };
    let takes_images = config.images.unwrap_or(!matches!(kind, ProviderKind::Ollama | ProviderKind::OpenAiCompatible));
    let inner: Arc<dyn Provider> = if takes_images { inner } else { Arc::new(WithoutImages { inner }) };
    let logged: Arc<dyn Provider> = match &settings.request_log {
        Some(path) => Arc::new(Logged::new(inner, RequestLog::new(path))),
        None => inner,
    };
    let provider = Arc::new(Retrying::new(logged, retry, settings.sleeper.clone()));
    Ok(ConfiguredProvider { model: ModelRef::new(kind.as_str(), model), provider })
}

/// The key: from the environment variable (`apiKeyEnv`, else the provider's
/// standard one), else from configuration. `None` for providers that need
/// none; an error naming the variable for those that do.
pub fn api_key(
    kind: ProviderKind,
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, SettingsError> {
    let config = &settings.config;
    let variable = config.api_key_env.as_deref().or(kind.key_variable());
    let key = variable.and_then(env).or_else(|| config.api_key.clone().filter(|k| !k.is_empty()));
    match (key, variable) {
        (Some(key), _) => Ok(Some(key)),
        // A local server (llama.cpp, Ollama, vLLM, LM Studio) usually needs
        // no key: an `apiKeyEnv` whose variable is unset sends none, and a
        // server that wanted one answers 401, which names the provider.
        (None, Some(variable)) if kind.key_variable().is_none() => {
            tracing::debug!(provider = %kind.as_str(), variable, "no API key in the environment; sending none");
            Ok(None)
        }
        // The standard variable of a hosted API is not set: the key is required.
        (None, Some(variable)) => Err(SettingsError::MissingKey { provider: kind, variable: variable.to_owned() }),
        (None, None) => Ok(None),
    }
}

/// The base URL: from the environment variable, else configuration, else
/// the provider's default; checked to parse.
pub fn base_url(
    kind: ProviderKind,
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, SettingsError> {
    let url = kind
        .base_url_variable()
        .and_then(env)
        .or_else(|| settings.config.base_url.clone())
        .or_else(|| kind.default_base_url().map(str::to_owned))
        .ok_or(SettingsError::MissingBaseUrl { provider: kind })?;
    match reqwest::Url::parse(&url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Ok(url),
        Ok(parsed) => Err(SettingsError::InvalidBaseUrl {
            provider: kind,
            url,
            reason: format!("the scheme must be http or https, not `{}`", parsed.scheme()),
        }),
        Err(e) => Err(SettingsError::InvalidBaseUrl { provider: kind, url, reason: e.to_string() }),
    }
}

/// A provider that is sent no pictures: its model reads a note in each
/// one's place (see [`Provider::takes_images`]).
struct WithoutImages {
    inner: Arc<dyn Provider>,
}

#[async_trait::async_trait]
impl Provider for WithoutImages {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn stream(
        &self,
        request: &crate::request::ModelRequest,
        sink: &dyn crate::provider::EventSink,
    ) -> Result<crate::response::ModelResponse, crate::error::ProviderError> {
        self.inner.stream(request, sink).await
    }

    fn child_provider(&self) -> Option<Arc<dyn Provider>> {
        let inner = self.inner.child_provider()?;
        Some(Arc::new(WithoutImages { inner }))
    }

    async fn models(&self) -> Result<Option<Vec<String>>, crate::error::ProviderError> {
        self.inner.models().await
    }

    fn takes_images(&self) -> bool {
        false
    }
}
