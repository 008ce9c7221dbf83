//! Handles: the 8-hex-digit names under which the store keeps a run.
//!
//! The hash is an in-tree FNV-1a (32-bit) rather than `DefaultHasher`, whose
//! algorithm may change between Rust releases: a handle printed today must resolve
//! after a toolchain upgrade. A handle from a user is parsed, never trusted, so it
//! cannot name a path.

use std::fmt;

/// The FNV-1a 32-bit offset basis.
pub const FNV_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// Folds `bytes` into an FNV-1a 32-bit state.
pub fn fnv1a(mut h: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// A fast hash of `bytes` folded into `h`, eight bytes per multiply, for keys that
/// are compared within one run only (a block's text, a line's shape): unlike the
/// handle's FNV-1a it is free to change between versions, and it is several times
/// faster, FNV's one dependent multiply per byte being the cost of hashing every
/// line of a large output.
pub fn chunk_hash(mut h: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(K).rotate_left(29);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = mix(h, u64::from_le_bytes(c.try_into().expect("eight bytes")));
    }
    let rest = chunks.remainder();
    let mut tail = [0u8; 8];
    tail[..rest.len()].copy_from_slice(rest);
    // The length goes in with the tail, so "a" and "a\0" differ.
    mix(mix(h, u64::from_le_bytes(tail)), bytes.len() as u64)
}

/// A `HashMap` hasher for keys that are already hashes (the FNV shapes and block
/// hashes): it spreads them with one multiply instead of running SipHash again.
#[derive(Default, Clone, Copy)]
pub struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.0 = (self.0.rotate_left(8) ^ u64::from(n)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(32) ^ u64::from(n)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(32) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Builds `Prehashed` hashers.
pub type PrehashedState = std::hash::BuildHasherDefault<Prehashed>;

/// A run's name in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(u32);

impl Handle {
    /// The handle for a run, from what identifies it. `salt` is bumped on a collision.
    pub fn derive(parts: &[&[u8]], salt: u32) -> Handle {
        let mut h = FNV_OFFSET;
        for p in parts {
            h = fnv1a(h, p);
            h = fnv1a(h, &[0]);
        }
        Handle(fnv1a(h, &salt.to_le_bytes()))
    }

    /// Parses exactly eight lowercase hex digits; anything else is refused.
    pub fn parse(s: &str) -> Option<Handle> {
        let ok = s.len() == 8 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !ok {
            return None;
        }
        u32::from_str_radix(s, 16).ok().map(Handle)
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_fnv1a_32_vectors() {
        // From the FNV reference test suite (Fowler, Noll, Vo).
        assert_eq!(fnv1a(FNV_OFFSET, b""), 0x811c9dc5);
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xe40c292c);
        assert_eq!(fnv1a(FNV_OFFSET, b"b"), 0xe70c2de5);
        assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0xbf9cf968);
    }

    #[test]
    fn chunk_hash_sees_every_byte_and_the_length() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..base.len() {
            let h = chunk_hash(7, &base[..len]);
            assert_ne!(h, chunk_hash(7, &base[..len + 1]), "length {len}");
            let mut padded = base[..len].to_vec();
            padded.push(0);
            assert_ne!(h, chunk_hash(7, &padded), "zero after {len} bytes");
            for i in 0..len {
                let mut other = base[..len].to_vec();
                other[i] ^= 1;
                assert_ne!(h, chunk_hash(7, &other), "byte {i} of {len}");
            }
        }
    }

    #[test]
    fn parses_only_eight_lowercase_hex_digits() {
        assert!(Handle::parse("0a1b2c3d").is_some());
        for bad in [
            "0A1B2C3D",
            "0a1b2c3",
            "0a1b2c3d4",
            "../../et",
            "0a1b2c3g",
            "",
            "/tmp/abc",
        ] {
            assert!(Handle::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn display_round_trips_with_leading_zeros() {
        let h = Handle(0x00ab);
        assert_eq!(h.to_string(), "000000ab");
        assert_eq!(Handle::parse(&h.to_string()), Some(h));
    }

    #[test]
    fn salt_changes_the_handle() {
        let a = Handle::derive(&[b"x"], 0);
        let b = Handle::derive(&[b"x"], 1);
        assert_ne!(a, b);
        assert_eq!(a, Handle::derive(&[b"x"], 0));
    }
}
