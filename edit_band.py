p='src/arch/pos_popcount.rs'
s=open(p).read()
def rep(a,b,cnt=1):
    global s
    n=s.count(a)
    assert n==cnt,(a,n)
    s=s.replace(a,b)
rep('''        let run = by_prep!(band, prep);''','''        // One build per width, the tests switched at run time (`Consts`): the band loop
        // waits on its 33 streams from memory, and ran as fast so as with the tests as
        // constants, in a third of the code.
        let run = if prep.bits == 32 {
            kernels::band::<kernels::L32>
        } else {
            kernels::band::<kernels::L64>
        };''')
rep('''    pub(super) unsafe fn band<L: Lane, const NAN: bool, const MASKED: bool>(''','''    pub(super) unsafe fn band<L: Lane>(''')
rep('''                let (v, keep) = consts.prepare::<L, NAN, MASKED>(x, lanes);''','''                let (v, keep) = consts.prepare::<L, true, true, true>(x, lanes);''')
rep('''    /// The kernel of `pos_popcount_prepared_band_avx512` (`NAN`, `MASKED` as in
    /// [`fused`]); row `r0` prepared here when `fresh`, else read from `row`.''','''    /// The kernel of `pos_popcount_prepared_band_avx512`, both tests switched at run time
    /// (`Consts::prepare` with `SWITCHED`); row `r0` prepared here when `fresh`, else read
    /// from `row`.''')
rep('''consts.prepare::<L, NAN, MASKED>(x, L::FULL)''','''consts.prepare::<L, NAN, MASKED, false>(x, L::FULL)''')
rep('''        nan_limit: __m512i,
    }''','''        nan_limit: __m512i,
        /// Every lane when no code is masked, else none: or-ed with the masked-code test
        /// where it is switched at run time.
        no_mask: u32,
    }''')
rep('''                    nan_limit: L::splat(if prep.nan { L::INFINITY } else { u64::MAX }),
                }''','''                    nan_limit: L::splat(if prep.nan { L::INFINITY } else { u64::MAX }),
                    no_mask: if prep.masked.is_some() { 0 } else { L::FULL },
                }''')
rep('''        /// (those out of `lanes` too). The NaN test when `NAN` (switched by `nan_limit` when
        /// `MASKED` too), the masked-code test when `MASKED`.''','''        /// (those out of `lanes` too). The NaN test when `NAN` (switched by `nan_limit` when
        /// `MASKED` too), the masked-code test when `MASKED` (switched by `no_mask` when
        /// `SWITCHED`).''')
rep('''        fn prepare<L: Lane, const NAN: bool, const MASKED: bool>(''','''        fn prepare<L: Lane, const NAN: bool, const MASKED: bool, const SWITCHED: bool>(''')
rep('''                if MASKED {
                    keep &= L::not_equal(x, self.masked);
                }
                let counted = keep & lanes;''','''                if MASKED {
                    let off = if SWITCHED { self.no_mask } else { 0 };
                    keep &= L::not_equal(x, self.masked) | off;
                }
                let counted = keep & lanes;''')
open(p,'w').write(s)
print("ok")
