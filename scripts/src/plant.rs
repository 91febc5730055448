//! A planted slowdown as a real change: an edit to one codec's source that makes one of its
//! operations spin, after its own work, for a given share of that work's time. Calibration
//! commits it in a scratch worktree and runs the gate on it as a user runs it on a change
//! (`./run.sh --calibrate`), and the tests commit it to see what else such an edit moves.
//!
//! The guard's own two clock reads add some 50 ns per operation on top of the share: next to
//! json-td's 45 µs decode of `messages` that is about 0.1%, next to a 100 ns decode of
//! `status` it is most of the slowdown. Calibrate on long operations.
//!
//! Counted under valgrind (its preload library in `LD_PRELOAD`) the plant does not spin: a
//! spin's length follows the clock, and a count must not. Its instructions — two clock reads,
//! a guard — still change the operation's count, as any real change does, so the gate times
//! it; the spin is what the timing then sees.

use std::path::{Path, PathBuf};

use tdbench_contract::Operation;

/// The codec's source file in a tree: `src/codecs/json_td.rs` for `json-td`.
pub fn source(tree: &Path, codec: &str) -> PathBuf {
    tree.join("src/codecs").join(format!("{}.rs", codec.replace('-', "_")))
}

/// The line every codec's `Codec` impl opens `operation` with.
fn signature(operation: Operation) -> Option<&'static str> {
    match operation {
        Operation::Encode => Some("    fn encode(&self, value: &Object, out: &mut Vec<u8>) -> Result<(), CodecError> {\n"),
        Operation::Decode => Some("    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {\n"),
        Operation::RoundTrip | Operation::EmptyCall => None,
    }
}

/// The code planted at the start of the operation: a guard whose drop, after the operation's
/// own work, spins for `percent` of the time that work took.
fn plant(percent: f64) -> String {
    format!(
        "        // Planted by tdbench's calibration: {percent}% of this operation's own time.
        struct Planted(std::time::Instant);
        impl Drop for Planted {{
            fn drop(&mut self) {{
                static COUNTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
                let counted = COUNTED.get_or_init(|| {{
                    std::env::var_os(\"LD_PRELOAD\").is_some_and(|p| p.to_string_lossy().contains(\"vgpreload\"))
                }});
                if *counted {{
                    return;
                }}
                let spin = self.0.elapsed().mul_f64({share:?});
                let started = std::time::Instant::now();
                while started.elapsed() < spin {{
                    std::hint::spin_loop();
                }}
            }}
        }}
        let _planted = Planted(std::time::Instant::now());
",
        share = percent / 100.0
    )
}

/// Edits `codec`'s source in `tree` so that its `operation` spins for `percent` of its own time.
pub fn apply(tree: &Path, codec: &str, operation: Operation, percent: f64) -> Result<(), String> {
    let file = source(tree, codec);
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot plant in {}: {e}", file.display()))?;
    let signature = signature(operation).ok_or_else(|| format!("a slowdown is planted in an encode or a decode, not a {operation}"))?;
    if text.matches(signature).count() != 1 {
        return Err(format!("{} has no single `fn {operation}` of the Codec trait to plant in", file.display()));
    }
    let planted = text.replacen(signature, &format!("{signature}{}", plant(percent)), 1);
    std::fs::write(&file, planted).map_err(|e| format!("cannot write {}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plant_goes_right_after_the_operation_s_signature() {
        let tree = std::env::temp_dir().join(format!("tdbench-plant-{}", std::process::id()));
        let file = source(&tree, "json-td");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let original =
            "impl Codec for JsonTd {\n    fn decode(&self, bytes: &[u8]) -> Result<Object, CodecError> {\n        read(bytes)\n    }\n}\n";
        std::fs::write(&file, original).unwrap();
        apply(&tree, "json-td", Operation::Decode, 1.5).unwrap();
        let planted = std::fs::read_to_string(&file).unwrap();
        assert!(planted.contains("mul_f64(0.015)") && planted.contains("vgpreload"), "{planted}");
        let body = planted.split("CodecError> {\n").nth(1).unwrap();
        assert!(body.starts_with("        // Planted by tdbench's calibration: 1.5%"), "{planted}");
        assert!(body.trim_end().ends_with("read(bytes)\n    }\n}"), "{planted}");
        // No encode to plant in; no such codec.
        assert!(apply(&tree, "json-td", Operation::Encode, 1.0).unwrap_err().contains("no single `fn encode`"));
        assert!(apply(&tree, "nope", Operation::Decode, 1.0).is_err());
        let _ = std::fs::remove_dir_all(&tree);
    }

    #[test]
    fn every_codec_of_this_tree_can_be_planted_in() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for &codec in tdbench_contract::names::CODECS {
            let text = std::fs::read_to_string(source(root, codec)).unwrap();
            for operation in [Operation::Encode, Operation::Decode] {
                assert_eq!(text.matches(signature(operation).unwrap()).count(), 1, "{codec} {operation}");
            }
        }
    }
}
