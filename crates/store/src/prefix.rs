//! Session id prefixes as people type them: `0198a3b2`, `0198A3B2-1C`,
//! `0198a3b21c`. All mean the same prefix of the stored hyphenated text.
//!
//! And the short ids seri prints: `0198a3b2.5c6d7e`, the id's first eight
//! digits (its time, to about a minute) and, after a dot, the end of its
//! random part. A prefix of a time-ordered id names a stretch of creation
//! time, so a printed prefix went stale as soon as another session was
//! made in that minute; the random end never does. A printed short id
//! stays unique however many sessions are added (it grows only in the
//! one-in-sixteen-million case of two sessions of one minute sharing the
//! end), and every command takes it back, as it takes full ids and unique
//! prefixes.

/// Digits of the id's start a short id keeps: its time, to 65.5 seconds.
pub(crate) const SHORT_TIME_DIGITS: usize = 8;

/// Digits of the id's random end a short id keeps when they are enough.
pub(crate) const SHORT_RANDOM_DIGITS: usize = 6;

/// The short id of `id` (hyphenated lowercase text), told apart from the
/// `others` made in the same stretch of time (ids sharing its first
/// [`SHORT_TIME_DIGITS`] digits; `id` itself may be among them).
pub(crate) fn short(id: &str, others: &[&str]) -> String {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    let tail = |n: usize| &hex[hex.len().saturating_sub(n)..];
    let mut n = SHORT_RANDOM_DIGITS;
    while n < 12 && others.iter().any(|o| *o != id && o.ends_with(tail(n))) {
        n += 1;
    }
    format!("{}.{}", &hex[..SHORT_TIME_DIGITS.min(hex.len())], tail(n))
}

/// A short id as typed: its time digits (as stored ids begin) and the end
/// of the id it names; `None` when `text` is not one.
pub(crate) fn parse_short(text: &str) -> Option<(String, String)> {
    let (time, end) = text.split_once('.')?;
    let hex = |t: &str, max: usize| {
        (!t.is_empty() && t.len() <= max && t.bytes().all(|b| b.is_ascii_hexdigit())).then(|| t.to_ascii_lowercase())
    };
    let time = hex(time, SHORT_TIME_DIGITS).filter(|t| t.len() == SHORT_TIME_DIGITS)?;
    Some((time, hex(end, 12)?))
}

/// The hyphenated lowercase form of an id prefix, as stored ids begin; `None`
/// when the text has anything but hex digits and hyphens, or is longer than an id.
pub(crate) fn normalize(text: &str) -> Option<String> {
    let hex: Vec<u8> = text.bytes().filter(|b| *b != b'-').map(|b| b.to_ascii_lowercase()).collect();
    if hex.is_empty() || hex.len() > 32 || !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = String::with_capacity(36);
    for (i, b) in hex.into_iter().enumerate() {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        out.push(char::from(b));
    }
    Some(out)
}

/// The first text after every id that starts with `prefix`: ids hold only
/// hex digits and `-`, all below `~`, so `[prefix, prefix~)` is exactly the
/// ids with that prefix, and SQLite can answer it from the primary key.
pub(crate) fn upper_bound(prefix: &str) -> String {
    format!("{prefix}~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(text: &str, expected: Option<&str>) {
        assert_eq!(normalize(text).as_deref(), expected, "{text:?}");
    }

    #[test]
    fn normalizes_what_people_type() {
        check("0198a3b2", Some("0198a3b2"));
        check("0198A3B2-1C", Some("0198a3b2-1c"));
        check("0198a3b21c", Some("0198a3b2-1c"));
        check("0198a3b2-1c2d-7e3f-8a4b-5c6d7e8f9a0b", Some("0198a3b2-1c2d-7e3f-8a4b-5c6d7e8f9a0b"));
        check("0198a3b21c2d7e3f8a4b5c6d7e8f9a0b", Some("0198a3b2-1c2d-7e3f-8a4b-5c6d7e8f9a0b"));
        check("", None);
        check("-", None);
        check("xyz", None);
        check("0198a3b2 ", None);
        check("0198a3b21c2d7e3f8a4b5c6d7e8f9a0b0", None);
    }

    #[test]
    fn a_short_id_is_the_time_then_the_random_end_and_grows_only_on_a_clash() {
        let id = "0198a3b2-1c2d-7e3f-8a4b-5c6d7e8f9a0b";
        assert_eq!(short(id, &[]), "0198a3b2.8f9a0b");
        assert_eq!(short(id, &[id, "0198a3b2-1c2d-7e3f-8a4b-000000000000"]), "0198a3b2.8f9a0b");
        // Another session of the same minute ends the same: one more digit.
        assert_eq!(short(id, &["0198a3b2-ffff-7fff-8fff-fff0008f9a0b"]), "0198a3b2.e8f9a0b");
        assert_eq!(parse_short("0198A3B2.8F9A0B"), Some(("0198a3b2".into(), "8f9a0b".into())));
        assert_eq!(parse_short("0198a3b2.e8f9a0b"), Some(("0198a3b2".into(), "e8f9a0b".into())));
        for not in ["0198a3b2", "0198a3b.8f9a0b", "0198a3b2.", "0198a3b2.xyz", "0198a3b2.8f9a0b0000000", ".8f"] {
            assert_eq!(parse_short(not), None, "{not}");
        }
        let (time, end) = parse_short(&short(id, &[])).unwrap_or_default();
        assert!(id.starts_with(&time) && id.ends_with(&end), "a short id names its id");
    }

    #[test]
    fn the_bound_sorts_after_every_id_with_the_prefix() {
        let bound = upper_bound("0198a3b2");
        assert!("0198a3b2-ffff-ffff-ffff-ffffffffffff" < bound.as_str());
        assert!("0198a3b3" > bound.as_str());
    }
}
