"""``zquant.numcodecs.Quantize`` and ``AsType`` against numcodecs' own classes, on the same
arrays in one process, timed alternately (the machine is shared and noisy), with a NumPy
copy of the same bytes as the memcpy baseline:

    target/venv/bin/python benches/python_numcodecs_legacy.py [--elements N] [--repeat R]

zquant's outputs come from its buffer pool (64 MiB by default), which keeps released
buffers for the next output of the same size: once buffers of the earlier cases' sizes fill
it, a case with a larger output gets fresh memory every call (page faults); `--pool-mib
256` shows the cases with their outputs pooled.

Prints, per case, the minimum and median (ms) of zquant, numcodecs and the copy, and the
ratios numcodecs/zquant and copy/zquant of the minima and of the medians. Every case first
checks that both give the same bytes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numcodecs
import numpy as np

import zquant
import zquant.numcodecs as zn


def alternate(fns, repeat):
    """Time each of ``fns`` in turn, ``repeat`` rounds: [(min, median)] in ms."""
    for f in fns:
        f()
    ts = [[] for _ in fns]
    for _ in range(repeat):
        for f, t in zip(fns, ts):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
    return [(min(t) * 1e3, statistics.median(t) * 1e3) for t in ts]


def data(n, lo, hi, dtype):
    """A smooth field plus noise in ``[lo, hi]``, seeded."""
    rng = np.random.default_rng(42)
    x = np.sin(np.arange(n) / 1000.0) * 0.45 + 0.5 + rng.standard_normal(n) * 0.02
    return (lo + (hi - lo) * np.clip(x, 0.0, 1.0)).astype(dtype)


def cases(n):
    f8 = data(n, -20.0, 20.0, np.float64)
    f4 = f8.astype(np.float32)
    i2src = data(n, -20000.0, 20000.0, np.float64)
    i2 = i2src.astype(np.int16)
    yield "quantize f8->f4 encode (digits 3)", (
        zn.Quantize(3, "<f8", "<f4"), numcodecs.Quantize(3, "<f8", "<f4"), "encode", f8)
    yield "quantize f4->f4 encode (digits 3)", (
        zn.Quantize(3, "<f4"), numcodecs.Quantize(3, "<f4"), "encode", f4)
    yield "quantize f8->f4 decode", (
        zn.Quantize(3, "<f8", "<f4"), numcodecs.Quantize(3, "<f8", "<f4"), "decode", f4)
    yield "astype f8->f4 encode", (
        zn.AsType("<f4", "<f8"), numcodecs.AsType("<f4", "<f8"), "encode", f8)
    yield "astype f8->i2 encode", (
        zn.AsType("<i2", "<f8"), numcodecs.AsType("<i2", "<f8"), "encode", i2src)
    yield "astype f8->i2 decode", (
        zn.AsType("<i2", "<f8"), numcodecs.AsType("<i2", "<f8"), "decode", i2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=4 << 20)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--pool-mib", type=int, default=None,
                    help="zquant.set_buffer_pool in MiB (default: leave zquant's 64 MiB)")
    args = ap.parse_args()
    if args.pool_mib is not None:
        zquant.set_buffer_pool(args.pool_mib << 20)
    print(f"numcodecs {numcodecs.__version__}, numpy {np.__version__}, "
          f"{args.elements} elements, {args.repeat} alternating rounds")
    head = (f"{'case':36} {'zquant min/med':>16} {'numcodecs min/med':>18} "
            f"{'copy min/med':>14} {'nc/zq':>11} {'copy/zq':>11}")
    print(head)
    for name, (zq, nc, way, x) in cases(args.elements):
        fz, fn = getattr(zq, way), getattr(nc, way)
        a, b = np.asarray(fz(x)), np.asarray(fn(x))
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
        out = np.empty_like(a)
        src_bytes = x.view(np.uint8).reshape(-1)
        big = src_bytes if src_bytes.nbytes >= a.nbytes else np.zeros(a.nbytes, np.uint8)
        copy_dst = np.empty_like(big)
        (zmin, zmed), (nmin, nmed), (cmin, cmed) = alternate(
            [lambda: fz(x), lambda: fn(x), lambda: np.copyto(copy_dst, big)], args.repeat)
        del out
        print(f"{name:36} {zmin:7.2f}/{zmed:7.2f}  {nmin:8.2f}/{nmed:8.2f}  "
              f"{cmin:6.2f}/{cmed:6.2f}  {nmin / zmin:5.1f}/{nmed / zmed:4.1f}  "
              f"{cmin / zmin:5.2f}/{cmed / zmed:4.2f}")


if __name__ == "__main__":
    main()
