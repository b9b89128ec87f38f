//! ROOT 6.40 is the judge of our LZMA blocks: the same bytes compressed by
//! ROOT's `R__zipMultipleAlgorithm` (core/lzma: a dictionary of a quarter of
//! the input, 4 KiB to the preset's) and by `compression::compress` must be
//! identical, block header included.

mod root_zip;

use rntuple_format::compression::compress;
use root_zip::{inputs, root_zip};

#[test]
fn our_lzma_blocks_are_roots() {
    for level in [1u32, 4, 7] {
        let Some(theirs) = root_zip("kLZMA", level, &inputs()) else { return };
        for (theirs, data) in theirs.iter().zip(inputs()) {
            let ours = compress(&data, 200 + level).expect("compress");
            assert!(theirs.len() > 9 && theirs.len() < data.len(), "ROOT compressed {} bytes", data.len());
            assert_eq!(&ours, theirs, "level {level}, {} input bytes", data.len());
        }
    }
}
