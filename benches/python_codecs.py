"""Codec step and end-to-end timings of the zquant Python package against zarr-python's
built-ins, cast-value-rs and numcodecs (issue 24's benchmark). One run, peers side by side:

    target/py-venv/bin/python benches/python_codecs.py [--repeat N]

Prints minima and medians (ms) and the ratio peer/zquant of the medians, in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def timeit(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts) * 1e3, statistics.median(ts) * 1e3


def ab(f, g, repeat):
    """Time ``f`` and ``g`` alternately (the machine is noisy): ((min, median), (min,
    median)) in ms."""
    f(), g()
    tf, tg = [], []
    for _ in range(repeat):
        for fn, ts in ((f, tf), (g, tg)):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    stat = lambda ts: (min(ts) * 1e3, statistics.median(ts) * 1e3)  # noqa: E731
    return stat(tf), stat(tg)


def step(codec, method, buf, spec):
    """One codec call as zarr makes it, its result read (zquant's codecs defer their work
    to the first read of the buffer, so that consecutive ones run as one chain)."""
    return lambda: getattr(codec, method)(buf, spec).as_ndarray_like()


def row(name, ours, peer):
    print(f"| {name} | {ours[0]:.3f} / {ours[1]:.3f} | {peer[0]:.3f} / {peer[1]:.3f} | "
          f"{peer[1] / ours[1]:.1f}x |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=30)
    args = p.parse_args()
    import numcodecs
    import zarr
    from zarr.codecs.cast_value import CastValue as ZCV
    from zarr.codecs.scale_offset import ScaleOffset as ZSO
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer
    from zarr.core.dtype import Float64, UInt16

    import zquant
    import zquant.numcodecs as zn
    from zquant.zarr import BitRound, CastValue, ScaleOffset

    rng = np.random.default_rng(0)
    chunk = 270 + 60 * rng.random((512, 512))
    chunk[rng.random(chunk.shape) < 0.01] = np.nan
    nan0 = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
    spec = ArraySpec(shape=chunk.shape, dtype=Float64(), fill_value=np.float64("nan"),
                     config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    buf = NDBuffer.from_numpy_array(chunk)
    print("## codec step, one 512 x 512 float64 chunk (ms, min / median)\n")
    print("| step | zquant | peer | peer/zquant |\n|---|---|---|---|")
    pairs = [
        ("scale_offset encode (peer: zarr built-in)",
         ScaleOffset(offset=270, scale=200), ZSO(offset=270, scale=200)),
        ("cast_value f8->u2 NaN->0 encode (peer: zarr + cast-value-rs)",
         CastValue(data_type="uint16", scalar_map=nan0, out_of_range="clamp"),
         ZCV(data_type="uint16", scalar_map=nan0, out_of_range="clamp")),
    ]
    for name, ours, theirs in pairs:
        row(name, *ab(step(ours, "_encode_sync", buf, spec),
                      step(theirs, "_encode_sync", buf, spec), args.repeat))
    so = ScaleOffset(offset=270, scale=200)
    scaled = NDBuffer.from_numpy_array(so._encode_sync(buf, spec).as_numpy_array())
    for name, ours, theirs in pairs[1:]:
        enc = NDBuffer.from_numpy_array(ours._encode_sync(scaled, spec).as_numpy_array())
        enc_t = theirs._encode_sync(scaled, spec)
        row(name.replace("encode", "decode"),
            *ab(step(ours, "_decode_sync", enc, spec), step(theirs, "_decode_sync", enc_t, spec),
                args.repeat))
    # The pair as zarr's pipeline calls it: scale_offset's encode, then cast_value's on its
    # result with the spec scale_offset resolves (and the reverse to decode).
    cv_args = dict(data_type="uint16", scalar_map=nan0, out_of_range="clamp")
    ours_p = (ScaleOffset(offset=270, scale=200), CastValue(**cv_args))
    theirs_p = (ZSO(offset=270, scale=200), ZCV(**cv_args))

    def pair(codecs, encode):
        spec2 = codecs[0].resolve_metadata(spec)
        if encode:
            return lambda: codecs[1]._encode_sync(
                codecs[0]._encode_sync(buf, spec), spec2).as_ndarray_like()
        enc = NDBuffer.from_numpy_array(
            codecs[1]._encode_sync(codecs[0]._encode_sync(buf, spec), spec2).as_numpy_array())
        return lambda: codecs[0]._decode_sync(
            codecs[1]._decode_sync(enc, spec2), spec).as_ndarray_like()

    row("scale_offset + cast_value f8->u2 NaN->0 encode, the pair (peer: zarr + cast-value-rs)",
        *ab(pair(ours_p, True), pair(theirs_p, True), args.repeat))
    row("scale_offset + cast_value f8->u2 NaN->0 decode, the pair (peer: zarr + cast-value-rs)",
        *ab(pair(ours_p, False), pair(theirs_p, False), args.repeat))
    f32 = chunk.astype(np.float32)
    zb, nb = zn.BitRound(10), numcodecs.BitRound(10)
    row("bitround keepbits 10 f4 (peer: numcodecs.BitRound)",
        *ab(lambda: zb.encode(f32), lambda: nb.encode(f32), args.repeat))
    fso = dict(offset=270, scale=100, dtype="<f8", astype="<u2")
    x = np.nan_to_num(chunk, nan=270.0)
    zf, nf = zn.FixedScaleOffset(**fso), numcodecs.FixedScaleOffset(**fso)
    row("fixedscaleoffset f8->u2 encode (peer: numcodecs)",
        *ab(lambda: zf.encode(x), lambda: nf.encode(x), args.repeat))
    xe = nf.encode(x)
    row("fixedscaleoffset f8->u2 decode (peer: numcodecs)",
        *ab(lambda: zf.decode(xe), lambda: nf.decode(xe), args.repeat))
    out = np.empty_like(chunk)
    print(f"\nmemory speed on this chunk: np.copyto of 2 MiB "
          f"{timeit(lambda: np.copyto(out, chunk), args.repeat)[1]:.3f} ms, numpy "
          f"(x - 270) * 200 {timeit(lambda: (chunk - 270) * 200, args.repeat)[1]:.3f} ms")
    del UInt16

    print("\n## end to end: 2048 x 2048 float64, 512 x 512 chunks, memory store, no compressor"
          " (ms, min / median)\n")
    print("| case | zquant write | peer write | ratio | zquant read | peer read | ratio |")
    print("|---|---|---|---|---|---|---|")
    a = 270 + 60 * rng.random((2048, 2048))
    a[rng.random(a.shape) < 0.01] = np.nan

    def array(filters, data, dtype, fill):
        store = zarr.storage.MemoryStore()
        z = zarr.create_array(store, shape=data.shape, chunks=(512, 512), dtype=dtype,
                              filters=filters, compressors=None, fill_value=fill)
        z[...] = data
        return z

    def e2e(ours, theirs, data, dtype="float64", fill=np.nan, use=False):
        """(write, read) of ours and theirs, timed alternately."""
        n = max(5, args.repeat // 2)
        zt = array(theirs, data, dtype, fill)
        if use:
            zquant.use()
        try:
            zo = array(ours, data, dtype, fill)

            def w(z):
                def f():
                    z[...] = data
                return f

            (ow, tw) = ab(w(zo), w(zt), n)
            (orr, tr) = ab(lambda: zo[...], lambda: zt[...], n)
        finally:
            if use:
                zquant.unuse()
        return ow, tw, orr, tr

    def line(name, ow, tw, orr, tr):
        print(f"| {name} | {ow[0]:.1f} / {ow[1]:.1f} | {tw[0]:.1f} / {tw[1]:.1f} | "
              f"{tw[1] / ow[1]:.1f}x | {orr[0]:.1f} / {orr[1]:.1f} | {tr[0]:.1f} / {tr[1]:.1f} | "
              f"{tr[1] / orr[1]:.1f}x |")

    x = np.nan_to_num(a, nan=270.0)
    def fsoc():
        # A new wrapper per array: it resolves (and caches) its numcodecs class on first use.
        return [zarr.codecs.numcodecs.FixedScaleOffset(offset=270, scale=100, dtype="<f8",
                                                      astype="<u2")]

    cases = [
        ("scale_offset + cast_value f8->u2 NaN->0",
         [ScaleOffset(offset=270, scale=200), CastValue(data_type="uint16", scalar_map=nan0)],
         [ZSO(offset=270, scale=200), ZCV(data_type="uint16", scalar_map=nan0)], a, np.nan,
         False),
        ("bitround keepbits 10 (peer: numcodecs.bitround)",
         [BitRound(keepbits=10)], [zarr.codecs.numcodecs.BitRound(keepbits=10)], a, np.nan,
         False),
        ("numcodecs.fixedscaleoffset f8->u2 (zquant via use())", fsoc(), fsoc(), x, 0.0, True),
    ]
    for name, ours, theirs, data, fill, use in cases:
        line(name, *e2e(ours, theirs, data, fill=fill, use=use))

    # zarr-python's own cost, without a codec: what no codec can go below.
    from dataclasses import dataclass

    from zarr.abc.codec import ArrayArrayCodec

    @dataclass(frozen=True)
    class Noop(ArrayArrayCodec):
        is_fixed_size = True

        def resolve_metadata(self, s):
            return s

        def _encode_sync(self, a, s):
            return a

        def _decode_sync(self, a, s):
            return a

        async def _encode_single(self, a, s):
            return a

        async def _decode_single(self, a, s):
            return a

        def compute_encoded_size(self, n, s):
            return n

        def to_dict(self):
            return {"name": "noop"}

    import numcodecs as nc
    from numcodecs.abc import Codec
    from zarr.codecs.numcodecs._codecs import _NumcodecsArrayArrayCodec

    class NoopNumcodec(Codec):
        codec_id = "zquant_bench_noop"

        def encode(self, buf):
            return buf

        def decode(self, buf, out=None):
            return buf

    nc.register_codec(NoopNumcodec)

    class NoopWrapped(_NumcodecsArrayArrayCodec, codec_name="zquant_bench_noop"):
        """A no-op numcodecs codec in zarr's numcodecs.* wrapper: how
        numcodecs.fixedscaleoffset and numcodecs.bitround run (a thread hop per chunk,
        the chunk made C-contiguous)."""

        def compute_encoded_size(self, n, s):
            return n

    print("\nzarr-python alone, the same array (ms, min / median): ")
    print("| filters | write | read |\n|---|---|---|")
    n = max(5, args.repeat // 2)
    for name, filters, data, dtype in [
        ("none, float64", None, a, "float64"),
        ("a no-op ArrayArrayCodec, float64", [Noop()], a, "float64"),
        ("a no-op numcodecs codec in zarr's numcodecs.* wrapper, float64", [NoopWrapped()], a,
         "float64"),
        ("none, uint16 (the encoded chunks' size)", None, x.astype(np.uint16), "uint16"),
    ]:
        z = array(filters, data, dtype, 0)

        def wr(z=z, data=data):
            z[...] = data

        w, r = timeit(wr, n), timeit(lambda z=z: z[...], n)
        print(f"| {name} | {w[0]:.1f} / {w[1]:.1f} | {r[0]:.1f} / {r[1]:.1f} |")


if __name__ == "__main__":
    main()
