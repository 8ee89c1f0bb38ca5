//! Stable: the rules that make a written audit the same bytes on every run
//! and every machine, beyond the `{jail}` the audit itself writes.
//!
//! Whoever writes an audit to keep (the case studies, the coverage
//! experiment, a sweep) applies the same two rules, here once:
//!
//! - machine paths become placeholders ([`replace_strings`]): the cases
//!   directory `{cases}`, a seed `{seed}`, a sweep's `{install}`, `{sweep}`
//!   and `{scratch}`;
//! - server clock values become [`CLOCK_TOKEN`] ([`replace_clock_values`]).
//!   Some published servers answer with the time: server-filesystem's
//!   `get_file_info` reports a file's created, modified and accessed times
//!   as JavaScript Date strings, and database-server's `list_insights`
//!   reports the `created_at` its table fills from the clock. Those values
//!   differ on every run and no check reads them, yet they would make every
//!   rerun rewrite the committed audit. So, for the kinds of value a target
//!   declares, and only those, the written audit holds the token in each
//!   value's place and lists under `volatile.clock` what kind of value was
//!   replaced, how many, and where (JSON pointers). The values themselves
//!   are not kept. A clock nobody declared is left alone, so it shows up as
//!   a difference in the reproduction gate instead of being hidden.
//!
//! [`stable`] applies both to a report.

use serde_json::Value;

use witness_model::audit::{AuditReport, ClockReplaced};

/// What stands in a replaced clock value.
pub const CLOCK_TOKEN: &str = "{clock}";

/// A kind of clock value a server writes into its answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockText {
    /// JavaScript's `Date.prototype.toString()`:
    /// `Mon Nov 30 2026 19:21:47 GMT+0000 (Coordinated Universal Time)`.
    JsDate,
    /// SQLite's `CURRENT_TIMESTAMP` and ISO 8601 date-times:
    /// `2026-11-30 19:21:47`, `2026-11-30T19:21:47.123Z`.
    SqlDateTime,
}

/// Why a text names no kind of clock value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected \"js-date\" or \"sql-datetime\"")]
pub struct UnknownClockText;

impl std::str::FromStr for ClockText {
    type Err = UnknownClockText;

    /// The names a sweep file's `clock_text` gives the kinds.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "js-date" => Ok(Self::JsDate),
            "sql-datetime" => Ok(Self::SqlDateTime),
            _ => Err(UnknownClockText),
        }
    }
}

impl ClockText {
    /// How the audit names this kind of value.
    pub fn name(self) -> &'static str {
        match self {
            Self::JsDate => "JavaScript Date string",
            Self::SqlDateTime => "SQLite date-time text",
        }
    }

    /// The length of a value of this kind starting at `bytes[0]`, if one does.
    fn len_at(self, bytes: &[u8]) -> Option<usize> {
        match self {
            Self::JsDate => js_date_len(bytes),
            // A date alone, or a time alone, is too common in prose to be
            // taken for the clock: only a full date and time is.
            Self::SqlDateTime => witness_observers::sqlite::clock_text_len(bytes)
                .filter(|&n| n >= "YYYY-MM-DD HH:MM:SS".len()),
        }
    }

    /// `text` with every value of this kind replaced by [`CLOCK_TOKEN`], and
    /// how many there were. A value must stand alone: no letter or digit
    /// right before or after it.
    fn replace(self, text: &str) -> (String, usize) {
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut copied = 0;
        let mut count = 0;
        let mut at = 0;
        while at < bytes.len() {
            let free_before = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            // Values start with an ASCII letter or digit, which is always a
            // char boundary, and end on an ASCII byte: slicing stays valid.
            let found = (free_before && bytes[at].is_ascii_alphanumeric())
                .then(|| self.len_at(&bytes[at..]))
                .flatten()
                .filter(|&n| bytes.get(at + n).is_none_or(|b| !b.is_ascii_alphanumeric()));
            match found {
                Some(n) => {
                    out.push_str(&text[copied..at]);
                    out.push_str(CLOCK_TOKEN);
                    count += 1;
                    at += n;
                    copied = at;
                }
                None => at += 1,
            }
        }
        if count == 0 {
            return (text.to_owned(), 0);
        }
        out.push_str(&text[copied..]);
        (out, count)
    }
}

/// `report` as it is written to be kept: in every string, each path
/// replaced by its placeholder (in the order given), then the clock values
/// of the declared `kinds` by [`CLOCK_TOKEN`], listed in `volatile.clock`.
pub fn stable(
    report: &AuditReport,
    paths: &[(&str, &str)],
    kinds: &[ClockText],
) -> Result<AuditReport, serde_json::Error> {
    let mut value = serde_json::to_value(report)?;
    replace_strings(&mut value, paths);
    let clock = replace_clock_values(&mut value, kinds);
    let mut report: AuditReport = serde_json::from_value(value)?;
    report.volatile.clock = clock;
    Ok(report)
}

/// Replaces, in every string inside `value`, each `from` with its `to`, in
/// the order given: machine paths become placeholders.
pub fn replace_strings(value: &mut Value, pairs: &[(&str, &str)]) {
    match value {
        Value::String(s) => {
            for (from, to) in pairs {
                if !from.is_empty() && s.contains(from) {
                    *s = s.replace(from, to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, pairs)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, pairs)),
        _ => {}
    }
}

/// Replaces, everywhere in `document`, the clock values of the declared
/// `kinds`, and says per kind how many and where.
pub fn replace_clock_values(document: &mut Value, kinds: &[ClockText]) -> Vec<ClockReplaced> {
    let mut found: Vec<ClockReplaced> = kinds
        .iter()
        .map(|kind| ClockReplaced {
            kind: kind.name().to_owned(),
            token: CLOCK_TOKEN.to_owned(),
            count: 0,
            at: Vec::new(),
        })
        .collect();
    walk(document, &mut String::new(), kinds, &mut found);
    found.retain(|f| f.count > 0);
    found
}

fn walk(value: &mut Value, pointer: &mut String, kinds: &[ClockText], found: &mut [ClockReplaced]) {
    match value {
        Value::String(text) => {
            for (kind, record) in kinds.iter().zip(found.iter_mut()) {
                let (replaced, count) = kind.replace(text);
                if count > 0 {
                    *text = replaced;
                    record.count += count;
                    record.at.push(pointer.clone());
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                walk(item, pointer, kinds, found);
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let len = pointer.len();
                // RFC 6901: `~` and `/` inside a key are escaped.
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                walk(item, pointer, kinds, found);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

const WEEKDAYS: [&[u8]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The longest zone name accepted inside the parentheses.
const MAX_ZONE_NAME: usize = 64;

/// `Www Mmm DD YYYY HH:MM:SS GMT+HHMM`, then optionally ` (Zone Name)`.
fn js_date_len(b: &[u8]) -> Option<usize> {
    let word = |at: usize, set: &[&[u8]]| b.get(at..at + 3).is_some_and(|w| set.contains(&w));
    let digits = |at: usize, n: usize| {
        b.get(at..at + n)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let byte = |at: usize, c: u8| b.get(at) == Some(&c);
    let fixed = word(0, &WEEKDAYS)
        && byte(3, b' ')
        && word(4, &MONTHS)
        && byte(7, b' ')
        && digits(8, 2)
        && byte(10, b' ')
        && digits(11, 4)
        && byte(15, b' ')
        && digits(16, 2)
        && byte(18, b':')
        && digits(19, 2)
        && byte(21, b':')
        && digits(22, 2)
        && b.get(24..28) == Some(b" GMT".as_slice())
        && matches!(b.get(28), Some(b'+' | b'-'))
        && digits(29, 4);
    if !fixed {
        return None;
    }
    let end = 33;
    if b.get(end..end + 2) != Some(b" (".as_slice()) {
        return Some(end);
    }
    // A parenthesis that does not close on a zone name is not part of the
    // value: the value ends at the offset.
    let name_start = end + 2;
    let close = b
        .get(name_start..)
        .unwrap_or_default()
        .iter()
        .take(MAX_ZONE_NAME + 1)
        .position(|&c| matches!(c, b')' | b'(' | b'"' | b'\\' | b'\n'));
    match close {
        Some(n) if n > 0 && b.get(name_start + n) == Some(&b')') => Some(name_start + n + 1),
        _ => Some(end),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    const STAMP: &str = "Mon Nov 30 2026 19:21:47 GMT+0000 (Coordinated Universal Time)";

    #[test]
    fn file_times_in_a_response_and_its_frame_become_the_token_and_are_listed() {
        let text = format!("size: 22\ncreated: {STAMP}\nmodified: {STAMP}\nisFile: true");
        let frame = serde_json::to_string(&json!({"result": {"content": [{"text": text}]}}))
            .unwrap_or_default();
        let mut document = json!({
            "calls": [{"tool": "get_file_info", "response": {"content": [{"text": text}]}}],
            "transcripts": [{"frames": [{"text": frame, "bytes": frame.len()}]}],
        });
        let found = replace_clock_values(&mut document, &[ClockText::JsDate]);
        assert_eq!(
            found,
            vec![ClockReplaced {
                kind: "JavaScript Date string".into(),
                token: "{clock}".into(),
                count: 4,
                at: vec![
                    "/calls/0/response/content/0/text".into(),
                    "/transcripts/0/frames/0/text".into()
                ],
            }]
        );
        assert_eq!(
            document["calls"][0]["response"]["content"][0]["text"],
            "size: 22\ncreated: {clock}\nmodified: {clock}\nisFile: true"
        );
        let frame_text = document["transcripts"][0]["frames"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(!frame_text.contains("2026"), "{frame_text}");
        // The size that crossed the wire is kept.
        assert_eq!(
            document["transcripts"][0]["frames"][0]["bytes"],
            frame.len()
        );
    }

    #[test]
    fn only_declared_kinds_are_replaced() {
        let original = json!({"a": STAMP, "b": "at 2026-11-30 19:21:47"});
        let mut document = original.clone();
        let found = replace_clock_values(&mut document, &[ClockText::SqlDateTime]);
        assert_eq!(document["a"], STAMP);
        assert_eq!(document["b"], "at {clock}");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].at, vec!["/b".to_string()]);
        let mut untouched = original.clone();
        assert_eq!(replace_clock_values(&mut untouched, &[]), vec![]);
        assert_eq!(untouched, original);
    }

    #[test]
    fn js_dates_are_matched_exactly_and_with_or_without_a_zone_name() {
        let cases = [
            (STAMP, "{clock}"),
            ("Tue Jan 06 2026 08:00:00 GMT-0500", "{clock}"),
            ("x Tue Jan 06 2026 08:00:00 GMT+0100 (CET).", "x {clock}."),
            // A parenthesis that is not a zone name stays outside the value.
            (
                "Tue Jan 06 2026 08:00:00 GMT+0100 (see above",
                "{clock} (see above",
            ),
            (
                "Xue Jan 06 2026 08:00:00 GMT+0100",
                "Xue Jan 06 2026 08:00:00 GMT+0100",
            ),
            (
                "Tue Jan 6 2026 08:00:00 GMT+0100",
                "Tue Jan 6 2026 08:00:00 GMT+0100",
            ),
            (
                "ATue Jan 06 2026 08:00:00 GMT+0100",
                "ATue Jan 06 2026 08:00:00 GMT+0100",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(ClockText::JsDate.replace(text).0, expected, "{text:?}");
        }
    }

    #[test]
    fn sql_date_times_need_a_full_date_and_time_standing_alone() {
        let cases = [
            ("2026-11-30 19:21:47", "{clock}"),
            ("[\"2026-11-30T19:21:47.5Z\"]", "[\"{clock}\"]"),
            ("due 2026-11-30, at 19:21", "due 2026-11-30, at 19:21"),
            ("v12026-11-30 19:21:47", "v12026-11-30 19:21:47"),
            ("2026-11-30 19:21:47x", "2026-11-30 19:21:47x"),
            ("ünï 2026-11-30 19:21:47 ünï", "ünï {clock} ünï"),
        ];
        for (text, expected) in cases {
            assert_eq!(ClockText::SqlDateTime.replace(text).0, expected, "{text:?}");
        }
    }

    #[test]
    fn a_stable_report_has_placeholders_and_lists_its_clock_values() {
        let mut report = crate::audit::fakes::report();
        report.findings.push(witness_model::audit::Finding {
            kind: witness_model::vocab::FindingKind::ObserverWarning,
            detail: format!("/m/cases/x.db changed at {STAMP}"),
            call: None,
        });
        let Ok(stable) = stable(&report, &[("/m/cases", "{cases}")], &[ClockText::JsDate]) else {
            panic!("a report is JSON");
        };
        assert_eq!(stable.findings[0].detail, "{cases}/x.db changed at {clock}");
        assert_eq!(stable.volatile.clock.len(), 1);
        assert_eq!(
            stable.volatile.clock[0].at,
            vec!["/findings/0/detail".to_string()]
        );
    }

    #[test]
    fn a_sweep_names_the_kinds_and_nothing_else() {
        assert_eq!("js-date".parse(), Ok(ClockText::JsDate));
        assert_eq!("sql-datetime".parse(), Ok(ClockText::SqlDateTime));
        let sundial: Result<ClockText, _> = "sundial".parse();
        assert_eq!(sundial, Err(UnknownClockText));
    }

    #[test]
    fn paths_are_replaced_in_every_string_in_the_order_given() {
        let mut document = json!({"a": ["/m/cases/x", {"b": "/m/cases/seed/y"}], "n": 1});
        replace_strings(
            &mut document,
            &[
                ("/m/cases/seed", "{seed}"),
                ("/m/cases", "{cases}"),
                ("", "{x}"),
            ],
        );
        assert_eq!(
            document,
            json!({"a": ["{cases}/x", {"b": "{seed}/y"}], "n": 1})
        );
    }

    #[test]
    fn pointers_escape_slashes_and_tildes_in_keys() {
        let mut document = json!({"a/b": {"c~d": "2026-11-30 19:21:47"}});
        let found = replace_clock_values(&mut document, &[ClockText::SqlDateTime]);
        assert_eq!(found[0].at, vec!["/a~1b/c~0d".to_string()]);
    }
}
