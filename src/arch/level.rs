//! Which instruction-set level the kernels may use: what the CPU has, capped by the user.
//!
//! Every kernel with arch twins asks [`isa`] once per call (never per element) and runs the
//! widest twin at or below the answer. The twins give the same result bit for bit; the cap
//! exists so that one machine can test every path against the portable one, and so that a
//! user can rule out a level (a CPU that down-clocks under AVX-512, say).
//!
//! The cap comes from, in order:
//! - [`with_max_isa`], for the calling thread while a closure runs (tests use it to run
//!   each level in turn; work that rayon hands to its pool threads does not inherit it);
//! - the environment variable `ZQUANT_MAX_ISA` (`portable`, `avx2` or `avx512`), read once
//!   per process (CI runs the suite under each value);
//! - otherwise no cap.

use std::cell::Cell;
use std::sync::OnceLock;

/// An instruction-set level, ordered: `Portable < Avx2 < Avx512`.
///
/// ```
/// use zquant::isa::{Isa, isa, with_max_isa};
/// assert!(Isa::Portable < Isa::Avx2 && Isa::Avx2 < Isa::Avx512);
/// // Capped at the portable level, every kernel runs its reference path.
/// assert_eq!(with_max_isa(Isa::Portable, isa), Isa::Portable);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust compiled for the target's baseline (SSE2 on x86-64).
    Portable,
    /// AVX2, with F16C and FMA (every AVX2 CPU has them), and BMI2.
    Avx2,
    /// AVX-512 as Ice Lake and Zen 4 have it: `F`, `BW`, `VL`, `DQ`, `VBMI`, `VBMI2`,
    /// `BITALG` and `VPOPCNTDQ`, on top of [`Isa::Avx2`]. (`BF16` is checked by the kernel
    /// that uses it.) `DQ` (every Intel AVX-512 server CPU since Skylake-SP has it, and
    /// Zen 4) gives the 64-bit integer <-> `f64` conversions.
    Avx512,
}

impl Isa {
    /// The name `ZQUANT_MAX_ISA` takes: `portable`, `avx2` or `avx512`.
    ///
    /// ```
    /// assert_eq!(zquant::isa::Isa::Avx512.name(), "avx512");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The level named `name` (as [`Isa::name`] gives it, any case), if any.
    ///
    /// ```
    /// use zquant::isa::Isa;
    /// assert_eq!(Isa::from_name("AVX2"), Some(Isa::Avx2));
    /// assert_eq!(Isa::from_name("sse9"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Isa> {
        [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Every level, lowest first, that this CPU has: the levels a test should run.
    ///
    /// ```
    /// let levels = zquant::isa::Isa::available();
    /// assert_eq!(levels[0], zquant::isa::Isa::Portable);
    /// ```
    pub fn available() -> Vec<Isa> {
        let top = cpu();
        [Isa::Portable, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .filter(|&l| l <= top)
            .collect()
    }
}

/// The widest level this CPU supports, ignoring any cap.
fn cpu() -> Isa {
    static CPU: OnceLock<Isa> = OnceLock::new();
    *CPU.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use std::is_x86_feature_detected as has;
            let avx2 = has!("avx2") && has!("fma") && has!("f16c") && has!("bmi2");
            let avx512 = avx2
                && has!("avx512f")
                && has!("avx512bw")
                && has!("avx512vl")
                && has!("avx512dq")
                && has!("avx512vbmi")
                && has!("avx512vbmi2")
                && has!("avx512bitalg")
                && has!("avx512vpopcntdq");
            if avx512 {
                return Isa::Avx512;
            }
            if avx2 {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    })
}

/// The cap `ZQUANT_MAX_ISA` sets for the process (none when unset or not a level's name).
fn env_cap() -> Isa {
    static CAP: OnceLock<Isa> = OnceLock::new();
    *CAP.get_or_init(|| {
        std::env::var("ZQUANT_MAX_ISA")
            .ok()
            .and_then(|v| Isa::from_name(&v))
            .unwrap_or(Isa::Avx512)
    })
}

thread_local! {
    static THREAD_CAP: Cell<Option<Isa>> = const { Cell::new(None) };
}

/// The level kernels run at now, on this thread: the CPU's, capped by [`with_max_isa`] or
/// else by `ZQUANT_MAX_ISA`.
///
/// ```
/// let level = zquant::isa::isa();
/// assert!(zquant::isa::Isa::available().contains(&level));
/// ```
#[inline]
pub fn isa() -> Isa {
    let cap = THREAD_CAP.with(Cell::get).unwrap_or_else(env_cap);
    cpu().min(cap)
}

/// Run `f` with the kernels on this thread capped at `cap` (the CPU's level still bounds
/// it), then restore the previous cap, also when `f` panics.
///
/// ```
/// use zquant::isa::{Isa, with_max_isa};
/// use zquant::{CastOptions, cast_slice};
/// let src = [1.5f32, 1e-6, 3.0e4];
/// let run = |cap| {
///     let mut dst = [half::f16::ZERO; 3];
///     with_max_isa(cap, || cast_slice(&src, &mut dst, CastOptions::default())).unwrap();
///     dst.map(half::f16::to_bits)
/// };
/// assert_eq!(run(Isa::Portable), run(Isa::Avx512));
/// ```
pub fn with_max_isa<R>(cap: Isa, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Isa>);
    impl Drop for Restore {
        fn drop(&mut self) {
            THREAD_CAP.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(THREAD_CAP.with(|c| c.replace(Some(cap))));
    f()
}
