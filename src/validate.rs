//! Validation before measurement: a faster parser that returns different objects is not faster.
//!
//! For every payload: each TDLib JSON implementation decodes it to the value the reference reader
//! produced; re-encoding gives TDLib's exact bytes (or, for files not in TDLib's own form, a
//! fixed point that decodes to the same value); every binary format round-trips to an equal
//! value, and encodes deterministically.

use std::borrow::Cow;
use std::fmt;

use crate::corpus::{Corpus, Payload};
use crate::registry::CODECS;

/// One way a payload failed, naming the payload and the implementation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub location: String,
    pub implementation: &'static str,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location, self.implementation, self.message)
    }
}

/// Every failure of every payload in the corpus.
pub fn validate_corpus(corpus: &Corpus) -> Vec<Failure> {
    corpus.payloads.iter().flat_map(validate_payload).collect()
}

pub fn validate_payload(payload: &Payload) -> Vec<Failure> {
    let mut failures = Vec::new();
    let mut fail =
        |implementation: &'static str, message: String| failures.push(Failure { location: payload.location(), implementation, message });
    let mut buffer = Vec::new();
    for codec in CODECS {
        let name = codec.name();
        if codec.is_tdlib_json() {
            match codec.decode(&payload.json) {
                Ok(value) if value == payload.value => {}
                Ok(_) => fail(name, "decodes to a different value than the reference reader".into()),
                Err(e) => fail(name, format!("does not decode: {e}")),
            }
        }
        buffer.clear();
        if let Err(e) = codec.encode(&payload.value, &mut buffer) {
            fail(name, format!("does not encode: {e}"));
            continue;
        }
        if codec.writes_tdlib_bytes() && payload.role.canonical {
            let expected = strip_client_envelope(&payload.json);
            if buffer != *expected {
                fail(name, format!("re-encoding differs from TDLib's bytes: {}", first_difference(&expected, &buffer)));
            }
            continue;
        }
        let decoded = match codec.decode(&buffer) {
            Ok(value) if value == payload.value => value,
            Ok(_) => {
                fail(name, "round trip gives a different value".into());
                continue;
            }
            Err(e) => {
                fail(name, format!("cannot decode its own encoding: {e}"));
                continue;
            }
        };
        let mut again = Vec::new();
        match codec.encode(&decoded, &mut again) {
            Ok(()) if again == buffer => {}
            Ok(()) => fail(name, format!("encoding is not deterministic: {}", first_difference(&buffer, &again))),
            Err(e) => fail(name, format!("does not re-encode: {e}")),
        }
    }
    failures
}

/// TDLib's JSON client appends `"@extra"` (when the request had one) and `"@client_id"` as the
/// last fields of what `td_receive` returns; they are not part of the object, so a capture is
/// compared without them.
pub fn strip_client_envelope(json: &[u8]) -> Cow<'_, [u8]> {
    let Some(mut body) = json.strip_suffix(b"}") else { return Cow::Borrowed(json) };
    let mut stripped = false;
    for key in [&b",\"@client_id\":"[..], &b",\"@extra\":"[..]] {
        let Some(at) = body.windows(key.len()).rposition(|w| w == key) else { continue };
        // Only a complete value running to the end is the envelope (not a nested field).
        if serde_json::from_slice::<serde::de::IgnoredAny>(&body[at + key.len()..]).is_ok() {
            body = &body[..at];
            stripped = true;
        }
    }
    if !stripped {
        return Cow::Borrowed(json);
    }
    let mut object = body.to_vec();
    object.push(b'}');
    Cow::Owned(object)
}

/// `at byte 41: expected …"value":"caf\u00e9"…, got …"value":"café"…`.
pub fn first_difference(expected: &[u8], got: &[u8]) -> String {
    let at = expected.iter().zip(got).position(|(a, b)| a != b).unwrap_or(expected.len().min(got.len()));
    let window = |bytes: &[u8]| {
        let start = at.saturating_sub(24);
        let end = (at + 24).min(bytes.len());
        String::from_utf8_lossy(&bytes[start..end]).escape_debug().to_string()
    };
    format!("at byte {at} (lengths {} and {}): expected …{}…, got …{}…", expected.len(), got.len(), window(expected), window(got))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_envelope_is_stripped_and_nothing_else() {
        let strip = |s: &str| String::from_utf8(strip_client_envelope(s.as_bytes()).into_owned()).unwrap();
        assert_eq!(strip(r#"{"@type":"ok","@client_id":1}"#), r#"{"@type":"ok"}"#);
        assert_eq!(strip(r#"{"@type":"ok","@extra":{"a":[1,"}"]},"@client_id":12}"#), r#"{"@type":"ok"}"#);
        assert_eq!(strip(r#"{"@type":"ok","@extra":"x"}"#), r#"{"@type":"ok"}"#);
        let nested = r#"{"@type":"a","b":{"@type":"c","@extra":5}}"#;
        assert_eq!(strip(nested), nested);
        assert_eq!(strip(r#"{"@type":"ok"}"#), r#"{"@type":"ok"}"#);
    }
}
