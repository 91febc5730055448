//! The closed vocabularies of a run. Each serializes as the kebab-case word the JSON has always
//! carried, and parses from the command line as the same word.

use std::fmt;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

macro_rules! words {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ValueEnum)]
        #[serde(rename_all = "kebab-case")]
        #[value(rename_all = "kebab-case")]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            pub const ALL: &[$name] = &[$($name::$variant),+];

            /// The word in JSON and on the command line.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

words! {
    /// What a run measures: `both` counts every comparison (instructions and allocations, both
    /// trees) and then times what the counts say changed, the rest with a light backstop;
    /// `time` times every comparison in full (no valgrind needed); `instructions` counts only.
    Measure { Both = "both", Time = "time", Instructions = "instructions" }
}

impl Measure {
    pub fn times(self) -> bool {
        self != Measure::Instructions
    }

    pub fn counts(self) -> bool {
        self != Measure::Time
    }
}

words! {
    /// Which tree a worker was built from.
    Role { Baseline = "baseline", Current = "current" }
}

words! {
    /// What a kernel does once per payload.
    Operation {
        Encode = "encode",
        Decode = "decode",
        /// A TDLib echo call: our codec encodes, TDLib parses and answers, our codec decodes.
        RoundTrip = "round-trip",
        /// TDLib's `testCallEmpty`: the floor under every round trip.
        EmptyCall = "empty-call",
    }
}

words! {
    /// What a comparison compares.
    Metric {
        /// ns/op of the fastest batch per process.
        Latency = "latency",
        Allocations = "allocations",
        /// Bytes allocated per op.
        Bytes = "bytes",
        Instructions = "instructions",
    }
}

words! {
    /// Which samples a latency verdict comes from.
    Stage {
        /// The counts every comparison gets first: instructions and allocations, both trees.
        Count = "count",
        /// The rounds every timed comparison gets.
        Screen = "screen",
        /// Fresh rounds for the comparisons the screen found slower.
        Confirm = "confirm",
    }
}

words! {
    /// One comparison's verdict.
    Verdict {
        /// Gated and not slower: by time, at the threshold it was held to.
        Pass = "pass",
        /// Equal instruction counts and profiles in both trees: the same machine code did the
        /// same work, decided without timing (a timed backstop still fails a large slowdown).
        Unchanged = "unchanged",
        Regression = "regression",
        /// Its counts moved, by less than a quarter of the threshold, and time, too noisy to
        /// gate it, found no regression: the counts bound the change far below the threshold
        /// (the data-layout moves every change brings to code it did not touch).
        Bounded = "bounded",
        /// Passes, but could not have caught a slowdown of the threshold's size (80% power):
        /// the comparison says what it could have caught. A failure under `--strict`.
        NotGated = "not-gated",
        /// A floor (`clone`, `memcpy`, TDLib's empty call): reported, outside the family, never
        /// a regression on latency.
        Reference = "reference",
    }
}

words! {
    /// A whole run's verdict.
    RunVerdict { Pass = "pass", Fail = "fail" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_json_strings() {
        assert_eq!(serde_json::to_string(&Operation::RoundTrip).unwrap(), "\"round-trip\"");
        assert_eq!(serde_json::from_str::<Role>("\"baseline\"").unwrap(), Role::Baseline);
        assert!(serde_json::from_str::<Role>("\"base\"").is_err());
        for m in Metric::ALL {
            assert_eq!(serde_json::to_string(m).unwrap(), format!("\"{m}\""));
            assert_eq!(Metric::from_str(m.as_str(), false).unwrap(), *m);
        }
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_string(v).unwrap(), format!("\"{v}\""));
        }
    }
}
