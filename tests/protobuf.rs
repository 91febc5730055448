//! prost's bytes checked by an independent decoder: the committed `.proto` compiled by protox and
//! read by prost-reflect must give the same field values, and bytes prost-reflect writes must
//! decode with ours.

use std::path::PathBuf;

use base64::Engine;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value as Reflected};
use serde_json::{Map, Value};
use tdbench::Codec;
use tdbench::codecs::protobuf::Protobuf;
use tdbench::corpus::Corpus;
use tdbench::models::{self, Object};

fn proto_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/proto")
}

/// The `.proto` users read is the one the models were generated with.
/// `TDBENCH_BLESS=1 cargo test --test protobuf` rewrites it after a schema change.
#[test]
fn committed_proto_file_is_current() {
    let path = proto_dir().join("td_api.proto");
    if std::env::var_os("TDBENCH_BLESS").is_some() {
        std::fs::write(&path, models::PROTO_FILE).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == models::PROTO_FILE, "{} is stale: run TDBENCH_BLESS=1 cargo test --test protobuf", path.display());
}

fn object_descriptor() -> MessageDescriptor {
    let files = protox::compile(["td_api.proto"], [proto_dir()]).expect("td_api.proto compiles with protox");
    let pool = DescriptorPool::from_file_descriptor_set(files).unwrap();
    pool.get_message_by_name("tdbench.td_api.Object").expect("Object message")
}

/// A decoded message as TDLib-shaped JSON: wrappers (one oneof) dissolve into their member,
/// objects get `@type`, unset message fields are left out like null pointers.
fn reflected_json(message: &DynamicMessage) -> Value {
    let descriptor = message.descriptor();
    if let Some(oneof) = descriptor.oneofs().next() {
        return oneof
            .fields()
            .find(|f| message.has_field(f))
            .map_or(Value::Null, |f| reflected_json(message.get_field(&f).as_message().unwrap()));
    }
    let mut object = Map::new();
    let name = descriptor.name();
    object.insert("@type".into(), Value::String(name[..1].to_ascii_lowercase() + &name[1..]));
    for field in descriptor.fields() {
        let value = message.get_field(&field);
        if field.kind().as_message().is_some() && !field.is_list() && !message.has_field(&field) {
            continue;
        }
        object.insert(field.name().to_string(), reflected_value(&value));
    }
    Value::Object(object)
}

fn reflected_value(value: &Reflected) -> Value {
    match value {
        Reflected::Bool(b) => Value::Bool(*b),
        Reflected::I32(n) => Value::from(*n),
        Reflected::I64(n) => Value::from(*n),
        Reflected::F64(d) => Value::from(*d),
        Reflected::String(s) => Value::String(s.clone()),
        Reflected::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Reflected::Message(m) => reflected_json(m),
        Reflected::List(items) => Value::Array(items.iter().map(reflected_value).collect()),
        other => panic!("the mapping uses no {other:?}"),
    }
}

/// TDLib JSON quotes int64; protobuf does not. Compare both sides with decimal strings read as
/// numbers (applied to both, so a mismatch still shows).
fn normalized(value: Value) -> Value {
    match value {
        Value::String(s) if s.parse::<i64>().is_ok_and(|n| n.to_string() == s) => Value::from(s.parse::<i64>().unwrap()),
        Value::Array(items) => Value::Array(items.into_iter().map(normalized).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, normalized(v))).collect()),
        other => other,
    }
}

#[test]
fn prost_bytes_decode_to_the_same_fields_with_an_independent_decoder() {
    let descriptor = object_descriptor();
    let corpus = Corpus::load(&Corpus::default_dir()).unwrap();
    let mut buffer = Vec::new();
    for payload in &corpus.payloads {
        buffer.clear();
        Protobuf.encode(&payload.value, &mut buffer).unwrap();
        let reflected = DynamicMessage::decode(descriptor.clone(), buffer.as_slice())
            .unwrap_or_else(|e| panic!("{}: prost-reflect cannot decode: {e}", payload.location()));
        let ours = normalized(serde_json::to_value(&payload.value).unwrap());
        assert_eq!(normalized(reflected_json(&reflected)), ours, "{}", payload.location());

        // And the other way: what prost-reflect writes, we read back to the same value.
        let rewritten = reflected.encode_to_vec();
        assert_eq!(Protobuf.decode(&rewritten).unwrap(), payload.value, "{}", payload.location());
    }
}

#[test]
fn bytes_written_out_by_hand() {
    // Object's oneof member for testInt, numbered by the committed map, then testInt's field 1 = 3.
    let map = std::fs::read_to_string(proto_dir().join("numbers.txt")).unwrap();
    let object = map.lines().find(|line| line.starts_with("Object ")).expect("the map numbers Object's members");
    let tag: u32 = object.split_whitespace().find_map(|w| w.strip_prefix("testInt=")).and_then(|n| n.parse().ok()).unwrap();
    assert!(tag >= 16, "the key takes two varint bytes");
    let key = (tag << 3) | 2;
    let key = [(key & 0x7f) as u8 | 0x80, (key >> 7) as u8];
    let mut out = Vec::new();
    Protobuf.encode(&Object::TestInt(models::TestInt { value: 3 }), &mut out).unwrap();
    assert_eq!(out, [key[0], key[1], 2, 0x08, 3]);
    // Defaults are left off the wire (proto3), and an empty member still marks the constructor.
    out.clear();
    Protobuf.encode(&Object::TestInt(models::TestInt { value: 0 }), &mut out).unwrap();
    assert_eq!(out, [key[0], key[1], 0]);
    assert_eq!(Protobuf.decode(&out).unwrap(), Object::TestInt(models::TestInt { value: 0 }));
    assert!(Protobuf.decode(&[]).unwrap_err().message.contains("no constructor"));
}
