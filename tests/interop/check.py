"""Check zquant (through the zarr_read/zarr_write examples) against zarr-python.

For every case written by make_stores.py:
  read   zarr_read on zarr-python's store gives zarr-python's values (NaN-aware: NaN equals
         any NaN, everything else bit for bit) and the line `shape=[..] data_type=..`;
  write  zarr_write from the store's own zarr.json (or .zarray) and source.bin, then
         zarr-python reads zquant's store and gets the values it read from its own;
  self   zarr_read on zquant's store gives the same values too.

Usage: python check.py OUT ZARR_READ ZARR_WRITE
Ends with the line `N passed, N failed`; exits 1 when anything failed.
"""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import zarr
import zarr.registry
import zquant.zarr

warnings.filterwarnings("ignore")

# As in make_stores.py: zarr-python's scale_offset and cast-value's cast_value, not zquant's
# (installed here for its data types), except for the cases written with zquant's codecs.
PEERS = {"codecs.cast_value": "cast_value.zarr_compat.v1.rust_codec.CastValueRustV1",
         "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset"}
ZQUANT = {"codecs.cast_value": "zquant.zarr.CastValue",
          "codecs.scale_offset": "zquant.zarr.ScaleOffset"}
# zquant's package registers no implementation of these two names with zarr (installing it
# leaves plain zarr as it was; `zquant.use()` registers them): register them here, without
# use()'s configuration and numcodecs ids, so that each case still picks by ZQUANT or PEERS.
zarr.registry.register_codec("cast_value", zquant.zarr.CastValue)
zarr.registry.register_codec("scale_offset", zquant.zarr.ScaleOffset)

NUMPY = {"float64": "<f8", "float32": "<f4", "float16": "<f2", "int16": "<i2",
         "uint16": "<u2", "uint8": "|u1", "int32": "<i4"}
# The narrow types (zquant.dtypes): ml_dtypes' dtypes of the same names, compared bit for bit.
NARROW = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
          "float4_e2m1fn", "int2", "int4", "uint2", "uint4"]
NUMPY.update({name: np.dtype(getattr(ml_dtypes, name)) for name in NARROW})

# Differences that follow from a reading of the spec zquant chose (docs/spec-readings.md),
# as {(case, check): reason}. Listed in docs/zarr.md; empty when none shows up.
# Each entry also gives what the failure's message must contain (anything else fails).
KNOWN = {
    **{(case, check): ("the cast_value spec: a fill value that does not survive the round "
                       "trip MUST be an error; cast-value 0.2.1 does not check it, zquant does",
                       "does not survive the round trip")
       for case in ["fill_fails_round_trip"] for check in ["read", "write"]},
    # zarr-python 3.4.2 + numcodecs 0.17.1 do not read back what they wrote for a v2
    # order-F array with a BitRound filter (a 3 x 4 array reads back permuted; with
    # FixedScaleOffset it does): expected.bin is that permuted read, which zquant's read of
    # the same store matches ("read" passes). zquant writes the elements in F order, and
    # zarr-python reads zquant's store back as the source, so it differs from expected.bin.
    **{("v2_bitround_zlib_F", check): ("zarr-python's own v2 order-F BitRound round trip "
                                       "permutes the array", "elements differ")
       for check in ["write", "self"]},
}


# The sub-byte types' bits: the specs ignore the rest of each byte ("The upper bits are
# arbitrary"), so elements are compared on these bits (a difference above them is reported).
SUB_BYTE_BITS = {np.dtype(getattr(ml_dtypes, n)): b for n, b in (
    ("float6_e2m3fn", 6), ("float6_e3m2fn", 6), ("float4_e2m1fn", 4), ("int2", 2), ("int4", 4),
    ("uint2", 2), ("uint4", 4))}


def same(a, b):
    """NaN-aware bitwise equality (sub-byte types: on their bits); returns (ok, message)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, f"shape/dtype {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    bits = np.dtype(f"<u{a.dtype.itemsize}")
    wa, wb = a.view(bits), b.view(bits)
    note = ""
    if a.dtype in SUB_BYTE_BITS:
        upper = int((wa != wb).sum())
        mask = (1 << SUB_BYTE_BITS[a.dtype]) - 1
        wa, wb = wa & mask, wb & mask
        upper -= int((wa != wb).sum())
        if upper:
            note = f"(equal; {upper} elements differ in the upper bits, which the spec ignores)"
    eq = wa == wb
    if a.dtype.kind == "f":
        eq |= np.isnan(a) & np.isnan(b)
    if eq.all():
        return True, note
    bad = np.argwhere(~eq)
    i = tuple(int(x) for x in bad[0])
    return False, f"{len(bad)} elements differ, first at {list(i)}: {a[i]!r} vs {b[i]!r}"


def run(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def main(out, zarr_read, zarr_write):
    out = Path(out)
    passed = failed = 0

    def report(name, check, ok, msg=""):
        nonlocal passed, failed
        known, must = KNOWN.get((name, check), (None, None))
        if ok:
            passed += 1
            print(f"PASS {name} {check}" + (f" {msg}" if msg else ""))
        elif known and must in msg:
            passed += 1
            print(f"KNOWN {name} {check}: {msg} ({known})")
        else:
            failed += 1
            print(f"FAIL {name} {check}: {msg}")

    for case_dir in sorted(p for p in out.iterdir() if (p / "case.json").exists()):
        case = json.loads((case_dir / "case.json").read_text())
        name, shape, dt = case["name"], tuple(case["shape"]), case["data_type"]
        np_dt = np.dtype(NUMPY[dt])
        expected = np.frombuffer((case_dir / "expected.bin").read_bytes(), np_dt).reshape(shape)

        def zquant_read(store, check):
            code, stdout, stderr = run([zarr_read, store, case_dir / f"{check}.bin"])
            want = f"shape=[{','.join(map(str, shape))}] data_type={dt}"
            if code != 0:
                return report(name, check, False, f"exit {code}: {stderr}")
            if stdout != want:
                return report(name, check, False, f"printed {stdout!r}, expected {want!r}")
            got = np.frombuffer((case_dir / f"{check}.bin").read_bytes(), np_dt).reshape(shape)
            report(name, check, *same(got, expected))

        zquant_read(case_dir / "store", "read")
        meta = "zarr.json" if case["zarr_format"] == 3 else ".zarray"
        written = case_dir / "written"
        code, _, stderr = run([zarr_write, case_dir / "store" / meta,
                               case_dir / "source.bin", written])
        if code != 0:
            report(name, "write", False, f"exit {code}: {stderr}")
            continue
        try:
            with zarr.config.set(ZQUANT if case.get("codecs") == "zquant" else PEERS):
                back = zarr.open_array(str(written), mode="r")[...]
            report(name, "write", *same(np.asarray(back).astype(np_dt), expected))
        except Exception as e:  # zarr-python could not read zquant's store
            report(name, "write", False, f"zarr-python: {type(e).__name__}: {e}")
        zquant_read(written, "self")

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
