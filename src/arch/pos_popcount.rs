//! The positional popcount of `choose::bit_information::positional` in AVX-512: chunks of
//! 32 vectors of eight 64-bit lanes through a tree of 31 carry-save adders, each adder two
//! `vpternlogq` (parity `0x96`, majority `0xe8`), for two streams at once: the pairs' first
//! words and their common bits (`first & second`). One carry of weight 32 per chunk goes to
//! the byte counters (half as often as the portable tree's carries of weight 16). The
//! portable `Lanes` there is the reference: the counts are the same bit for bit.

/// The carry-save state of one stream, as `Lanes<8>` holds it: five bit planes (`ones`,
/// `twos`, `fours`, `eights`, `sixteens`) and eight byte counters of the carries of
/// weight 32.
pub(crate) type WideState<'a> = (&'a mut [[u64; 8]; 5], &'a mut [[u64; 8]; 8]);

/// Bytes per chunk: 32 vectors of 64 bytes.
pub(crate) const WIDE_CHUNK_BYTES: usize = 32 * 64;

/// Add the chunks of `first` to `a` and of `first & second` to `both` (one carry of weight
/// 32 per chunk into the byte counters), at most `255 - pending` of them as the caller
/// counts, so that no byte counter overflows. `false` when the level is below AVX-512
/// (nothing added).
pub(crate) fn pos_popcount_pairs_avx512(
    a: WideState<'_>,
    both: WideState<'_>,
    first: &[u8],
    second: &[u8],
) -> bool {
    let chunks = (first.len() / WIDE_CHUNK_BYTES).min(second.len() / WIDE_CHUNK_BYTES);
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: the CPU has AVX-512 F (checked just above); `first` and `second` hold
        // `chunks` whole chunks each (the minimum above).
        unsafe { kernels::pairs(a, both, first, second, chunks) };
        return true;
    }
    let _ = (a, both, first, second, chunks);
    false
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    use super::{WIDE_CHUNK_BYTES, WideState};

    /// (carry, sum) of three vectors in every bit position: majority and parity. (Safe
    /// with its target feature: callable only from code compiled with AVX-512 F.)
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn csa(a: __m512i, b: __m512i, c: __m512i) -> (__m512i, __m512i) {
        (
            _mm512_ternarylogic_epi64::<0xe8>(a, b, c),
            _mm512_ternarylogic_epi64::<0x96>(a, b, c),
        )
    }

    /// Sixteen vectors into the planes `ones .. eights` (15 adders): the carry of weight 16.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn tree16(p: &mut [__m512i; 5], d: [__m512i; 16]) -> __m512i {
        let [mut ones, mut twos, mut fours, eights, _] = *p;
        let mut eights_ab = [_mm512_setzero_si512(); 2];
        for (h, e) in eights_ab.iter_mut().enumerate() {
            let d = &d[8 * h..8 * h + 8];
            let (twos_a, o) = csa(ones, d[0], d[1]);
            let (twos_b, o) = csa(o, d[2], d[3]);
            let (fours_a, t) = csa(twos, twos_a, twos_b);
            let (twos_a, o) = csa(o, d[4], d[5]);
            let (twos_b, o) = csa(o, d[6], d[7]);
            let (fours_b, t) = csa(t, twos_a, twos_b);
            let (eights_x, f) = csa(fours, fours_a, fours_b);
            (ones, twos, fours, *e) = (o, t, f, eights_x);
        }
        let (sixteens, e) = csa(eights, eights_ab[0], eights_ab[1]);
        (p[0], p[1], p[2], p[3]) = (ones, twos, fours, e);
        sixteens
    }

    /// One chunk of 32 vectors `v(0) .. v(31)` into `planes`, and the carry of weight 32
    /// into the byte counters `bytes` (`(carry >> j) & 0x01…` into counter `j`), as
    /// `Lanes::chunk` does with 16 vectors and a carry of weight 16.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn chunk(planes: &mut [__m512i; 5], bytes: &mut [[u64; 8]; 8], v: impl Fn(usize) -> __m512i) {
        let s_a = tree16(planes, std::array::from_fn(&v));
        let s_b = tree16(planes, std::array::from_fn(|i| v(16 + i)));
        let (thirty_twos, s) = csa(planes[4], s_a, s_b);
        planes[4] = s;
        let low = _mm512_set1_epi64(0x0101_0101_0101_0101);
        let shifted = [
            thirty_twos,
            _mm512_srli_epi64::<1>(thirty_twos),
            _mm512_srli_epi64::<2>(thirty_twos),
            _mm512_srli_epi64::<3>(thirty_twos),
            _mm512_srli_epi64::<4>(thirty_twos),
            _mm512_srli_epi64::<5>(thirty_twos),
            _mm512_srli_epi64::<6>(thirty_twos),
            _mm512_srli_epi64::<7>(thirty_twos),
        ];
        for (b, x) in bytes.iter_mut().zip(shifted) {
            // SAFETY: each `[u64; 8]` is 64 readable and writable bytes.
            unsafe {
                let acc = _mm512_loadu_si512(b.as_ptr().cast());
                let sum = _mm512_add_epi64(acc, _mm512_and_si512(x, low));
                _mm512_storeu_si512(b.as_mut_ptr().cast(), sum);
            }
        }
    }

    /// # Safety
    /// The CPU must have AVX-512 F; `first` and `second` must hold `chunks` chunks of
    /// [`WIDE_CHUNK_BYTES`] each.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn pairs(
        (pa, ba): WideState<'_>,
        (pb, bb): WideState<'_>,
        first: &[u8],
        second: &[u8],
        chunks: usize,
    ) {
        // SAFETY: each `[u64; 8]` is 64 readable bytes.
        let load = |v: &[u64; 8]| unsafe { _mm512_loadu_si512(v.as_ptr().cast()) };
        let mut planes_a: [__m512i; 5] = std::array::from_fn(|i| load(&pa[i]));
        let mut planes_b: [__m512i; 5] = std::array::from_fn(|i| load(&pb[i]));
        for c in 0..chunks {
            // SAFETY: 32 vectors of 64 bytes from `c · WIDE_CHUNK_BYTES`, `c < chunks`:
            // within both slices (the caller's guarantee).
            let (f, s) = unsafe {
                let at = c * WIDE_CHUNK_BYTES;
                (first.as_ptr().add(at), second.as_ptr().add(at))
            };
            // SAFETY: `i < 32`: inside the chunk (above).
            let vf = |i: usize| unsafe { _mm512_loadu_si512(f.add(64 * i).cast()) };
            // SAFETY: as above.
            let vs = |i: usize| unsafe { _mm512_loadu_si512(s.add(64 * i).cast()) };
            chunk(&mut planes_a, ba, vf);
            chunk(&mut planes_b, bb, |i| _mm512_and_si512(vf(i), vs(i)));
        }
        for (v, out) in planes_a.iter().zip(pa.iter_mut()) {
            // SAFETY: each `[u64; 8]` is 64 writable bytes.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        }
        for (v, out) in planes_b.iter().zip(pb.iter_mut()) {
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        }
    }
}
