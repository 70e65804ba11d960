//! The nearest-even narrowing of `f32` into a smaller float format with the same shift for
//! every element (see the parent module for the general kernel, and `nearest_even_f64` for
//! `f64` sources), in two variants chosen per call:
//!
//! - [`rebias`]: a target with a narrower exponent (float16, the float8/6/4 formats). One
//!   floating-point addition rounds every finite magnitude, normal or subnormal in the
//!   target, so no selection between a normal and a subnormal formula is needed.
//! - [`truncate`]: a target with `f32`'s exponent (bfloat16). The bits are the target's
//!   bits with a longer mantissa: an integer rounding of the whole word (sign included)
//!   gives the code, with no re-biasing, no subnormal case and no clamp.
//!
//! Both process 32 elements per step in fixed-size arrays, which LLVM compiles to whole
//! vectors and narrows with saturating packs (`vpackssdw`/`vpackusdw`, `vpackuswb`) instead
//! of a shuffle per 8 elements; for 8-bit targets `rebias` runs as explicit AVX2 or AVX-512
//! (`arch::f32_to_byte_float`, same arithmetic) when the CPU has it, and bfloat16 by
//! AVX-512 BF16 (`arch::f32_to_bf16`). The rare elements (NaN, ±Inf, overflow without
//! `clamp`) are found by the largest magnitude of the block (`vpmaxud`), compared once at
//! the end.
//!
//! Measured by callgrind (instructions per element; docs/performance.md has the runs):
//! from 3.6-3.8 to 1.6 (bfloat16) and 2.1 (float8/float4).

use crate::number::layout::{BFLOAT16, FloatLayout};
use crate::number::storage::Word;

const SM: u32 = 23;
const MAG_MASK: u32 = 0x7fff_ffff;
const EXP_MASK: u32 = 0x7f80_0000;
const SOURCE_BIAS: i32 = 127;

/// Elements per step: four 8-lane vectors, narrowed together.
const STEP: usize = 32;

/// The constants of a call, derived once from the layout (see [`super::plan`]).
#[derive(Clone, Copy)]
pub(crate) struct Plan {
    /// Difference in mantissa bits.
    shift: u32,
    /// The target's sign bit.
    sign_bit: u32,
    /// `f32` bits of the target's smallest normal value `2^emin`.
    min_normal: u32,
    /// `(SM - m) << SM`: the exponent step from `2^E` to `C = 2^(E + SM - m)`.
    to_magic: u32,
    /// `(151 - m - bias) << m`: see [`rebias`].
    code_offset: u32,
    /// `f32` bits of the value of the clamped code (overflow under `clamp`).
    clamp_source: u32,
    /// A block with a magnitude at or above this holds a rare element.
    limit: u32,
    /// `2^(shift - 1) - 1`.
    half_m1: u32,
    /// Whether the target has `f32`'s exponent field (the [`truncate`] variant).
    same_exponent: bool,
    /// Whether a variant is exact for the layout.
    pub(super) valid: bool,
    /// The same constants for `arch::f32_to_byte_float`.
    bytes: crate::arch::ByteFloatPlan,
}

impl Plan {
    /// The constants of the explicit kernels for 8-bit targets, made with the plan: passed
    /// by reference, they are read from where the plan was stored once per call, not from a
    /// copy stored just before each block's kernel call (whose wide loads then wait for the
    /// failed forwarding of those narrow stores).
    fn bytes(&self) -> &crate::arch::ByteFloatPlan {
        &self.bytes
    }

    /// The plan for `l`; when neither variant is exact for it, `valid` is false (the caller
    /// then uses the general kernel). `l` must satisfy [`super::applies`] for `f32` sources.
    ///
    /// Made once per call (`super::plan`), outside the loop over blocks; its one loop fills
    /// the AVX-512 kernel's tables (at most 32 entries).
    #[inline(always)]
    pub(crate) const fn new(l: FloatLayout, clamp: bool) -> Plan {
        // Any layout (also those of `f64` sources) gives a plan without overflow: one this
        // module cannot serve is replaced by bfloat16's (a layout every step is defined
        // for), and the plan marked invalid.
        let usable = (l.mantissa_bits < SM) & (l.exponent_bits <= 8) & (l.bias >= 1);
        let usable = usable & (l.bias <= SOURCE_BIAS);
        let l = if usable { l } else { BFLOAT16 };
        let m = l.mantissa_bits;
        let shift = SM - m;
        let bias = l.bias;
        let rebias = ((SOURCE_BIAS - bias) as u32) << SM;
        let max_finite = l.max_finite_bits() as u32;
        let clamped = match l.inf_bits() {
            Some(inf) => inf as u32,
            None => max_finite,
        };
        let limit = super::nearest_even_limit(l, false, clamp) as u32;
        let clamp_source = (clamped << shift).wrapping_add(rebias);
        let same_exponent = l.exponent_bits == 8 && bias == SOURCE_BIAS;
        let valid = if same_exponent {
            // Every finite `f32` rounds to at most the Inf code, which is the clamped one
            // only when the target has Inf; the sign lands on the target's sign bit only
            // when -0 exists (no `fnuz`).
            l.inf & l.has_negative_zero()
        } else {
            // `clamped` must be a normal code (its `f32` value is then `clamp_source`), and
            // `C` for the largest exponent reaching the kernel, that of `clamp_source`, must
            // be finite.
            let field = clamp_source >> SM;
            (clamped >> m != 0) & (field >= 1) & (field + shift <= 254)
        };
        let valid = valid & usable;
        let sign_bit = 1 << (l.exponent_bits + m);
        let min_normal = (((1 - bias) + SOURCE_BIAS) as u32) << SM;
        let to_magic = shift << SM;
        let code_offset = ((151 - bias) as u32 - m) << m;
        Plan {
            shift,
            sign_bit,
            min_normal,
            to_magic,
            code_offset,
            clamp_source,
            limit,
            half_m1: (1 << (shift - 1)) - 1,
            same_exponent,
            valid,
            bytes: crate::arch::ByteFloatPlan::new(
                clamp_source,
                min_normal,
                to_magic,
                code_offset,
                shift,
                sign_bit,
            ),
        }
    }
}

/// Convert `src` into `dst` by `plan`; `false` when the block holds a rare element (then
/// `dst` is to be redone by the general kernel). With `NEG_ZERO` false (`fnuz`), a zero
/// result is +0.
#[inline(always)]
pub(super) fn nearest_even<SW: Word, DW: Word, const NEG_ZERO: bool>(
    src: &[SW],
    dst: &mut [DW],
    plan: &Plan,
) -> bool {
    if !plan.same_exponent {
        rebias::<SW, DW, NEG_ZERO>(src, dst, plan)
    } else if NEG_ZERO && DW::BITS >= 16 {
        // `Plan::new` accepts `f32`'s exponent only with -0, hence at least 10 bits.
        truncate(src, dst, plan)
    } else {
        false
    }
}

/// A target with a narrower exponent. For a finite magnitude `|x|` with exponent `E`
/// (raised to the target's `emin` below it, so `E` covers the target's subnormals too),
/// `C = 2^(E + SM - m)` has a source ulp of exactly the target's spacing `2^(E - m)` at
/// `|x|`, and `|x| + C < 2C`: the IEEE sum, rounded to nearest-even by the FPU, is
/// `C + k·2^(E - m)`, `k` the rounded magnitude in target ulps (`2^m <= k <= 2^(m+1)` for a
/// normal result, a carry included; `k <= 2^m` below `2^emin`). `k` is the difference of
/// the bit patterns, and the code is `((E + bias - 1) << m) + k`, which is
/// `bits(t) - bits(C) + (bits(C) >> shift) - ((151 - m - bias) << m)`. Rust never flushes
/// subnormals and uses nearest-even for `+`; no result of the float operations is
/// subnormal (`(t - C) * 2^(bias - 127)` would give the code too, but a multiply with a
/// subnormal result is slow on x86: 1.3x slower on `float4_e2m1fn`, whose values below 1
/// are subnormal there).
///
/// Overflow under `clamp` is handled on the source: the magnitude is limited to the value of
/// the clamped code (rounding is monotonic), which also keeps `C` finite.
#[inline(always)]
fn rebias<SW: Word, DW: Word, const NEG_ZERO: bool>(src: &[SW], dst: &mut [DW], p: &Plan) -> bool {
    // 8-bit targets: the same arithmetic in explicit AVX2.
    if let (Some(s), Some(d)) = (u32::of(SW::words(src)), u8::of_mut(DW::words_mut(dst)))
        && let Some(largest) = crate::arch::f32_to_byte_float::<NEG_ZERO>(s, d, p.bytes())
    {
        return largest < p.limit;
    }
    steps(src, dst, rebias_one::<NEG_ZERO>(p)) < p.limit
}

/// One element of [`rebias`]: its code (sign included) and its magnitude.
#[inline(always)]
fn rebias_one<const NEG_ZERO: bool>(p: &Plan) -> impl Fn(u32) -> (u32, u32) + '_ {
    move |b: u32| {
        let mag = b & MAG_MASK;
        let clamped = mag.min(p.clamp_source);
        let c = (clamped & EXP_MASK).max(p.min_normal) + p.to_magic;
        let t = (f32::from_bits(clamped) + f32::from_bits(c)).to_bits();
        let code = t.wrapping_sub(c) + (c >> p.shift) - p.code_offset;
        let sign = ((b as i32) >> 31) as u32 & p.sign_bit;
        let sign = if !NEG_ZERO && code == 0 { 0 } else { sign };
        (sign | code, mag)
    }
}

/// A target with `f32`'s exponent field (bfloat16): round the whole word to nearest-even at
/// `shift` bits, `(b + 2^(shift-1) - 1 + lowest kept bit) >> shift`. Source subnormals are
/// target subnormals with the same exponent field, a carry out of the mantissa moves into
/// the exponent, the largest finite `f32` rounds at most to the Inf code (the clamped one,
/// see [`Plan::new`]), and no sum reaches the sign bit for a finite magnitude (below
/// `0x7f80_0000 + 2^(shift-1)`): the sign bit lands on the target's.
#[inline(always)]
fn truncate<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], p: &Plan) -> bool {
    // bfloat16 itself: `vcvtne2ps2bf16` where the CPU has AVX-512 BF16, for blocks without
    // a subnormal (see `arch::f32_to_bf16`; it rounds every other element as below).
    if p.shift == 16
        && let (Some(s), Some(d)) = (u32::of(SW::words(src)), u16::of_mut(DW::words_mut(dst)))
        && let Some(largest) = crate::arch::f32_to_bf16(s, d)
    {
        return largest < p.limit;
    }
    steps(src, dst, truncate_one(p)) < p.limit
}

/// One element of [`truncate`]: its code (sign included) and its magnitude.
#[inline(always)]
fn truncate_one(p: &Plan) -> impl Fn(u32) -> (u32, u32) + '_ {
    move |b: u32| {
        let code = b.wrapping_add(p.half_m1 + ((b >> p.shift) & 1)) >> p.shift;
        (code, b & MAG_MASK)
    }
}

/// Run `one` (an element's bits to its code, sign included, and its magnitude) over `src`
/// into `dst`, 32 elements per step; returns the largest magnitude.
#[inline(always)]
fn steps<SW: Word, DW: Word>(src: &[SW], dst: &mut [DW], one: impl Fn(u32) -> (u32, u32)) -> u32 {
    // Codes are below 2^DW::BITS: the clamp is what lets LLVM narrow with saturating packs.
    let word_max = if DW::BITS >= 32 {
        i32::MAX
    } else {
        (1 << DW::BITS) - 1
    };
    let mut largest = [0u32; STEP];
    let mut sc = src.chunks_exact(STEP);
    let mut dc = dst.chunks_exact_mut(STEP);
    for (s, d) in (&mut sc).zip(&mut dc) {
        let mut codes = [0u32; STEP];
        for i in 0..STEP {
            let (code, mag) = one(s[i].to_u64() as u32);
            codes[i] = code;
            largest[i] = largest[i].max(mag);
        }
        for i in 0..STEP {
            d[i] = DW::from_u64((codes[i] as i32).clamp(0, word_max) as u64);
        }
    }
    let mut rest = 0;
    for (s, d) in sc.remainder().iter().zip(dc.into_remainder()) {
        let (code, mag) = one(s.to_u64() as u32);
        *d = DW::from_u64(code as u64);
        rest = rest.max(mag);
    }
    largest.into_iter().fold(rest, u32::max)
}

#[cfg(test)]
mod tests {
    //! The explicit AVX2 kernel of the 8-bit targets against the portable one it stands in
    //! for (`tests/it/narrow_f32_sweep.rs` checks what the crate runs, on an AVX2 machine
    //! the former, against the exact reference): same codes, same largest magnitude.
    use super::*;
    use crate::dtype::{DType, Kind};
    use crate::dtype::{
        Float4E2M1Fn, Float6E2M3Fn, Float6E3M2Fn, Float8E3M4, Float8E4M3, Float8E4M3B11Fnuz,
        Float8E4M3Fnuz, Float8E5M2, Float8E5M2Fnuz,
    };

    /// Every `f32` exponent field, every value of the kept bits, the dropped bits at 0, 1,
    /// around half and all ones, both signs; a length that leaves a partial step.
    fn patterns(m: u32) -> Vec<u32> {
        let dropped = SM - m;
        let half = 1u32 << (dropped - 1);
        let mut out = Vec::new();
        for exponent in 0..=255u32 {
            for kept in 0..1u32 << m {
                for low in [0, 1, half - 1, half, half + 1, (half << 1) - 1] {
                    let bits = (exponent << SM) | (kept << dropped) | low;
                    out.extend([bits, bits | 1 << 31]);
                }
            }
        }
        out.truncate(out.len() - 7);
        out
    }

    fn check<const NEG_ZERO: bool>(l: FloatLayout) {
        for clamp in [false, true] {
            let p = Plan::new(l, clamp);
            assert!(p.valid && !p.same_exponent, "{l:?}");
            let all = patterns(l.mantissa_bits);
            // The whole sweep (a partial last step), short lengths around the steps of 32
            // and 64, unaligned starts of source and target.
            let lens = [all.len() - 5, 0, 1, 15, 31, 32, 63, 64, 65, 127, 200];
            for (len, (src_offset, dst_offset)) in lens
                .into_iter()
                .flat_map(|n| [(0, 0), (1, 0), (0, 1), (3, 5)].map(|o| (n, o)))
            {
                // Rotated so that the short lengths see other patterns than the first few.
                let src = &all[src_offset + (len * 977) % (all.len() - len - 3)..][..len];
                let mut fast = vec![0u8; len + dst_offset];
                let fast = &mut fast[dst_offset..];
                let mut portable = vec![0u8; len];
                let Some(largest) =
                    crate::arch::f32_to_byte_float::<NEG_ZERO>(src, fast, p.bytes())
                else {
                    return; // no AVX2 here: nothing to compare
                };
                assert_eq!(
                    largest,
                    steps(src, &mut portable, rebias_one::<NEG_ZERO>(&p)),
                    "{l:?} len {len}"
                );
                for (i, (a, b)) in fast.iter().zip(&portable).enumerate() {
                    assert_eq!(a, b, "{l:?} clamp {clamp} len {len}: f32 {:#010x}", src[i]);
                }
            }
        }
    }

    fn layout<T: DType>() -> FloatLayout {
        let Kind::Float(l) = T::KIND else {
            unreachable!("float types only")
        };
        l
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        }
    }

    /// `f32` patterns for bfloat16 without a subnormal: every exponent field with random
    /// mantissas, the ties (even and odd kept bit), ±0, ±Inf, NaNs (quiet, signaling,
    /// payloads), the overflow edge, both signs; shuffled so that blocks mix them.
    fn bf16_patterns(rng: &mut Rng) -> Vec<u32> {
        let mut out = Vec::new();
        for exponent in 1..=255u32 {
            for _ in 0..48 {
                out.push(exponent << SM | (rng.next() & 0x7f_ffff));
            }
            for low in [0, 1, 0x7fff, 0x8000, 0x8001, 0xffff] {
                for kept in [0, 1, 0x7e, 0x7f] {
                    out.push(exponent << SM | kept << 16 | low);
                }
            }
        }
        out.extend([
            0,
            0x7f80_0000,
            0x7fc0_0000,
            0x7f80_0001,
            0x7fbf_ffff,
            0x7fff_ffff,
        ]);
        out.extend([
            0x7f7f_7fff,
            0x7f7f_8000,
            0x7f7f_8001,
            0x7f7f_ffff,
            0x7f7e_8000,
        ]);
        let signed: Vec<u32> = out.iter().map(|b| b | 1 << 31).collect();
        out.extend(signed);
        for i in (1..out.len()).rev() {
            out.swap(i, rng.next() as usize % (i + 1));
        }
        out
    }

    /// The AVX-512 BF16 kernel on `src` against the portable `truncate` it stands in for:
    /// the same codes for every element but NaN (the caller redoes a block with one), the
    /// same largest magnitude; `None` exactly when the level has BF16 and `src` a subnormal.
    fn check_bf16(src: &[u32], p: Plan, dst_offset: usize) {
        let mut fast = vec![0u16; src.len() + dst_offset];
        let fast = &mut fast[dst_offset..];
        let mut portable = vec![0u16; src.len()];
        let largest = steps(src, &mut portable, truncate_one(&p));
        let has_subnormal = src.iter().any(|b| (1..0x80_0000).contains(&(b & MAG_MASK)));
        match crate::arch::f32_to_bf16(src, fast) {
            None => assert!(!crate::arch::has_avx512_bf16() || has_subnormal),
            Some(got) => {
                assert!(crate::arch::has_avx512_bf16() && !has_subnormal);
                assert_eq!(got, largest);
                for (i, (a, b)) in fast.iter().zip(&portable).enumerate() {
                    if src[i] & MAG_MASK <= 0x7f80_0000 {
                        assert_eq!(a, b, "f32 {:#010x}", src[i]);
                    }
                }
            }
        }
    }

    #[test]
    fn bfloat16_avx512_kernel_equals_portable_at_every_level() {
        let p = Plan::new(layout::<half::bf16>(), false);
        assert!(p.valid && p.same_exponent && p.shift == 16);
        let mut rng = Rng(0xbf16);
        let all = bf16_patterns(&mut rng);
        let subnormals = [
            1,
            0x8000,
            0xffff,
            0x1_8000,
            0x7f_ffff,
            0x8000_0001,
            0x807f_ffff,
        ];
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, || {
                // Lengths around the step of 32, unaligned starts of source and target.
                for len in [0, 1, 15, 16, 31, 32, 33, 63, 100, 1000, all.len() - 3] {
                    for (src_offset, dst_offset) in [(0, 0), (1, 0), (0, 1), (3, 5)] {
                        check_bf16(&all[src_offset..src_offset + len], p, dst_offset);
                    }
                }
                // One subnormal anywhere in a block: not done, whatever its position.
                for (k, &sub) in subnormals.iter().enumerate() {
                    let mut src = all[..1000].to_vec();
                    src[(k * 151) % 1000] = sub;
                    check_bf16(&src, p, 0);
                    check_bf16(&src[(k * 151) % 1000..], p, 0);
                }
            });
        }
    }

    /// Every `f32` bit pattern, in blocks of 2^16 (slow in a debug build: run with
    /// `cargo test --release --lib bfloat16_every_f32 -- --ignored`).
    #[test]
    #[ignore]
    fn bfloat16_every_f32_avx512_kernel_equals_portable() {
        let p = Plan::new(layout::<half::bf16>(), false);
        let mut src = vec![0u32; 1 << 16];
        for high in 0..1u32 << 16 {
            for (low, b) in src.iter_mut().enumerate() {
                *b = high << 16 | low as u32;
            }
            check_bf16(&src, p, 0);
            // The same block with its subnormals at zero, so that the kernel converts it.
            for b in &mut src {
                if *b & EXP_MASK == 0 {
                    *b &= !0x7f_ffff;
                }
            }
            check_bf16(&src, p, 1);
        }
    }

    #[test]
    fn byte_formats_avx2_kernel_equals_portable() {
        for level in crate::isa::Isa::available() {
            crate::isa::with_max_isa(level, byte_formats);
        }
    }

    fn byte_formats() {
        check::<true>(layout::<Float4E2M1Fn>());
        check::<true>(layout::<Float6E2M3Fn>());
        check::<true>(layout::<Float6E3M2Fn>());
        check::<true>(layout::<Float8E3M4>());
        check::<true>(layout::<Float8E4M3>());
        check::<false>(layout::<Float8E4M3B11Fnuz>());
        check::<false>(layout::<Float8E4M3Fnuz>());
        check::<true>(layout::<Float8E5M2>());
        check::<false>(layout::<Float8E5M2Fnuz>());
    }
}
