//! The 256-entry lookup of one-byte codes into one- and two-byte words, in AVX-512 VBMI.
//!
//! The portable loop (`out[i] = table[codes[i]]`, in `arch::lookup_bytes`) does one load
//! per element, about a cycle each; here `vpermi2b` looks up 64 codes at once in half a
//! table held in two registers, and the code's top bit picks the half. A two-byte word is
//! two such lookups, of the table's low bytes and its high bytes, interleaved. The same
//! lookup finds the first code a table flags ([`first_flagged`]), which a cast's checked
//! rule asks after every lookup.
//!
//! Wider words stay with `lookup_bytes`: a table of 256 four-byte words fills 16
//! registers, and its lookup would cost more permutes than the loads it saves.

/// `out[i] = table[codes[i]]` for the shorter of the two lengths, at the AVX-512 level;
/// `false` (nothing written) below it.
#[inline]
pub(crate) fn lookup_bytes_u8(table: &[u8; 256], codes: &[u8], out: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: the CPU has AVX-512 F, BW and VBMI (`has_avx512`'s level includes them).
        unsafe { kernels::lookup_u8(table, codes, out) };
        return true;
    }
    let _ = (table, codes, out);
    false
}

/// `out[i] = table[codes[i]]` for the shorter of the two lengths, at the AVX-512 level;
/// `false` (nothing written) below it.
#[inline]
pub(crate) fn lookup_bytes_u16(table: &[u16; 256], codes: &[u8], out: &mut [u16]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: as in `lookup_bytes_u8`.
        unsafe { kernels::lookup_u16(table, codes, out) };
        return true;
    }
    let _ = (table, codes, out);
    false
}

/// The index of the first code whose entry in `flags` is not zero (`None` when there is
/// none), at the AVX-512 level; `Err(())` below it, for the caller's own loop.
#[inline]
pub(crate) fn first_flagged(flags: &[u8; 256], codes: &[u8]) -> Result<Option<usize>, ()> {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: as in `lookup_bytes_u8`.
        return Ok(unsafe { kernels::first_flagged(flags, codes) });
    }
    let _ = (flags, codes);
    Err(())
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    /// The table's 256 bytes in four registers.
    #[derive(Clone, Copy)]
    struct Table([__m512i; 4]);

    impl Table {
        /// # Safety
        /// The CPU has AVX-512 F.
        #[inline(always)]
        unsafe fn new(t: &[u8; 256]) -> Table {
            // SAFETY: each load reads 64 of the table's 256 bytes.
            Table(std::array::from_fn(|i| unsafe {
                _mm512_loadu_si512(t.as_ptr().add(64 * i).cast())
            }))
        }

        /// The bytes of the 64 codes in `c`.
        ///
        /// # Safety
        /// The CPU has AVX-512 F, BW and VBMI.
        #[inline(always)]
        unsafe fn get(&self, c: __m512i) -> __m512i {
            let [t0, t1, t2, t3] = self.0;
            // `vpermi2b` reads the index's low 7 bits: codes below 128 from `t0:t1`, the
            // others from `t2:t3`, chosen by the code's top bit.
            // SAFETY: the CPU has the features (this function's contract).
            unsafe {
                let low = _mm512_permutex2var_epi8(t0, c, t1);
                let high = _mm512_permutex2var_epi8(t2, c, t3);
                _mm512_mask_blend_epi8(_mm512_movepi8_mask(c), low, high)
            }
        }
    }

    /// The mask of the first `n` of 64 lanes (`n <= 64`).
    #[inline(always)]
    fn first_lanes(n: usize) -> u64 {
        if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
    }

    /// # Safety
    /// The CPU has AVX-512 F, BW and VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn lookup_u8(table: &[u8; 256], codes: &[u8], out: &mut [u8]) {
        let n = codes.len().min(out.len());
        // SAFETY: the CPU has the features (this function's contract). Step `i` reads and
        // writes the bytes `i .. i + 64` masked to those below `n`, which both slices hold.
        unsafe {
            let t = Table::new(table);
            let (src, dst) = (codes.as_ptr(), out.as_mut_ptr());
            let mut i = 0;
            while i < n {
                let k = first_lanes(n - i);
                let c = _mm512_maskz_loadu_epi8(k, src.add(i).cast());
                _mm512_mask_storeu_epi8(dst.add(i).cast(), k, t.get(c));
                i += 64;
            }
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F, BW and VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn lookup_u16(table: &[u16; 256], codes: &[u8], out: &mut [u16]) {
        let n = codes.len().min(out.len());
        let low: [u8; 256] = std::array::from_fn(|i| table[i] as u8);
        let high: [u8; 256] = std::array::from_fn(|i| (table[i] >> 8) as u8);
        // SAFETY: the CPU has the features (this function's contract). Step `i` reads the
        // codes `i .. i + 64` and writes the words `i .. i + 64`, both masked to those
        // below `n`, which both slices hold.
        unsafe {
            let (low, high) = (Table::new(&low), Table::new(&high));
            // After the in-lane unpacks, `lo` holds elements 0-7, 16-23, 32-39, 48-55 of
            // the step's 64 (as words, 128 bits a group) and `hi` elements 8-15, 24-31, …:
            // the output's quarters take their 128-bit groups alternately from each.
            let first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
            let second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
            let (src, dst) = (codes.as_ptr(), out.as_mut_ptr());
            let mut i = 0;
            while i < n {
                let rest = n - i;
                let c = _mm512_maskz_loadu_epi8(first_lanes(rest), src.add(i).cast());
                let (l, h) = (low.get(c), high.get(c));
                let lo = _mm512_unpacklo_epi8(l, h);
                let hi = _mm512_unpackhi_epi8(l, h);
                let w0 = _mm512_permutex2var_epi64(lo, first, hi);
                let w1 = _mm512_permutex2var_epi64(lo, second, hi);
                _mm512_mask_storeu_epi16(dst.add(i).cast(), first_lanes(rest) as u32, w0);
                if rest > 32 {
                    let k = first_lanes(rest - 32) as u32;
                    _mm512_mask_storeu_epi16(dst.add(i + 32).cast(), k, w1);
                }
                i += 64;
            }
        }
    }

    /// # Safety
    /// The CPU has AVX-512 F, BW and VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn first_flagged(flags: &[u8; 256], codes: &[u8]) -> Option<usize> {
        let n = codes.len();
        // SAFETY: the CPU has the features (this function's contract). Step `i` reads the
        // codes `i .. i + 64` masked to those below `n`.
        unsafe {
            let t = Table::new(flags);
            let src = codes.as_ptr();
            let mut i = 0;
            while i < n {
                let k = first_lanes(n - i);
                let c = _mm512_maskz_loadu_epi8(k, src.add(i).cast());
                let hit = _mm512_mask_test_epi8_mask(k, t.get(c), t.get(c));
                if hit != 0 {
                    return Some(i + hit.trailing_zeros() as usize);
                }
                i += 64;
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::level::{Isa, with_max_isa};
    use crate::number::xorshift::xorshift64;

    /// Lengths around the 64-code step, and starts off its alignment.
    const LENGTHS: [usize; 10] = [0, 1, 31, 32, 33, 63, 64, 65, 130, 1000];

    fn tables(rng: &mut impl FnMut() -> u64) -> ([u8; 256], [u16; 256]) {
        (
            std::array::from_fn(|_| rng() as u8),
            std::array::from_fn(|_| rng() as u16),
        )
    }

    #[test]
    fn lookups_equal_the_loop_at_every_level() {
        let mut rng = xorshift64(7);
        let (t8, t16) = tables(&mut rng);
        let codes: Vec<u8> = (0..1100).map(|_| rng() as u8).collect();
        for level in Isa::available() {
            for len in LENGTHS {
                for start in [0, 1, 5] {
                    let c = &codes[start..start + len];
                    let (mut o8, mut o16) = (vec![0xa5u8; len + 3], vec![0xa5a5u16; len + 3]);
                    let done = with_max_isa(level, || {
                        lookup_bytes_u8(&t8, c, &mut o8[..len])
                            && lookup_bytes_u16(&t16, c, &mut o16[..len])
                    });
                    assert_eq!(done, level >= Isa::Avx512, "{level:?}");
                    if !done {
                        continue;
                    }
                    for (i, &x) in c.iter().enumerate() {
                        assert_eq!(o8[i], t8[usize::from(x)], "{level:?} len {len} at {i}");
                        assert_eq!(o16[i], t16[usize::from(x)], "{level:?} len {len} at {i}");
                    }
                    // Nothing written past the end.
                    assert_eq!(o8[len..], [0xa5; 3], "{level:?} len {len}");
                    assert_eq!(o16[len..], [0xa5a5; 3], "{level:?} len {len}");
                }
            }
        }
    }

    #[test]
    fn first_flagged_finds_the_first_at_every_level() {
        let mut rng = xorshift64(11);
        let codes: Vec<u8> = (0..1100).map(|_| rng() as u8).collect();
        for level in Isa::available() {
            for flagged in [0u8, 1, 127, 128, 200, 255] {
                let mut flags = [0u8; 256];
                flags[usize::from(flagged)] = 1;
                for len in LENGTHS {
                    for start in [0, 3] {
                        let c = &codes[start..start + len];
                        let want = c.iter().position(|&x| x == flagged);
                        match with_max_isa(level, || first_flagged(&flags, c)) {
                            Ok(got) => assert_eq!(got, want, "{level:?} {flagged} len {len}"),
                            Err(()) => assert!(level < Isa::Avx512, "{level:?}"),
                        }
                    }
                }
            }
        }
    }
}
