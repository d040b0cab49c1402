//! Timestamps: milliseconds since the Unix epoch, shown as RFC 3339 UTC text.
//!
//! Core never reads the clock: the store stamps events with the time it was
//! given, which is what lets tests run on a fake clock.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, in milliseconds since 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Timestamp(pub i64);

/// Why a text is not an RFC 3339 UTC timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a timestamp: expected RFC 3339 UTC such as 2026-11-30T06:21:44.123Z")]
pub struct ParseTimestampError {
    /// The text that was refused.
    pub text: String,
}

impl Timestamp {
    /// Milliseconds since the epoch.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
    pub fn parse(text: &str) -> Result<Self, ParseTimestampError> {
        let err = || ParseTimestampError { text: text.to_owned() };
        let b = text.as_bytes();
        if b.len() < 20 || b.last() != Some(&b'Z') || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
            return Err(err());
        }
        if b[13] != b':' || b[16] != b':' {
            return Err(err());
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = text.get(r)?;
            if s.bytes().all(|c| c.is_ascii_digit()) { s.parse().ok() } else { None }
        };
        let (year, month, day) = (num(0..4).ok_or_else(err)?, num(5..7).ok_or_else(err)?, num(8..10).ok_or_else(err)?);
        let (hour, minute, second) =
            (num(11..13).ok_or_else(err)?, num(14..16).ok_or_else(err)?, num(17..19).ok_or_else(err)?);
        let millis = match &b[19..b.len() - 1] {
            [] => 0,
            [b'.', digits @ ..] if !digits.is_empty() && digits.len() <= 9 => {
                let frac = num(20..20 + digits.len()).ok_or_else(err)?;
                frac * 1000 / 10_i64.pow(digits.len() as u32)
            }
            _ => return Err(err()),
        };
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(err());
        }
        let days = days_from_civil(year, month, day);
        Ok(Timestamp(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis))
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date. Eras of 400 years
/// repeat exactly, which keeps the arithmetic free of tables.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(86_400_000);
        let ms_of_day = self.0.rem_euclid(86_400_000);
        let (year, month, day) = civil_from_days(days);
        let (h, m, s, ms) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
        let Ok(year_digits) = u16::try_from(year) else {
            return write!(f, "{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z");
        };
        if year_digits > 9999 {
            return write!(f, "{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z");
        }
        // Written into one buffer: lists print two or three times per row.
        let mut text = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, value: i64| {
            // Every part is non-negative here: the day's parts come from
            // `rem_euclid`, the year was checked above.
            let mut value = value.unsigned_abs();
            for i in (at..at + width).rev() {
                text[i] = b"0123456789"[(value % 10) as usize];
                value /= 10;
            }
        };
        put(0, 4, i64::from(year_digits));
        put(5, 2, month);
        put(8, 2, day);
        put(11, 2, h);
        put(14, 2, m);
        put(17, 2, s);
        put(20, 3, ms);
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_points() {
        assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00.000Z");
        assert_eq!(Timestamp(951_782_400_000).to_string(), "2000-02-29T00:00:00.000Z");
        assert_eq!(Timestamp::parse("2026-11-30T06:21:44.5Z").unwrap().to_string(), "2026-11-30T06:21:44.500Z");
        assert_eq!(Timestamp::parse("2026-11-30T06:21:44Z").unwrap().millis() % 1000, 0);
    }

    proptest! {
        /// The one-buffer writer says what the formatter did, for any time
        /// (before 1970 and past 9999 too), and parses back.
        #[test]
        fn the_text_is_the_formatted_parts(ms in -100_000_000_000_000i64..300_000_000_000_000) {
            let t = Timestamp(ms);
            let days = ms.div_euclid(86_400_000);
            let of_day = ms.rem_euclid(86_400_000);
            let (y, mo, d) = civil_from_days(days);
            let expected = format!(
                "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                of_day / 3_600_000, of_day / 60_000 % 60, of_day / 1000 % 60, of_day % 1000
            );
            prop_assert_eq!(t.to_string(), expected.clone());
            if (0..=9999).contains(&y) {
                prop_assert_eq!(Timestamp::parse(&expected).map(|p| p.millis()).ok(), Some(ms));
            }
        }
    }

    #[test]
    fn refuses_malformed_text() {
        for bad in [
            "",
            "2026-11-30",
            "2026-02-30T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T06:21:44.Z",
            "2026-11-30T06:21:44+01:00",
            "２０２６-11-30T06:21:44Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn display_then_parse_is_identity(ms in -62_135_596_800_000_i64..253_402_300_799_999) {
            let t = Timestamp(ms);
            prop_assert_eq!(Timestamp::parse(&t.to_string()).unwrap(), t);
        }
    }
}
