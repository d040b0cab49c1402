//! Small text helpers the coding tools share: the binary sniff, numbers and
//! sizes as results print them, and cutting a line to length.

/// How much of a file the binary sniff reads, as git does.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;

/// Whether bytes look like a binary file: a NUL among the first
/// [`SNIFF_BYTES`]. Text encodings seri reads (UTF-8 and its subsets) never
/// contain NUL.
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    head[..head.len().min(SNIFF_BYTES)].contains(&0)
}

/// `12345` as `12,345`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size for people: `512 bytes`, `1.5 KiB`, `12.0 MiB`.
pub(crate) fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    match bytes {
        1 => "1 byte".to_owned(),
        b if b < KIB => format!("{b} bytes"),
        b if b < MIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        b => format!("{:.1} MiB", b as f64 / MIB as f64),
    }
}

/// `n thing` or `n things`, with the number grouped.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// The line cut to `max_chars` characters, with how many were cut.
pub(crate) fn cut_line(line: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max_chars) {
        None => std::borrow::Cow::Borrowed(line),
        Some((end, _)) => {
            let rest = line[end..].chars().count() as u64;
            std::borrow::Cow::Owned(format!("{}… [{} more characters]", &line[..end], count(rest)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_sizes() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(size(1), "1 byte");
        assert_eq!(size(1023), "1023 bytes");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(3 * 1024 * 1024), "3.0 MiB");
        assert_eq!(plural(1, "line", "lines"), "1 line");
        assert_eq!(plural(2_000, "line", "lines"), "2,000 lines");
    }

    #[test]
    fn lines_are_cut_on_characters() {
        assert_eq!(cut_line("héllo", 5), "héllo");
        assert_eq!(cut_line("héllo wörld", 5), "héllo… [6 more characters]");
    }

    #[test]
    fn binary_is_a_nul_near_the_start() {
        assert!(looks_binary(b"PNG\0\x01"));
        assert!(!looks_binary("plain text, é".as_bytes()));
        let mut late = vec![b'a'; SNIFF_BYTES];
        late.push(0);
        assert!(!looks_binary(&late));
    }
}
