p='src/arch/words.rs'
s=open(p).read()
def rep(a,b,cnt=1):
    global s
    n=s.count(a)
    assert n==cnt,(a,n)
    s=s.replace(a,b)
rep('''    let (ptr, len, cap) = whole_elements(v, T::WORDS, None)?;''','''    let (ptr, len, cap) = whole_elements::<T::Word>(Word::into_buf(v), T::WORDS, None)?;''')
rep('''/// `v`'s allocation as `(pointer, elements, capacity in elements)` of `k` words each (at
/// least one), no longer owned by a `Vec` (the caller rebuilds one of the element type);
/// `None` (dropping `v`) when `v`'s length or capacity is not whole elements, or when
/// `shape` is given and the elements are not exactly a C-order array of it
/// ([`c_shape_holds`]). Compiled once per word width: the element types' functions keep
/// only the rebuilding of their `Vec` and array.
fn whole_elements<W>(
    v: Vec<W>,
    k: usize,
    shape: Option<&[usize]>,
) -> Option<(*mut W, usize, usize)> {
    let k = k.max(1);''','''/// The allocation of `words` (words of `W`) as `(pointer, elements, capacity in
/// elements)` of `k` words each (at least one), no longer owned by a `Vec` (the caller
/// rebuilds one of the element type); `None` (dropping `words`) when they are words of
/// another width, their length or capacity is not whole elements, or `shape` is given and
/// the elements are not exactly a C-order array of it ([`c_shape_holds`]). Compiled once
/// per word width: the element types' functions keep only the rebuilding of their `Vec`
/// and array.
fn whole_elements<W: Word>(
    words: WordBuf,
    k: usize,
    shape: Option<&[usize]>,
) -> Option<(*mut W, usize, usize)> {
    let v = W::from_buf(words).ok()?;
    let k = k.max(1);''')
rep('''/// The C-order array of `shape` whose elements' storage words are `v`, moved without a
/// copy; `None` when [`vec_from_words`] declines or `v` does not hold exactly the shape's
/// elements.''','''/// The C-order array of `shape` whose elements' storage words are `words`, moved without
/// a copy; `None` when they are words of another width than `T`'s, `T`'s alignment is not
/// its word's, or they do not hold exactly the shape's elements.''')
rep('''pub(crate) fn array_from_words<T: Plain>(shape: IxDyn, v: Vec<T::Word>) -> Option<ArrayD<T>> {''','''pub(crate) fn array_from_words<T: Plain>(shape: IxDyn, words: WordBuf) -> Option<ArrayD<T>> {''')
rep('''    let (ptr, len, cap) = whole_elements(v, T::WORDS, Some(shape.slice()))?;''','''    let (ptr, len, cap) = whole_elements::<T::Word>(words, T::WORDS, Some(shape.slice()))?;''')
rep('''use crate::number::storage::Plain;''','''use crate::number::storage::{Plain, Word, WordBuf};''')
rep('''array_from_words::<f64>(IxDyn(shape), words)''','''array_from_words::<f64>(IxDyn(shape), WordBuf::U64(words))''')
rep('''(IxDyn(&[2]), vec![0u32; 4])''','''(IxDyn(&[2]), WordBuf::U32(vec![0u32; 4]))''')
rep('''(IxDyn(&[2]), vec![0u32; 3])''','''(IxDyn(&[2]), WordBuf::U32(vec![0u32; 3]))''')
open(p,'w').write(s)
p='src/dispatch/array.rs'
s=open(p).read()
rep('''/// The typed array, kept small: it is compiled once per data type.
fn typed<T: Element>(shape: IxDyn, words: WordBuf) -> Option<DynArray> {
    let v = <T::Word as Word>::from_buf(words).ok()?;
    crate::arch::array_from_words::<T>(shape, v).map(T::into_dyn)
}''','''/// The typed array, kept small: it is compiled once per data type (the words' checks once
/// per width, in `arch::array_from_words`).
fn typed<T: Element>(shape: IxDyn, words: WordBuf) -> Option<DynArray> {
    crate::arch::array_from_words::<T>(shape, words).map(T::into_dyn)
}''')
open(p,'w').write(s)
print("ok")
