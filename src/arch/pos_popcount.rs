//! The positional popcount of `choose::bit_information::positional` in AVX-512: chunks of
//! 16 vectors of eight 64-bit lanes through a tree of 15 carry-save adders, each adder two
//! `vpternlogq` (parity `0x96`, majority `0xe8`), for two streams at once: the pairs' first
//! words and their common bits (`first & second`). The portable `Lanes::chunk` there is the
//! reference: the same state, the same tree, so the counts are the same bit for bit.

/// The carry-save state of one stream, as `Lanes<8>` holds it: four bit planes (`ones`,
/// `twos`, `fours`, `eights`) and eight byte counters of the carries of weight 16.
pub(crate) type WideState<'a> = (&'a mut [[u64; 8]; 4], &'a mut [[u64; 8]; 8]);

/// Bytes per chunk: 16 vectors of 64 bytes.
pub(crate) const WIDE_CHUNK_BYTES: usize = 16 * 64;

/// Add the chunks of `first` to `a` and of `first & second` to `both` (as `Lanes::chunk`
/// does, chunk by chunk), at most `255 - pending` of them as the caller counts, so that no
/// byte counter overflows. `false` when the level is below AVX-512 (nothing added).
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

    /// The state of one stream in registers.
    struct State {
        planes: [__m512i; 4],
        bytes: [__m512i; 8],
    }

    impl State {
        /// # Safety
        /// The CPU must have AVX-512 F.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn load((planes, bytes): &WideState<'_>) -> State {
            // SAFETY: each `[u64; 8]` is 64 readable bytes.
            let at = |v: &[u64; 8]| unsafe { _mm512_loadu_si512(v.as_ptr().cast()) };
            State {
                planes: [
                    at(&planes[0]),
                    at(&planes[1]),
                    at(&planes[2]),
                    at(&planes[3]),
                ],
                bytes: [0, 1, 2, 3, 4, 5, 6, 7].map(|j| at(&bytes[j])),
            }
        }

        /// # Safety
        /// The CPU must have AVX-512 F.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn store(&self, (planes, bytes): WideState<'_>) {
            for (v, out) in self.planes.iter().zip(planes.iter_mut()) {
                // SAFETY: each `[u64; 8]` is 64 writable bytes.
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
            }
            for (v, out) in self.bytes.iter().zip(bytes.iter_mut()) {
                // SAFETY: as above.
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
            }
        }

        /// One chunk of 16 vectors: the tree of `Lanes::chunk`, then the carries of weight
        /// 16 into the byte counters.
        ///
        /// # Safety
        /// The CPU must have AVX-512 F.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn chunk(&mut self, d: &[__m512i; 16]) {
            // (carry, sum) of three vectors: majority and parity.
            let csa = |a, b, c| {
                (
                    _mm512_ternarylogic_epi64::<0xe8>(a, b, c),
                    _mm512_ternarylogic_epi64::<0x96>(a, b, c),
                )
            };
            let [mut ones, mut twos, mut fours, mut eights] = self.planes;
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
            eights = e;
            self.planes = [ones, twos, fours, eights];
            let low = _mm512_set1_epi64(0x0101_0101_0101_0101);
            let b = &mut self.bytes;
            b[0] = _mm512_add_epi64(b[0], _mm512_and_si512(sixteens, low));
            b[1] = _mm512_add_epi64(
                b[1],
                _mm512_and_si512(_mm512_srli_epi64::<1>(sixteens), low),
            );
            b[2] = _mm512_add_epi64(
                b[2],
                _mm512_and_si512(_mm512_srli_epi64::<2>(sixteens), low),
            );
            b[3] = _mm512_add_epi64(
                b[3],
                _mm512_and_si512(_mm512_srli_epi64::<3>(sixteens), low),
            );
            b[4] = _mm512_add_epi64(
                b[4],
                _mm512_and_si512(_mm512_srli_epi64::<4>(sixteens), low),
            );
            b[5] = _mm512_add_epi64(
                b[5],
                _mm512_and_si512(_mm512_srli_epi64::<5>(sixteens), low),
            );
            b[6] = _mm512_add_epi64(
                b[6],
                _mm512_and_si512(_mm512_srli_epi64::<6>(sixteens), low),
            );
            b[7] = _mm512_add_epi64(
                b[7],
                _mm512_and_si512(_mm512_srli_epi64::<7>(sixteens), low),
            );
        }
    }

    /// # Safety
    /// The CPU must have AVX-512 F; `first` and `second` must hold `chunks` chunks of
    /// [`WIDE_CHUNK_BYTES`] each.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn pairs(
        a: WideState<'_>,
        both: WideState<'_>,
        first: &[u8],
        second: &[u8],
        chunks: usize,
    ) {
        // SAFETY: AVX-512 F is the caller's guarantee (here and below).
        let (mut sa, mut sb) = unsafe { (State::load(&a), State::load(&both)) };
        for c in 0..chunks {
            let at = c * WIDE_CHUNK_BYTES;
            // SAFETY: 16 vectors of 64 bytes at `at < chunks · WIDE_CHUNK_BYTES`, within
            // both slices (the caller's guarantee).
            let (f, s) = unsafe {
                let (f, s) = (first.as_ptr().add(at), second.as_ptr().add(at));
                let load = |p: *const u8, i: usize| _mm512_loadu_si512(p.add(64 * i).cast());
                (
                    std::array::from_fn::<_, 16, _>(|i| load(f, i)),
                    std::array::from_fn::<_, 16, _>(|i| load(s, i)),
                )
            };
            let z = std::array::from_fn::<_, 16, _>(|i| _mm512_and_si512(f[i], s[i]));
            // SAFETY: as above.
            unsafe {
                sa.chunk(&f);
                sb.chunk(&z);
            }
        }
        // SAFETY: as above.
        unsafe {
            sa.store(a);
            sb.store(both);
        }
    }
}
