//! RFC 8879 certificate compression on BoringSSL, which leaves the algorithms to the caller
//! (`SSL_CTX_add_cert_compression_alg`): zlib (`zlib-rs`) and brotli (`brotli`), the crates
//! rustls' own compression uses.
//!
//! A server compresses its chain once: the OpenSSL engine installs a chain compressed at
//! start-up (`SSL_CTX_set1_compressed_cert`) and the rustls engine keeps its compressed
//! chain in a cache, so no engine pays the compression per handshake. Here the callback
//! keeps what it compressed and hands out the kept bytes when the same Certificate message
//! comes again; `precompress` compresses the server's message at start-up into that cache,
//! for the ready line's sizes.

use std::io::{self, Write};
use std::sync::Mutex;

use boring::ssl::{CertificateCompressionAlgorithm, CertificateCompressor};
use serde::Serialize;
use zlib_rs::{DeflateConfig, Inflate, InflateFlush, ReturnCode, Status};

use chainlab_record::args::Compression;

/// Brotli's parameters: the largest quality (a chain is compressed once), its default window.
const BROTLI_QUALITY: u32 = 11;
const BROTLI_LGWIN: u32 = 22;
const BROTLI_BUFFER: usize = 4096;
/// zlib's largest window, as RFC 1950 streams use by default.
const ZLIB_WINDOW_BITS: u8 = 15;
/// How much a zlib inflate step writes at a time (any size works; one TLS record's worth).
const ZLIB_CHUNK: usize = 16 * 1024;
/// Certificate messages kept per algorithm (a server's chain, a client's certificate).
const CACHE_ENTRIES: usize = 4;

/// What the server did about certificate compression (the ready line's `cert_compression`,
/// as the other engines report it).
#[derive(Debug, Clone, Serialize)]
pub struct CompressionSetup {
    pub algorithm: Compression,
    /// The uncompressed Certificate message body and its compressed form; `None` when
    /// compression is off.
    pub uncompressed_bytes: Option<usize>,
    pub compressed_bytes: Option<usize>,
    /// Whether the compressed chain is sent to a client that offers the algorithm: BoringSSL
    /// sends it whatever its size.
    pub installed: bool,
}

/// One algorithm's compressor: compresses a message the first time it sees it.
pub struct Cached<A: Algorithm> {
    seen: Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
    _alg: std::marker::PhantomData<A>,
}

impl<A: Algorithm> Default for Cached<A> {
    fn default() -> Self {
        Cached {
            seen: Mutex::new(Vec::new()),
            _alg: std::marker::PhantomData,
        }
    }
}

impl<A: Algorithm> Cached<A> {
    /// `input` compressed, from the cache or compressed now (and kept).
    pub fn compressed(&self, input: &[u8]) -> io::Result<Vec<u8>> {
        let mut seen = self.seen.lock().map_err(|_| io::Error::other("poisoned"))?;
        if let Some((_, out)) = seen.iter().find(|(i, _)| i == input) {
            return Ok(out.clone());
        }
        let out = A::compress(input)?;
        if seen.len() < CACHE_ENTRIES {
            seen.push((input.to_vec(), out.clone()));
        }
        Ok(out)
    }
}

/// An RFC 8879 algorithm.
pub trait Algorithm: Send + Sync + 'static {
    const ID: CertificateCompressionAlgorithm;
    fn compress(input: &[u8]) -> io::Result<Vec<u8>>;
    fn decompress(input: &[u8], output: &mut dyn Write) -> io::Result<()>;
}

pub struct Zlib;
pub struct Brotli;

impl Algorithm for Zlib {
    const ID: CertificateCompressionAlgorithm = CertificateCompressionAlgorithm::ZLIB;

    fn compress(input: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = vec![0u8; zlib_rs::compress_bound(input.len())];
        let (filled, rc) =
            zlib_rs::compress_slice(&mut out, input, DeflateConfig::best_compression());
        if rc != ReturnCode::Ok {
            return Err(io::Error::other("zlib compression failed"));
        }
        let n = filled.len();
        out.truncate(n);
        Ok(out)
    }

    /// Inflates in chunks into BoringSSL's buffer (sized to the length the peer announced).
    fn decompress(input: &[u8], output: &mut dyn Write) -> io::Result<()> {
        let fail = || io::Error::other("zlib decompression failed");
        let mut state = Inflate::new(true, ZLIB_WINDOW_BITS);
        let mut chunk = [0u8; ZLIB_CHUNK];
        loop {
            let (read, written) = (state.total_in(), state.total_out());
            let at = usize::try_from(read).map_err(|_| fail())?;
            let status = state
                .decompress(&input[at..], &mut chunk, InflateFlush::NoFlush)
                .map_err(|_| fail())?;
            let made = usize::try_from(state.total_out() - written).map_err(|_| fail())?;
            output.write_all(&chunk[..made])?;
            match status {
                Status::StreamEnd if state.total_in() == input.len() as u64 => return Ok(()),
                Status::Ok if made > 0 || state.total_in() > read => {}
                _ => return Err(fail()),
            }
        }
    }
}

impl Algorithm for Brotli {
    const ID: CertificateCompressionAlgorithm = CertificateCompressionAlgorithm::BROTLI;

    fn compress(input: &[u8]) -> io::Result<Vec<u8>> {
        let mut w = brotli::CompressorWriter::new(
            Vec::with_capacity(input.len()),
            BROTLI_BUFFER,
            BROTLI_QUALITY,
            BROTLI_LGWIN,
        );
        w.write_all(input)?;
        Ok(w.into_inner())
    }

    fn decompress(input: &[u8], output: &mut dyn Write) -> io::Result<()> {
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut &input[..], &mut out)?;
        output.write_all(&out)
    }
}

/// What BoringSSL calls: compression through the cache, decompression directly.
pub struct Compressor<A: Algorithm>(pub std::sync::Arc<Cached<A>>);

impl<A: Algorithm> CertificateCompressor for Compressor<A> {
    const ALGORITHM: CertificateCompressionAlgorithm = A::ID;
    const CAN_COMPRESS: bool = true;
    const CAN_DECOMPRESS: bool = true;

    fn compress<W: Write>(&self, input: &[u8], output: &mut W) -> io::Result<()> {
        output.write_all(&self.0.compressed(input)?)
    }

    fn decompress<W: Write>(&self, input: &[u8], output: &mut W) -> io::Result<()> {
        A::decompress(input, output)
    }
}

/// The body of the TLS 1.3 Certificate message a server sends for `chain` (DER, leaf
/// first), as BoringSSL hands it to the compression callback: an empty request context, the
/// list's 3-byte length, then each certificate's 3-byte length, its DER and no extensions.
pub fn certificate_message(chain: &[Vec<u8>]) -> Vec<u8> {
    let list: usize = chain.iter().map(|c| 3 + c.len() + 2).sum();
    let mut out = Vec::with_capacity(4 + list);
    out.push(0);
    out.extend_from_slice(&u24(list));
    for der in chain {
        out.extend_from_slice(&u24(der.len()));
        out.extend_from_slice(der);
        out.extend_from_slice(&[0, 0]);
    }
    out
}

fn u24(n: usize) -> [u8; 3] {
    [(n >> 16) as u8, (n >> 8) as u8, n as u8]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_algorithms_round_trip_and_cache() {
        let input: Vec<u8> = (0..5000u32).flat_map(|i| (i % 97).to_be_bytes()).collect();
        for (c, d) in [
            (Zlib::compress(&input).unwrap(), 0),
            (Brotli::compress(&input).unwrap(), 1),
        ] {
            assert!(c.len() < input.len());
            let mut back = Vec::new();
            if d == 0 {
                Zlib::decompress(&c, &mut back).unwrap();
            } else {
                Brotli::decompress(&c, &mut back).unwrap();
            }
            assert_eq!(back, input);
        }
        let cache = Cached::<Zlib>::default();
        assert_eq!(
            cache.compressed(&input).unwrap(),
            Zlib::compress(&input).unwrap()
        );
        assert_eq!(cache.seen.lock().unwrap().len(), 1);
        cache.compressed(&input).unwrap();
        assert_eq!(cache.seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn the_certificate_message_frames_each_certificate() {
        let m = certificate_message(&[vec![1, 2], vec![3]]);
        assert_eq!(m, vec![0, 0, 0, 13, 0, 0, 2, 1, 2, 0, 0, 0, 0, 1, 3, 0, 0]);
    }
}
