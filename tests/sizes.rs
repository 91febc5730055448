//! The compressed sizes the report shows are sizes of real compressed encodings: every payload
//! of the corpus, in every format, compresses with gzip and zstd to bytes that decompress back
//! to its encoding, and the figure a worker reports is their mean.

use std::io::Read;

use tdbench::corpus::Corpus;
use tdbench::registry::CODECS;
use tdbench::sizes;

#[test]
fn gzip_and_zstd_sizes_decompress_back_to_the_encodings() {
    let corpus = Corpus::load(&Corpus::default_dir()).unwrap_or_else(|e| panic!("{} corpus errors", e.len()));
    for codec in CODECS {
        let encodings: Vec<Vec<u8>> = corpus
            .payloads
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                codec.encode(&p.value, &mut out).unwrap();
                out
            })
            .collect();
        let (mut gzip_total, mut zstd_total) = (0usize, 0usize);
        for encoding in &encodings {
            let gzipped = sizes::gzip(encoding);
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(gzipped.as_slice()).read_to_end(&mut back).unwrap();
            assert_eq!(&back, encoding, "{}: gzip", codec.name());
            let zstded = sizes::zstd(encoding);
            assert_eq!(&zstd::bulk::decompress(&zstded, encoding.len()).unwrap(), encoding, "{}: zstd", codec.name());
            gzip_total += gzipped.len();
            zstd_total += zstded.len();
        }
        let n = encodings.len() as f64;
        let reported = sizes::compressed(&encodings).unwrap();
        assert_eq!((reported.gzip_bytes, reported.zstd_bytes), (gzip_total as f64 / n, zstd_total as f64 / n), "{}", codec.name());
    }
    assert_eq!(sizes::compressed(&[]), None);
}
