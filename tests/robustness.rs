//! Hostile input: every prefix of every payload's encoding, and random byte mutations, give an
//! error or a value — never a panic, never an allocation larger than the input justifies, never
//! unbounded recursion. A length prefix claiming a gigabyte in a short buffer fails cleanly.

use tdbench::alloc::{CountingAllocator, measure};
use tdbench::corpus::Corpus;
use tdbench::corpus::synth::Rng;
use tdbench::registry::CODECS;
use tdbench::{Codec, Object};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// What an input of `len` bytes may make a decoder allocate at once: the decoded value is at
/// most a small multiple of the input, and serde caps speculative pre-allocation at 1 MiB.
fn allowed(len: usize) -> usize {
    64 * len + (1 << 20) + 4096
}

/// Decodes `input`, returning whether it decoded, and checks the allocation bound.
fn decode_checked(codec: &dyn Codec, input: &[u8], what: &str) -> bool {
    let (result, counts) = measure(|| codec.decode(input));
    let largest = counts.largest;
    assert!(
        largest <= allowed(input.len()),
        "{}: {what}: a {}-byte input made it allocate {largest} bytes at once",
        codec.name(),
        input.len()
    );
    result.is_ok()
}

fn corpus() -> Corpus {
    Corpus::load(&Corpus::default_dir()).expect("corpus loads")
}

/// Every prefix of small payloads; for large ones, every prefix near both ends and a strided
/// sample between (decoding an 80 KB payload 80,000 times in a debug build would take minutes).
fn prefix_lengths(len: usize) -> Vec<usize> {
    if len <= 4096 {
        return (0..len).collect();
    }
    let stride = len / 256;
    let mut lengths: Vec<usize> = (0..512).chain((0..len).step_by(stride)).chain(len - 512..len).collect();
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

fn encodings(corpus: &Corpus, codec: &dyn Codec) -> Vec<(String, Vec<u8>)> {
    corpus
        .payloads
        .iter()
        .map(|p| {
            let mut out = Vec::new();
            codec.encode(&p.value, &mut out).unwrap();
            (p.location(), out)
        })
        .collect()
}

#[test]
fn every_prefix_is_an_error_or_a_value() {
    let corpus = corpus();
    for codec in CODECS {
        for (location, bytes) in encodings(&corpus, *codec) {
            for len in prefix_lengths(bytes.len()) {
                decode_checked(*codec, &bytes[..len], &format!("{location}, prefix of {len}"));
            }
        }
    }
    // The JSON readers also get every prefix of the corpus lines as captured.
    for payload in &corpus.payloads {
        for codec in CODECS.iter().filter(|c| c.is_tdlib_json()) {
            for len in prefix_lengths(payload.json.len()) {
                let decoded = decode_checked(*codec, &payload.json[..len], &payload.location());
                assert!(!decoded, "{}: a strict prefix of a JSON object decoded", payload.location());
            }
        }
    }
}

#[test]
fn random_mutations_are_an_error_or_a_value() {
    let corpus = corpus();
    let mut rng = Rng::new(0x5eed);
    for codec in CODECS {
        for (location, bytes) in encodings(&corpus, *codec) {
            let rounds = if bytes.len() > 8192 { 8 } else { 64 };
            for _ in 0..rounds {
                let mut mutated = bytes.clone();
                for _ in 0..rng.range(1, 4) {
                    let at = rng.range(0, mutated.len() as i64 - 1) as usize;
                    match rng.range(0, 3) {
                        0 => mutated[at] ^= 1 << rng.range(0, 7),
                        1 => mutated[at] = *rng.pick(&[0x00, 0xff, 0xfe, 0x7f, 0x80, b'"', b'\\', b'{', b'[']),
                        2 => {
                            mutated.remove(at);
                        }
                        _ => mutated.insert(at, rng.next_u64() as u8),
                    }
                    if mutated.is_empty() {
                        break;
                    }
                }
                decode_checked(*codec, &mutated, &format!("{location}, mutated"));
            }
        }
    }
}

/// A two-entry MessagePack map up to the second value: `{"@type": tl_name, key: `.
fn msgpack_map_start(tl_name: &str, key: &str) -> Vec<u8> {
    let mut mp = vec![0x82, 0xa5];
    mp.extend(b"@type");
    for text in [tl_name, key] {
        mp.push(0xa0 | text.len() as u8);
        mp.extend(text.as_bytes());
    }
    mp
}

fn codec(name: &str) -> &'static dyn Codec {
    tdbench::registry::codec(name).unwrap()
}

#[test]
fn gigabyte_length_claims_in_short_buffers_fail_cleanly() {
    // TL: a vector claiming 2^30 elements, and a string claiming 16 MiB, in a few bytes.
    let mut tl = tdbench::models::TestVectorInt::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    tl.extend([0x15, 0xc4, 0xb5, 0x1c, 0, 0, 0, 0x40]);
    tl.extend([0u8; 92]);
    assert!(!decode_checked(codec("tl"), &tl, "vector count 2^30"));
    let mut tl = tdbench::models::TestBytes::CONSTRUCTOR_ID.to_le_bytes().to_vec();
    tl.extend([0xfe, 0xff, 0xff, 0xff]);
    tl.extend([0u8; 92]);
    assert!(!decode_checked(codec("tl"), &tl, "string length 2^24-1"));

    // protobuf: testBytes's bytes field claiming 1 GiB.
    let tag = tdbench::models::CONSTRUCTORS.iter().position(|&(n, _)| n == "testBytes").unwrap() as u32 + 1;
    let mut pb = Vec::new();
    prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, &mut pb);
    prost::encoding::encode_varint(100, &mut pb);
    prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut pb);
    prost::encoding::encode_varint(1 << 30, &mut pb);
    pb.extend([0u8; 90]);
    assert!(!decode_checked(codec("protobuf"), &pb, "bytes length 2^30"));

    // MessagePack: a bin32 claiming 1 GiB, and an array claiming 2^30 elements.
    let mp = msgpack_map_start("testBytes", "value");
    let mut bin = mp.clone();
    bin.extend([0xc6, 0x40, 0, 0, 0]);
    bin.extend([0u8; 60]);
    assert!(!decode_checked(codec("msgpack"), &bin, "bin32 length 2^30"));
    let mut array = mp;
    array.extend([0xdd, 0x40, 0, 0, 0]);
    array.extend([0u8; 60]);
    assert!(!decode_checked(codec("msgpack"), &array, "array length 2^30"));

    // bincode: testVectorInt's length as a u64 varint of 2^30.
    let index = tdbench::models::CONSTRUCTORS.iter().position(|&(n, _)| n == "testVectorInt").unwrap() as u8;
    let mut bc = vec![index, 0xfc, 0, 0, 0, 0x40];
    bc.extend([0u8; 94]);
    assert!(!decode_checked(codec("bincode"), &bc, "vector length 2^30"));
}

#[test]
fn deep_nesting_is_refused_not_recursed_into() {
    let depth = 100_000;
    // JSON: an unknown field holding 100,000 nested arrays.
    let json = format!("{{\"@type\":\"ok\",\"x\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
    for codec in CODECS.iter().filter(|c| c.is_tdlib_json()) {
        assert!(!decode_checked(*codec, json.as_bytes(), "deep JSON"));
    }
    // MessagePack: the same as fixarrays of one element.
    let mut mp = msgpack_map_start("ok", "x");
    mp.extend(std::iter::repeat_n(0x91, depth));
    mp.push(0xc0);
    assert!(!decode_checked(codec("msgpack"), &mp, "deep MessagePack"));
    // protobuf: an unknown field of nested groups.
    let mut pb = Vec::new();
    let tag = tdbench::models::CONSTRUCTORS.iter().position(|&(n, _)| n == "ok").unwrap() as u32 + 1;
    prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, &mut pb);
    let mut groups = Vec::new();
    for _ in 0..depth {
        prost::encoding::encode_key(9, prost::encoding::WireType::StartGroup, &mut groups);
    }
    prost::encoding::encode_varint(groups.len() as u64, &mut pb);
    pb.extend(groups);
    assert!(!decode_checked(codec("protobuf"), &pb, "deep protobuf groups"));
}

#[test]
fn decoders_reject_trailing_garbage_where_the_library_allows_it() {
    let value = Object::Ok(tdbench::models::Ok {});
    for codec in CODECS {
        let mut bytes = Vec::new();
        codec.encode(&value, &mut bytes).unwrap();
        bytes.extend([0x01, 0x02, 0x03, 0x04]);
        let decoded = codec.decode(&bytes);
        // rmp-serde's slice reader does not say how much it consumed (see codecs/msgpack.rs);
        // protobuf reads the extra bytes as fields, and 0x01 is an invalid key.
        if codec.name() != "msgpack" {
            assert!(decoded.is_err(), "{} accepted trailing bytes", codec.name());
        }
    }
}
