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
        row(name, timeit(lambda: ours._encode_sync(buf, spec), args.repeat),
            timeit(lambda: theirs._encode_sync(buf, spec), args.repeat))
    so = ScaleOffset(offset=270, scale=200)
    scaled = so._encode_sync(buf, spec)
    for name, ours, theirs in pairs[1:]:
        enc = ours._encode_sync(scaled, spec)
        enc_t = theirs._encode_sync(scaled, spec)
        row(name.replace("encode", "decode"),
            timeit(lambda: ours._decode_sync(enc, spec), args.repeat),
            timeit(lambda: theirs._decode_sync(enc_t, spec), args.repeat))
    f32 = chunk.astype(np.float32)
    row("bitround keepbits 10 f4 (peer: numcodecs.BitRound)",
        timeit(lambda: zn.BitRound(10).encode(f32), args.repeat),
        timeit(lambda: numcodecs.BitRound(10).encode(f32), args.repeat))
    fso = dict(offset=270, scale=100, dtype="<f8", astype="<u2")
    x = np.nan_to_num(chunk, nan=270.0)
    row("fixedscaleoffset f8->u2 encode (peer: numcodecs)",
        timeit(lambda: zn.FixedScaleOffset(**fso).encode(x), args.repeat),
        timeit(lambda: numcodecs.FixedScaleOffset(**fso).encode(x), args.repeat))
    del UInt16

    print("\n## end to end: 2048 x 2048 float64, 512 x 512 chunks, memory store, no compressor"
          " (ms, min / median)\n")
    print("| case | zquant write | peer write | ratio | zquant read | peer read | ratio |")
    print("|---|---|---|---|---|---|---|")
    a = 270 + 60 * rng.random((2048, 2048))
    a[rng.random(a.shape) < 0.01] = np.nan

    def e2e(filters, data, dtype="float64", fill=np.nan):
        store = zarr.storage.MemoryStore()
        z = zarr.create_array(store, shape=data.shape, chunks=(512, 512), dtype=dtype,
                              filters=filters, compressors=None, fill_value=fill)

        def w():
            z[...] = data

        w()
        return timeit(w, max(3, args.repeat // 5)), timeit(lambda: z[...], max(3, args.repeat // 5))

    cases = [
        ("scale_offset + cast_value f8->u2 NaN->0",
         [ScaleOffset(offset=270, scale=200), CastValue(data_type="uint16", scalar_map=nan0)],
         [ZSO(offset=270, scale=200), ZCV(data_type="uint16", scalar_map=nan0)], a, "float64"),
        ("bitround keepbits 10 (peer: numcodecs.bitround)",
         [BitRound(keepbits=10)], [zarr.codecs.numcodecs.BitRound(keepbits=10)], a, "float64"),
    ]
    for name, ours, theirs, data, dt in cases:
        (ow, orr), (tw, tr) = e2e(ours, data, dt), e2e(theirs, data, dt)
        print(f"| {name} | {ow[1]:.1f} | {tw[1]:.1f} | {tw[1] / ow[1]:.1f}x | {orr[1]:.1f} | "
              f"{tr[1]:.1f} | {tr[1] / orr[1]:.1f}x |")
    x = np.nan_to_num(a, nan=270.0)
    fsoc = [zarr.codecs.numcodecs.FixedScaleOffset(offset=270, scale=100, dtype="<f8",
                                                  astype="<u2")]
    (tw, tr) = e2e(fsoc, x, fill=0.0)
    zquant.use()
    try:
        (ow, orr) = e2e(fsoc, x, fill=0.0)
    finally:
        zquant.unuse()
    print(f"| numcodecs.fixedscaleoffset f8->u2 (zquant via use()) | {ow[1]:.1f} | {tw[1]:.1f} | "
          f"{tw[1] / ow[1]:.1f}x | {orr[1]:.1f} | {tr[1]:.1f} | {tr[1] / orr[1]:.1f}x |")


if __name__ == "__main__":
    main()
