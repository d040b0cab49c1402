//! The secrets seri holds (provider keys, the server token), kept out of
//! what tools run and out of what tools return.
//!
//! The caller (the CLI) names every secret it read, with its value:
//! `bash` runs without those variables in its environment unless the
//! configuration passes them ([`Secrets::removed_from_env`]), and every
//! result a tool returns passes through [`Secrets::redact`] in
//! [`ToolRegistry::call`](crate::ToolRegistry::call) before the run loop
//! stores it or a model reads it: a key that still shows up (read from a
//! file, printed by a server) reads `[redacted: OPENAI_API_KEY]`.

use std::borrow::Cow;
use std::sync::Arc;

/// Values shorter than this are not redacted: a key is long, and a two-
/// letter value would blank out ordinary text.
pub const MIN_SECRET_BYTES: usize = 8;

/// One secret: where it came from and what it is.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// Its name: the environment variable (`OPENAI_API_KEY`) or the
    /// configuration key (`providers.openai.apiKey`).
    pub name: String,
    /// Its value.
    pub value: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The secrets of a runtime, and the environment variables `bash` may see
/// anyway. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Longest value first, so a key that contains another is replaced whole.
    secrets: Vec<Secret>,
    /// Variable names that name secrets, whether or not they are set.
    variables: Vec<String>,
    /// Variables the configuration lets `bash` see.
    passed: Vec<String>,
}

impl Secrets {
    /// The secrets `secrets` (values under [`MIN_SECRET_BYTES`] and empty
    /// ones are kept out of redaction, not out of the environment), the
    /// environment variables that hold secrets whether set or not
    /// (`variables`: every provider's key variable), and the variables the
    /// configuration passes to `bash` anyway (`passed`).
    pub fn new(
        secrets: impl IntoIterator<Item = Secret>,
        variables: impl IntoIterator<Item = String>,
        passed: impl IntoIterator<Item = String>,
    ) -> Self {
        let mut secrets: Vec<Secret> = secrets.into_iter().filter(|s| s.value.len() >= MIN_SECRET_BYTES).collect();
        secrets.sort_by(|a, b| b.value.len().cmp(&a.value.len()).then_with(|| a.name.cmp(&b.name)));
        secrets.dedup_by(|a, b| a.value == b.value);
        let mut variables: Vec<String> = variables.into_iter().collect();
        variables.sort();
        variables.dedup();
        Self { inner: Arc::new(Inner { secrets, variables, passed: passed.into_iter().collect() }) }
    }

    /// The variables `bash` runs without: every secret variable the
    /// configuration does not pass.
    pub fn removed_from_env(&self) -> impl Iterator<Item = &str> {
        self.inner.variables.iter().map(String::as_str).filter(|v| !self.inner.passed.iter().any(|p| p == v))
    }

    /// The names of the secrets whose values are redacted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.secrets.iter().map(|s| s.name.as_str())
    }

    /// `text` with every secret's value replaced by `[redacted: NAME]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.inner.secrets {
            if text.contains(&secret.value) {
                text = Cow::Owned(text.replace(&secret.value, &format!("[redacted: {}]", secret.name)));
            }
        }
        text
    }

    /// `facts` with every secret's value redacted from the text they carry
    /// that a process or a file wrote (a diff, a command's output).
    pub fn redact_facts(&self, facts: &mut seri_core::ToolFacts) {
        let redact = |text: &mut String| {
            if let Cow::Owned(redacted) = self.redact(text) {
                *text = redacted;
            }
        };
        match facts {
            seri_core::ToolFacts::Command(run) => {
                redact(&mut run.command);
                redact(&mut run.tail);
            }
            seri_core::ToolFacts::Change(change) => redact(&mut change.diff),
            seri_core::ToolFacts::Search(search) => redact(&mut search.pattern),
            seri_core::ToolFacts::Read(_) | seri_core::ToolFacts::List(_) => {}
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.inner.secrets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str) -> Secret {
        Secret { name: name.to_owned(), value: value.to_owned() }
    }

    #[test]
    fn every_occurrence_is_replaced_by_its_name_and_short_values_are_left_alone() {
        let secrets = Secrets::new(
            [
                secret("OPENAI_API_KEY", "sk-abcdef123456"),
                secret("SHORT", "abc"),
                secret("LONG", "sk-abcdef123456-more"),
            ],
            ["OPENAI_API_KEY".to_owned(), "ANTHROPIC_API_KEY".to_owned()],
            ["ANTHROPIC_API_KEY".to_owned()],
        );
        assert_eq!(
            secrets.redact("a sk-abcdef123456 b sk-abcdef123456-more abc"),
            "a [redacted: OPENAI_API_KEY] b [redacted: LONG] abc"
        );
        assert!(matches!(secrets.redact("nothing here"), Cow::Borrowed(_)));
        assert_eq!(secrets.removed_from_env().collect::<Vec<_>>(), ["OPENAI_API_KEY"]);
        assert!(!format!("{secrets:?}").contains("sk-abc"), "Debug never shows a value");
    }
}
