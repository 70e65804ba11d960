//! Static iteration over the built-in real types, derived from zquant's one data-type table
//! (`zquant::__zquant_dtype_table!`, kinds `int` and `float`), so that a type added there is
//! visited here too.

use zquant::Real;

/// Something done once per type.
pub trait Visit {
    /// Called with each type in turn.
    fn visit<T: Real>(&mut self);
}

/// `$v.visit::<T>()` for each `int` and `float` row of the table whose `T::BITS` is at most
/// 16 (`small`) or above 16 (`wide`). The width test is an inline `const`, so the calls it
/// rules out are not instantiated.
macro_rules! visit_reals {
    (($v:ident, $width:ident) $($kind:ident $variant:ident = $t:ty,)*) => {
        $( visit_reals!(@row $v, $width, $kind $t); )*
    };
    (@row $v:ident, $width:ident, int $t:ty) => {
        visit_reals!(@width $v, $width, $t);
    };
    (@row $v:ident, $width:ident, float $t:ty) => {
        visit_reals!(@width $v, $width, $t);
    };
    (@row $v:ident, $width:ident, complex $t:ty) => {};
    (@row $v:ident, $width:ident, time $t:ty) => {};
    (@width $v:ident, small, $t:ty) => {
        if const { <$t as Real>::BITS <= 16 } {
            $v.visit::<$t>();
        }
    };
    (@width $v:ident, wide, $t:ty) => {
        if const { <$t as Real>::BITS > 16 } {
            $v.visit::<$t>();
        }
    };
}

/// The built-in real types of at most 16 bits (20 types), in table order.
pub fn for_each_small<V: Visit>(v: &mut V) {
    zquant::__zquant_dtype_table!(visit_reals(v, small));
}

/// All 26 built-in real types: the small ones, then the wider ones, each in table order.
pub fn for_each_real<V: Visit>(v: &mut V) {
    for_each_small(v);
    zquant::__zquant_dtype_table!(visit_reals(v, wide));
}
