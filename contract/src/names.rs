//! The names a run can be asked for, known before anything is built: the runner checks
//! `--data` and `--serializer` against them first (a typo was refused only once a release
//! worker had been built, 110 s into a fresh clone's first run). What a tree can measure is
//! still its worker's catalog, checked again after the build; a test in the worker crate holds
//! these lists equal to the catalog's.

/// The lanes `all` runs, in corpus order.
pub const LANES: &[&str] = &[
    "status",
    "file",
    "message",
    "messages",
    "option",
    "option-plain",
    "string-1k",
    "string-64k",
    "bytes-1k",
    "bytes-64k",
    "vector-int",
    "vector-object",
    "mix",
];

/// Lanes a run measures only when named: the in-app start-up stream.
pub const OPT_IN_LANES: &[&str] = &["startup"];

/// The wire formats: what the in-app measurement and the report's headline compare.
pub const CODECS: &[&str] = &["json", "json-td", "json-value", "json-sonic", "json-simd", "protobuf", "msgpack", "tl", "bincode"];

/// Every implementation a worker measures: the codecs, the floors, the TDLib round trips.
pub const IMPLEMENTATIONS: &[&str] = &[
    "json",
    "json-td",
    "json-value",
    "json-sonic",
    "json-simd",
    "protobuf",
    "msgpack",
    "tl",
    "bincode",
    "clone",
    "validated-clone",
    "memcpy",
    "memcpy-protobuf",
    "memcpy-msgpack",
    "memcpy-tl",
    "memcpy-bincode",
    "tdlib-json",
    "tdlib-json-td",
    "tdlib-json-value",
];
