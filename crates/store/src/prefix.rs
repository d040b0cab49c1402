//! Session id prefixes as people type them: `0198a3b2`, `0198A3B2-1C`,
//! `0198a3b21c`. All mean the same prefix of the stored hyphenated text.

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
    fn the_bound_sorts_after_every_id_with_the_prefix() {
        let bound = upper_bound("0198a3b2");
        assert!("0198a3b2-ffff-ffff-ffff-ffffffffffff" < bound.as_str());
        assert!("0198a3b3" > bound.as_str());
    }
}
