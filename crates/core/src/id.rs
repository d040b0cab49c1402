//! Identifiers: 128-bit, time-ordered (UUIDv7 layout), printed as lowercase
//! hyphenated UUID text.
//!
//! Core never reads a clock or a random source; whoever creates an id (the
//! store) supplies the bytes. Ids sort by creation time because the first 48
//! bits are the Unix time in milliseconds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a text is not an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an id: expected 32 hex digits, optionally hyphenated as a UUID")]
pub struct ParseIdError {
    /// The text that was refused.
    pub text: String,
}

/// The raw 16 bytes shared by every id type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct RawId([u8; 16]);

impl RawId {
    /// UUIDv7: 48 bits of Unix milliseconds, version 7, variant 0b10, the rest random.
    fn v7(unix_ms: u64, random: [u8; 10]) -> Self {
        let mut b = [0u8; 16];
        b[..6].copy_from_slice(&unix_ms.to_be_bytes()[2..]);
        b[6..].copy_from_slice(&random);
        b[6] = (b[6] & 0x0f) | 0x70;
        b[8] = (b[8] & 0x3f) | 0x80;
        RawId(b)
    }

    fn parse(text: &str) -> Result<Self, ParseIdError> {
        // Every event row holds two ids, so this runs twice for each event
        // read: straight over the bytes, without allocating.
        let err = || ParseIdError { text: text.to_owned() };
        let b = text.as_bytes();
        let digits = match b.len() {
            32 => &BARE_DIGITS,
            36 if is_hyphenated(text) => &HYPHENATED_DIGITS,
            _ => return Err(err()),
        };
        let mut out = [0u8; 16];
        for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
            let (Some(hi), Some(lo)) = (hex_value(b[pair[0]]), hex_value(b[pair[1]])) else {
                return Err(err());
            };
            *byte = (hi << 4) | lo;
        }
        Ok(RawId(out))
    }
}

/// Where the 32 hex digits of an id are in its bare text.
const BARE_DIGITS: [usize; 32] = digit_positions(false);

/// Where they are in its hyphenated (UUID) text.
const HYPHENATED_DIGITS: [usize; 32] = digit_positions(true);

const fn digit_positions(hyphenated: bool) -> [usize; 32] {
    let mut out = [0; 32];
    let mut i = 0;
    let mut at = 0;
    while i < 32 {
        if hyphenated && (at == 8 || at == 13 || at == 18 || at == 23) {
            at += 1;
        }
        out[i] = at;
        i += 1;
        at += 1;
    }
    out
}

fn is_hyphenated(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36 && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for RawId {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lowercase, written once:
    /// lists print tens of thousands of ids, and a formatter call per byte
    /// was most of their cost.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 36];
        let mut at = 0;
        for (i, byte) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                text[at] = b'-';
                at += 1;
            }
            text[at] = HEX[usize::from(byte >> 4)];
            text[at + 1] = HEX[usize::from(byte & 0x0f)];
            at += 2;
        }
        // Only ASCII hex digits and dashes were written.
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

macro_rules! define_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(RawId);

        impl $name {
            /// An id from its 16 bytes, as produced by any UUID generator.
            pub const fn from_bytes(bytes: [u8; 16]) -> Self {
                Self(RawId(bytes))
            }

            /// A time-ordered (UUIDv7) id from a Unix time in milliseconds and
            /// ten random bytes supplied by the caller.
            pub fn v7(unix_ms: u64, random: [u8; 10]) -> Self {
                Self(RawId::v7(unix_ms, random))
            }

            /// The 16 bytes of the id.
            pub const fn as_bytes(&self) -> &[u8; 16] {
                &self.0 .0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                RawId::parse(s).map(Self)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

define_id!(
    /// A session: one conversation thread with its own transcript.
    SessionId
);
define_id!(
    /// One event in a session's transcript.
    EventId
);
define_id!(
    /// One continuation edge, from a predecessor session to a successor.
    ContinuationId
);
define_id!(
    /// One run: the work done for one task, possibly over many model turns.
    RunId
);

/// A tool call's id. Providers choose these (`call_…`, `toolu_…`), so it is
/// opaque text rather than a UUID.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCallId(pub String);

impl ToolCallId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolCallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ToolCallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ToolCallId({})", self.0)
    }
}

impl From<&str> for ToolCallId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

/// The agent (account) that owns sessions. Reads never cross agents.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(pub String);

impl AgentId {
    /// The fixed agent of the local command line.
    pub fn local() -> Self {
        Self("local".to_owned())
    }

    /// An agent by the name a person gives it (`seri token create --agent
    /// NAME`): 1 to 64 ASCII letters, digits, `-`, `_` or `.`.
    pub fn named(name: &str) -> Result<Self, ParseIdError> {
        let fits = (1..=64).contains(&name.len())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if fits { Ok(Self(name.to_owned())) } else { Err(ParseIdError { text: name.to_owned() }) }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({})", self.0)
    }
}

/// A position in one session's transcript: starts at 1, no gaps.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seq(pub u64);

impl Seq {
    /// The first event of every session.
    pub const FIRST: Seq = Seq(1);

    /// The largest seq there can be: the open end of a range.
    pub const LAST: Seq = Seq(u64::MAX);

    /// The seq after this one.
    pub const fn next(self) -> Seq {
        Seq(self.0 + 1)
    }

    /// The number as `u64`.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seq({})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_lowercase_hex_in_five_groups() {
        let id =
            RawId([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10]);
        assert_eq!(id.to_string(), "01234567-89ab-cdef-fedc-ba9876543210");
        assert_eq!(format!("{:>40}", id).len(), 36, "written as one string (no padding is applied)");
    }

    #[test]
    fn v7_sets_version_and_variant_and_orders_by_time() {
        let a = SessionId::v7(1_000, [0xff; 10]);
        let b = SessionId::v7(1_001, [0x00; 10]);
        assert!(a < b);
        let text = a.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(&text[14..15], "7");
        assert!(matches!(&text[19..20], "8" | "9" | "a" | "b"));
    }

    #[test]
    fn parses_hyphenated_and_bare_and_refuses_the_rest() {
        let id = EventId::v7(42, [7; 10]);
        let text = id.to_string();
        assert_eq!(text.parse::<EventId>(), Ok(id));
        assert_eq!(text.replace('-', "").parse::<EventId>(), Ok(id));
        assert_eq!(text.to_uppercase().parse::<EventId>(), Ok(id));
        for bad in ["", "xyz", &text[..35], &format!("{text}0"), "0000-0000-0000-0000-0000-0000-00000000"] {
            assert!(bad.parse::<EventId>().is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn serializes_as_text() {
        let id = RunId::from_bytes([0x11; 16]);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"11111111-1111-1111-1111-111111111111\"");
        assert_eq!(serde_json::from_str::<RunId>(&json).unwrap(), id);
    }
}
