//! float16 from and to `f32` (and from `f64`) by F16C's `vcvtps2ph`/`vcvtph2ps`, behind the
//! [`F16c`] proof token: conversions portable Rust cannot reach.

/// An F16C kernel of `mod kernels` on x86-64; `false` (block not done) elsewhere, where no
/// [`F16c`] is ever made.
macro_rules! f16c_call {
    ($kernel:ident $(::<$g:tt>)? ($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: an `F16c` exists only when the CPU has F16C and AVX2 (`detect`); a
            // kernel's further conditions are checked at its call.
            unsafe { kernels::$kernel $(::<$g>)? ($($arg),*) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = ($($arg),*);
            false
        }
    }};
}

/// Proof that this CPU has F16C (`vcvtps2ph`, the hardware `f32 -> float16` conversion)
/// and AVX2: only [`F16c::detect`] makes one, after checking both. It holds whether the
/// AVX-512 level is on (checked once, where the token is made per call, not per block).
///
/// The float16 kernels below convert by `vcvtps2ph` rounding to nearest-even, which is the
/// correctly rounded conversion the spec asks for on every value they accept. Like every
/// fast path they only *detect* the rare elements (see `convert::fast`): a block with
/// one is reported as not done and redone by the portable kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct F16c(bool);

impl F16c {
    /// The proof, when the CPU has F16C and AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<F16c> {
        #[cfg(target_arch = "x86_64")]
        {
            // `Isa::Avx2` includes F16C.
            if super::has_avx2() {
                return Some(F16c(super::has_avx512()));
            }
        }
        None
    }

    /// The float16 codes of the `f32` values whose bits are `src`, nearest-even, into `dst`
    /// (the shorter length). Returns `false` when some element's magnitude bits (the bits
    /// without the sign) are at least `limit`: the block must then be redone elsewhere
    /// (`limit` at most `0x8000_0000`).
    pub(crate) fn f16_from_f32(self, src: &[u32], dst: &mut [u16], limit: u32) -> bool {
        f16c_call!(from_f32(src, dst, limit))
    }

    /// The float16 codes of the `f64` values whose bits are `src`, nearest-even, into `dst`
    /// (the shorter length); `false` as for [`F16c::f16_from_f32`], with `limit` on the
    /// magnitude bits of the `f32` each value is first rounded to (below).
    ///
    /// Each value is first rounded to odd at `f32` precision (truncated to 24 significant
    /// bits, the last one set if any bit was dropped), which `vcvtpd2ps` then converts
    /// exactly, and `vcvtps2ph` rounds that to float16. Rounding to odd with at least two
    /// more bits than the final format (24 against 11) makes the two roundings one: a
    /// value strictly between two float16 neighbours stays strictly between them, and
    /// a tie stays a tie, since float16's points and midpoints are all on the `f32` grid
    /// (float16's range lies within `f32`'s normal range). Values below `f32`'s normal range
    /// (`< 2^-126`) are below half float16's smallest subnormal (`2^-25`): they reach
    /// `vcvtps2ph` as a signed zero or an `f32` subnormal, and become a zero of their sign,
    /// as they should. The rare test is on that `f32`, eight lanes at once: rounding to odd
    /// is monotonic and keeps every `f32` with an even last bit (float16's overflow
    /// thresholds are such), so `|x|` reaches a threshold exactly when its `f32` does;
    /// values above `f32`'s range become ±Inf there, and are declined with the infinities.
    ///
    /// With AVX-512, sixteen values a step: the rounding to odd is one `vpternlogq` after
    /// the `and` and `add` that find the dropped bits, and the rare test one `vpmaxud` per
    /// step on the magnitudes, compared with `limit` once at the end.
    pub(crate) fn f16_from_f64(self, src: &[u64], dst: &mut [u16], limit: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.0 {
            // SAFETY: the CPU has AVX-512 F, BW, VL and DQ (the `Isa::Avx512` level,
            // checked when this token was made).
            return unsafe { kernels::avx512_from_f64(src, dst, limit) };
        }
        f16c_call!(from_f64(src, dst, limit))
    }

    /// The float16 codes of the integers `src` (`int32`/`uint32` in `u32` words,
    /// `int16`/`uint16` in `u16` words, by `SIGNED`), nearest-even, into `dst` (the shorter
    /// length): each converted to `f32` (`vcvtdq2ps`), then to float16 (`vcvtps2ph`), in
    /// registers. `false` as for [`F16c::f16_from_f32`], with `limit` on the magnitude bits
    /// of those `f32`s.
    ///
    /// One rounding, the float16 one: an integer below `2^24` in magnitude is an `f32`
    /// exactly (all 16-bit ones are). One of `2^24` or more is rounded by the first
    /// conversion, but to an `f32` of at least `2^24` (rounding is monotonic and `2^24` is
    /// an `f32`), and float16's overflow thresholds (`65520` nearest-even) are far below
    /// it: the value overflows float16 and so does its `f32`, both at or past any `limit`
    /// of the nearest-even kernels (the first magnitude they leave: `65520`'s bits under
    /// the error rule, Inf's under clamp, where the hardware's ±Inf is the clamped value).
    /// `uint32` is first clamped to `2^31 - 1` on AVX2, which has only a signed
    /// conversion: a value it changes overflows float16 either way.
    pub(crate) fn f16_from_int<S: IntWord, const SIGNED: bool>(
        self,
        src: &[S],
        dst: &mut [u16],
        limit: u32,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.0 {
            // SAFETY: the CPU has AVX-512 F, BW and VL (the `Isa::Avx512` level, checked
            // when this token was made).
            return unsafe { kernels::avx512_from_int::<S, SIGNED>(src, dst, limit) };
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: an `F16c` exists only when the CPU has F16C and AVX2 (`detect`).
            unsafe { kernels::from_int::<S, SIGNED>(src, dst, limit) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (src, dst, limit);
            false
        }
    }

    /// The float16 codes of the 64-bit integers `src` (`int64` with `SIGNED`, else
    /// `uint64`), nearest-even, into `dst` (the shorter length), at the AVX-512 level
    /// (`None` below it: nothing written). `Some(false)` as for
    /// [`F16c::f16_from_f64`], whose loop and test this is, on `f64` stand-ins of the
    /// integers rounded to odd (see `kernels::int64_to_f64_dropped`) made in registers by
    /// AVX-512 DQ's conversions.
    pub(crate) fn f16_from_int64<const SIGNED: bool>(
        self,
        src: &[u64],
        dst: &mut [u16],
        limit: u32,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if self.0 {
            // SAFETY: the CPU has AVX-512 F, BW, VL and DQ (the `Isa::Avx512` level,
            // checked when this token was made).
            return Some(unsafe { kernels::avx512_from_int64::<SIGNED>(src, dst, limit) });
        }
        let _ = (src, dst, limit);
        None
    }

    /// The `f32` bits of the float16 values whose codes are `src`, into `dst` (the shorter
    /// length), by `vcvtph2ps`: exact for every code. Returns `false` when a NaN is among
    /// them (the hardware keeps its payload; the caller's rule canonicalizes it); every
    /// element is written either way, a NaN as an `f32` NaN.
    pub(crate) fn f32_from_f16(self, src: &[u16], dst: &mut [u32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.0 {
            // SAFETY: the CPU has AVX-512 F and BW (the `Isa::Avx512` level, checked when
            // this token was made).
            return unsafe { kernels::avx512_to_f32::<false>(src, dst) };
        }
        f16c_call!(to_f32::<false>(src, dst))
    }

    /// [`f32_from_f16`](Self::f32_from_f16), the whole vectors stored by `vmovntps` (see
    /// [`STREAM_MIN`](super::stream::STREAM_MIN)) when `dst` starts on a 32-byte boundary, as that store requires;
    /// plain stores otherwise. The caller issues [`stream_fence`](super::stream_fence) after its last block.
    pub(crate) fn f32_from_f16_streamed(self, src: &[u16], dst: &mut [u32]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.0 && (dst.as_ptr() as usize).is_multiple_of(64) {
            // SAFETY: the CPU has AVX-512 F and BW (the `Isa::Avx512` level, checked when
            // this token was made),
            // and `dst` is 64-byte aligned, as the streamed kernel requires.
            return unsafe { kernels::avx512_to_f32::<true>(src, dst) };
        }
        if !(dst.as_ptr() as usize).is_multiple_of(32) {
            return self.f32_from_f16(src, dst);
        }
        // `dst` is 32-byte aligned, as the streamed kernel requires (checked just above).
        f16c_call!(to_f32::<true>(src, dst))
    }
}

/// The source words of [`F16c::f16_from_int`]: `u16` and `u32`.
pub(crate) trait IntWord: Copy + Default + sealed::Sealed {
    /// The word's width in bits.
    const BITS: u32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
}

impl IntWord for u16 {
    const BITS: u32 = 16;
}

impl IntWord for u32 {
    const BITS: u32 = 32;
}

/// The F16C kernels: eight elements per step, the tail through a zero-padded copy (a zero
/// is never rare: its magnitude 0 is below any `limit`).
#[cfg(target_arch = "x86_64")]
pub(super) mod kernels {
    use std::arch::x86_64::*;

    /// `$step!(source pointer, target pointer)` over the first `$n` elements, `LANES` at a
    /// time: the whole groups in place, the tail through zero-padded copies. Expanded inside
    /// an `unsafe` block of a kernel, whose `$step` reads and writes `LANES` elements.
    macro_rules! steps {
        ($src:ident, $dst:ident, $n:ident, $step:ident) => {{
            let whole = $n - $n % LANES;
            let mut i = 0;
            while i < whole {
                $step!($src.as_ptr().add(i), $dst.as_mut_ptr().add(i));
                i += LANES;
            }
            if whole < $n {
                // Arrays of the slices' own word types (an element gives the type; `n > 0`
                // here), the source one zeroed.
                let mut s = [$src[0]; LANES];
                let mut d = [$dst[0]; LANES];
                s.fill(Default::default());
                s[..$n - whole].copy_from_slice(&$src[whole..$n]);
                $step!(s.as_ptr(), d.as_mut_ptr());
                $dst[whole..$n].copy_from_slice(&d[..$n - whole]);
            }
        }};
    }

    /// Elements per step. The rare test: `mag >= limit` is the top bit of
    /// `mag + (TOP - limit)` (both below `TOP`, the sign bit), OR-ed over the block (an add
    /// and an or per vector) and read once at the end.
    const LANES: usize = 8;

    /// # Safety
    /// The CPU must have AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn from_f32(src: &[u32], dst: &mut [u16], limit: u32) -> bool {
        let n = src.len().min(dst.len());
        // SAFETY: every load reads 8 `u32` at `i < n - 7` (or from the padded copy), every
        // store writes 8 `u16` at such an `i` (or to the padded copy): in bounds. Unaligned
        // loads and stores are used throughout. The intrinsics need AVX2 and F16C, which the
        // caller guarantees.
        unsafe {
            let bias = _mm256_set1_epi32((0x8000_0000u32 - limit) as i32);
            let mut rare = _mm256_setzero_si256();
            // A macro, not a closure: the intrinsics must be expanded inside this function,
            // which has the target features.
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    let x = _mm256_loadu_si256($s.cast());
                    let mag = _mm256_and_si256(x, _mm256_set1_epi32(i32::MAX));
                    rare = _mm256_or_si256(rare, _mm256_add_epi32(mag, bias));
                    let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_castsi256_ps(x));
                    _mm_storeu_si128($d.cast(), h);
                }};
            }
            steps!(src, dst, n, step);
            _mm256_movemask_ps(_mm256_castsi256_ps(rare)) == 0
        }
    }

    /// The AVX2 kernel of `F16c::f16_from_int`: eight integers a step, each widened to 32
    /// bits (16-bit words), converted to `f32` (`vcvtdq2ps`; `uint32` first clamped to
    /// `2^31 - 1`, see the caller) and to float16 (`vcvtps2ph`), with `from_f32`'s rare test
    /// on the `f32`s.
    ///
    /// # Safety
    /// The CPU must have AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn from_int<S: super::IntWord, const SIGNED: bool>(
        src: &[S],
        dst: &mut [u16],
        limit: u32,
    ) -> bool {
        let n = src.len().min(dst.len());
        // SAFETY: every load reads 8 words of `S` at `i < n - 7` (or from the padded copy),
        // every store writes 8 `u16` at such an `i` (or to the padded copy): in bounds.
        // Unaligned loads and stores throughout. AVX2 and F16C are the caller's guarantee.
        unsafe {
            let bias = _mm256_set1_epi32((0x8000_0000u32 - limit) as i32);
            let mut rare = _mm256_setzero_si256();
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    let x = if S::BITS == 16 {
                        let h = _mm_loadu_si128($s.cast());
                        if SIGNED {
                            _mm256_cvtepi16_epi32(h)
                        } else {
                            _mm256_cvtepu16_epi32(h)
                        }
                    } else if SIGNED {
                        _mm256_loadu_si256($s.cast())
                    } else {
                        _mm256_min_epu32(_mm256_loadu_si256($s.cast()), _mm256_set1_epi32(i32::MAX))
                    };
                    let f = _mm256_cvtepi32_ps(x);
                    let mag = _mm256_and_si256(_mm256_castps_si256(f), _mm256_set1_epi32(i32::MAX));
                    rare = _mm256_or_si256(rare, _mm256_add_epi32(mag, bias));
                    let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
                    _mm_storeu_si128($d.cast(), h);
                }};
            }
            steps!(src, dst, n, step);
            _mm256_movemask_ps(_mm256_castsi256_ps(rare)) == 0
        }
    }

    /// The AVX-512 twin of [`from_int`]: sixteen integers a step (`vcvtudq2ps` for
    /// `uint32`, which AVX-512 has), the largest `f32` magnitude kept (`vpmaxud`) and
    /// compared with `limit` once; the tail is one masked step (zeros in the lanes masked
    /// off, never rare).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn avx512_from_int<S: super::IntWord, const SIGNED: bool>(
        src: &[S],
        dst: &mut [u16],
        limit: u32,
    ) -> bool {
        const STEP: usize = 16;
        let n = src.len().min(dst.len());
        let whole = n - n % STEP;
        // SAFETY: each step reads 16 words of `S` at `src + i` and writes 16 `u16` at
        // `dst + i` with `i + 16 <= whole <= n`: in bounds. The tail's loads and stores are
        // masked to its `n - whole < 16` elements (masked-off lanes are neither read nor
        // written, and do not fault). Unaligned forms throughout. The features are the
        // caller's guarantee.
        unsafe {
            let mag_mask = _mm512_set1_epi32(i32::MAX);
            let mut largest = _mm512_setzero_si512();
            let mut step = |s: *const S, k: __mmask16| {
                let f = if S::BITS == 16 {
                    let h = _mm256_maskz_loadu_epi16(k, s.cast());
                    _mm512_cvtepi32_ps(if SIGNED {
                        _mm512_cvtepi16_epi32(h)
                    } else {
                        _mm512_cvtepu16_epi32(h)
                    })
                } else {
                    let x = _mm512_maskz_loadu_epi32(k, s.cast());
                    if SIGNED {
                        _mm512_cvtepi32_ps(x)
                    } else {
                        _mm512_cvtepu32_ps(x)
                    }
                };
                let mag = _mm512_and_si512(_mm512_castps_si512(f), mag_mask);
                largest = _mm512_max_epu32(largest, mag);
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f)
            };
            let mut i = 0;
            while i < whole {
                let h = step(src.as_ptr().add(i), !0);
                _mm256_storeu_si256(dst.as_mut_ptr().add(i).cast(), h);
                i += STEP;
            }
            let rest = n - whole;
            if rest > 0 {
                let k = ((1u32 << rest) - 1) as __mmask16;
                let h = step(src.as_ptr().add(whole), k);
                _mm256_mask_storeu_epi16(dst.as_mut_ptr().add(whole).cast(), k, h);
            }
            (_mm512_reduce_max_epu32(largest) as u32) < limit
        }
    }

    /// float16 codes to `f32` bits, eight a step (`vcvtph2ps`); `false` when one is a NaN.
    /// With `STREAM`, the whole vectors are stored by `vmovntps` (the tail by plain stores).
    ///
    /// # Safety
    /// The CPU must have AVX2 and F16C; with `STREAM`, `dst` must start on a 32-byte
    /// boundary.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn to_f32<const STREAM: bool>(src: &[u16], dst: &mut [u32]) -> bool {
        let n = src.len().min(dst.len());
        // SAFETY: every load reads 8 `u16` at `i < n - 7` (or from the padded copy), every
        // store writes 8 `u32` at such an `i` (or to the padded copy): in bounds, unaligned
        // except the streamed ones, at `dst + 4i` with `i` a multiple of 8 from a 32-byte
        // aligned `dst` (the caller's guarantee), so 32-byte aligned as `vmovntps` requires.
        unsafe {
            // A NaN's magnitude is above Inf's, 0x7c00: a signed 16-bit compare suffices.
            let inf = _mm_set1_epi16(0x7c00);
            let mut nan = _mm_setzero_si128();
            macro_rules! convert {
                ($s:expr) => {{
                    let h = _mm_loadu_si128($s.cast());
                    let mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
                    nan = _mm_or_si128(nan, _mm_cmpgt_epi16(mag, inf));
                    _mm256_cvtph_ps(h)
                }};
            }
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    _mm256_storeu_ps($d.cast(), convert!($s));
                }};
            }
            if STREAM {
                let whole = n - n % LANES;
                let mut i = 0;
                while i < whole {
                    let v = convert!(src.as_ptr().add(i));
                    _mm256_stream_ps(dst.as_mut_ptr().add(i).cast(), v);
                    i += LANES;
                }
                let (s, d, m) = (&src[whole..n], &mut dst[whole..n], n - whole);
                steps!(s, d, m, step);
            } else {
                steps!(src, dst, n, step);
            }
            _mm_testz_si128(nan, nan) == 1
        }
    }

    /// The AVX-512 twin of [`to_f32`]: 32 codes per step, converted by two `vcvtph2ps` of
    /// 16 (each reading its half from memory); the NaN test is one `vpandd` and one
    /// `vpmaxuw` per 32 codes (the largest magnitude, compared once at the end), where the
    /// AVX2 kernel spends an and, a compare and an or per 8. The tail is one masked step.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW; with `STREAM`, `dst` must be 64-byte aligned.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn avx512_to_f32<const STREAM: bool>(src: &[u16], dst: &mut [u32]) -> bool {
        const STEP: usize = 32;
        let n = src.len().min(dst.len());
        let whole = n - n % STEP;
        // SAFETY: each step reads 32 `u16` at `src + i` and writes 32 `u32` at `dst + i`
        // with `i + 32 <= whole <= n`: in bounds. The tail's loads and stores are masked to
        // its `n - whole < 32` elements (masked-off lanes are neither read nor written, and
        // do not fault). Unaligned forms, except the streamed stores at `dst + 4i`, `i` a
        // multiple of 32 from a 64-byte aligned `dst` (the caller's guarantee), as
        // `vmovntps` requires. AVX-512 F and BW are the caller's guarantee.
        unsafe {
            let mag_mask = _mm512_set1_epi16(0x7fff);
            let mut largest = _mm512_setzero_si512();
            let mut i = 0;
            while i < whole {
                let s = src.as_ptr().add(i);
                let h = _mm512_loadu_si512(s.cast());
                largest = _mm512_max_epu16(largest, _mm512_and_si512(h, mag_mask));
                let lo = _mm512_cvtph_ps(_mm256_loadu_si256(s.cast()));
                let hi = _mm512_cvtph_ps(_mm256_loadu_si256(s.add(16).cast()));
                let d = dst.as_mut_ptr().add(i);
                if STREAM {
                    _mm512_stream_ps(d.cast(), lo);
                    _mm512_stream_ps(d.add(16).cast(), hi);
                } else {
                    _mm512_storeu_ps(d.cast(), lo);
                    _mm512_storeu_ps(d.add(16).cast(), hi);
                }
                i += STEP;
            }
            let rest = n - whole;
            if rest > 0 {
                let k: __mmask32 = (1u32 << rest) - 1;
                let s = src.as_ptr().add(whole);
                let h = _mm512_maskz_loadu_epi16(k, s.cast());
                largest = _mm512_max_epu16(largest, _mm512_and_si512(h, mag_mask));
                let lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
                let hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(h));
                let d = dst.as_mut_ptr().add(whole);
                _mm512_mask_storeu_ps(d.cast(), k as __mmask16, lo);
                _mm512_mask_storeu_ps(d.add(16).cast(), (k >> 16) as __mmask16, hi);
            }
            // A NaN's magnitude is above Inf's, 0x7c00.
            _mm512_cmpgt_epu16_mask(largest, _mm512_set1_epi16(0x7c00)) == 0
        }
    }

    /// The AVX-512 twin of [`from_f64`]: sixteen values per step (two `vcvtpd2ps` of 8
    /// rounded to odd, by [`f64_steps_to_odd_f32`], one `vcvtps2ph` of 16). The largest
    /// magnitude is kept (`vpmaxud`) and compared with `limit` once.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, VL and DQ.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    pub(super) unsafe fn avx512_from_f64(src: &[u64], dst: &mut [u16], limit: u32) -> bool {
        // SAFETY: AVX-512 F, BW, VL and DQ are the caller's guarantee, and all `narrow`
        // uses.
        unsafe {
            let mag_mask = _mm512_set1_epi32(i32::MAX);
            let mut largest = _mm512_setzero_si512();
            f64_steps_to_odd_f32(
                src,
                dst,
                |x| (x, None),
                |f| {
                    let mag = _mm512_and_si512(_mm512_castps_si512(f), mag_mask);
                    largest = _mm512_max_epu32(largest, mag);
                    _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f)
                },
            );
            (_mm512_reduce_max_epu32(largest) as u32) < limit
        }
    }

    /// The AVX-512 `int64`/`uint64` (by `SIGNED`) to float16 kernel: [`avx512_from_f64`] on
    /// the integers' conversions ([`int64_to_f64_dropped`]), rounded to odd at `f32`
    /// precision by its loop, which round to float16 as the integers do, and are tested
    /// against `limit` as the integers would be (rounding to odd is monotonic and keeps
    /// float16's overflow thresholds, even `f32`s).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, VL and DQ.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    pub(super) unsafe fn avx512_from_int64<const SIGNED: bool>(
        src: &[u64],
        dst: &mut [u16],
        limit: u32,
    ) -> bool {
        // SAFETY: AVX-512 F, BW, VL and DQ are the caller's guarantee, and all `value`
        // and `narrow` use.
        unsafe {
            let mag_mask = _mm512_set1_epi32(i32::MAX);
            let mut largest = _mm512_setzero_si512();
            f64_steps_to_odd_f32(
                src,
                dst,
                |x| int64_to_f64_dropped::<SIGNED>(x),
                |f| {
                    let mag = _mm512_and_si512(_mm512_castps_si512(f), mag_mask);
                    largest = _mm512_max_epu32(largest, mag);
                    _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f)
                },
            );
            (_mm512_reduce_max_epu32(largest) as u32) < limit
        }
    }

    /// Eight 64-bit integers (`int64` with `SIGNED`, else `uint64`) as `f64` bits and the
    /// bits that conversion dropped, for [`f64_steps_to_odd_f32`]'s rounding to odd: the
    /// magnitude truncated to 53 significant bits (`vcvtqq2pd`/`vcvtuqq2pd` rounding
    /// towards zero, which truncates the magnitude whatever the sign), and the source minus
    /// that truncated value converted back (`vcvttpd2qq`, exact: an integer no larger in
    /// magnitude than the source, so in its range), nonzero exactly when a nonzero bit was
    /// dropped, and then nonzero in its low 29 bits too (it is below `2^11` in magnitude,
    /// of the source's sign). Exact below `2^53` (the difference zero). The loop's sticky
    /// bit then stands for the bits dropped here as for its own: the `f32` it makes is the
    /// integer rounded to odd at 24 significant bits, which rounds to float16 and bfloat16
    /// (at most 11 significant bits, two fewer than 24) as the integer does.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    #[inline]
    pub(in crate::arch) unsafe fn int64_to_f64_dropped<const SIGNED: bool>(
        x: __m512i,
    ) -> (__m512i, Option<__m512i>) {
        const TRUNCATE: i32 = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
        let (t, back) = if SIGNED {
            let t = _mm512_cvt_roundepi64_pd::<TRUNCATE>(x);
            (t, _mm512_cvttpd_epi64(t))
        } else {
            let t = _mm512_cvt_roundepu64_pd::<TRUNCATE>(x);
            (t, _mm512_cvttpd_epu64(t))
        };
        (_mm512_castpd_si512(t), Some(_mm512_sub_epi64(x, back)))
    }

    /// The loop of the AVX-512 `f64 -> float16` and `f64 -> bfloat16` kernels: sixteen
    /// `f64` a step, each rounded to odd at `f32` precision (two `vcvtpd2ps` of 8) and
    /// handed to `narrow`, whose 16 two-byte codes are stored. The rounding to odd keeps
    /// the bits above the dropped ones and sets the last kept one when any dropped bit is
    /// set, `(x | (low + DROPPED)) & !DROPPED` in one `vpternlogq` (`low + DROPPED` is below
    /// `2^30`: it adds nothing above bit 29, and reaches bit 29 exactly when `low != 0`);
    /// `vcvtpd2ps` then rounds nothing. The tail is one masked step (zeros in the lanes
    /// masked off, which `narrow` must take as never rare).
    ///
    /// `value` makes of each loaded vector of eight words the `f64` bits and a vector
    /// whose low 29 bits are nonzero where bits were dropped before (OR-ed into `low`, by
    /// the `vpternlogq` that finds `low`): the words and `None` for `f64` sources (a
    /// constant after inlining: their loop is as it was), a conversion for 64-bit integers
    /// ([`int64_to_f64_dropped`]).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW, VL and DQ, and whatever `value` and `narrow` use.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    #[inline]
    pub(in crate::arch) unsafe fn f64_steps_to_odd_f32(
        src: &[u64],
        dst: &mut [u16],
        value: impl Fn(__m512i) -> (__m512i, Option<__m512i>),
        mut narrow: impl FnMut(__m512) -> __m256i,
    ) {
        const STEP: usize = 16;
        const DROPPED: i64 = (1 << 29) - 1;
        // `(a | b) & !c` as `vpternlogq`'s table (a = 0xf0, b = 0xcc, c = 0xaa).
        const OR_AND_NOT: i32 = (0xf0 | 0xcc) & !0xaa & 0xff;
        // `(a | b) & c`.
        const OR_AND: i32 = (0xf0 | 0xcc) & 0xaa;
        let n = src.len().min(dst.len());
        let whole = n - n % STEP;
        // SAFETY: each step reads 16 `u64` at `src + i` and writes 16 `u16` at `dst + i`
        // with `i + 16 <= whole <= n`: in bounds. The tail's loads and stores are masked to
        // its `n - whole < 16` elements (masked-off lanes are neither read nor written and
        // do not fault). Unaligned forms throughout. The features are the caller's
        // guarantee.
        unsafe {
            let dropped = _mm512_set1_epi64(DROPPED);
            let odd = |x: __m512i| {
                let (x, before) = value(x);
                let low = match before {
                    Some(b) => _mm512_ternarylogic_epi64::<OR_AND>(x, b, dropped),
                    None => _mm512_and_si512(x, dropped),
                };
                let sum = _mm512_add_epi64(low, dropped);
                let t = _mm512_ternarylogic_epi64::<OR_AND_NOT>(x, sum, dropped);
                _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(
                    _mm512_castsi512_pd(t),
                )))
            };
            let mut step = |lo: __m512i, hi: __m512i| {
                narrow(_mm512_castpd_ps(_mm512_insertf64x4::<1>(
                    odd(lo),
                    _mm512_castpd512_pd256(odd(hi)),
                )))
            };
            let mut i = 0;
            while i < whole {
                let s = src.as_ptr().add(i);
                let h = step(
                    _mm512_loadu_si512(s.cast()),
                    _mm512_loadu_si512(s.add(8).cast()),
                );
                _mm256_storeu_si256(dst.as_mut_ptr().add(i).cast(), h);
                i += STEP;
            }
            let rest = n - whole;
            if rest > 0 {
                let k: __mmask16 = ((1u32 << rest) - 1) as __mmask16;
                let s = src.as_ptr().add(whole);
                let h = step(
                    _mm512_maskz_loadu_epi64(k as __mmask8, s.cast()),
                    _mm512_maskz_loadu_epi64((k >> 8) as __mmask8, s.add(8).cast()),
                );
                _mm256_mask_storeu_epi16(dst.as_mut_ptr().add(whole).cast(), k, h);
            }
        }
    }

    /// # Safety
    /// The CPU must have AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn from_f64(src: &[u64], dst: &mut [u16], limit: u32) -> bool {
        // The bits below `f32`'s last kept one: 52 - 23.
        const DROPPED: i64 = (1 << 29) - 1;
        let n = src.len().min(dst.len());
        // SAFETY: as in `from_f32`, with 8 `u64` per load pair.
        unsafe {
            let bias = _mm256_set1_epi32((0x8000_0000u32 - limit) as i32);
            let mut rare = _mm256_setzero_si256();
            // Four values rounded to odd at `f32` precision, as exact `f32`s.
            macro_rules! odd {
                ($s:expr) => {{
                    let x = _mm256_loadu_si256($s.cast());
                    let low = _mm256_and_si256(x, _mm256_set1_epi64x(DROPPED));
                    // `low + DROPPED` reaches bit 29 exactly when `low != 0`.
                    let sticky = _mm256_and_si256(
                        _mm256_add_epi64(low, _mm256_set1_epi64x(DROPPED)),
                        _mm256_set1_epi64x(DROPPED + 1),
                    );
                    let t = _mm256_or_si256(_mm256_xor_si256(x, low), sticky);
                    _mm256_cvtpd_ps(_mm256_castsi256_pd(t))
                }};
            }
            macro_rules! step {
                ($s:expr, $d:expr) => {{
                    let lo = odd!($s);
                    let hi = odd!($s.add(4));
                    let f = _mm256_set_m128(hi, lo);
                    let mag = _mm256_and_si256(_mm256_castps_si256(f), _mm256_set1_epi32(i32::MAX));
                    rare = _mm256_or_si256(rare, _mm256_add_epi32(mag, bias));
                    let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
                    _mm_storeu_si128($d.cast(), h);
                }};
            }
            steps!(src, dst, n, step);
            _mm256_movemask_ps(_mm256_castsi256_ps(rare)) == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::F16c;
    use crate::isa::{Isa, with_max_isa};

    /// `F16c::f32_from_f16` and its streamed form at every level (the AVX-512 kernel
    /// included) against `half`'s conversion: every code, at odd lengths and unaligned
    /// starts, and a block with a NaN declined.
    #[test]
    fn f16_to_f32_every_level_matches_half() {
        // Every code but the NaNs, then the NaNs.
        let finite: Vec<u16> = (0..=u16::MAX).filter(|&c| c & 0x7fff <= 0x7c00).collect();
        let want: Vec<u32> = finite
            .iter()
            .map(|&c| half::f16::from_bits(c).to_f32().to_bits())
            .collect();
        let mut buf = vec![0u32; finite.len() + 32];
        let aligned = buf.as_ptr().align_offset(64).min(16);
        for level in Isa::available() {
            with_max_isa(level, || {
                let Some(hw) = F16c::detect() else {
                    return;
                };
                for stream in [false, true] {
                    for (from, start, len) in [
                        (0, aligned, finite.len()),
                        (3, aligned + 5, finite.len() - 40),
                        (7, aligned, 31),
                        (100, aligned + 1, 33),
                        (9, aligned, 1),
                    ] {
                        let (s, out) = (&finite[from..from + len], &mut buf[start..start + len]);
                        let ok = if stream {
                            hw.f32_from_f16_streamed(s, out)
                        } else {
                            hw.f32_from_f16(s, out)
                        };
                        let what = format!("{level:?} stream {stream} from {from} len {len}");
                        assert!(ok, "{what}");
                        assert!(out[..] == want[from..from + len], "{what}");
                        // A NaN anywhere, the tail included, declines the block.
                        for at in [0, len / 2, len - 1] {
                            let mut with_nan = s.to_vec();
                            with_nan[at] = 0xfe01;
                            let ok = hw.f32_from_f16(&with_nan, out);
                            assert!(!ok, "{what}: NaN at {at}");
                        }
                    }
                }
                crate::arch::stream_fence();
            });
        }
    }
}
