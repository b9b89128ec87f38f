//! Fallible allocation of buffers whose size comes from the input.
//!
//! A size read from a file or a server may be honest and still more than the
//! machine has (a legitimate RNTuple of 4 GiB of zeros is a few kB on disk).
//! Such buffers are allocated here: a failed allocation is
//! [`Error::OutOfMemory`] naming what was being read — the process goes on —
//! instead of Rust's abort ("memory allocation of N bytes failed").
//!
//! Buffers are not written before use: [`try_zeroed`] asks the allocator for
//! zeroed memory (`calloc`, through `bytemuck`: fresh pages from the operating
//! system are already zero and are not touched), and [`try_with_capacity`] gives an
//! empty vector to be filled.

pub use bytemuck::Zeroable;

use crate::error::{Error, Location, Result};

fn out_of_memory(bytes: u64, what: &dyn Fn() -> String) -> Error {
    Error::OutOfMemory { requested: bytes, location: Location::new(what(), None) }
}

/// `n` zeros, or [`Error::OutOfMemory`] naming `what` when the memory is not to be had.
pub fn try_zeroed<T: Zeroable>(n: usize, what: impl Fn() -> String) -> Result<Vec<T>> {
    bytemuck::allocation::try_zeroed_vec(n)
        .map_err(|()| out_of_memory((n as u64).saturating_mul(std::mem::size_of::<T>() as u64), &what))
}

/// An empty vector with room for exactly `n` elements, or [`Error::OutOfMemory`] naming `what`.
pub fn try_with_capacity<T>(n: usize, what: impl Fn() -> String) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| out_of_memory((n as u64).saturating_mul(std::mem::size_of::<T>() as u64), &what))?;
    Ok(v)
}

/// Makes room for `extra` more elements in `v`, or [`Error::OutOfMemory`] naming `what`.
pub fn try_reserve<T>(v: &mut Vec<T>, extra: usize, what: impl Fn() -> String) -> Result<()> {
    v.try_reserve_exact(extra)
        .map_err(|_| out_of_memory((extra as u64).saturating_mul(std::mem::size_of::<T>() as u64), &what))
}

/// Makes room for at least `extra` more elements in `v`, growing it as
/// `push` would (amortised), or [`Error::OutOfMemory`] naming `what`.
pub fn try_grow<T>(v: &mut Vec<T>, extra: usize, what: impl Fn() -> String) -> Result<()> {
    v.try_reserve(extra)
        .map_err(|_| out_of_memory((extra as u64).saturating_mul(std::mem::size_of::<T>() as u64), &what))
}

/// The bytes of `v` (`false` 0, `true` 1), the same allocation: no copy.
pub fn bools_as_bytes(v: Vec<bool>) -> Vec<u8> {
    // bool and u8 have the same size and alignment, and every bool is a valid u8.
    bytemuck::allocation::cast_vec(v)
}

/// A copy of `bytes` in a buffer allocated fallibly.
pub fn try_copy(bytes: &[u8], what: impl Fn() -> String) -> Result<Vec<u8>> {
    let mut out = try_with_capacity(bytes.len(), what)?;
    out.extend_from_slice(bytes);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_size_is_an_error_naming_what() {
        let err = try_zeroed::<u64>(usize::MAX / 4, || "column 3 in cluster 0".into()).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        assert!(err.to_string().contains("column 3 in cluster 0"), "{err}");
        let err = try_with_capacity::<u8>(isize::MAX as usize, || "footer envelope".into()).unwrap_err();
        assert!(err.to_string().contains("out of memory") && err.to_string().contains("footer envelope"), "{err}");
        let mut v = vec![1u8];
        assert!(try_reserve(&mut v, isize::MAX as usize, || "page".into()).is_err());
    }

    #[test]
    fn zeroed_buffers_are_zero() {
        let v = try_zeroed::<f64>(1000, String::new).unwrap();
        assert_eq!(v.len(), 1000);
        assert!(v.iter().all(|x| *x == 0.0));
        assert!(try_zeroed::<bool>(0, String::new).unwrap().is_empty());
        assert_eq!(try_with_capacity::<u32>(17, String::new).unwrap().capacity(), 17);
        assert_eq!(bools_as_bytes(vec![true, false, true]), [1, 0, 1]);
        assert_eq!(try_copy(b"abc", String::new).unwrap(), b"abc");
    }
}
