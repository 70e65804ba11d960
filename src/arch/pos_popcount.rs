//! The positional popcount of `choose::bit_information::positional` in AVX-512: chunks of
//! 32 vectors of eight 64-bit lanes through a tree of 31 carry-save adders, each adder two
//! `vpternlogq` (parity `0x96`, majority `0xe8`), for two streams at once: the pairs' first
//! words and their common bits (`first & second`). One carry of weight 32 per chunk goes to
//! the byte counters (half as often as the portable tree's carries of weight 16). The
//! portable `Lanes` there is the reference: the counts are the same bit for bit.
//!
//! The same trees fused with the word preparation ([`pos_popcount_prepared_pairs_avx512`]):
//! raw words in, each prepared once in registers and counted at once as a first word and
//! (`inner` words later) as a second one, without a buffer between the two; the portable
//! `prepare_codes` and `Positional::add_pairs` are the reference.

/// The carry-save state of one stream, as `Lanes<8>` holds it: five bit planes (`ones`,
/// `twos`, `fours`, `eights`, `sixteens`) and eight byte counters of the carries of
/// weight 32.
pub(crate) type WideState<'a> = (&'a mut [[u64; 8]; 5], &'a mut [[u64; 8]; 8]);

/// The build of a fused kernel (`fused`, `band` in `kernels`) for `prep`'s lane width and
/// tests: a float's NaN test alone (the default options), no test (an integer, or NaN not
/// masked), each a constant of its loop; and a masked code, which shares one build with
/// the NaN test switched at run time (an integer compare of the magnitude, one operation
/// more per vector), so three builds per width rather than four.
#[cfg(target_arch = "x86_64")]
macro_rules! by_prep {
    ($kernel:ident, $prep:expr) => {{
        use kernels::{L32, L64, $kernel};
        match ($prep.bits, $prep.nan, $prep.masked.is_some()) {
            (32, true, false) => $kernel::<L32, true, false>,
            (32, false, false) => $kernel::<L32, false, false>,
            (32, _, true) => $kernel::<L32, true, true>,
            (_, true, false) => $kernel::<L64, true, false>,
            (_, false, false) => $kernel::<L64, false, false>,
            (_, _, true) => $kernel::<L64, true, true>,
        }
    }};
}

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

/// One 64-byte vector at a 64-byte boundary: a slot of [`PairRing`].
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Vector64(pub(crate) [u64; 8]);

/// The word preparation of `choose::bit_information`'s `Prepare` in the form the fused
/// kernel takes, for words of 32 or 64 bits whose code is the whole word, the sign bit (if
/// any) just above the exponent field `emask` and the bias `2^(k-1) - 1` of a `k`-bit
/// field (IEEE's; an integer has no field: `emask` and `bias_field` 0): the counted word of
/// `x` is its signed exponent form, `x - bias_field` when the field is at least the bias
/// and `x ^ emask` when below (see `Consts::prepare`), and 0 when `x` is masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PairPrep {
    /// The lane width, 32 or 64.
    pub(crate) bits: u32,
    pub(crate) emask: u64,
    pub(crate) bias_field: u64,
    /// The exponent field's top bit (the signed exponent's sign).
    pub(crate) esign: u64,
    /// Whether NaN is masked: the lanes are IEEE binary32 (binary64) floats, whose NaN an
    /// unordered compare finds.
    pub(crate) nan: bool,
    /// A code masked in addition.
    pub(crate) masked: Option<u64>,
}

/// The prepared words of a stream of pairs `(j, j + inner)`, as the fused kernel leaves them
/// between calls: vector `m` (words `m · lanes ..`) in slot `m mod slots` (from a start
/// the kernel chooses among 64 more slots), the vectors
/// `0 .. prepared` done. Pair vector `k` reads its first words from vector `k` and its
/// second ones from vectors `k + q` and `k + q + 1` (`inner = q · lanes + r`).
#[derive(Clone, Debug)]
pub(crate) struct PairRing {
    slots: Vec<Vector64>,
    q: usize,
    r: usize,
    prepared: usize,
}

impl PairRing {
    /// The ring for pairs `inner` words apart, of `bits`-bit words (32 or 64).
    pub(crate) fn new(inner: usize, bits: u32) -> Self {
        let lanes = 512 / bits as usize;
        let q = inner / lanes;
        // A small ring as a power of two; a large one (past 8 KiB, where it no longer stays
        // in the first-level cache) of `q + 2` slots exactly, so that the slot loaded `j`
        // vectors after a store is `(j + d) · 64` bytes from it (`d = slots - q - 1`, 1 to
        // 32), a multiple of 4 KiB only for `j >= 32`; and `slots` a multiple of 32, so
        // that the ring's place against the stream moves by whole half pages from one turn
        // to the next (see the kernel on why both matter).
        let slots = if q + 2 <= 128 {
            (q + 2).next_power_of_two()
        } else {
            (q + 2).next_multiple_of(32)
        };
        PairRing {
            slots: vec![Vector64::default(); slots + 64],
            q,
            r: inner % lanes,
            prepared: 0,
        }
    }

    /// How many vectors past pair vector `k` the kernel reads to count it: vectors up to
    /// `k + q + 1` (inclusive), which hold the second words `k · lanes + inner ..`.
    pub(crate) fn lookahead(&self) -> usize {
        self.q + 1
    }
}

/// Count the pairs of `chunks` chunks of 32 pair vectors from pair vector `k0` (pairs
/// `j = 64 · k0 / bits ..`, each with `j + inner`) of the raw words `words` (native-endian,
/// `prep.bits` each): the prepared first words into `a`, the prepared first and second
/// words' common bits into `both`, as `pos_popcount_pairs_avx512` counts them; preparing each
/// word once, in registers, and keeping the prepared vectors in `ring` for the pairs that
/// need them again. The calls of one stream come in order (`k0` the previous call's end).
///
/// Returns `None` when the level is below AVX-512 (nothing counted), else whether a word
/// prepared by this call (vectors up to `k0 + 32 · chunks + ring.lookahead()`) was masked.
///
/// # Panics
/// When `words` is shorter than those vectors, or a call starts before the previous one's
/// end: both are the caller's bugs, never the data's.
pub(crate) fn pos_popcount_prepared_pairs_avx512(
    a: WideState<'_>,
    both: WideState<'_>,
    ring: &mut PairRing,
    words: &[u8],
    prep: &PairPrep,
    k0: usize,
    chunks: usize,
) -> Option<bool> {
    let end = k0 + 32 * chunks + ring.q + 1;
    assert!(end * 64 <= words.len() && ring.prepared <= k0 + ring.q + 1);
    assert!(prep.bits == 32 || prep.bits == 64);
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        let run = by_prep!(fused, prep);
        // SAFETY: the CPU has AVX-512 F and DQ (checked just above); `words` holds the
        // vectors up to `end` (asserted above), which are all the kernel reads.
        let masked = unsafe { run(a, both, ring, words, prep, k0, chunks) };
        return Some(masked);
    }
    let _ = (a, both, ring, words, prep, k0, chunks);
    None
}

/// One row of prepared vectors for the band kernel ([`pos_popcount_prepared_band_avx512`]):
/// the stream of `bits`-bit words seen as rows of `inner` words, row `i` pairing with row
/// `i + 1` element by element, each row cut into `columns` vectors: `q = inner / lanes`
/// whole ones at `c · lanes`, and when `r = inner % lanes` is not 0 one more, the row's last
/// `lanes` words, of which only the last `r` lanes count (the others are counted in the
/// vector before). Slot `c` holds the prepared vector of column `c` of row `held` (when
/// `done` is 0) — the row a band ends on and the next one starts from.
#[derive(Clone, Debug)]
pub(crate) struct BandRow {
    slots: Vec<Vector64>,
    inner: usize,
    bytes: usize,
    q: usize,
    r: usize,
    held: Option<usize>,
    /// Columns of the band under way counted (its calls come in column order).
    done: usize,
}

/// Pair rows per band: one chunk of the carry-save tree per column.
pub(crate) const BAND_ROWS: usize = 32;

impl BandRow {
    /// The row buffer for rows of `inner` words of `bits` bits (32 or 64); `None` when a
    /// row is shorter than a vector.
    pub(crate) fn new(inner: usize, bits: u32) -> Option<Self> {
        let lanes = 512 / bits as usize;
        let (q, r) = (inner / lanes, inner % lanes);
        (q > 0).then(|| BandRow {
            slots: vec![Vector64::default(); q + usize::from(r > 0)],
            inner,
            bytes: bits as usize / 8,
            q,
            r,
            held: None,
            done: 0,
        })
    }

    /// Vectors per row.
    pub(crate) fn columns(&self) -> usize {
        self.slots.len()
    }
}

/// Count the pairs of rows `r0 + t` and `r0 + t + 1` (`t < BAND_ROWS`, rows as in
/// [`BandRow`]: pairs `j`, `j + inner` for `j` in `r0 · inner .. (r0 + 32) · inner`) in the
/// columns `c0 .. c0 + chunks` of the raw words `words`, column by column: each column's 33
/// vectors are prepared once, in registers, and go through the carry-save trees as one
/// chunk of 32 pair vectors, the first words into `a`, the common bits into `both`, as
/// [`pos_popcount_prepared_pairs_avx512`] counts them. Row `r0` comes from `row` when it
/// holds it (the previous band's last row), else it is prepared here; row `r0 + 32` is left
/// in `row`. So every word is read and prepared once, from 32 rows at a time (32 streams,
/// each a row's run of vectors), and the pairs are counted in another order than the
/// stream's, which their sums do not see.
///
/// Returns `None` when the level is below AVX-512 (nothing counted), else whether a
/// prepared word was masked.
///
/// # Panics
/// When `words` does not hold rows `r0 ..= r0 + 32`, the columns are out of range or a
/// band's calls do not come in column order: the caller's bugs, never the data's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pos_popcount_prepared_band_avx512(
    a: WideState<'_>,
    both: WideState<'_>,
    row: &mut BandRow,
    words: &[u8],
    prep: &PairPrep,
    r0: usize,
    c0: usize,
    chunks: usize,
) -> Option<bool> {
    let stride = row.inner * row.bytes;
    assert!((r0 + BAND_ROWS + 1) * stride <= words.len());
    assert!(c0 == row.done && c0 + chunks <= row.columns());
    assert!(prep.bits as usize == 8 * row.bytes && (prep.bits == 32 || prep.bits == 64));
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        let run = by_prep!(band, prep);
        let fresh = row.held != Some(r0);
        // SAFETY: the CPU has AVX-512 F and DQ (checked just above); `words` holds rows
        // `r0 ..= r0 + 32` of `stride` bytes (asserted above), and every vector the kernel
        // loads lies inside one of them (`BandRow::new`: `q >= 1`); `c0 + chunks` columns
        // exist (asserted above).
        let masked = unsafe { run(a, both, row, words, prep, r0, c0, chunks, fresh) };
        row.done += chunks;
        if row.done == row.columns() {
            (row.held, row.done) = (Some(r0 + BAND_ROWS), 0);
        }
        return Some(masked);
    }
    let _ = (a, both, row, words, prep, r0, c0, chunks);
    None
}

#[cfg(target_arch = "x86_64")]
mod kernels {
    use std::arch::x86_64::*;

    use super::{BAND_ROWS, BandRow, PairPrep, PairRing, WIDE_CHUNK_BYTES, WideState};

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
        carry_out(planes, bytes, s_a, s_b);
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
    /// The lane operations of the fused kernel at one lane width (32 or 64 bits).
    ///
    /// Every method is `unsafe` with one precondition: the CPU has AVX-512 F and DQ (they
    /// are inlined into [`fused`], compiled with them).
    pub(super) trait Lane {
        /// The mask of every lane.
        const FULL: u32;
        /// The bits of an IEEE float of the lane's width that is infinite.
        const INFINITY: u64;
        unsafe fn splat(x: u64) -> __m512i;
        /// The lanes that are not NaN, the lanes read as IEEE floats of their width.
        unsafe fn ordered(x: __m512i) -> u32;
        unsafe fn not_equal(x: __m512i, y: __m512i) -> u32;
        /// The lanes of `x` at most `y`, unsigned.
        unsafe fn at_most(x: __m512i, y: __m512i) -> u32;
        unsafe fn sub(x: __m512i, y: __m512i) -> __m512i;
        /// All ones in the lanes whose top bit is set.
        unsafe fn negative(x: __m512i) -> __m512i;
        unsafe fn abs(x: __m512i) -> __m512i;
        /// `u | (neg & esign)` in the lanes of `keep`, 0 in the others.
        unsafe fn finish(keep: u32, u: __m512i, neg: __m512i, esign: __m512i) -> __m512i;
        /// The lanes of `keep` in which `x` is below `y`, unsigned.
        unsafe fn below(keep: u32, x: __m512i, y: __m512i) -> u32;
        /// `x - y` in the lanes of `keep`, 0 in the others.
        unsafe fn sub_or_zero(keep: u32, x: __m512i, y: __m512i) -> __m512i;
        /// `x ^ y` in the lanes of `k`, `src` in the others.
        unsafe fn xor_where(src: __m512i, k: u32, x: __m512i, y: __m512i) -> __m512i;
        /// The lanes `r ..` of `lo` followed by the first `r` of `hi`, given
        /// [`Lane::shift_index`]`(r)`.
        unsafe fn shifted(lo: __m512i, index: __m512i, hi: __m512i) -> __m512i;
        unsafe fn shift_index(r: usize) -> __m512i;
        /// The lanes `1 ..` of `lo` followed by the first of `hi`.
        unsafe fn next_word(lo: __m512i, hi: __m512i) -> __m512i;
    }

    pub(super) struct L32;
    pub(super) struct L64;

    impl Lane for L32 {
        const FULL: u32 = 0xffff;
        const INFINITY: u64 = 0x7f80_0000;
        #[inline(always)]
        unsafe fn splat(x: u64) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_set1_epi32(x as u32 as i32) }
        }
        #[inline(always)]
        unsafe fn ordered(x: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe {
                let f = _mm512_castsi512_ps(x);
                u32::from(_mm512_cmp_ps_mask::<_CMP_ORD_Q>(f, f))
            }
        }
        #[inline(always)]
        unsafe fn not_equal(x: __m512i, y: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { u32::from(_mm512_cmpneq_epi32_mask(x, y)) }
        }
        #[inline(always)]
        unsafe fn at_most(x: __m512i, y: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { u32::from(_mm512_cmple_epu32_mask(x, y)) }
        }
        #[inline(always)]
        unsafe fn sub(x: __m512i, y: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_sub_epi32(x, y) }
        }
        #[inline(always)]
        unsafe fn negative(x: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_srai_epi32::<31>(x) }
        }
        #[inline(always)]
        unsafe fn abs(x: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_abs_epi32(x) }
        }
        #[inline(always)]
        unsafe fn finish(keep: u32, u: __m512i, neg: __m512i, esign: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_maskz_ternarylogic_epi32::<0xf8>(keep as u16, u, neg, esign) }
        }
        #[inline(always)]
        unsafe fn below(keep: u32, x: __m512i, y: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { u32::from(_mm512_mask_cmplt_epu32_mask(keep as u16, x, y)) }
        }
        #[inline(always)]
        unsafe fn sub_or_zero(keep: u32, x: __m512i, y: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_maskz_sub_epi32(keep as u16, x, y) }
        }
        #[inline(always)]
        unsafe fn xor_where(src: __m512i, k: u32, x: __m512i, y: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_mask_xor_epi32(src, k as u16, x, y) }
        }
        #[inline(always)]
        unsafe fn shifted(lo: __m512i, index: __m512i, hi: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_permutex2var_epi32(lo, index, hi) }
        }
        #[inline(always)]
        unsafe fn next_word(lo: __m512i, hi: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_alignr_epi32::<1>(hi, lo) }
        }
        #[inline(always)]
        unsafe fn shift_index(r: usize) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe {
                let r = r as i32;
                _mm512_add_epi32(
                    _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                    _mm512_set1_epi32(r),
                )
            }
        }
    }

    impl Lane for L64 {
        const FULL: u32 = 0xff;
        const INFINITY: u64 = 0x7ff0_0000_0000_0000;
        #[inline(always)]
        unsafe fn splat(x: u64) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_set1_epi64(x as i64) }
        }
        #[inline(always)]
        unsafe fn ordered(x: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe {
                let f = _mm512_castsi512_pd(x);
                u32::from(_mm512_cmp_pd_mask::<_CMP_ORD_Q>(f, f))
            }
        }
        #[inline(always)]
        unsafe fn not_equal(x: __m512i, y: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { u32::from(_mm512_cmpneq_epi64_mask(x, y)) }
        }
        #[inline(always)]
        unsafe fn at_most(x: __m512i, y: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { u32::from(_mm512_cmple_epu64_mask(x, y)) }
        }
        #[inline(always)]
        unsafe fn sub(x: __m512i, y: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_sub_epi64(x, y) }
        }
        #[inline(always)]
        unsafe fn negative(x: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_srai_epi64::<63>(x) }
        }
        #[inline(always)]
        unsafe fn abs(x: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_abs_epi64(x) }
        }
        #[inline(always)]
        unsafe fn finish(keep: u32, u: __m512i, neg: __m512i, esign: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_maskz_ternarylogic_epi64::<0xf8>(keep as u8, u, neg, esign) }
        }
        #[inline(always)]
        unsafe fn below(keep: u32, x: __m512i, y: __m512i) -> u32 {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { u32::from(_mm512_mask_cmplt_epu64_mask(keep as u8, x, y)) }
        }
        #[inline(always)]
        unsafe fn sub_or_zero(keep: u32, x: __m512i, y: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_maskz_sub_epi64(keep as u8, x, y) }
        }
        #[inline(always)]
        unsafe fn xor_where(src: __m512i, k: u32, x: __m512i, y: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_mask_xor_epi64(src, k as u8, x, y) }
        }
        #[inline(always)]
        unsafe fn shifted(lo: __m512i, index: __m512i, hi: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_permutex2var_epi64(lo, index, hi) }
        }
        #[inline(always)]
        unsafe fn next_word(lo: __m512i, hi: __m512i) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe { _mm512_alignr_epi64::<1>(hi, lo) }
        }
        #[inline(always)]
        unsafe fn shift_index(r: usize) -> __m512i {
            // SAFETY: the trait's precondition: the CPU has AVX-512 F and DQ.
            unsafe {
                let r = r as i64;
                _mm512_add_epi64(
                    _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                    _mm512_set1_epi64(r),
                )
            }
        }
    }

    /// Sixteen pairs of vectors `v(0) .. v(15)` (called in that order) into two sets of
    /// planes at once, as [`tree16`] adds sixteen vectors to one: straight-line code in
    /// which every input is used as soon as it is made. Returns the two carries of weight
    /// 16.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn tree16_pairs(
        pa: &mut [__m512i; 5],
        pb: &mut [__m512i; 5],
        mut v: impl FnMut(usize) -> (__m512i, __m512i),
    ) -> (__m512i, __m512i) {
        let [mut oa, mut ta, mut fa, ea, _] = *pa;
        let [mut ob, mut tb, mut fb, eb, _] = *pb;
        let mut eights = [[_mm512_setzero_si512(); 2]; 2];
        for (h, eights_h) in eights.iter_mut().enumerate() {
            let mut fours = [[_mm512_setzero_si512(); 2]; 2];
            for (g, fours_g) in fours.iter_mut().enumerate() {
                let i = 8 * h + 4 * g;
                let ((a0, b0), (a1, b1)) = (v(i), v(i + 1));
                let (twos_a0, o) = csa(oa, a0, a1);
                oa = o;
                let (twos_b0, o) = csa(ob, b0, b1);
                ob = o;
                let ((a2, b2), (a3, b3)) = (v(i + 2), v(i + 3));
                let (twos_a1, o) = csa(oa, a2, a3);
                oa = o;
                let (twos_b1, o) = csa(ob, b2, b3);
                ob = o;
                let (fours_a, t) = csa(ta, twos_a0, twos_a1);
                ta = t;
                let (fours_b, t) = csa(tb, twos_b0, twos_b1);
                tb = t;
                *fours_g = [fours_a, fours_b];
            }
            let (eights_a, f) = csa(fa, fours[0][0], fours[1][0]);
            fa = f;
            let (eights_b, f) = csa(fb, fours[0][1], fours[1][1]);
            fb = f;
            *eights_h = [eights_a, eights_b];
        }
        let (sixteens_a, e) = csa(ea, eights[0][0], eights[1][0]);
        (pa[0], pa[1], pa[2], pa[3]) = (oa, ta, fa, e);
        let (sixteens_b, e) = csa(eb, eights[0][1], eights[1][1]);
        (pb[0], pb[1], pb[2], pb[3]) = (ob, tb, fb, e);
        (sixteens_a, sixteens_b)
    }

    /// The carry of weight 32 of a chunk (`csa` of the sixteens plane and the carries
    /// `s_a`, `s_b` of its two halves) into the byte counters, as [`chunk`] does.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn carry_out(planes: &mut [__m512i; 5], bytes: &mut [[u64; 8]; 8], s_a: __m512i, s_b: __m512i) {
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

    /// The byte counters, left in memory by the loop that adds to them: kept in registers
    /// across a chunk loop of the near and band kernels they take 16 of the 32, and the
    /// loop spills the trees' planes and the preparation's constants instead, every chunk
    /// (the ring loop, whose slots are memory already, measured no better so).
    #[inline(always)]
    fn in_memory(bytes: &mut [[u64; 8]; 8]) -> &mut [[u64; 8]; 8] {
        std::hint::black_box(bytes)
    }

    /// Vectors ahead of the stream that the fused kernel prefetches (far neighbours).
    const STREAM_AHEAD: usize = 32;

    /// The kernel of `pos_popcount_prepared_pairs_avx512`, with the NaN test (`NAN`) and
    /// the masked-code test (`MASKED`) as `Consts::prepare` takes them. Returns whether a prepared
    /// word was masked.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and DQ; `words` must hold the vectors up to
    /// `k0 + 32 · chunks + ring.q + 1` (exclusive), and `ring.prepared <= k0 + ring.q + 1`.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn fused<L: Lane, const NAN: bool, const MASKED: bool>(
        (pa, ba): WideState<'_>,
        (pb, bb): WideState<'_>,
        ring: &mut PairRing,
        words: &[u8],
        prep: &PairPrep,
        k0: usize,
        chunks: usize,
    ) -> bool {
        let consts = Consts::new::<L>(prep);
        let src = words.as_ptr();
        let mut clean = L::FULL;
        // The counted words of raw vector `m`, and the lanes kept (not masked).
        let prepare = |m: usize| -> (__m512i, u32) {
            // SAFETY: `m < k0 + 32 · chunks + q + 1` (every caller below), so the 64 bytes at
            // `64 · m` are inside `words` (the precondition); unaligned loads.
            let x = unsafe { _mm512_loadu_si512(src.add(64 * m).cast()) };
            consts.prepare::<L, NAN, MASKED>(x, L::FULL)
        };
        // Vector `m` in slot `m mod slots` (see `PairRing::new`). Loads at the same offset
        // in a 4 KiB page as a store still in flight wait for it, whatever the page, so
        // the ring starts a quarter page from the stream's offset, modulo half a page
        // (`base`): the stream's loads meet the ring's stores a quarter page apart or
        // more, whichever turn of the ring (`slots` is a multiple of 32) or a power of two.
        let (q, slots) = (ring.q, ring.slots.len() - 64);
        let base = (src as usize + 1024).wrapping_sub(ring.slots.as_ptr() as usize) % 2048 / 64;
        let ring_ptr = ring.slots[base..].as_mut_ptr();
        // SAFETY: `i < slots`, an index of `ring.slots[base..]` (`base < 64`); each slot is
        // 64 aligned bytes.
        let store = |i: usize, v: __m512i| unsafe { _mm512_store_si512(ring_ptr.add(i).cast(), v) };
        // SAFETY: as above.
        let load = |i: usize| unsafe { _mm512_load_si512(ring_ptr.add(i).cast()) };
        // `i + j mod slots` for `i < slots`, `j <= 32`: a mask for a power of two, else
        // `slots > 32` and one subtraction.
        let mask = if slots.is_power_of_two() {
            slots - 1
        } else {
            usize::MAX
        };
        let plus = |i: usize, j: usize| {
            let t = (i + j) & mask;
            if t >= slots { t - slots } else { t }
        };
        while ring.prepared < k0 + q + 1 {
            let (v, keep) = prepare(ring.prepared);
            clean &= keep;
            store(ring.prepared % slots, v);
            ring.prepared += 1;
        }
        // SAFETY: each `[u64; 8]` is 64 readable bytes.
        let load_state = |v: &[u64; 8]| unsafe { _mm512_loadu_si512(v.as_ptr().cast()) };
        let mut planes_a: [__m512i; 5] = std::array::from_fn(|i| load_state(&pa[i]));
        let mut planes_b: [__m512i; 5] = std::array::from_fn(|i| load_state(&pb[i]));
        // SAFETY: the CPU has the features `Lane`'s methods need (the precondition).
        let index = unsafe { L::shift_index(ring.r) };
        // The slots of the chunk's first pair vector and of the next vector it prepares.
        let (mut first_slot, mut next_slot) = (k0 % slots, (k0 + q + 1) % slots);
        let mut prev = load((k0 + q) % slots);
        if q == 0 && ring.r == 1 {
            // Neighbours one word apart (the last axis of a C array, the first of an F
            // one): the first words are the vector prepared just before, still in a
            // register, the second ones that vector moved by one lane with the next one's
            // first (`valign`: no index register, no copy of an operand); the ring is left
            // alone but for the last vector (where the next call starts).
            for c in 0..chunks {
                let k = k0 + 32 * c;
                // No software prefetch: one stream read in order, which the hardware
                // prefetchers follow; the hints measured slower here (they take a load
                // slot per vector).
                let mut pair = |i: usize| {
                    let (next, keep) = prepare(k + i + 1);
                    clean &= keep;
                    // SAFETY: as for `index`.
                    let second = unsafe { L::next_word(prev, next) };
                    let f = prev;
                    prev = next;
                    (f, _mm512_and_si512(f, second))
                };
                let (a0, b0) = tree16_pairs(&mut planes_a, &mut planes_b, &mut pair);
                let (a1, b1) = tree16_pairs(&mut planes_a, &mut planes_b, |i| pair(16 + i));
                carry_out(&mut planes_a, in_memory(ba), a0, a1);
                carry_out(&mut planes_b, in_memory(bb), b0, b1);
            }
            store((k0 + 32 * chunks) % slots, prev);
        } else if q == 0 {
            // Neighbours 2 to 15 words apart, rarer: as above, the second words by the
            // permute of an index register, and a chunk's two halves as two turns of a loop
            // (half the code; the turn count is hidden from LLVM, which would unroll it
            // again). Not through the ring: a slot read one vector after its store waits
            // on store forwarding.
            for c in 0..chunks {
                let k = k0 + 32 * c;
                let mut carries = [[_mm512_setzero_si512(); 2]; 2];
                for h in 0..std::hint::black_box(2) {
                    let pair = |i: usize| {
                        let (next, keep) = prepare(k + 16 * h + i + 1);
                        clean &= keep;
                        // SAFETY: as for `index`.
                        let second = unsafe { L::shifted(prev, index, next) };
                        let f = prev;
                        prev = next;
                        (f, _mm512_and_si512(f, second))
                    };
                    let (a, b) = tree16_pairs(&mut planes_a, &mut planes_b, pair);
                    carries[h & 1] = [a, b];
                }
                carry_out(&mut planes_a, in_memory(ba), carries[0][0], carries[1][0]);
                carry_out(&mut planes_b, in_memory(bb), carries[0][1], carries[1][1]);
            }
            store((k0 + 32 * chunks) % slots, prev);
        } else {
            for c in 0..chunks {
                let k = k0 + 32 * c;
                let (fs, ns) = (first_slot, next_slot);
                let mut pair = |i: usize| {
                    // A hint that reads nothing (its address computed wrapping): the stream of
                    // words some vectors ahead, to the first-level cache only (`NTA`: each is
                    // read once, and should not push the ring out).
                    _mm_prefetch::<_MM_HINT_NTA>(
                        src.wrapping_add(64 * (k + i + q + 1 + STREAM_AHEAD)).cast(),
                    );
                    // SAFETY: as in `prepare`.
                    let x = unsafe { _mm512_loadu_si512(src.add(64 * (k + i + q + 1)).cast()) };
                    let (next, keep) = consts.prepare_abs::<L, NAN, MASKED>(x);
                    clean &= keep;
                    store(plus(ns, i), next);
                    let f = load(plus(fs, i));
                    // SAFETY: as for `index`.
                    let second = unsafe { L::shifted(prev, index, next) };
                    prev = next;
                    (f, _mm512_and_si512(f, second))
                };
                let (a0, b0) = tree16_pairs(&mut planes_a, &mut planes_b, &mut pair);
                let (a1, b1) = tree16_pairs(&mut planes_a, &mut planes_b, |i| pair(16 + i));
                carry_out(&mut planes_a, ba, a0, a1);
                carry_out(&mut planes_b, bb, b0, b1);
                (first_slot, next_slot) = (plus(first_slot, 32), plus(next_slot, 32));
            }
        }
        ring.prepared = k0 + 32 * chunks + q + 1;
        for (v, out) in planes_a.iter().zip(pa.iter_mut()) {
            // SAFETY: each `[u64; 8]` is 64 writable bytes.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        }
        for (v, out) in planes_b.iter().zip(pb.iter_mut()) {
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        }
        clean != L::FULL
    }

    /// Columns ahead of the band kernel's that it prefetches, in each of its 32 rows, to
    /// every cache level (`T0`). Not `NTA`: on Intel's server cores a non-temporal
    /// prefetch fills the first level only, where 33 streams evict one another's lines
    /// before they are read, and the loads then miss to memory (far-neighbour counts of
    /// `f64` ran 4-5x slower than with `T0`, and slower than with no hint at all).
    const BAND_AHEAD: usize = 4;

    /// The kernel of `pos_popcount_prepared_band_avx512` (`NAN`, `MASKED` as in
    /// [`fused`]); row `r0` prepared here when `fresh`, else read from `row`.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and DQ; `words` must hold rows `r0 ..= r0 + 32` of
    /// `row.inner` words of `prep.bits` bits, `row.q >= 1`, and `c0 + chunks <=
    /// row.columns()`.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn band<L: Lane, const NAN: bool, const MASKED: bool>(
        (pa, ba): WideState<'_>,
        (pb, bb): WideState<'_>,
        row: &mut BandRow,
        words: &[u8],
        prep: &PairPrep,
        r0: usize,
        c0: usize,
        chunks: usize,
        fresh: bool,
    ) -> bool {
        let consts = Consts::new::<L>(prep);
        let stride = row.inner * row.bytes;
        let (q, r, columns) = (row.q, row.r, row.columns());
        // The band's first row.
        let src = words.as_ptr().wrapping_add(r0 * stride);
        let slots = row.slots.as_mut_ptr();
        // Column `c`'s byte offset in a row, and the lanes it counts: the last `r` lanes
        // of the row's last vector when `c == q`.
        let column = |c: usize| {
            if c < q {
                (64 * c, L::FULL)
            } else {
                (
                    stride - 64,
                    (L::FULL << (L::FULL.count_ones() as usize - r)) & L::FULL,
                )
            }
        };
        // The lanes of every vector prepared so far that were not masked, the lanes a
        // column leaves out included (a masked word there, counted in the column before,
        // makes the band's correction run, which is exact either way).
        let mut clean = L::FULL;
        // SAFETY: each `[u64; 8]` is 64 readable bytes.
        let load_state = |v: &[u64; 8]| unsafe { _mm512_loadu_si512(v.as_ptr().cast()) };
        let mut planes_a: [__m512i; 5] = std::array::from_fn(|i| load_state(&pa[i]));
        let mut planes_b: [__m512i; 5] = std::array::from_fn(|i| load_state(&pb[i]));
        for c in c0..c0 + chunks {
            let (off, lanes) = column(c);
            let at = src.wrapping_add(off);
            // The same column `BAND_AHEAD` on, or past the row's end the next band's.
            let ahead = if c + BAND_AHEAD < columns {
                at.wrapping_add(64 * BAND_AHEAD)
            } else {
                let (o, _) = column(c + BAND_AHEAD - columns);
                src.wrapping_add(BAND_ROWS * stride + o)
            };
            // The prepared words of column `c` in row `r0 + t`, and the lanes kept.
            let mut prepare = |t: usize| {
                // SAFETY: `t <= 32` and the column lies inside a row (`off + 64 <=
                // stride`, as `q >= 1`), so the 64 bytes at `off + (r0 + t) · stride`
                // are inside `words` (the precondition); unaligned loads.
                let x = unsafe { _mm512_loadu_si512(at.add(t * stride).cast()) };
                let (v, keep) = consts.prepare::<L, NAN, MASKED>(x, lanes);
                clean &= keep;
                v
            };
            let mut prev = if fresh {
                prepare(0)
            } else {
                // SAFETY: `c < columns`, an index of `row.slots`; 64 aligned bytes each.
                unsafe { _mm512_load_si512(slots.add(c).cast()) }
            };
            let mut pair = |i: usize| {
                // A hint that reads nothing (its address computed wrapping): 32 streams
                // a row apart are more than the hardware prefetchers follow.
                _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add((i + 1) * stride).cast());
                let next = prepare(i + 1);
                let f = prev;
                prev = next;
                (f, _mm512_and_si512(f, next))
            };
            let (a0, b0) = tree16_pairs(&mut planes_a, &mut planes_b, &mut pair);
            let (a1, b1) = tree16_pairs(&mut planes_a, &mut planes_b, |i| pair(16 + i));
            carry_out(&mut planes_a, in_memory(ba), a0, a1);
            carry_out(&mut planes_b, in_memory(bb), b0, b1);
            // SAFETY: as for the load above.
            unsafe { _mm512_store_si512(slots.add(c).cast(), prev) };
        }
        for (v, out) in planes_a.iter().zip(pa.iter_mut()) {
            // SAFETY: each `[u64; 8]` is 64 writable bytes.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        }
        for (v, out) in planes_b.iter().zip(pb.iter_mut()) {
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        }
        clean != L::FULL
    }
    /// The loop-invariant vectors of the preparation, and the NaN test of the build with a
    /// masked code: a magnitude above `nan_limit` is NaN (the infinity's bits when NaN is
    /// masked, all ones when not: no lane is then above it).
    struct Consts {
        emask: __m512i,
        bias_field: __m512i,
        masked: __m512i,
        esign: __m512i,
        /// The exponent and mantissa bits (all bits for an integer: no exponent field).
        magnitude: __m512i,
        nan_limit: __m512i,
    }

    impl Consts {
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        fn new<L: Lane>(prep: &PairPrep) -> Self {
            // SAFETY: the CPU has the features `Lane`'s methods need (this function's).
            unsafe {
                Consts {
                    emask: L::splat(prep.emask),
                    bias_field: L::splat(prep.bias_field),
                    masked: L::splat(prep.masked.unwrap_or(0)),
                    esign: L::splat(prep.esign),
                    magnitude: L::splat(prep.emask | prep.emask.wrapping_sub(1)),
                    nan_limit: L::splat(if prep.nan { L::INFINITY } else { u64::MAX }),
                }
            }
        }

        /// The counted words of the raw words `x` in the lanes of `lanes` (0 in the
        /// others and in the masked ones), and the lanes that are not masked, all of them
        /// (those out of `lanes` too). The NaN test when `NAN` (switched by `nan_limit` when
        /// `MASKED` too), the masked-code test when `MASKED`.
        ///
        /// The signed exponent of an exponent `e` with the bias `2^(k-1) - 1` (`PairPrep`)
        /// is `e - bias` when `e >= bias` and `2^k - 1 - e` (`|e - bias|` with the sign
        /// bit `2^(k-1)`) when not: the field minus the shifted bias, which borrows nothing
        /// from the sign, or the field's complement. `e < bias` exactly when the magnitude
        /// is below the shifted bias (an integer: never). Three operations and the tests.
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        fn prepare<L: Lane, const NAN: bool, const MASKED: bool>(
            &self,
            x: __m512i,
            lanes: u32,
        ) -> (__m512i, u32) {
            // SAFETY: the CPU has the features `Lane`'s methods need (this function's).
            unsafe {
                let magnitude = _mm512_and_si512(x, self.magnitude);
                let mut keep = L::FULL;
                if NAN {
                    keep &= if MASKED {
                        L::at_most(magnitude, self.nan_limit)
                    } else {
                        L::ordered(x)
                    };
                }
                if MASKED {
                    keep &= L::not_equal(x, self.masked);
                }
                let counted = keep & lanes;
                // A NaN is never below the bias, a masked code may be.
                let below = L::below(
                    if MASKED { counted } else { lanes },
                    magnitude,
                    self.bias_field,
                );
                let d = L::sub_or_zero(counted, x, self.bias_field);
                (L::xor_where(d, below, x, self.emask), keep)
            }
        }

        /// [`Consts::prepare`] (all lanes) by the signed exponent's definition: the field
        /// minus the bias `d`, its magnitude `|d|` and, when `d < 0`, the sign bit. The
        /// same words in a few more operations, which the ring loop of [`fused`] takes:
        /// with the shorter form LLVM keeps more mask registers live there and that loop
        /// ran slower.
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        fn prepare_abs<L: Lane, const NAN: bool, const MASKED: bool>(
            &self,
            x: __m512i,
        ) -> (__m512i, u32) {
            // SAFETY: the CPU has the features `Lane`'s methods need (this function's).
            unsafe {
                let mut keep = L::FULL;
                if NAN {
                    keep &= if MASKED {
                        L::at_most(_mm512_and_si512(x, self.magnitude), self.nan_limit)
                    } else {
                        L::ordered(x)
                    };
                }
                if MASKED {
                    keep &= L::not_equal(x, self.masked);
                }
                let d = L::sub(_mm512_and_si512(x, self.emask), self.bias_field);
                let magnitude = L::abs(d);
                // `(x & !emask) | magnitude`.
                let u = _mm512_ternarylogic_epi64::<0xba>(x, self.emask, magnitude);
                (L::finish(keep, u, L::negative(d), self.esign), keep)
            }
        }
    }
}
