//! The one architecture-specific layer: run a kernel compiled for a wider instruction set
//! when the CPU has it.
//!
//! The kernels are plain, portable Rust over slices. Compiled for the x86-64 baseline (SSE2)
//! several of them cannot vectorize: SSE2 has no rounding instruction (`round_ties_even`,
//! `floor`, … become calls) and no per-lane variable shift. [`vectorized`] runs the same
//! code inside a function compiled with AVX2 enabled, where LLVM has `vroundpd` and
//! `vpsrlvd`/`vpsrlvq`, when the CPU supports it; elsewhere it runs the portable build. The
//! results are identical: enabling target features never changes the value of an integer
//! or IEEE operation (Rust does not contract `a * b + c` into an FMA), only which
//! instructions compute it.

/// Run `f`, compiled with AVX2 when this CPU has it.
///
/// `f` must be a closure marked `#[inline(always)]` (`vectorized(#[inline(always)] || …)`)
/// calling `#[inline(always)]` kernels: code is compiled with AVX2 only once it is inlined
/// into [`avx2`], and LLVM declines to inline a large closure on its own — it then stays a
/// baseline (SSE2) function called from the AVX2 one, and the twin gains nothing.
#[inline(always)]
pub(crate) fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: `avx2` requires only the AVX2 instruction set (and what it implies),
            // which the CPU has: checked just above.
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// `f()`, with AVX2 code generation for everything inlined into it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
