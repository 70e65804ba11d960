"""zquant.choose against xbitinfo 0.0.7 (issue 24's benchmark), and a dask array of >= 4 GiB
computed chunk-parallel. One run, peers side by side; needs a venv with xbitinfo 0.0.7,
distributed and zquant:

    python3.12 -m venv target/bench-venv
    target/bench-venv/bin/pip install xbitinfo==0.0.7 distributed ./python
    target/bench-venv/bin/python benches/python_choose.py [--repeat N] [--gib G]

Prints minima and medians (s) and the ratio xbitinfo/zquant of the medians, in the same run
(the two alternate), and for the dask array its time and each worker's peak memory.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import numpy as np


def field(ny, nx, seed=0, y0=0, x0=0, total=(1800, 3600)):
    """A temperature-like float32 field (large-scale pattern + 0.05 K noise), the block at
    (y0, x0) of a ``total`` grid, cheap to make (separable pattern)."""
    lat = np.linspace(-np.pi / 2, np.pi / 2, total[0], dtype=np.float32)[y0 : y0 + ny]
    lon = np.linspace(0, 2 * np.pi, total[1], endpoint=False, dtype=np.float32)[x0 : x0 + nx]
    rng = np.random.default_rng([seed, y0, x0])
    a = (250 + 45 * np.cos(lat))[:, None] + (6 * np.sin(3 * lon))[None, :]
    a += 0.1 * (rng.random((ny, nx), dtype=np.float32) - 0.5)
    return a.astype(np.float32)


def stats(ts):
    return min(ts), statistics.median(ts)


def keepbits_vs_xbitinfo(repeat):
    import xarray as xr
    import xbitinfo as xb

    import zquant.choose as choose

    a = field(1800, 3600)
    ds = xr.Dataset({"t": (("y", "x"), a)})

    def theirs():
        info = xb.get_bitinformation(ds, dim="x", implementation="python")
        return int(xb.get_keepbits(info, inflevel=0.99)["t"].values[0])

    def ours():
        return choose.keepbits(a, level=0.99, axis=-1)

    k_theirs, k_ours = theirs(), ours()
    to, tt = [], []
    for _ in range(repeat):
        for f, ts in ((ours, to), (theirs, tt)):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
    mb = a.nbytes / 1e6
    (omin, omed), (tmin, tmed) = stats(to), stats(tt)
    print("## keepbits, 1800 x 3600 float32 (s, min / median; level 0.99 along x)\n")
    print("| | keepbits | time | MB/s (median) |\n|---|---|---|---|")
    print(f"| xbitinfo 0.0.7 (`get_bitinformation(implementation=\"python\")` + `get_keepbits`) "
          f"| {k_theirs} | {tmin:.3f} / {tmed:.3f} | {mb / tmed:.1f} |")
    print(f"| zquant.choose.keepbits | {k_ours} | {omin:.4f} / {omed:.4f} | {mb / omed:.0f} |")
    print(f"\nratio xbitinfo/zquant (medians): {tmed / omed:.0f}x\n")


def dask_keepbits(gib, workers):
    import dask.array as da
    from distributed import Client, LocalCluster

    import zquant.choose as choose

    chunk = 4096
    n = int(np.ceil(np.sqrt(gib * 2**30 / 4) / chunk)) * chunk  # float32, square
    total = (n, n)

    def block(block_info=None):
        (y0, _), (x0, _) = block_info[None]["array-location"]
        return field(chunk, chunk, y0=y0, x0=x0, total=total)

    a = da.map_blocks(block, chunks=((chunk,) * (n // chunk),) * 2, dtype=np.float32)
    print(f"## keepbits of a dask array: {n} x {n} float32 = {a.nbytes / 2**30:.2f} GiB, "
          f"{chunk} x {chunk} chunks ({chunk * chunk * 4 / 2**20:.0f} MiB), "
          f"LocalCluster of {workers} worker processes x 1 thread\n")
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      memory_limit="4GiB", dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as c:
        def reset_peak():
            # VmHWM is the process's peak RSS; writing 5 to clear_refs resets it to now.
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            return rss()

        def rss(key="VmRSS"):
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1]) * 1024
            return 0

        def peak():
            return rss("VmHWM")

        before = c.run(reset_peak)
        t0 = time.perf_counter()
        k = choose.keepbits(a, level=0.99, axis=-1)
        dt = time.perf_counter() - t0
        after = c.run(peak)
        c.run(reset_peak)
        t0 = time.perf_counter()
        gen = a.sum().compute()  # making the data alone (no keepbits), for comparison
        dt_gen = time.perf_counter() - t0
        after_gen = c.run(peak)
        del gen
    print("| | value |\n|---|---|")
    print(f"| keepbits (level 0.99) | {k} |")
    print(f"| time, keepbits (data made on the workers + counted) | {dt:.1f} s "
          f"({a.nbytes / 2**20 / dt:.0f} MiB/s) |")
    print(f"| time, the same graph summed instead (making the data alone) | {dt_gen:.1f} s |")
    for w in sorted(after):
        print(f"| peak RSS of worker {w.rsplit(':', 1)[-1]} | {after[w] / 2**20:.0f} MiB "
              f"(RSS at the start {before[w] / 2**20:.0f} MiB; summing the same graph "
              f"instead: {after_gen[w] / 2**20:.0f} MiB) |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--gib", type=float, default=4.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--skip-xbitinfo", action="store_true")
    args = p.parse_args()
    if not args.skip_xbitinfo:
        keepbits_vs_xbitinfo(args.repeat)
    if args.gib > 0:
        dask_keepbits(args.gib, args.workers)


if __name__ == "__main__":
    main()
