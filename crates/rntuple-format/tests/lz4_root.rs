//! ROOT 6.40 is the judge of our LZ4 blocks: the same bytes compressed by
//! ROOT's `R__zipMultipleAlgorithm` (core/lz4: fast LZ4 below level 4, LZ4 HC
//! at the level from 4 up, xxhash64 in front) and by `compression::compress`
//! must be identical, chunk header and checksum included.

mod root_zip;

use rntuple_format::compression::compress;
use root_zip::{inputs, root_zip};

#[test]
fn our_lz4_blocks_are_roots() {
    for level in [1u32, 3, 4, 9] {
        let Some(theirs) = root_zip("kLZ4", level, &inputs()) else { return };
        for (theirs, data) in theirs.iter().zip(inputs()) {
            let ours = compress(&data, 400 + level).expect("compress");
            assert!(theirs.len() > 17 && theirs.len() < data.len(), "ROOT compressed {} bytes", data.len());
            assert_eq!(theirs[..3], *b"L4\x01", "ROOT's LZ4 tag");
            assert_eq!(&ours, theirs, "level {level}, {} input bytes", data.len());
        }
    }
}
