//! Every format, both directions, on real declarations of TDLib 1.8.65 and 1.8.66 that append,
//! insert and rename a field (`message`), remove a constructor and add one (`updateOwnedTonCount`
//! → `updateOwnedGramCount`, `updateUserSubscription`), and widen int53 to int64 while dropping a
//! field (`chatJoinResultGuardBotApprovalRequired`); `chatJoinResultSuccess` did not change.
//! See `models/testdata/skew/`.

use serde_json::json;
use tdbench_skew::release::{Known1_8_65, Known1_8_66, Known1_8_66ByPosition, Release};
use tdbench_skew::{Format, Outcome, SharedFields, judge};

fn old_values() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "message",
            json!({"@type": "message", "id": 1048576, "chat_id": -1001234567890i64, "is_outgoing": true,
                   "is_paid_ton_suggested_post": true, "date": 1733400000, "sender_tag": "",
                   "author_signature": "Ann", "media_album_id": "7", "summary_language_code": "en"}),
        ),
        ("updateOwnedTonCount", json!({"@type": "updateOwnedTonCount", "ton_amount": 5})),
        ("chatJoinResultSuccess", json!({"@type": "chatJoinResultSuccess", "chat_id": -100})),
        (
            "chatJoinResultGuardBotApprovalRequired",
            json!({"@type": "chatJoinResultGuardBotApprovalRequired", "bot_user_id": 42, "query_id": 123456789012i64}),
        ),
    ]
}

fn new_values() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "message",
            json!({"@type": "message", "id": 1048576, "chat_id": -1001234567890i64, "is_outgoing": true,
                   "is_paid_gram_suggested_post": true, "date": 1733400000, "author_signature": "Ann",
                   "media_album_id": "7", "summary_language_code": "en", "ephemeral_message_id": 77}),
        ),
        ("updateOwnedGramCount", json!({"@type": "updateOwnedGramCount", "gram_amount": 5})),
        ("updateUserSubscription", json!({"@type": "updateUserSubscription", "user_id": 42, "payload": "p", "is_canceled": true})),
        ("chatJoinResultSuccess", json!({"@type": "chatJoinResultSuccess", "chat_id": -100})),
        (
            "chatJoinResultGuardBotApprovalRequired",
            json!({"@type": "chatJoinResultGuardBotApprovalRequired", "bot_user_id": 42, "query_id": "123456789012"}),
        ),
    ]
}

/// The outcome in short: `ok`, `refused`, or `wrong: fields`.
fn short(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Correct => "ok".into(),
        Outcome::Refused(_) => "refused".into(),
        Outcome::Wrong(fields) => format!("wrong: {}", fields.iter().cloned().collect::<Vec<_>>().join(" ")),
    }
}

/// Each case's outcome, in the order of `values`.
fn outcomes<W: Release, R: Release>(format: Format, values: &[(&'static str, serde_json::Value)]) -> Vec<String> {
    let fields = SharedFields::of::<W, R>();
    values
        .iter()
        .map(|(_, value)| {
            let value: W::Object = serde_json::from_value(value.clone()).expect("a known case is a value of its release");
            short(&judge::<W, R>(format, &value, &fields))
        })
        .collect()
}

/// What an old reader makes of the new values, and a new reader of the old ones.
fn table(format: Format) -> (Vec<String>, Vec<String>) {
    if format.numbers_by_position() {
        (
            outcomes::<Known1_8_66ByPosition, Known1_8_65>(format, &new_values()),
            outcomes::<Known1_8_65, Known1_8_66ByPosition>(format, &old_values()),
        )
    } else {
        (outcomes::<Known1_8_66, Known1_8_65>(format, &new_values()), outcomes::<Known1_8_65, Known1_8_66>(format, &old_values()))
    }
}

/// Per format: what an old reader makes of each new value, then what a new reader makes of each
/// old one. Why each cell is what it is:
/// - by name (json, json-td, msgpack, protobuf-stable): `message` reads with the inserted and
///   appended fields skipped or defaulted; a constructor the reader lacks is refused. A new int64
///   `query_id` is a JSON string, which the JSON readers refuse for int53 (msgpack and protobuf
///   carry it as an integer of either width); the old int53 number reads into int64.
/// - bincode and protobuf-by-position: the Object's variants are numbered by position, so a
///   constructor in another place reads as whatever the other release has there, silently when
///   the bytes happen to fit (`updateOwnedTonCount` ↔ `updateOwnedGramCount`, one int53 each);
///   `message`'s shifted fields fail to fit (a varint where an object is due) and are refused.
/// - tl: any change to a declaration changes its constructor id: refused, while the unchanged
///   `chatJoinResultSuccess` reads.
const EXPECTED: &[(&str, &[&str], &[&str])] = &[
    ("json", &["ok", "refused", "refused", "ok", "refused"], &["ok", "refused", "ok", "ok"]),
    ("json-td", &["ok", "refused", "refused", "ok", "refused"], &["ok", "refused", "ok", "ok"]),
    ("msgpack", &["ok", "refused", "refused", "ok", "ok"], &["ok", "refused", "ok", "ok"]),
    (
        "bincode",
        &["refused", "wrong: updateOwnedGramCount read as updateOwnedTonCount", "refused", "refused", "refused"],
        &["refused", "wrong: updateOwnedTonCount read as updateOwnedGramCount", "refused", "refused"],
    ),
    ("tl", &["refused", "refused", "refused", "ok", "refused"], &["refused", "refused", "ok", "refused"]),
    (
        "protobuf-by-position",
        &[
            "refused",
            "wrong: updateOwnedGramCount read as updateOwnedTonCount",
            "wrong: updateUserSubscription read as chatJoinResultSuccess",
            "wrong: chatJoinResultSuccess read as chatJoinResultGuardBotApprovalRequired",
            "refused",
        ],
        &[
            "refused",
            "wrong: updateOwnedTonCount read as updateOwnedGramCount",
            "wrong: chatJoinResultSuccess read as updateUserSubscription",
            "wrong: chatJoinResultGuardBotApprovalRequired read as chatJoinResultSuccess",
        ],
    ),
    ("protobuf-stable", &["ok", "refused", "refused", "ok", "ok"], &["ok", "refused", "ok", "ok"]),
];

#[test]
fn every_format_and_direction_gives_its_known_outcome_on_each_case() {
    assert_eq!(EXPECTED.len(), Format::ALL.len());
    for (name, old_reads_new, new_reads_old) in EXPECTED {
        let format = Format::parse(name).unwrap();
        let (got_old_reads_new, got_new_reads_old) = table(format);
        assert_eq!(got_old_reads_new, *old_reads_new, "{name}, old reads new ({:?})", new_values().iter().map(|v| v.0).collect::<Vec<_>>());
        assert_eq!(got_new_reads_old, *new_reads_old, "{name}, new reads old ({:?})", old_values().iter().map(|v| v.0).collect::<Vec<_>>());
    }
}

#[test]
fn the_reference_keeps_shared_fields_defaults_new_ones_and_widens_integers() {
    let old: <Known1_8_65 as Release>::Object = serde_json::from_value(old_values()[0].1.clone()).unwrap();
    let new = tdbench_skew::convert::<Known1_8_65, Known1_8_66>(&old).unwrap();
    let new = serde_json::to_value(&new).unwrap();
    assert_eq!(new["chat_id"], json!(-1001234567890i64));
    assert_eq!(new["is_paid_gram_suggested_post"], json!(false), "a renamed field is, by name, a new one");
    assert_eq!(new["ephemeral_message_id"], json!(0));
    let widened: <Known1_8_65 as Release>::Object = serde_json::from_value(old_values()[3].1.clone()).unwrap();
    let widened = serde_json::to_value(tdbench_skew::convert::<Known1_8_65, Known1_8_66>(&widened).unwrap()).unwrap();
    assert_eq!(widened["query_id"], json!("123456789012"), "int53 to int64 keeps the value");
    let removed: <Known1_8_65 as Release>::Object = serde_json::from_value(old_values()[1].1.clone()).unwrap();
    assert!(tdbench_skew::convert::<Known1_8_65, Known1_8_66>(&removed).is_none(), "no counterpart for a removed constructor");
}
