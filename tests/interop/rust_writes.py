"""Plain zarr-python 3.4.2 opens every store zquant's Rust paths write.

  quantize   zarr-python writes float32 and float64 stores (1-D and 3-D, v2 and v3, NaN,
             its default compressors, fill 0 and NaN); the zarr_quantize example writes
             DST at an absolute bound, a relative bound and an information level; plain
             zarr-python (its scale_offset, cast-value's cast_value, numcodecs' BitRound:
             no zquant) opens DST, every element is within the bound, NaN stays NaN, and
             DST's chunks take fewer bytes than SRC's.
  write      the zarr_write example from a zarr.json in short forms ("chunk_key_encoding":
             "default", codecs as bare names, "bytes" without endian); zarr-python opens it.
  rust       the stores tests/it/zarrs_codecs.rs `interop_written_stores` wrote under
             OUT/rust (the chunk API on `create_array`, `quantize`): zarr-python opens
             each and reads expected.bin within the case's bound.

Usage: python rust_writes.py OUT ZARR_WRITE ZARR_QUANTIZE
Ends with the line `N passed, N failed`; exits 1 when anything failed.
"""

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import zarr

warnings.filterwarnings("ignore")

# zarr-python's scale_offset and cast-value's cast_value, whatever else is installed (run.sh's
# venv also has zquant's Python package, which registers its own).
PEERS = {"codecs.cast_value": "cast_value.zarr_compat.v1.rust_codec.CastValueRustV1",
         "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset"}


def field(shape, dtype, seed):
    """A smooth temperature-like field with 5% NaN."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    a = 280.0 + 20.0 * np.sin(sum(grids)) + rng.normal(0, 0.5, shape)
    a[rng.random(shape) < 0.05] = np.nan
    return a.astype(dtype)


def chunk_bytes(store):
    return sum(p.stat().st_size for p in Path(store).rglob("*")
               if p.is_file() and p.name not in ("zarr.json", ".zarray", ".zattrs", ".zgroup"))


def within(a, b, target, value):
    """(ok, message): b reads back a within the target; NaN stays NaN."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if a.shape != b.shape:
        return False, f"shape {b.shape}, expected {a.shape}"
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False, f"{int((nan != np.isnan(b)).sum())} NaN positions differ"
    err = np.abs(a - b)[~nan]
    if target == "abs":
        bad = err > value
    elif target == "rel":
        bad = err > value * np.abs(a[~nan])
    else:
        bad = np.zeros_like(err, dtype=bool)
    if bad.any():
        return False, f"{int(bad.sum())} elements outside the bound, worst {err.max()}"
    return True, f"max error {err.max() if err.size else 0:.3g}"


def run(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def main(out, zarr_write, zarr_quantize):
    out = Path(out) / "rust_writes"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    passed = failed = 0

    def report(name, ok, msg=""):
        nonlocal passed, failed
        passed += ok
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {msg}" if msg else ""))

    # quantize: zarr-python's stores through the zarr_quantize example.
    seed = 0
    for dtype in ["float32", "float64"]:
        for shape, chunks in [((1000,), (128,)), ((12, 30, 40), (5, 16, 16))]:
            for fmt in [2, 3]:
                for fill in [0.0, np.nan]:
                    seed += 1
                    name = f"{dtype}_{len(shape)}d_v{fmt}_fill{fill}"
                    src = out / name / "src"
                    a = field(shape, dtype, seed)
                    z = zarr.create_array(str(src), shape=shape, chunks=chunks, dtype=dtype,
                                          zarr_format=fmt, fill_value=fill)
                    z[...] = a
                    targets = [("abs", "--max-abs-error", 0.01)]
                    if len(shape) == 3 and fmt == 3 and np.isnan(fill):
                        targets += [("rel", "--max-rel-error", 1e-3), ("inf", "--inflevel", 0.99)]
                    for target, flag, value in targets:
                        case = f"quantize {name} {flag} {value}"
                        dst = out / name / f"dst_{target}"
                        code, stdout, stderr = run([zarr_quantize, src, dst, flag, value])
                        if code != 0:
                            report(case, False, f"exit {code}: {stderr}")
                            continue
                        try:
                            with zarr.config.set(PEERS):
                                back = zarr.open_array(str(dst), mode="r")[...]
                        except Exception as e:  # zarr-python cannot open what zquant wrote
                            report(case, False, f"zarr-python: {type(e).__name__}: {e}")
                            continue
                        ok, msg = within(a, back, target, value)
                        small, big = chunk_bytes(dst), chunk_bytes(src)
                        if ok and small >= big:
                            ok, msg = False, f"DST {small} bytes >= SRC {big} bytes"
                        report(case, ok, f"{msg}, {big} -> {small} bytes")

    # write: zarr_write from short forms.
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": [20, 30], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 16]}},
        "chunk_key_encoding": "default", "fill_value": "NaN",
        "codecs": [
            {"name": "scale_offset", "configuration": {"offset": 200, "scale": 100}},
            {"name": "cast_value", "configuration": {
                "data_type": "uint16", "rounding": "nearest-even",
                "scalar_map": {"encode": [["NaN", 65535]], "decode": [[65535, "NaN"]]}}},
            "bytes", {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
            "crc32c"],
    }
    case_dir = out / "write_short_forms"
    case_dir.mkdir()
    (case_dir / "zarr.json").write_text(json.dumps(meta))
    a = field((20, 30), "float64", 99)
    (case_dir / "source.bin").write_bytes(a.astype("<f8").tobytes())
    code, _, stderr = run([zarr_write, case_dir / "zarr.json", case_dir / "source.bin",
                           case_dir / "store"])
    if code != 0:
        report("write short forms", False, f"exit {code}: {stderr}")
    else:
        try:
            with zarr.config.set(PEERS):
                back = zarr.open_array(str(case_dir / "store"), mode="r")[...]
            report("write short forms", *within(a, back, "abs", 0.005))
        except Exception as e:
            report("write short forms", False, f"zarr-python: {type(e).__name__}: {e}")

    # rust: the stores the Rust test wrote.
    rust = Path(sys.argv[1]) / "rust"
    cases = sorted(p for p in rust.iterdir() if (p / "case.json").exists()) if rust.exists() else []
    if not cases:
        report("rust stores", False, f"none under {rust} (run the ignored test first)")
    for case_dir in cases:
        case = json.loads((case_dir / "case.json").read_text())
        expected = np.frombuffer((case_dir / "expected.bin").read_bytes(), "<f8")
        expected = expected.reshape(case["shape"])
        try:
            with zarr.config.set(PEERS):
                back = zarr.open_array(str(case_dir / "store"), mode="r")[...]
            report(f"rust {case_dir.name}", *within(expected, back, "abs", case["bound"]))
        except Exception as e:
            report(f"rust {case_dir.name}", False, f"zarr-python: {type(e).__name__}: {e}")

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
