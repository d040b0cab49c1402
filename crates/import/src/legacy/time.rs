//! The times a legacy line may carry: RFC 3339 text with any offset, or a
//! Unix time as a number (or a string of digits) in milliseconds or seconds.

use serde_json::Value;
use seri_core::Timestamp;

/// Numbers below this are seconds, not milliseconds: 10^11 ms is March 1973,
/// while 10^11 s is past the year 5000, so no plausible time is ambiguous.
const SECONDS_BELOW: f64 = 100_000_000_000.0;

/// Reads a line's time. The error says what was wrong, for a warning.
pub(crate) fn parse(value: &Value) -> Result<Timestamp, String> {
    match value {
        Value::Number(n) => n.as_f64().and_then(from_unix).ok_or_else(|| refused(&n.to_string())),
        Value::String(text) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            text.parse::<f64>().ok().and_then(from_unix).ok_or_else(|| refused(text))
        }
        Value::String(text) => rfc3339(text).ok_or_else(|| refused(text)),
        other => Err(format!("{other} is not a time: expected RFC 3339 text or Unix milliseconds")),
    }
}

fn refused(text: &str) -> String {
    format!("`{text}` is not a time: expected RFC 3339 (such as 2025-03-01T09:30:00Z) or Unix milliseconds")
}

fn from_unix(n: f64) -> Option<Timestamp> {
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    let millis = if n < SECONDS_BELOW { n * 1000.0 } else { n };
    // Past i64 milliseconds (year 292 million) is not a time anyone recorded.
    (millis < 9.0e18).then_some(Timestamp(millis as i64))
}

/// `YYYY-MM-DD[T|t| ]HH:MM:SS[.fraction](Z|z|+HH:MM|-HH:MM)`.
fn rfc3339(text: &str) -> Option<Timestamp> {
    let date = text.get(..10)?;
    let separator = text.get(10..11)?;
    let time = text.get(11..19)?;
    if !matches!(separator, "T" | "t" | " ") {
        return None;
    }
    let rest = &text[19..];
    let fraction_len = match rest.strip_prefix('.') {
        Some(digits) => 1 + digits.bytes().take_while(u8::is_ascii_digit).count(),
        None => 0,
    };
    let (fraction, zone) = rest.split_at(fraction_len);
    // Core's parser reads up to nanoseconds; finer digits cannot change a millisecond.
    let fraction = fraction.get(..10).unwrap_or(fraction);
    let offset_minutes = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = match zone.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let (hours, minutes) = zone.get(1..)?.split_once(':')?;
            if hours.len() != 2 || minutes.len() != 2 {
                return None;
            }
            let (hours, minutes): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            sign * (hours * 60 + minutes)
        }
    };
    let utc = Timestamp::parse(&format!("{date}T{time}{fraction}Z")).ok()?;
    Some(Timestamp(utc.millis() - offset_minutes * 60_000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn check(value: Value, expected: &str) {
        assert_eq!(parse(&value).map(|t| t.to_string()).unwrap_or_else(|e| e), expected);
    }

    #[test]
    fn reads_rfc3339_with_any_offset_and_unix_numbers() {
        check(json!("2025-03-01T09:30:00Z"), "2025-03-01T09:30:00.000Z");
        check(json!("2025-03-01t09:30:00.5z"), "2025-03-01T09:30:00.500Z");
        check(json!("2025-03-01 09:30:00.123456789123+01:00"), "2025-03-01T08:30:00.123Z");
        check(json!("2025-03-01T00:30:00-02:30"), "2025-03-01T03:00:00.000Z");
        check(json!(1_740_821_400_000_i64), "2025-03-01T09:30:00.000Z");
        check(json!("1740821400000"), "2025-03-01T09:30:00.000Z");
        check(json!(1_740_821_400), "2025-03-01T09:30:00.000Z");
        check(json!(1_740_821_400.25), "2025-03-01T09:30:00.250Z");
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        let refused = "is not a time: expected RFC 3339 (such as 2025-03-01T09:30:00Z) or Unix milliseconds";
        for bad in
            ["yesterday", "2025-03-01", "2025-03-01T09:30:00", "2025-03-01T09:30:00+0100", "2025-02-30T00:00:00Z"]
        {
            check(json!(bad), &format!("`{bad}` {refused}"));
        }
        check(json!(-5), &format!("`-5` {refused}"));
        check(json!(true), "true is not a time: expected RFC 3339 text or Unix milliseconds");
    }
}
