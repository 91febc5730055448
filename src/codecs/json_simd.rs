//! `json-simd`: TDLib JSON through simd-json (the Rust port of simdjson), with the same models
//! and derived serde impls as `json`. simd-json parses in place: it rewrites its input while
//! unescaping strings, so a reader of bytes it does not own (TDLib's answer, a `&[u8]` here)
//! copies them first. The copy goes into a buffer kept for the thread, with simd-json's own
//! scratch `Buffers`, as its documentation advises: the copy is timed, a fresh allocation per
//! payload is not.
//!
//! simd-json's serde reader recurses once per nesting level with no limit of its own: 100,000
//! nested arrays in an unknown field overflow the stack and abort the process (found by
//! tests/robustness.rs). So the codec parses to simd-json's tape first, refuses nesting deeper
//! than serde_json's and sonic-rs's limit of 128, and only then deserializes the tape — what a
//! user reading untrusted input must add; the walk is over tape nodes, not bytes.
//!
//! Built as users build it: the default features, whose `runtime-detection` picks AVX2 or SSE4.2
//! when the CPU has them. Its writer is its own, so its encoding is not TDLib's bytes;
//! validation checks it reads back to the same object.

use std::cell::RefCell;

use simd_json::Buffers;
use simd_json::tape::Node;
use tdbench_models::Object;

use crate::{Codec, CodecError};

pub struct JsonSimd;

thread_local! {
    /// The input's copy and simd-json's scratch, reused from payload to payload.
    static SCRATCH: RefCell<(Vec<u8>, Buffers)> = RefCell::new((Vec::new(), Buffers::default()));
}

impl Codec for JsonSimd {
    fn name(&self) -> &'static str {
        "json-simd"
    }

    fn is_tdlib_json(&self) -> bool {
        true
    }

    fn writes_tdlib_bytes(&self) -> bool {
        false
    }

    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {
        simd_json::serde::to_writer(out, value).map_err(|e| CodecError::new(self.name(), e))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {
        SCRATCH.with_borrow_mut(|(input, buffers)| {
            input.clear();
            input.extend_from_slice(bytes);
            let error = |e: simd_json::Error| {
                // Its errors are enums shown by `Debug` (`Serde("…")` for the models' own).
                let message = match e.error() {
                    simd_json::ErrorType::Serde(message) => message.clone(),
                    other => format!("{other:?}"),
                };
                CodecError::at(self.name(), e.index().min(bytes.len()), message)
            };
            let tape = simd_json::to_tape_with_buffers(input, buffers).map_err(error)?;
            if nesting_exceeds(&tape.0, MAX_DEPTH) {
                return Err(CodecError::new(self.name(), format!("nesting deeper than {MAX_DEPTH} levels")));
            }
            tape.deserialize().map_err(error)
        })
    }
}

/// serde_json's recursion limit, and sonic-rs's.
const MAX_DEPTH: usize = 128;

/// Whether arrays and objects on `tape` nest deeper than `limit`. Each container node counts
/// the nodes inside it, so the open containers are a stack of the indexes where they end.
fn nesting_exceeds(tape: &[Node], limit: usize) -> bool {
    let mut ends = [0usize; MAX_DEPTH + 1];
    let mut open = 0;
    for (at, node) in tape.iter().enumerate() {
        while open > 0 && ends[open - 1] <= at {
            open -= 1;
        }
        if let Node::Object { count, .. } | Node::Array { count, .. } = *node {
            if open == limit.min(MAX_DEPTH) {
                return true;
            }
            ends[open] = at + 1 + count;
            open += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_refused(json: &str) -> bool {
        let mut input = json.as_bytes().to_vec();
        let tape = simd_json::to_tape(&mut input).unwrap();
        nesting_exceeds(&tape.0, MAX_DEPTH)
    }

    #[test]
    fn nesting_is_counted_by_level_not_by_container() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(!depth_refused(&nested(128)));
        assert!(depth_refused(&nested(129)));
        // Many containers side by side, each shallow: never refused.
        let wide = format!("[{}]", vec![r#"{"a":[1,{"b":[]}]}"#; 1000].join(","));
        assert!(!depth_refused(&wide));
        // Siblings after a deep branch close at their own level.
        let after = format!("[{},{}]", nested(126), nested(126));
        assert!(!depth_refused(&after));
        assert!(depth_refused(&format!("[{},{}]", nested(1), nested(128))));
    }
}
