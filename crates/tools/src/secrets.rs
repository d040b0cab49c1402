//! The secrets seri holds (provider keys, the server token), kept out of
//! what tools run and out of what tools return.
//!
//! The caller (the CLI) names every secret it read, with its value:
//! `bash` runs without those variables in its environment unless the
//! configuration passes them ([`Secrets::removed_from_env`]), and every
//! result a tool returns passes through [`Secrets::redact`] in
//! [`ToolRegistry::call`](crate::ToolRegistry::call) before the run loop
//! stores it or a model reads it: a key that still shows up (read from a
//! file, printed by a server) reads `[redacted: OPENAI_API_KEY]`, and so
//! does the key reversed, in hexadecimal, or in base64 (standard or URL
//! alphabet, at any offset, and across the line breaks `base64` wraps its
//! output at): `[redacted: OPENAI_API_KEY (base64)]`.

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
    /// Each secret's other spellings (reversed, hexadecimal, base64) and
    /// what replaces them, longest first.
    spellings: Vec<Spelling>,
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
        let mut spellings: Vec<Spelling> = secrets.iter().flat_map(spellings).collect();
        spellings.sort_by_key(|s| std::cmp::Reverse(s.text.len()));
        spellings.dedup_by(|a, b| a.text == b.text);
        Self { inner: Arc::new(Inner { secrets, spellings, variables, passed: passed.into_iter().collect() }) }
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

    /// `text` with every secret's value replaced by `[redacted: NAME]`,
    /// and each of its other spellings by `[redacted: NAME (HOW)]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.inner.secrets {
            if text.contains(&secret.value) {
                text = Cow::Owned(text.replace(&secret.value, &format!("[redacted: {}]", secret.name)));
            }
        }
        for spelling in &self.inner.spellings {
            if text.contains(&spelling.text) {
                text = Cow::Owned(text.replace(&spelling.text, &spelling.label));
            }
        }
        if text.contains('\n') {
            for spelling in self.inner.spellings.iter().filter(|s| s.wraps) {
                if let Some(unwrapped) = replace_across_lines(&text, spelling) {
                    text = Cow::Owned(unwrapped);
                }
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

/// One other spelling of a secret, and what replaces it.
#[derive(Debug, Clone)]
struct Spelling {
    text: String,
    label: String,
    /// Whether a program may have wrapped it over lines (base64's output).
    wraps: bool,
}

/// Spellings shorter than this are not looked for: the middle of a short
/// key's base64 would match ordinary text.
const MIN_SPELLING_CHARS: usize = 8;

/// The secret reversed, in hexadecimal (either case), and in base64 (both
/// alphabets): for base64, at each of the three offsets the key may start
/// at within the encoded bytes, the characters that depend on the key's
/// bytes alone.
fn spellings(secret: &Secret) -> Vec<Spelling> {
    use base64::Engine as _;
    let value = secret.value.as_bytes();
    let label = |how: &str| format!("[redacted: {} ({how})]", secret.name);
    let mut out = vec![Spelling { text: secret.value.chars().rev().collect(), label: label("reversed"), wraps: false }];
    let hex: String = value.iter().map(|b| format!("{b:02x}")).collect();
    out.push(Spelling { text: hex.to_ascii_uppercase(), label: label("hex"), wraps: false });
    out.push(Spelling { text: hex, label: label("hex"), wraps: false });
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(value);
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
        // Characters wholly inside the key's bits: from the first after the
        // offset's bits to the last before the bytes that follow.
        let start = (8 * offset).div_ceil(6);
        let end = (8 * (offset + value.len())) / 6;
        let Some(middle) = encoded.get(start..end) else { continue };
        if middle.len() < MIN_SPELLING_CHARS {
            continue;
        }
        out.push(Spelling { text: middle.replace('+', "-").replace('/', "_"), label: label("base64"), wraps: true });
        out.push(Spelling { text: middle.to_owned(), label: label("base64"), wraps: true });
    }
    out.retain(|s| s.text.len() >= MIN_SPELLING_CHARS && s.text != secret.value);
    out
}

/// `text` with `spelling` replaced where it runs across line breaks (as
/// `base64` wraps at 76 columns); `None` when it does not occur so.
fn replace_across_lines(text: &str, spelling: &Spelling) -> Option<String> {
    // Each kept byte's place in `text`.
    let (kept, places): (Vec<u8>, Vec<usize>) =
        text.bytes().enumerate().filter(|(_, b)| *b != b'\n' && *b != b'\r').map(|(i, b)| (b, i)).unzip();
    let kept = String::from_utf8(kept).ok()?;
    let ranges: Vec<(usize, usize)> =
        kept.match_indices(&spelling.text).map(|(at, found)| (places[at], places[at + found.len() - 1] + 1)).collect();
    if ranges.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in ranges {
        if start < from {
            continue;
        }
        out.push_str(text.get(from..start)?);
        out.push_str(&spelling.label);
        from = end;
    }
    out.push_str(text.get(from..)?);
    Some(out)
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

    #[test]
    fn a_key_reversed_in_hex_or_in_base64_at_any_offset_and_wrapped_is_redacted() {
        use base64::Engine as _;
        let key = "sk-containment-0123456789abcdef";
        let secrets = Secrets::new([secret("KEY", key)], [], []);
        let clean = |text: &str| {
            let out = secrets.redact(text).into_owned();
            assert!(out.contains("[redacted: KEY"), "nothing redacted in {text:?}: {out}");
            out
        };
        clean(&key.chars().rev().collect::<String>());
        clean(&key.bytes().map(|b| format!("{b:02x}")).collect::<String>());
        clean(&key.bytes().map(|b| format!("{b:02X}")).collect::<String>());
        for prefix in ["", "x", "xy", "OPENAI_API_KEY="] {
            let data = format!("{prefix}{key}\n");
            for engine in [base64::engine::general_purpose::STANDARD, base64::engine::general_purpose::URL_SAFE] {
                clean(&engine.encode(&data));
            }
        }
        // `base64` wraps at 76 columns: a key's spelling across the break.
        let long = format!("{}{key}{}", "a".repeat(50), "b".repeat(50));
        let encoded = base64::engine::general_purpose::STANDARD.encode(&long);
        let wrapped: String =
            encoded.as_bytes().chunks(76).map(|c| String::from_utf8_lossy(c).into_owned() + "\n").collect();
        let out = clean(&wrapped);
        assert!(out.contains("(base64)"), "{out}");
        assert_eq!(secrets.redact("ordinary text\nover lines"), "ordinary text\nover lines");
    }
}
