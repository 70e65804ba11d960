//! [`vectorized_wide`]: [`super::vectorized`] with an AVX-512 level above AVX2, for the few
//! kernels whose inner loops LLVM builds much better with AVX-512: three-input logic in one
//! `vpternlog` (the carry-save adders of `choose`'s positional popcount), compares into
//! mask registers, `vpabs` on 64-bit lanes, and 512-bit vectors for the loops over slices.
//! A kernel that asks for it is compiled three times (portable, AVX2, AVX-512), so only the
//! hottest ones do.

/// Run `f`, compiled with AVX-512 (the [`super::level::Isa::Avx512`] set) when the level
/// allows it, else with AVX2 when that is allowed, else for the baseline.
///
/// As for [`super::vectorized`], `f` must be an `#[inline(always)]` closure calling
/// `#[inline(always)]` code, so that it is compiled inside the twin.
#[inline(always)]
pub(crate) fn vectorized_wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if super::has_avx512() {
            // SAFETY: `avx512` requires the features of `Isa::Avx512`, which the CPU has:
            // `has_avx512` checked them (and the cap allows them).
            return unsafe { avx512(f) };
        }
    }
    super::vectorized(f)
}

/// `f()`, with AVX-512 code generation for everything inlined into it.
///
/// # Safety
/// The CPU must support AVX2 and the AVX-512 subsets `F`, `BW`, `VL`, `VPOPCNTDQ`
/// (`Isa::Avx512` implies them).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vpopcntdq")]
pub(super) unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}
