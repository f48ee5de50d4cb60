//! Tool arguments are strict: an unknown field is an error, never silently
//! ignored (a client that sends `dryRun` for `dry_run` would otherwise get a
//! real write), and the error names the field a client most likely meant.
//! Counts too large saturate instead of failing or wrapping; negative
//! ones are refused.

use std::borrow::Cow;

use rmcp::schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};

/// Arguments of type `T`, whose unknown-field errors suggest a close match.
pub(super) struct Strict<T>(pub T);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Strict<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        T::deserialize(value)
            .map(Strict)
            .map_err(|e| D::Error::custom(with_suggestion(&e.to_string())))
    }
}

impl<T: JsonSchema> JsonSchema for Strict<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" with "did you mean
/// `a`?" added when one of the expected fields is close.
pub(super) fn with_suggestion(msg: &str) -> String {
    if !msg.starts_with("unknown field") {
        return msg.to_owned();
    }
    let quoted: Vec<&str> = msg.split('`').skip(1).step_by(2).collect();
    let Some((unknown, expected)) = quoted.split_first() else {
        return msg.to_owned();
    };
    match closest(unknown, expected) {
        Some(best) => format!("{msg}; did you mean `{best}`?"),
        None => msg.to_owned(),
    }
}

/// The expected field most like `unknown`, compared in snake case, when it
/// is close enough to be a likely intent.
fn closest<'a>(unknown: &str, expected: &[&'a str]) -> Option<&'a str> {
    let wanted = snake_case(unknown);
    expected
        .iter()
        .map(|c| (strsim::jaro_winkler(&wanted, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c == '-' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

/// Deserializes an optional count (a line number, a number of lines):
/// numbers past the largest `usize` (even past `u64`, which JSON carries
/// as a float) saturate to `usize::MAX`; a negative number is refused,
/// since reading from line 1 instead would show what was not asked for.
pub(super) fn saturating<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    let n = match v {
        None | Some(serde_json::Value::Null) => return Ok(None),
        Some(serde_json::Value::Number(n)) => n,
        Some(other) => {
            return Err(D::Error::custom(format!(
                "expected a non-negative integer, got {other}"
            )));
        }
    };
    let negative = n.as_i64().is_some_and(|i| i < 0) || n.as_f64().is_some_and(|f| f < 0.0);
    if negative {
        return Err(D::Error::custom(format!(
            "expected a non-negative integer, got {n}: lines are numbered from 1"
        )));
    }
    let value = if let Some(u) = n.as_u64() {
        usize::try_from(u).unwrap_or(usize::MAX)
    } else {
        let f = n.as_f64().unwrap_or(0.0);
        if f.is_nan() {
            0
        } else if f >= usize::MAX as f64 {
            usize::MAX
        } else {
            f as usize
        }
    };
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Args {
        #[expect(
            dead_code,
            reason = "read only by deserialisation: its presence is the test"
        )]
        id: String,
        #[expect(
            dead_code,
            reason = "read only by deserialisation: its presence is the test"
        )]
        dry_run: Option<bool>,
        #[serde(default, deserialize_with = "saturating")]
        limit: Option<usize>,
    }

    fn parse(v: serde_json::Value) -> Result<Args, String> {
        serde_json::from_value::<Strict<Args>>(v)
            .map(|s| s.0)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn unknown_fields_are_refused_with_the_likely_intent() {
        let e = parse(serde_json::json!({"id": "x", "dryRun": true})).unwrap_err();
        assert!(e.contains("unknown field `dryRun`"), "{e}");
        assert!(e.contains("did you mean `dry_run`?"), "{e}");
        let e = parse(serde_json::json!({"id": "x", "colour": 1})).unwrap_err();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn counts_saturate() {
        for (v, want) in [
            (serde_json::json!(5), Some(5)),
            (serde_json::json!(u64::MAX), Some(usize::MAX)),
            (serde_json::json!(1e30), Some(usize::MAX)),
            (serde_json::Value::Null, None),
        ] {
            let a = parse(serde_json::json!({"id": "x", "limit": v})).unwrap();
            assert_eq!(a.limit, want);
        }
        assert!(parse(serde_json::json!({"id": "x", "limit": "7"})).is_err());
        for negative in [serde_json::json!(-3), serde_json::json!(-0.5)] {
            let e = parse(serde_json::json!({"id": "x", "limit": negative})).unwrap_err();
            assert!(e.contains("non-negative"), "{e}");
        }
    }
}
