//! Exact decimal-to-binary conversion for JSON numbers.
//!
//! The core spec says a JSON number "will be rounded to the nearest representable value using
//! the 'round half to even' rule". Parsing the decimal to `f64` first and then rounding to
//! the target would round twice; instead the decimal text is turned into an [`Exact`] value
//! with 64 significant bits plus a sticky bit, which the rounding core then rounds once.

use crate::number::exact::Exact;

/// Largest decimal exponent magnitude handled exactly; beyond it every value over- or
/// underflows every supported type, and is replaced by a value that does the same.
const MAX_DEC_EXP: i64 = 400;

/// Significant digits kept exactly (see `split`).
const MAX_DIGITS: usize = 1300;

/// A JSON number's syntax, split into its parts.
struct Parts {
    neg: bool,
    /// Significant decimal digits (leading zeros stripped).
    digits: Vec<u8>,
    /// Value = digits × 10^exp10.
    exp10: i64,
}

fn split(s: &str) -> Option<Parts> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = b.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    let mut digits = Vec::new();
    let mut exp10: i64 = 0;
    let mut seen = false;
    while i < b.len() && b[i].is_ascii_digit() {
        digits.push(b[i] - b'0');
        seen = true;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let mut frac = false;
        while i < b.len() && b[i].is_ascii_digit() {
            digits.push(b[i] - b'0');
            exp10 -= 1;
            frac = true;
            i += 1;
        }
        if !frac {
            return None;
        }
    }
    if !seen {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let mut eneg = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            eneg = b[i] == b'-';
            i += 1;
        }
        let mut e: i64 = 0;
        let mut any = false;
        while i < b.len() && b[i].is_ascii_digit() {
            e = (e * 10 + (b[i] - b'0') as i64).min(1 << 40);
            any = true;
            i += 1;
        }
        if !any {
            return None;
        }
        exp10 += if eneg { -e } else { e };
    }
    if i != b.len() {
        return None;
    }
    let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    digits.drain(..first);
    // Trailing zeros move into the exponent.
    while digits.last() == Some(&0) {
        digits.pop();
        exp10 += 1;
    }
    // Only the first MAX_DIGITS digits matter, and whether any digit after them is
    // non-zero: every rounding boundary (a value of a supported format, or a midpoint of
    // two) is a dyadic `m × 2^e` with `m < 2^66` and `|e| < 1200`, which has fewer
    // significant decimal digits. Dropped digits become a trailing `1` (a little more than
    // the kept prefix), which lies on the same side of every boundary as the full number.
    // So the cost is linear in the text, not quadratic (a 1M-digit number took 134 s).
    if digits.len() > MAX_DIGITS {
        let sticky = digits[MAX_DIGITS..].iter().any(|&d| d != 0);
        exp10 = exp10.saturating_add((digits.len() - MAX_DIGITS) as i64);
        digits.truncate(MAX_DIGITS);
        if sticky {
            digits.push(1);
            exp10 -= 1;
        }
    }
    Some(Parts { neg, digits, exp10 })
}

/// Little-endian base-2^32 natural number, just big enough for this parser.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Nat(Vec<u32>);

impl Nat {
    fn from_digits(d: &[u8]) -> Nat {
        let mut n = Nat(vec![]);
        for &x in d {
            n.mul_small_add(10, x as u32);
        }
        n
    }
    fn mul_small_add(&mut self, m: u32, a: u32) {
        let mut carry = a as u64;
        for limb in self.0.iter_mut() {
            let v = *limb as u64 * m as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }
    fn pow10(&mut self, mut k: u64) {
        while k >= 9 {
            self.mul_small_add(1_000_000_000, 0);
            k -= 9;
        }
        if k > 0 {
            self.mul_small_add(10u32.pow(k as u32), 0);
        }
    }
    fn shl(&mut self, k: u64) {
        let words = (k / 32) as usize;
        let bits = (k % 32) as u32;
        if bits != 0 {
            let mut carry = 0u32;
            for limb in self.0.iter_mut() {
                let v = (*limb as u64) << bits | carry as u64;
                *limb = v as u32;
                carry = (v >> 32) as u32;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        if words > 0 {
            let mut v = vec![0u32; words];
            v.append(&mut self.0);
            self.0 = v;
        }
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn bit_len(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + (32 - top.leading_zeros()) as u64,
        }
    }
    fn bit(&self, i: u64) -> bool {
        let w = (i / 32) as usize;
        w < self.0.len() && (self.0[w] >> (i % 32)) & 1 == 1
    }
    /// Bits `[lo, lo + 64)` as a u64 and whether any bit below `lo` is set.
    fn window(&self, lo: u64) -> (u64, bool) {
        let mut v = 0u64;
        for i in 0..64 {
            if self.bit(lo + i) {
                v |= 1 << i;
            }
        }
        let sticky = (0..lo).any(|i| self.bit(i));
        (v, sticky)
    }
    fn cmp(&self, o: &Nat) -> std::cmp::Ordering {
        let (a, b) = (self.bit_len(), o.bit_len());
        if a != b {
            return a.cmp(&b);
        }
        for i in (0..self.0.len().max(o.0.len())).rev() {
            let x = self.0.get(i).copied().unwrap_or(0);
            let y = o.0.get(i).copied().unwrap_or(0);
            if x != y {
                return x.cmp(&y);
            }
        }
        std::cmp::Ordering::Equal
    }
    fn sub_assign(&mut self, o: &Nat) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let v = self.0[i] as i64 - o.0.get(i).copied().unwrap_or(0) as i64 - borrow;
            borrow = (v < 0) as i64;
            self.0[i] = v.rem_euclid(1 << 32) as u32;
        }
        self.trim();
    }
}

/// Whether this build's `serde_json` keeps a number's decimal text (its `arbitrary_precision`
/// feature, which zquant does not enable but another crate in the build may).
pub(crate) fn numbers_keep_text() -> bool {
    static KEEPS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPS.get_or_init(|| {
        const PROBE: &str = "0.30000000000000000001";
        serde_json::from_str::<serde_json::Number>(PROBE).is_ok_and(|n| n.to_string() == PROBE)
    })
}

/// The exact value of a JSON number as `serde_json` holds it.
///
/// With `arbitrary_precision` (enabled by any crate of the build) the number keeps its
/// decimal text, which is rounded once. Without it, an integer within `i64`/`u64` is exact
/// and any other number is the `f64` serde_json parsed it to: its exact binary value is used
/// (not its shortest decimal), which is the written value whenever that value is a double,
/// as in every float metadata written from a double (zarr-python, zarrs, numcodecs).
pub fn number_to_exact(n: &serde_json::Number) -> Option<Exact> {
    if n.is_i64() || n.is_u64() || numbers_keep_text() {
        return parse_decimal(&n.to_string());
    }
    let f = n.as_f64()?;
    Some(crate::dtype::Real::to_exact(f))
}

/// Parse a JSON number's text to its exact value (64 significant bits and a sticky bit).
///
/// Returns `None` when the text is not a JSON number.
pub fn parse_decimal(s: &str) -> Option<Exact> {
    let p = split(s)?;
    if p.digits.is_empty() {
        return Some(Exact::zero(p.neg));
    }
    // Magnitudes far outside every format: replace by a value that behaves the same.
    let magnitude10 = p.exp10 + p.digits.len() as i64;
    if magnitude10 > MAX_DEC_EXP {
        return Some(Exact::finite(p.neg, 1, 4000));
    }
    if magnitude10 < -MAX_DEC_EXP {
        let mut x = Exact::finite(p.neg, 1, -4000);
        x.sticky = true;
        return Some(x);
    }
    let mut num = Nat::from_digits(&p.digits);
    if p.exp10 >= 0 {
        num.pow10(p.exp10 as u64);
        let len = num.bit_len();
        if len <= 64 {
            let (v, _) = num.window(0);
            return Some(Exact::finite(p.neg, v, 0));
        }
        let lo = len - 64;
        let (v, sticky) = num.window(lo);
        let mut x = Exact::finite(p.neg, v, lo as i32);
        x.sticky = sticky;
        return Some(x);
    }
    // num / 10^k: scale num so the quotient has at least 66 bits, then long-divide.
    let mut den = Nat(vec![1]);
    den.pow10(p.exp10.unsigned_abs());
    let shift = (den.bit_len() + 66).saturating_sub(num.bit_len());
    num.shl(shift);
    // Binary long division, quotient bit by bit from the top.
    let qlen = num.bit_len() - den.bit_len() + 1;
    let mut rem = Nat(vec![]);
    let mut q: u128 = 0;
    // Once `q` holds 128 significant bits, further quotient bits only feed the sticky bit
    // (a long integer part can make the quotient far wider than 128 bits).
    let mut dropped_ones = false;
    let mut dropped: i64 = 0;
    let total = num.bit_len();
    for i in (0..total).rev() {
        rem.shl(1);
        if num.bit(i) {
            if rem.0.is_empty() {
                rem.0.push(1);
            } else {
                rem.0[0] |= 1;
            }
        }
        let bit = rem.cmp(&den) != std::cmp::Ordering::Less;
        if bit {
            rem.sub_assign(&den);
        }
        if i < qlen {
            if q >> 127 != 0 {
                dropped_ones |= bit;
                dropped += 1;
            } else {
                q = (q << 1) | bit as u128;
            }
        }
    }
    let sticky = !rem.0.is_empty() || dropped_ones;
    // Keep the top 64 bits of q.
    let qbits = 128 - q.leading_zeros() as i64;
    let drop = (qbits - 64).max(0) as u32;
    let low_sticky = drop > 0 && q & ((1u128 << drop) - 1) != 0;
    let mant = (q >> drop) as u64;
    let exp = drop as i64 + dropped - shift as i64;
    let mut x = Exact::finite(p.neg, mant, exp as i32);
    x.sticky = sticky || low_sticky;
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_of(s: &str) -> f64 {
        parse_decimal(s).unwrap().to_f64()
    }

    #[test]
    fn parses_like_correctly_rounded_f64() {
        for s in [
            "0",
            "-0",
            "1",
            "-1",
            "0.1",
            "1e-5",
            "123.456",
            "1.7976931348623157e308",
            "5e-324",
            "2.2250738585072014e-308",
            "9007199254740993",
            "0.3",
            "65519",
            "65520.0",
            "1E+2",
            "-7.5e-1",
            "18446744073709551615",
            "123456789012345678901234567890",
            "4.9406564584124654e-324",
            // A fraction with a long integer part: the quotient is wider than 128 bits.
            "123456789012345678901234567890123456789012345678901234567890.5",
            "1234567890123456789012345678901234567890.5",
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.0",
        ] {
            let want: f64 = s.parse().unwrap();
            let got = f64_of(s);
            assert_eq!(got.to_bits(), want.to_bits(), "{s}");
        }
    }

    #[test]
    fn rejects_non_json_numbers() {
        for s in ["", "-", "1.", ".5", "1e", "+1", "1x", "0x10", "NaN"] {
            assert!(parse_decimal(s).is_none(), "{s}");
        }
    }
}
