"""zarr-python 3.4.2 on the array of benches/zarrs_store.rs: the same elements (its
source.bin), chunks, codecs and compressors, written and read whole on a local store.

Usage (after `cargo bench --features zarrs-bitround --bench zarrs_store`, which writes
target/bench-zarrs/source.bin; the interop venv has zarr-python and cast-value-rs):
    target/interop-venv/bin/python benches/zarrs_store.py [ROUNDS]

Prints the same table as the Rust bench: GB/s of decoded elements, best and median.
"""

import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import zarr

warnings.filterwarnings("ignore")  # numcodecs.* "not in the Zarr v3 specification"

SIDE, CHUNK = 4096, 256
ROOT = Path(__file__).resolve().parent.parent / "target" / "bench-zarrs"

CASES = [
    ("fixedscaleoffset", [{"name": "numcodecs.fixedscaleoffset", "configuration": {
        "offset": 0.5, "scale": 100, "dtype": "<f8", "astype": "<i2"}}]),
    ("bitround", [{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}]),
    ("scale_offset+cast_value", [
        {"name": "scale_offset", "configuration": {"offset": -200, "scale": 100}},
        {"name": "cast_value", "configuration": {
            "data_type": "uint16", "rounding": "nearest-even", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}]),
]
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def main(rounds):
    data = np.fromfile(ROOT / "source.bin", dtype="<f8").reshape(SIDE, SIDE)
    arrays = []
    for name, filters in CASES:
        for comp in ["none", "zstd"]:
            path = ROOT / "zarr-python" / f"{name}_{comp}"
            shutil.rmtree(path, ignore_errors=True)
            arr = zarr.create_array(
                store=str(path), shape=data.shape, chunks=(CHUNK, CHUNK), dtype="<f8",
                filters=filters, compressors=[ZSTD] if comp == "zstd" else None,
                fill_value=0.0, zarr_format=3)
            arrays.append((name, comp, arr, [], []))
    for _ in range(rounds):
        for _, _, arr, writes, reads in arrays:
            t = time.perf_counter()
            arr[...] = data
            writes.append(time.perf_counter() - t)
            t = time.perf_counter()
            arr[...]
            reads.append(time.perf_counter() - t)
    size = data.nbytes
    print(f"zarr-python {zarr.__version__}, numpy {np.__version__}, {rounds} rounds")
    print("| case | compressor | codecs | write (best) | write (median) | read (best) | read (median) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, comp, _, writes, reads in arrays:
        w, r = sorted(writes), sorted(reads)
        print(f"| {name} | {comp} | zarr-python | {size / w[0] / 1e9:.2f} | "
              f"{size / w[len(w) // 2] / 1e9:.2f} | {size / r[0] / 1e9:.2f} | "
              f"{size / r[len(r) // 2] / 1e9:.2f} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
