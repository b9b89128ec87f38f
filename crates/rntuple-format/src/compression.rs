//! Compression blocks (RNTuple binary format 1.0, section "Compression Block").
//!
//! If the stored size equals the uncompressed size, the bytes are stored as
//! they are. Otherwise they are a series of chunks, each of at most
//! 16 MiB - 1 uncompressed bytes, each with a 9-byte header:
//!
//! ```text
//! Byte 0      1      2      3      4      5      6      7      8      9
//! +------+------+------+------+------+------+------+------+------+...
//! |     Algorithm      |  Compressed size   |  Uncompressed size | <COMPRESSED DATA>
//! +------+------+------+------+------+------+------+------+------+...
//! ```
//!
//! Sizes are 24-bit little-endian. Facts from ROOT's sources (`core/zip`,
//! `core/lz4`, `core/lzma`, `core/zstd`) the text leaves out:
//!
//! * `ZL\x08`: a zlib stream (RFC 1950, with header and Adler-32).
//! * `XZ\x00`: an xz stream (LZMA2 filter, CRC32 check).
//! * `L4<major>`: an 8-byte **big-endian** xxhash64 (seed 0) of the LZ4 block
//!   data, then one LZ4 block; the compressed size counts the 8 bytes. ROOT
//!   uses LZ4 HC from level 4 up.
//! * `ZS\x01`: one zstd frame; ROOT compresses with zstd level `2 * level`.
//! * `CS\x08`: ROOT's pre-zlib deflate; not read here.
//! * When any chunk does not shrink, ROOT stores the whole buffer uncompressed.

mod lz4_chunk;

use crate::constants::*;
use crate::error::{Error, Location, Result};
use lz4_chunk::unlz4;

/// Decompresses `src` into a new buffer of `uncompressed_len` bytes.
pub fn decompress(src: &[u8], uncompressed_len: usize, what: &Location) -> Result<Vec<u8>> {
    // The chunks can at most expand by the largest ratio of the codecs; a
    // sane bound refuses absurd lengths before allocating.
    if src.len() != uncompressed_len {
        let limit = max_expansion(src.len());
        if uncompressed_len as u64 > limit {
            return Err(Error::WouldOverAllocate { requested: uncompressed_len as u64, limit, location: what.clone() });
        }
    }
    let mut dst = crate::alloc::try_zeroed(uncompressed_len, || what.to_string())?;
    decompress_into(src, &mut dst, what)?;
    Ok(dst)
}

/// The allocation guard of every read (DESIGN.md "Untrusted input"): an
/// envelope or page of `stored` bytes that claims to inflate to `unpacked`
/// bytes is refused before anything is allocated when the claim exceeds
/// [`MAX_EXPANSION_RATIO`] × `stored` + [`EXPANSION_SLACK`] or the address
/// space. Returns `unpacked` as a buffer length.
pub fn guard_expansion(stored: u64, unpacked: u64, what: &Location) -> Result<usize> {
    let limit = stored.saturating_mul(MAX_EXPANSION_RATIO);
    let refuse = || Error::WouldOverAllocate { requested: unpacked, limit, location: what.clone() };
    if unpacked > limit.saturating_add(EXPANSION_SLACK) {
        return Err(refuse());
    }
    usize::try_from(unpacked).map_err(|_| refuse())
}

/// Largest number of bytes `n` compressed bytes can decode to: every chunk
/// header announces at most 16 MiB - 1 bytes and takes at least 10 bytes.
fn max_expansion(n: usize) -> u64 {
    let chunks = (n / (COMPRESSION_HEADER_SIZE + 1)) as u64;
    chunks.saturating_mul(COMPRESSION_MAX_CHUNK as u64)
}

fn err(what: &Location, offset: usize, message: impl Into<String>) -> Error {
    let mut location = what.clone();
    location.context = format!("{} (compressed byte {offset})", location.context);
    Error::Decompression { message: message.into(), location }
}

/// Decompresses `src` into `dst`, which must be filled exactly.
pub fn decompress_into(src: &[u8], dst: &mut [u8], what: &Location) -> Result<()> {
    Decompressor::new().decompress_into(src, dst, what)
}

/// Reusable decompression state: a reader that decompresses many pages keeps
/// one per thread, so that zstd's context (a few hundred kilobytes) is set up
/// once instead of once per page.
#[derive(Default)]
pub struct Decompressor {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    zlib: Option<flate2::Decompress>,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("zstd_context", &self.zstd.is_some())
            .field("zlib_context", &self.zlib.is_some())
            .finish()
    }
}

impl Decompressor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decompresses `src` into `dst`, which must be filled exactly (as
    /// [`decompress_into`]).
    pub fn decompress_into(&mut self, src: &[u8], dst: &mut [u8], what: &Location) -> Result<()> {
        if src.len() == dst.len() {
            dst.copy_from_slice(src);
            return Ok(());
        }
        let mut pos = 0usize;
        let mut out = 0usize;
        while pos < src.len() {
            let rest = &src[pos..];
            if rest.len() < COMPRESSION_HEADER_SIZE {
                return Err(err(what, pos, format!("{} trailing bytes are too few for a chunk header", rest.len())));
            }
            let tag = [rest[0], rest[1], rest[2]];
            let csize = u24(&rest[3..6]);
            let usize_ = u24(&rest[6..9]);
            let body_end = COMPRESSION_HEADER_SIZE + csize;
            if body_end > rest.len() {
                return Err(err(
                    what,
                    pos,
                    format!(
                        "chunk claims {csize} compressed bytes, only {} remain",
                        rest.len() - COMPRESSION_HEADER_SIZE
                    ),
                ));
            }
            if usize_ > dst.len() - out {
                return Err(err(
                    what,
                    pos,
                    format!("chunk claims {usize_} uncompressed bytes, only {} remain in the output", dst.len() - out),
                ));
            }
            let body = &rest[COMPRESSION_HEADER_SIZE..body_end];
            let target = &mut dst[out..out + usize_];
            self.chunk(tag, body, target).map_err(|m| err(what, pos, m))?;
            pos += body_end;
            out += usize_;
        }
        if out != dst.len() {
            return Err(err(what, pos, format!("chunks decompress to {out} bytes, expected {}", dst.len())));
        }
        Ok(())
    }

    /// Decompresses one chunk body into `target`, which it must fill exactly.
    fn chunk(&mut self, tag: [u8; 3], body: &[u8], target: &mut [u8]) -> std::result::Result<(), String> {
        let n = match tag {
            TAG_ZLIB => {
                let d = match &mut self.zlib {
                    Some(d) => {
                        d.reset(true);
                        d
                    }
                    empty => empty.insert(flate2::Decompress::new(true)),
                };
                inflate_zlib(d, body, target)?
            }
            TAG_LZMA => unxz(body, target)?,
            TAG_ZSTD => {
                let ctx = match &mut self.zstd {
                    Some(ctx) => ctx,
                    empty => empty.insert(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?),
                };
                ctx.decompress_to_buffer(body, target).map_err(|e| format!("zstd: {e}"))?
            }
            [b'L', b'4', _] => unlz4(body, target)?,
            [b'Z', b'S', v] => return Err(format!("zstd chunk with unknown format version {v}")),
            TAG_OLD => return Err("ROOT's historic 'CS' deflate chunks are not supported".into()),
            t => return Err(format!("unknown compression algorithm tag {:?}", String::from_utf8_lossy(&t))),
        };
        if n != target.len() {
            return Err(format!("chunk decompressed to {n} bytes, its header says {}", target.len()));
        }
        Ok(())
    }
}

fn u24(b: &[u8]) -> usize {
    usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16
}

fn inflate_zlib(d: &mut flate2::Decompress, body: &[u8], target: &mut [u8]) -> std::result::Result<usize, String> {
    match d.decompress(body, target, flate2::FlushDecompress::Finish) {
        Ok(flate2::Status::StreamEnd) => Ok(d.total_out() as usize),
        Ok(_) => Err("zlib stream does not end where the chunk header says".into()),
        Err(e) => Err(format!("zlib: {e}")),
    }
}

fn unxz(body: &[u8], target: &mut [u8]) -> std::result::Result<usize, String> {
    let mut s = liblzma::stream::Stream::new_stream_decoder(u64::MAX, 0).map_err(|e| format!("xz: {e}"))?;
    match s.process(body, target, liblzma::stream::Action::Finish) {
        Ok(liblzma::stream::Status::StreamEnd) => Ok(s.total_out() as usize),
        Ok(_) => Err("xz stream does not end where the chunk header says".into()),
        Err(e) => Err(format!("xz: {e}")),
    }
}

/// Compresses `src` with ROOT compression `settings` (algorithm * 100 + level)
/// into ROOT-compatible chunks. Returns `src` unchanged when the level is 0,
/// when a chunk does not shrink (as ROOT does) or when the result would not
/// be shorter than `src` (a reader could not tell it from uncompressed data).
///
/// zstd chunks are compressed with a context kept per thread (set up once,
/// not once per page) straight into the returned buffer; the bytes are those
/// of a fresh context. The buffer has room for 8 more bytes (a page checksum)
/// without reallocating.
pub fn compress(src: &[u8], settings: u32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if compress_into(src, settings, &mut out)? {
        Ok(out)
    } else {
        Ok(src.to_vec())
    }
}

/// As [`compress`], into `out` (cleared first): a writer that compresses
/// many pages passes the same buffer each time, so that its memory is set up
/// once (a fresh buffer per page costs page faults comparable to a fast
/// codec's work). Returns whether `out` holds the compressed chunks; when
/// false, the stored form is `src` itself and `out` holds nothing of use.
pub fn compress_into(src: &[u8], settings: u32, out: &mut Vec<u8>) -> Result<bool> {
    out.clear();
    let algorithm = settings / 100;
    let level = (settings % 100).min(9);
    if level == 0 || src.is_empty() {
        return Ok(false);
    }
    let algorithm = match algorithm {
        ALGORITHM_GLOBAL => ALGORITHM_ZLIB, // ROOT's R__ZipMode default
        ALGORITHM_ZLIB | ALGORITHM_LZMA | ALGORITHM_LZ4 | ALGORITHM_ZSTD => algorithm,
        ALGORITHM_OLD => {
            return Err(Error::invalid("compression algorithm 3 (ROOT's historic deflate) cannot be written"))
        }
        other => return Err(Error::invalid(format!("unknown compression algorithm {other}"))),
    };
    let chunks = src.len().div_ceil(COMPRESSION_MAX_CHUNK);
    if algorithm == ALGORITHM_ZSTD {
        // Room for the worst case, so that zstd writes in place; the caller
        // trims what is not used.
        let bound = src.chunks(COMPRESSION_MAX_CHUNK).map(|c| zstd::zstd_safe::compress_bound(c.len())).sum::<usize>();
        out.reserve_exact(bound + chunks * COMPRESSION_HEADER_SIZE + 8);
    } else {
        out.reserve(src.len() / 2 + COMPRESSION_HEADER_SIZE);
    }
    for chunk in src.chunks(COMPRESSION_MAX_CHUNK) {
        // ROOT refuses to compress tiny chunks (R__zipMultipleAlgorithm).
        if chunk.len() < COMPRESSION_HEADER_SIZE + 2 {
            return Ok(false);
        }
        let start = out.len();
        out.extend_from_slice(&[0; COMPRESSION_HEADER_SIZE]);
        let tag = match algorithm {
            ALGORITHM_ZLIB => {
                out.extend_from_slice(&deflate_zlib(chunk, level)?);
                TAG_ZLIB
            }
            ALGORITHM_LZMA => {
                out.extend_from_slice(&xz(chunk, level)?);
                TAG_LZMA
            }
            ALGORITHM_LZ4 => {
                lz4_chunk::lz4_into(out, chunk, level)?;
                [TAG_LZ4[0], TAG_LZ4[1], LZ4_MAJOR_VERSION]
            }
            _ => {
                zstd_into(out, chunk, 2 * level as i32)?;
                TAG_ZSTD
            }
        };
        let body = out.len() - start - COMPRESSION_HEADER_SIZE;
        if body + COMPRESSION_HEADER_SIZE >= chunk.len() || body > COMPRESSION_MAX_CHUNK {
            return Ok(false);
        }
        let header = &mut out[start..start + COMPRESSION_HEADER_SIZE];
        header[..3].copy_from_slice(&tag);
        header[3..6].copy_from_slice(&(body as u32).to_le_bytes()[..3]);
        header[6..].copy_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
    }
    Ok(out.len() < src.len())
}

thread_local! {
    /// This thread's zstd compression context.
    static ZSTD_CONTEXT: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Appends one zstd frame of `chunk` at `level` to `out`, which has room for
/// it (`compress_bound`), with this thread's context.
fn zstd_into(out: &mut Vec<u8>, chunk: &[u8], level: i32) -> Result<()> {
    ZSTD_CONTEXT.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| Error::internal("zstd compression context re-entered"))?;
        let ctx = match slot.as_mut() {
            Some(c) => {
                c.set_compression_level(level).map_err(|e| Error::io("zstd compression", e))?;
                c
            }
            None => slot.insert(zstd::bulk::Compressor::new(level).map_err(|e| Error::io("zstd compression", e))?),
        };
        let pos = out.len() as u64;
        let mut cursor = std::io::Cursor::new(out);
        cursor.set_position(pos);
        ctx.compress_to_buffer(chunk, &mut cursor).map_err(|e| Error::io("zstd compression", e))?;
        Ok(())
    })
}

fn deflate_zlib(chunk: &[u8], level: u32) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(chunk).map_err(|e| Error::io("zlib compression", e))?;
    e.finish().map_err(|e| Error::io("zlib compression", e))
}

/// The smallest LZMA dictionary (liblzma's `LZMA_DICT_SIZE_MIN`).
const LZMA_DICT_SIZE_MIN: u32 = 4096;
/// The dictionary of liblzma's presets 0-9 (the table of `xz(1)`, "DictSize").
const LZMA_PRESET_DICT: [u32; 10] =
    [1 << 18, 1 << 20, 1 << 21, 1 << 22, 1 << 22, 1 << 23, 1 << 23, 1 << 24, 1 << 25, 1 << 26];

/// The dictionary ROOT's LZMA compression (`core/lzma`, `R__zipLZMA`) uses
/// for `len` input bytes at a preset whose dictionary is `preset`: that,
/// reduced to a quarter of the input when smaller, but at least 4 KiB. An
/// encoder's memory grows with its dictionary (at level 4 the preset's
/// 4 MiB costs ~45 MiB of match-finder tables, set up for every page), so
/// this keeps a page's encoder near the size of the page — and writes the
/// bytes ROOT writes.
fn lzma_dict_size(preset: u32, len: usize) -> u32 {
    let quarter = u32::try_from(len / 4).unwrap_or(u32::MAX).max(LZMA_DICT_SIZE_MIN);
    preset.min(quarter)
}

fn xz(chunk: &[u8], level: u32) -> Result<Vec<u8>> {
    use std::io::Write;
    let lzma_err = |e: liblzma::stream::Error| Error::io("xz compression", e.into());
    let mut options = liblzma::stream::LzmaOptions::new_preset(level).map_err(lzma_err)?;
    let preset_dict = LZMA_PRESET_DICT[level.min(9) as usize];
    options.dict_size(lzma_dict_size(preset_dict, chunk.len()));
    let mut filters = liblzma::stream::Filters::new();
    filters.lzma2(&options);
    let stream =
        liblzma::stream::Stream::new_stream_encoder(&filters, liblzma::stream::Check::Crc32).map_err(lzma_err)?;
    let mut e = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    e.write_all(chunk).map_err(|e| Error::io("xz compression", e))?;
    e.finish().map_err(|e| Error::io("xz compression", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Location {
        Location::new("test page", Some(1000))
    }

    #[test]
    fn the_guard_refuses_what_the_stored_size_cannot_justify() {
        // 10 stored bytes may claim 10 * 65536 + 1 MiB = 1_703_936 bytes, no more.
        assert_eq!(guard_expansion(10, 1_703_936, &loc()).unwrap(), 1_703_936);
        let e = guard_expansion(10, 1_703_937, &loc()).unwrap_err();
        assert!(
            matches!(&e, Error::WouldOverAllocate { requested: 1_703_937, limit: 655_360, location } if location.offset == Some(1000)),
            "{e}"
        );
        assert!(matches!(guard_expansion(u64::MAX, u64::MAX, &loc()), Ok(_) | Err(Error::WouldOverAllocate { .. })));
        assert_eq!(guard_expansion(0, 1 << 20, &loc()).unwrap(), 1 << 20);
        assert!(guard_expansion(0, (1 << 20) + 1, &loc()).is_err());
    }

    fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| ((i * 7) % 13 + (i / 1000) % 3) as u8).collect()
    }

    #[test]
    fn round_trip_every_algorithm() {
        let data = sample(100_000);
        for settings in [101, 105, 109, 201, 207, 401, 404, 501, 505, 509, 5] {
            let z = compress(&data, settings).unwrap();
            assert!(z.len() < data.len(), "settings {settings}");
            assert_eq!(decompress(&z, data.len(), &loc()).unwrap(), data, "settings {settings}");
        }
    }

    #[test]
    fn tags_are_roots() {
        let data = sample(10_000);
        assert_eq!(&compress(&data, 101).unwrap()[..3], b"ZL\x08");
        assert_eq!(&compress(&data, 207).unwrap()[..3], b"XZ\x00");
        assert_eq!(&compress(&data, 404).unwrap()[..3], b"L4\x01");
        assert_eq!(&compress(&data, 505).unwrap()[..3], b"ZS\x01");
    }

    #[test]
    fn uncompressed_when_level_zero_or_incompressible() {
        let data = sample(1000);
        assert_eq!(compress(&data, 500).unwrap(), data);
        assert_eq!(compress(&data, 0).unwrap(), data);
        let tiny = [1u8, 2, 3];
        assert_eq!(compress(&tiny, 505).unwrap(), tiny);
        // pseudo-random bytes do not compress
        let mut x = 0x1234_5678_u32;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert_eq!(compress(&noise, 505).unwrap(), noise);
        assert_eq!(decompress(&noise, noise.len(), &loc()).unwrap(), noise);
    }

    /// One buffer reused for pages of any size and setting gives the bytes
    /// of `compress`; incompressible input is reported as stored.
    #[test]
    fn compress_into_a_reused_buffer() {
        let mut out = vec![7u8; 100];
        for (n, settings) in [(100_000, 505), (300, 505), (50_000, 101), (70_000, 404), (20_000, 207), (2000, 505)] {
            let data = sample(n);
            let compressed = compress_into(&data, settings, &mut out).unwrap();
            assert!(compressed, "{n} bytes, settings {settings}");
            assert_eq!(out, compress(&data, settings).unwrap(), "{n} bytes, settings {settings}");
        }
        assert!(!compress_into(&[1, 2, 3], 505, &mut out).unwrap());
        assert!(!compress_into(&sample(1000), 500, &mut out).unwrap());
    }

    #[test]
    fn multi_chunk_payloads() {
        let data = sample(COMPRESSION_MAX_CHUNK + 5000);
        for settings in [105, 404, 505] {
            let z = compress(&data, settings).unwrap();
            // two chunk headers
            let first = u24(&z[3..6]);
            assert_eq!(u24(&z[6..9]), COMPRESSION_MAX_CHUNK);
            let second = &z[COMPRESSION_HEADER_SIZE + first..];
            assert_eq!(u24(&second[6..9]), 5000);
            assert_eq!(decompress(&z, data.len(), &loc()).unwrap(), data);
        }
    }

    #[test]
    fn corrupt_blocks_fail_cleanly() {
        let data = sample(50_000);
        for settings in [101, 207, 404, 505] {
            let z = compress(&data, settings).unwrap();
            // wrong expected size
            assert!(decompress(&z, data.len() - 1, &loc()).is_err());
            assert!(decompress(&z, data.len() + 1, &loc()).is_err());
            // truncated at every interesting length
            for cut in [0, 1, 5, 8, 9, 10, z.len() / 2, z.len() - 1] {
                assert!(decompress(&z[..cut], data.len(), &loc()).is_err(), "settings {settings} cut {cut}");
            }
            // flipped payload byte
            let mut bad = z.clone();
            let mid = bad.len() / 2;
            bad[mid] ^= 0x55;
            let _ = decompress(&bad, data.len(), &loc()); // must not panic
                                                          // trailing garbage
            let mut long = z.clone();
            long.extend_from_slice(&[0; 3]);
            assert!(decompress(&long, data.len(), &loc()).is_err());
        }
    }

    #[test]
    fn lz4_checksum_is_verified() {
        let data = sample(10_000);
        let mut z = compress(&data, 404).unwrap();
        z[COMPRESSION_HEADER_SIZE] ^= 1; // first checksum byte
        let e = decompress(&z, data.len(), &loc()).unwrap_err();
        assert!(e.to_string().contains("xxhash64"), "{e}");
    }

    #[test]
    fn unknown_and_old_algorithms() {
        let mut z = compress(&sample(10_000), 505).unwrap();
        z[0] = b'Q';
        assert!(decompress(&z, 10_000, &loc()).is_err());
        z[0] = b'C';
        z[1] = b'S';
        z[2] = 8;
        let e = decompress(&z, 10_000, &loc()).unwrap_err();
        assert!(e.to_string().contains("CS"), "{e}");
    }

    #[test]
    fn absurd_lengths_are_refused_before_allocating() {
        let z = compress(&sample(10_000), 505).unwrap();
        let e = decompress(&z, usize::MAX / 2, &loc()).unwrap_err();
        assert!(matches!(e, Error::WouldOverAllocate { .. }), "{e}");
    }

    #[test]
    fn one_decompressor_serves_every_algorithm_and_survives_errors() {
        let mut d = Decompressor::new();
        for round in 0..2 {
            for settings in [505, 101, 404, 207, 509, 105] {
                let data = sample(30_000 + settings as usize);
                let z = compress(&data, settings).unwrap();
                let mut out = vec![0u8; data.len()];
                d.decompress_into(&z, &mut out, &loc()).unwrap();
                assert_eq!(out, data, "settings {settings}, round {round}");
                // A corrupt block fails, and the next one decompresses again.
                let mut bad = z.clone();
                let last = bad.len() - 1;
                bad[last / 2] ^= 0xff;
                bad.truncate(last);
                assert!(d.decompress_into(&bad, &mut out, &loc()).is_err(), "settings {settings}");
            }
        }
    }

    #[test]
    fn reused_zstd_context_writes_the_bytes_of_a_fresh_one() {
        // Levels interleaved on one thread, so that the thread's context is
        // reused with changing levels; each chunk must be one fresh-context frame.
        for round in 0..2 {
            for settings in [505u32, 501, 509, 505] {
                for n in [100usize, 70_000, COMPRESSION_MAX_CHUNK + 3000] {
                    let data = sample(n + round);
                    let z = compress(&data, settings).unwrap();
                    let mut expected = Vec::new();
                    for chunk in data.chunks(COMPRESSION_MAX_CHUNK) {
                        let body = zstd::bulk::compress(chunk, 2 * (settings % 100) as i32).unwrap();
                        expected.extend_from_slice(b"ZS\x01");
                        expected.extend_from_slice(&(body.len() as u32).to_le_bytes()[..3]);
                        expected.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
                        expected.extend_from_slice(&body);
                    }
                    assert_eq!(z, expected, "settings {settings}, {n} bytes");
                    assert!(z.capacity() >= z.len() + 8, "room for a checksum");
                }
            }
        }
        // Other threads have their own contexts.
        let data = sample(50_000);
        let here = compress(&data, 505).unwrap();
        let there = std::thread::spawn(move || compress(&data, 505).unwrap()).join().unwrap();
        assert_eq!(here, there);
    }

    /// The dictionary size an LZMA block's xz stream declares: the LZMA2
    /// properties byte of its block header (xz format 1.2.1 section 3.1.5,
    /// filter flags: id 0x21, one property byte d, dictionary (2 | d & 1) << (d / 2 + 11)).
    fn declared_dict(block: &[u8]) -> u32 {
        let xz = &block[COMPRESSION_HEADER_SIZE..];
        assert_eq!(&xz[..6], &[0xFD, b'7', b'z', b'X', b'Z', 0]);
        let header = &xz[12..];
        assert_eq!(header[1] & 0x03, 0, "one filter");
        let filter_start = 2 + usize::from(header[1] & 0x40 != 0) + usize::from(header[1] & 0x80 != 0);
        assert!(header[1] & 0xC0 == 0, "no size fields before the filter flags");
        assert_eq!(&header[filter_start..filter_start + 2], &[0x21, 0x01], "LZMA2 with one property byte");
        let d = u32::from(header[filter_start + 2]);
        (2 | (d & 1)) << (d / 2 + 11)
    }

    #[test]
    fn lzma_dictionary_is_roots_a_quarter_of_the_input_within_the_preset() {
        // ROOT (core/lzma R__zipLZMA): min(preset, max(len / 4, 4 KiB))
        assert_eq!(lzma_dict_size(1 << 22, 1000), 4096);
        assert_eq!(lzma_dict_size(1 << 22, 65536), 16384);
        assert_eq!(lzma_dict_size(1 << 22, 64 << 20), 1 << 22);
        for (setting, len, dict) in
            [(204, 1000, 4096), (204, 65536, 16384), (201, 1 << 20, 1 << 18), (207, 3 << 20, 3 << 18)]
        {
            let src = sample(len);
            let out = compress(&src, setting).unwrap();
            assert_eq!(&out[..2], b"XZ");
            assert_eq!(declared_dict(&out), dict, "setting {setting}, {len} bytes");
            assert_eq!(decompress(&out, len, &loc()).unwrap(), src);
        }
        // the preset bounds it: level 1's dictionary is 1 MiB
        let big = sample(12 << 20);
        assert_eq!(declared_dict(&compress(&big, 201).unwrap()), 1 << 20);
    }

    #[test]
    fn invalid_settings() {
        assert!(compress(&sample(100), 305).is_err());
        assert!(compress(&sample(100), 905).is_err());
    }
}
