//! What an encoding weighs once compressed, as a message would travel: each payload's
//! encoding compressed on its own with gzip at level 6 (what MTProto's `gzip_packed` carries)
//! and zstd at level 3 (its default).

use std::io::Write;

use tdbench_contract::Compressed;

pub const GZIP_LEVEL: u32 = 6;
pub const ZSTD_LEVEL: i32 = 3;

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(GZIP_LEVEL));
    encoder.write_all(bytes).expect("writing to a Vec cannot fail");
    encoder.finish().expect("writing to a Vec cannot fail")
}

pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(bytes, ZSTD_LEVEL).expect("zstd compresses any input at a valid level")
}

/// Mean compressed sizes of `encodings`, one payload each; `None` for none.
pub fn compressed(encodings: &[Vec<u8>]) -> Option<Compressed> {
    if encodings.is_empty() {
        return None;
    }
    let mean = |f: fn(&[u8]) -> Vec<u8>| encodings.iter().map(|e| f(e).len()).sum::<usize>() as f64 / encodings.len() as f64;
    Some(Compressed { gzip_bytes: mean(gzip), zstd_bytes: mean(zstd) })
}
