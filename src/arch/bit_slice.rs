//! The bit-matrix transpose of `choose::bit_information::sliced` in AVX2: 64 elements become one word
//! of 64 bits per bit position (a *plane*), and their masks one plane.
//!
//! The elements' bytes are first gathered so that one vector holds byte `k` of 32
//! consecutive elements in order (in-lane `vpshufb`, then cross-lane permutes); then
//! `vpmovmskb` takes bit 7 of each byte, i.e. plane `8k + 7` of the 32 elements, and
//! adding the vector to itself moves the next bit up: eight `vpmovmskb` per byte
//! position. Two runs of 32 elements make a group's 64-bit planes. The portable twin,
//! `choose::bit_information::sliced::transpose_fallback`, is the reference.

macro_rules! entry {
    ($name:ident, $w:ty, $kernel:ident) => {
        /// The planes of `codes` and the mask planes of `masks` (whole groups of 64), as
        /// `choose::bit_information::sliced::transpose_fallback` computes them: `false` when the CPU has
        /// no AVX2 (nothing written).
        pub(crate) fn $name(
            codes: &[$w],
            masks: &[$w],
            planes: &mut [u64],
            mplanes: &mut [u64],
        ) -> bool {
            let groups = (codes.len() / 64)
                .min(masks.len() / 64)
                .min(planes.len() / <$w>::BITS as usize)
                .min(mplanes.len());
            #[cfg(target_arch = "x86_64")]
            if super::has_avx2() {
                // SAFETY: the CPU has AVX2 (checked just above); `groups` whole groups of
                // 64 words are in `codes` and `masks`, and their planes fit in `planes` and
                // `mplanes` (the minimum above).
                unsafe { kernels::$kernel(codes, masks, planes, mplanes, groups) };
                return true;
            }
            let _ = (codes, masks, planes, mplanes, groups);
            false
        }
    };
}

entry!(bit_slice_u8, u8, slice_u8);
entry!(bit_slice_u16, u16, slice_u16);
entry!(bit_slice_u32, u32, slice_u32);
entry!(bit_slice_u64, u64, slice_u64);

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    /// Planes `8k .. 8k + 8` of 64 elements whose byte `k` is each byte of `lo` (elements
    /// 0..32) and of `hi` (32..64), written to `out[8k .. 8k + 8]`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn byte_planes(mut lo: __m256i, mut hi: __m256i, out: &mut [u64], k: usize) {
        let out = &mut out[8 * k..8 * k + 8];
        for j in (0..8).rev() {
            let (a, b) = (
                _mm256_movemask_epi8(lo) as u32,
                _mm256_movemask_epi8(hi) as u32,
            );
            out[j] = u64::from(a) | (u64::from(b) << 32);
            lo = _mm256_add_epi8(lo, lo);
            hi = _mm256_add_epi8(hi, hi);
        }
    }

    /// # Safety
    /// The CPU must have AVX2; `codes` and `masks` must hold `64 * groups` words, `planes`
    /// `8 * groups`, `mplanes` `groups`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn slice_u8(
        codes: &[u8],
        masks: &[u8],
        planes: &mut [u64],
        mplanes: &mut [u64],
        groups: usize,
    ) {
        for g in 0..groups {
            let (c, m) = (&codes[64 * g..64 * g + 64], &masks[64 * g..64 * g + 64]);
            // SAFETY: 32 bytes at offsets 0 and 32 of the 64-byte slices `c` and `m`.
            let [v0, v1, m0, m1] = unsafe {
                let at = |s: &[u8], i: usize| _mm256_loadu_si256(s.as_ptr().add(i).cast());
                [at(c, 0), at(c, 32), at(m, 0), at(m, 32)]
            };
            // SAFETY: AVX2 is the caller's guarantee.
            unsafe { byte_planes(v0, v1, &mut planes[8 * g..8 * g + 8], 0) };
            let (a, b) = (
                _mm256_movemask_epi8(m0) as u32,
                _mm256_movemask_epi8(m1) as u32,
            );
            mplanes[g] = u64::from(a) | (u64::from(b) << 32);
        }
    }

    /// # Safety
    /// As [`slice_u8`], with 16 planes per group.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn slice_u16(
        codes: &[u16],
        masks: &[u16],
        planes: &mut [u64],
        mplanes: &mut [u64],
        groups: usize,
    ) {
        // Per lane: the low bytes of its 8 elements, then their high bytes.
        let shuf = _mm256_setr_epi8(
            0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3,
            5, 7, 9, 11, 13, 15,
        );
        for g in 0..groups {
            let (c, m) = (&codes[64 * g..64 * g + 64], &masks[64 * g..64 * g + 64]);
            // SAFETY: 16 words at offsets 0, 16, 32, 48 of the 64-word slices `c` and `m`.
            let (v, mv) = unsafe {
                let at = |s: &[u16], i: usize| _mm256_loadu_si256(s.as_ptr().add(i).cast());
                (
                    [at(c, 0), at(c, 16), at(c, 32), at(c, 48)],
                    [at(m, 0), at(m, 16), at(m, 32), at(m, 48)],
                )
            };
            // Qwords [lane 0 low, lane 0 high, lane 1 low, lane 1 high] -> low bytes of 16
            // elements in the low half, high bytes in the high half; then two vectors' halves
            // joined: low (high) bytes of 32 elements.
            let f = |v| _mm256_permute4x64_epi64::<0xd8>(_mm256_shuffle_epi8(v, shuf));
            let x = v.map(f);
            let lo = |a, b| _mm256_permute2x128_si256::<0x20>(a, b);
            let hi = |a, b| _mm256_permute2x128_si256::<0x31>(a, b);
            let out = &mut planes[16 * g..16 * g + 16];
            // SAFETY: AVX2 is the caller's guarantee.
            unsafe {
                byte_planes(lo(x[0], x[1]), lo(x[2], x[3]), out, 0);
                byte_planes(hi(x[0], x[1]), hi(x[2], x[3]), out, 1);
            }
            // Masks are 0 or all ones: packing to bytes keeps them; fix the lane order.
            let pack = |a, b| _mm256_permute4x64_epi64::<0xd8>(_mm256_packs_epi16(a, b));
            let a = _mm256_movemask_epi8(pack(mv[0], mv[1])) as u32;
            let b = _mm256_movemask_epi8(pack(mv[2], mv[3])) as u32;
            mplanes[g] = u64::from(a) | (u64::from(b) << 32);
        }
    }

    /// Byte `k` of 32 consecutive 32-bit elements `v[0..4]` (8 each) in vector `k`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn gather_bytes_u32(v: [__m256i; 4]) -> [__m256i; 4] {
        // Per lane: byte k of its 4 elements in dword k; then dwords ordered so that qword
        // k is byte k of the vector's 8 elements.
        let shuf = _mm256_setr_epi8(
            0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6,
            10, 14, 3, 7, 11, 15,
        );
        let perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let x = v.map(|v| _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, shuf), perm));
        // A 4 × 4 transpose of qwords.
        let t0 = _mm256_unpacklo_epi64(x[0], x[1]);
        let t1 = _mm256_unpackhi_epi64(x[0], x[1]);
        let t2 = _mm256_unpacklo_epi64(x[2], x[3]);
        let t3 = _mm256_unpackhi_epi64(x[2], x[3]);
        [
            _mm256_permute2x128_si256::<0x20>(t0, t2),
            _mm256_permute2x128_si256::<0x20>(t1, t3),
            _mm256_permute2x128_si256::<0x31>(t0, t2),
            _mm256_permute2x128_si256::<0x31>(t1, t3),
        ]
    }

    /// # Safety
    /// As [`slice_u8`], with 32 planes per group.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn slice_u32(
        codes: &[u32],
        masks: &[u32],
        planes: &mut [u64],
        mplanes: &mut [u64],
        groups: usize,
    ) {
        for g in 0..groups {
            let (c, m) = (&codes[64 * g..64 * g + 64], &masks[64 * g..64 * g + 64]);
            // SAFETY: 8 words at offsets `8i < 64` of the 64-word slices `c` and `m`.
            let (v, mv) = unsafe {
                let at = |s: &[u32], i: usize| _mm256_loadu_si256(s.as_ptr().add(8 * i).cast());
                (
                    [0, 1, 2, 3, 4, 5, 6, 7].map(|i| at(c, i)),
                    [0, 1, 2, 3, 4, 5, 6, 7].map(|i| at(m, i)),
                )
            };
            // SAFETY: AVX2 is the caller's guarantee.
            let (lo, hi) = unsafe {
                (
                    gather_bytes_u32([v[0], v[1], v[2], v[3]]),
                    gather_bytes_u32([v[4], v[5], v[6], v[7]]),
                )
            };
            let out = &mut planes[32 * g..32 * g + 32];
            for k in 0..4 {
                // SAFETY: as above.
                unsafe { byte_planes(lo[k], hi[k], out, k) };
            }
            let mut mp = 0u64;
            for (i, &mv) in mv.iter().enumerate() {
                let bits = _mm256_movemask_ps(_mm256_castsi256_ps(mv)) as u32 as u64;
                mp |= bits << (8 * i);
            }
            mplanes[g] = mp;
        }
    }

    /// # Safety
    /// As [`slice_u8`], with 64 planes per group.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn slice_u64(
        codes: &[u64],
        masks: &[u64],
        planes: &mut [u64],
        mplanes: &mut [u64],
        groups: usize,
    ) {
        // Low and high dwords of 8 elements each, in order: `vshufps` takes dwords 0, 2 (or
        // 1, 3) of each lane of both vectors, giving elements 0, 1, 4, 5, 2, 3, 6, 7; `vpermq`
        // restores the order.
        let split = |a: __m256i, b: __m256i| {
            let (a, b) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
            let fix = |x| _mm256_permute4x64_epi64::<0xd8>(_mm256_castps_si256(x));
            (
                fix(_mm256_shuffle_ps::<0x88>(a, b)),
                fix(_mm256_shuffle_ps::<0xdd>(a, b)),
            )
        };
        for g in 0..groups {
            let (c, m) = (&codes[64 * g..64 * g + 64], &masks[64 * g..64 * g + 64]);
            let out = &mut planes[64 * g..64 * g + 64];
            let mut halves = [[_mm256_setzero_si256(); 4]; 4];
            for h in 0..2 {
                // SAFETY: 4 words at offsets `32h + 4i < 64` of the 64-word slice `c`.
                let v = unsafe {
                    [0, 1, 2, 3, 4, 5, 6, 7]
                        .map(|i| _mm256_loadu_si256(c.as_ptr().add(32 * h + 4 * i).cast()))
                };
                let (l0, h0) = split(v[0], v[1]);
                let (l1, h1) = split(v[2], v[3]);
                let (l2, h2) = split(v[4], v[5]);
                let (l3, h3) = split(v[6], v[7]);
                // SAFETY: AVX2 is the caller's guarantee.
                unsafe {
                    halves[h] = gather_bytes_u32([l0, l1, l2, l3]);
                    halves[2 + h] = gather_bytes_u32([h0, h1, h2, h3]);
                }
            }
            let [lo0, lo1, hi0, hi1] = halves;
            for (k, (((a, b), c), d)) in lo0.into_iter().zip(lo1).zip(hi0).zip(hi1).enumerate() {
                // SAFETY: as above.
                unsafe {
                    byte_planes(a, b, out, k);
                    byte_planes(c, d, out, k + 4);
                }
            }
            let mut mp = 0u64;
            for i in 0..16 {
                // SAFETY: 4 words at offset `4i < 64` of `m`.
                let mv = unsafe { _mm256_loadu_si256(m.as_ptr().add(4 * i).cast()) };
                let bits = _mm256_movemask_pd(_mm256_castsi256_pd(mv)) as u32 as u64;
                mp |= bits << (4 * i);
            }
            mplanes[g] = mp;
        }
    }

    /// # Safety
    /// The CPU must have AVX2; `bits` a multiple of 4 at most 64, `shift < 64`, `first`
    /// at least `valid.len() * bits` words and `second` `(valid.len() + 1) * bits`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count_pairs(
        bits: usize,
        first: &[u64],
        second: &[u64],
        shift: u32,
        valid: &[u64],
        [ta, tb, tboth]: [&mut [u64; 64]; 3],
    ) {
        let groups = valid.len();
        let lut = _mm256_setr_epi8(
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2,
            3, 3, 4,
        );
        let low = _mm256_set1_epi8(0x0f);
        let zero = _mm256_setzero_si256();
        let count = |x: __m256i| {
            let lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(x, low));
            let hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16::<4>(x), low));
            _mm256_add_epi8(lo, hi)
        };
        let (right, left) = (
            _mm_cvtsi32_si128(shift as i32),
            _mm_cvtsi32_si128(63 - shift as i32),
        );
        for pb in (0..bits).step_by(4) {
            let (mut wa, mut wb, mut wab) = (zero, zero, zero);
            let mut k = 0;
            while k < groups {
                let end = groups.min(k + 31);
                let (mut ca, mut cb, mut cab) = (zero, zero, zero);
                while k < end {
                    // SAFETY: planes `pb .. pb + 4` of group `k` (`pb + 4 <= bits`) of
                    // `first` and of groups `k`, `k + 1` of `second`, `k < groups`: within
                    // the lengths the caller guarantees.
                    let (f, s0, s1) = unsafe {
                        (
                            _mm256_loadu_si256(first.as_ptr().add(k * bits + pb).cast()),
                            _mm256_loadu_si256(second.as_ptr().add(k * bits + pb).cast()),
                            _mm256_loadu_si256(second.as_ptr().add((k + 1) * bits + pb).cast()),
                        )
                    };
                    let v = _mm256_set1_epi64x(valid[k] as i64);
                    // `(s0 >> shift) | (s1 << (64 - shift))`, nothing from `s1` at shift 0.
                    let hi = _mm256_slli_epi64::<1>(_mm256_sll_epi64(s1, left));
                    let y = _mm256_or_si256(_mm256_srl_epi64(s0, right), hi);
                    let (x, y) = (_mm256_and_si256(f, v), _mm256_and_si256(y, v));
                    ca = _mm256_add_epi8(ca, count(x));
                    cb = _mm256_add_epi8(cb, count(y));
                    cab = _mm256_add_epi8(cab, count(_mm256_and_si256(x, y)));
                    k += 1;
                }
                // At most 31 × 8 = 248 per byte counter: no overflow before this.
                wa = _mm256_add_epi64(wa, _mm256_sad_epu8(ca, zero));
                wb = _mm256_add_epi64(wb, _mm256_sad_epu8(cb, zero));
                wab = _mm256_add_epi64(wab, _mm256_sad_epu8(cab, zero));
            }
            let lanes = |w: __m256i| {
                let mut out = [0u64; 4];
                // SAFETY: 32 bytes into a local array of 4 `u64`.
                unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), w) };
                out
            };
            let (la, lb, lab) = (lanes(wa), lanes(wb), lanes(wab));
            for i in 0..4 {
                ta[pb + i] += la[i];
                tb[pb + i] += lb[i];
                tboth[pb + i] += lab[i];
            }
        }
    }
}

/// The pair counts of `choose::bit_information::sliced::count_plane_pairs` (the same arguments, `bits`
/// planes per group, a multiple of 4), in AVX2: four planes per vector, popcounts by
/// nibble table (`vpshufb`) into byte counters, summed into 64-bit lanes (`vpsadbw`)
/// every 31 groups. `None` when the CPU has no AVX2 (nothing added).
pub(crate) fn count_plane_pairs_avx2(
    bits: usize,
    first: &[u64],
    second: &[u64],
    shift: u32,
    valid: &[u64],
    totals: [&mut [u64; 64]; 3],
) -> Option<u64> {
    let groups = valid.len();
    let fits = bits.is_multiple_of(4)
        && bits <= 64
        && shift < 64
        && first.len() >= groups * bits
        && second.len() >= (groups + 1) * bits;
    #[cfg(target_arch = "x86_64")]
    if fits && super::has_avx2() {
        // SAFETY: the CPU has AVX2 (checked just above); `first` holds `groups` groups of
        // `bits` planes and `second` one more, `bits` is a multiple of 4 at most 64 and
        // `shift < 64` (all checked in `fits`).
        unsafe { kernels::count_pairs(bits, first, second, shift, valid, totals) };
        return Some(valid.iter().map(|v| u64::from(v.count_ones())).sum());
    }
    let _ = (fits, first, second, shift, totals);
    None
}
