//! `Retry-After` parsing: delay-seconds or an HTTP date (RFC 9110 §10.2.3),
//! and OpenAI's `retry-after-ms`.
//!
//! Pure: the caller passes the current time, so tests need no clock.

use std::time::{Duration, SystemTime};

use seri_core::Timestamp;

/// The wait a `Retry-After` value asks for, measured from `now`.
///
/// Accepts delay-seconds (`120`, fractions too, as some servers send them)
/// and the three HTTP date forms RFC 9110 obliges a recipient to read
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete RFC 850 and asctime forms).
/// A date in the past means "now": zero. Anything else is `None`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = parse_http_date(value)?;
    let now_ms = now.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_millis();
    let at_ms = u128::try_from(at.millis()).ok()?;
    Some(Duration::from_millis(u64::try_from(at_ms.saturating_sub(now_ms)).unwrap_or(u64::MAX)))
}

/// The wait an OpenAI `retry-after-ms` header asks for.
pub fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let millis = value.trim().parse::<f64>().ok()?;
    (millis.is_finite() && millis >= 0.0).then(|| Duration::from_secs_f64(millis / 1000.0))
}

/// The wait a rate-limit message asks for in words, as OpenAI's in-stream
/// errors do: "Please try again in 11.054s", "… in 28ms", "Try again in 35
/// seconds". `None` when the message names no wait.
pub fn parse_try_again_in(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let at = lower.find("try again in")? + "try again in".len();
    let rest = lower[at..].trim_start();
    let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    let value: f64 = rest[..number_end].parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let unit = rest[number_end..].trim_start();
    if unit.starts_with("ms") {
        Some(Duration::from_secs_f64(value / 1000.0))
    } else if unit.starts_with('s') {
        Some(Duration::from_secs_f64(value))
    } else {
        None
    }
}

/// Parses the three HTTP date forms into a timestamp, validating the
/// calendar through `Timestamp::parse`.
fn parse_http_date(value: &str) -> Option<Timestamp> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let (day, month, year, time) = match parts.as_slice() {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        [weekday, day, month, year, time, "GMT"] if weekday.ends_with(',') => (*day, *month, year.to_string(), *time),
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit years are read as 19xx/20xx by the 50-year rule)
        [weekday, date, time, "GMT"] if weekday.ends_with(',') => {
            let mut pieces = date.split('-');
            let (day, month, yy) = (pieces.next()?, pieces.next()?, pieces.next()?);
            let yy: u32 = yy.parse().ok().filter(|_| yy.len() == 2)?;
            let year = if yy >= 70 { 1900 + yy } else { 2000 + yy };
            (day, month, year.to_string(), *time)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        [_weekday, month, day, time, year] => (*day, *month, year.to_string(), *time),
        _ => return None,
    };
    let month = match month {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let day: u32 = day.parse().ok().filter(|_| (1..=2).contains(&day.len()))?;
    Timestamp::parse(&format!("{year:0>4}-{month:02}-{day:02}T{time}Z")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // 1994-11-06T08:49:00Z, thirty-seven seconds before the RFC's example date.
    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_740)
    }

    #[track_caller]
    fn check(value: &str, expected: Option<Duration>) {
        assert_eq!(parse_retry_after(value, now()), expected, "{value:?}");
    }

    #[test]
    fn delay_seconds() {
        check("120", Some(Duration::from_secs(120)));
        check(" 0 ", Some(Duration::ZERO));
        check("1.5", Some(Duration::from_millis(1500)));
        check("-3", None);
        check("soon", None);
    }

    #[test]
    fn waits_named_in_words() {
        let wait = |message: &str| parse_try_again_in(message);
        assert_eq!(
            wait(
                "Rate limit reached for gpt-5.1 in organization org-AAA on tokens per min (TPM): Limit 30000, Used 22999, Requested 12528. Please try again in 11.054s. Visit https://platform.openai.com/account/rate-limits to learn more."
            ),
            Some(Duration::from_millis(11_054))
        );
        assert_eq!(wait("… Requested 19304. Please try again in 28ms. Visit …"), Some(Duration::from_millis(28)));
        assert_eq!(wait("Rate limit exceeded. Try again in 35 seconds."), Some(Duration::from_secs(35)));
        assert_eq!(wait("Rate limit exceeded. Try again later."), None);
        assert_eq!(wait("slow down"), None);
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        let wait = Some(Duration::from_secs(37));
        check("Sun, 06 Nov 1994 08:49:37 GMT", wait);
        check("Sunday, 06-Nov-94 08:49:37 GMT", wait);
        check("Sun Nov  6 08:49:37 1994", wait);
    }

    #[test]
    fn a_date_in_the_past_means_now() {
        check("Sat, 05 Nov 1994 08:49:37 GMT", Some(Duration::ZERO));
    }

    #[test]
    fn malformed_dates_are_refused() {
        check("Sun, 31 Feb 1994 08:49:37 GMT", None);
        check("Sun, 06 Nov 1994 08:49:37 CET", None);
        check("Sun, 06 Nov 1994 25:49:37 GMT", None);
        check("Sun, 06 Foo 1994 08:49:37 GMT", None);
    }

    #[test]
    fn openai_milliseconds() {
        assert_eq!(parse_retry_after_ms("250"), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after_ms("x"), None);
    }
}
