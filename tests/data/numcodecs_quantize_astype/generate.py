"""Generate vectors.json: numcodecs 0.17.1's Quantize and AsType under NumPy 2, run here.

Usage: python generate.py  (numcodecs==0.17.1, numpy>=2; writes vectors.json beside it)

Every element buffer is hex of little-endian bytes. Each case encodes one input array with
numcodecs, twice: the whole array at once (NumPy's vector cast loops) and element by element
(arrays of one element: NumPy's scalar loops). Where the two disagree (NumPy's float->int
casts of NaN and out-of-range values on AVX-512 hosts) the case records both, and zquant
gives the scalar loop's value (the C cast, see docs/spec-readings.md).
"""

import json
import platform
import sys
import warnings
from pathlib import Path

import numcodecs
import numpy as np
from numcodecs import AsType, Quantize

FLOATS = ["<f2", "<f4", "<f8"]
INTS = ["|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8"]
NUMERIC = INTS + FLOATS
COMPLEX = ["<c8", "<c16"]


def hexle(a):
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes().hex()


def float_inputs(dt, seed):
    dt = np.dtype(dt)
    info = np.finfo(dt)
    rng = np.random.default_rng(seed)
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5,
               -2.5, 0.1, -0.1, 1 / 3, float(info.max), -float(info.max), float(info.tiny),
               float(info.smallest_subnormal), -float(info.smallest_subnormal), 1e-3, 1e-5]
    a = np.array(special, dtype=np.float64).astype(dt)
    # A NaN with a payload and the sign bit: NumPy keeps payloads through its arithmetic.
    nan = np.array([np.nan], dtype=dt).view(f"<u{dt.itemsize}")
    nan |= np.array([1 | (1 << (dt.itemsize * 8 - 1))], dtype=nan.dtype)
    # A signaling NaN (significand 1), either sign: NumPy's float16 casts keep it signaling.
    snan = np.array([1, 1 | (1 << (dt.itemsize * 8 - 1))], dtype=nan.dtype)
    snan |= np.array(np.inf, dtype=dt).view(nan.dtype)
    a = np.concatenate([a, nan.view(dt), snan.view(dt)])
    wide = rng.standard_normal(40) * 10.0 ** rng.integers(-6, 5, size=40)
    ties = (np.arange(-20, 20) + 0.5) * 2.0 ** rng.integers(-12, 3, size=40)
    scale = min(float(info.max), 1e30)
    big = rng.uniform(-1, 1, 10) * scale
    return np.concatenate([a, wide.astype(dt), ties.astype(dt), big.astype(dt)])


def int_inputs(dt, seed):
    dt = np.dtype(dt)
    info = np.iinfo(dt)
    rng = np.random.default_rng(seed)
    vals = [0, 1, -1, 2, 127, 128, 255, 256, -128, -129, 32767, 32768, 65535, 65536,
            2049, 2051, 16777217, 2**31 - 1, 2**31, -(2**31), 2**32 - 1, 2**53 + 1,
            2**63 - 1, 2**64 - 1, -(2**63), info.min, info.max, info.max - 1, info.min + 1]
    vals = [v for v in vals if info.min <= v <= info.max]
    r = rng.integers(info.min, info.max, size=30, dtype=dt, endpoint=True)
    return np.concatenate([np.array(vals, dtype=dt), r])


def complex_inputs(dt, seed):
    """Real and imaginary parts from the float inputs of the part type (NaN, infinities,
    -0.0, the float -> int edges), paired in a seeded shuffle."""
    part = np.dtype(dt).type(0).real.dtype
    re = np.concatenate([float_inputs(part, seed), float_to_int_edges(part)])
    im = np.random.default_rng(seed).permutation(re)
    out = np.empty(len(re), dtype=dt)
    out.real, out.imag = re, im
    return out


def any_inputs(dt, seed):
    """The inputs of ``dt``: complex, float (with the float -> int edges) or integer."""
    kind = np.dtype(dt).kind
    if kind == "c":
        return complex_inputs(dt, seed)
    if kind == "b":
        return np.random.default_rng(seed).integers(0, 2, 40).astype(bool)
    if kind == "f":
        return np.concatenate([float_inputs(dt, seed), float_to_int_edges(dt)])
    return int_inputs(dt, seed)


def float_to_int_edges(dt):
    """Values whose cast to an integer type NumPy does not define: out of range, NaN."""
    dt = np.dtype(dt)
    vals = [2.0**31, -(2.0**31) - 1, 2.0**31 - 1, -(2.0**31), 2.0**32, 2.0**32 + 5,
            4294967301.0, 2.0**63, -(2.0**63), 2.0**64, 1.5e19, -1.5e19, 1e20, -1e20,
            3e9, -3e9, 1e10, 265.0, -129.0, 32776.0, -0.9, 0.9, 65504.0, -65504.0, 65535.5,
            2.0**24 + 2, 1e300, -1e300]
    with np.errstate(all="ignore"):
        a = np.array(vals, dtype=np.float64).astype(dt)
    return a


def run(codec, arr, decode=False):
    f = codec.decode if decode else codec.encode
    with np.errstate(all="ignore"):
        whole = np.asarray(f(arr.copy()))
        single = np.concatenate([np.asarray(f(arr[i : i + 1].copy())).reshape(-1)
                                 for i in range(len(arr))])
    return whole.reshape(-1), single


def record(codec, arr, decode=False):
    whole, single = run(codec, arr, decode)
    out = {"input": hexle(arr), "output": hexle(single), "output_dtype": whole.dtype.str}
    if whole.tobytes() != single.tobytes():
        out["output_vector_loop"] = hexle(whole)
    return out


def astype_case(enc_dt, dec_dt, seed):
    """An AsType case on ``any_inputs`` of each side, seeded with ``seed`` (the decode input
    with ``seed + 7``)."""
    codec = AsType(encode_dtype=enc_dt, decode_dtype=dec_dt)
    arr, back = any_inputs(dec_dt, seed), any_inputs(enc_dt, seed + 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return {"codec": "astype",
                "configuration": {"encode_dtype": enc_dt, "decode_dtype": dec_dt},
                "get_config": codec.get_config(),
                "encode": record(codec, arr),
                "decode": record(codec, back, decode=True)}


def main():
    cases = []
    seed = 0
    # Quantize: every float pair (dtype, astype) and astype omitted, digits -1..=15; then
    # the whole digits range numcodecs accepts, on float64 -> float64.
    for dtype in FLOATS:
        for astype in [None] + FLOATS:
            for digits in range(-1, 16):
                seed += 1
                codec = Quantize(digits=digits, dtype=dtype, astype=astype)
                arr = float_inputs(dtype, seed)
                config = {"digits": digits, "dtype": dtype}
                if astype is not None:
                    config["astype"] = astype
                enc = record(codec, arr)
                enc_arr = np.frombuffer(bytes.fromhex(enc["output"]),
                                        dtype=np.dtype(codec.astype).newbyteorder("<"))
                dec = record(codec, enc_arr.astype(codec.astype), decode=True)
                cases.append({"codec": "quantize", "configuration": config,
                              "get_config": codec.get_config(), "encode": enc,
                              "decode": dec})
    for digits in list(range(-308, -1, 7)) + [-308, -2] + list(range(16, 308, 7)) + [307]:
        seed += 1
        codec = Quantize(digits=digits, dtype="<f8")
        arr = float_inputs("<f8", seed)
        cases.append({"codec": "quantize", "configuration": {"digits": digits, "dtype": "<f8"},
                      "get_config": codec.get_config(), "encode": record(codec, arr)})
    # AsType: every numeric pair, both directions.
    for enc_dt in NUMERIC:
        for dec_dt in NUMERIC:
            seed += 1
            codec = AsType(encode_dtype=enc_dt, decode_dtype=dec_dt)
            if np.dtype(dec_dt).kind == "f":
                arr = np.concatenate([float_inputs(dec_dt, seed), float_to_int_edges(dec_dt)])
            else:
                arr = int_inputs(dec_dt, seed)
            if np.dtype(enc_dt).kind == "f":
                back = np.concatenate([float_inputs(enc_dt, seed + 7), float_to_int_edges(enc_dt)])
            else:
                back = int_inputs(enc_dt, seed + 7)
            cases.append({"codec": "astype",
                          "configuration": {"encode_dtype": enc_dt, "decode_dtype": dec_dt},
                          "get_config": codec.get_config(),
                          "encode": record(codec, arr),
                          "decode": record(codec, back, decode=True)})
    # Big-endian dtypes in the configuration (a Zarr v2 array of that byte order): the
    # values are those of the native configuration.
    big = []
    for cfg in [Quantize(digits=3, dtype=">f4"), Quantize(digits=2, dtype=">f8", astype=">f4"),
                Quantize(digits=1, dtype=">f2", astype="<f8"),
                AsType(encode_dtype=">i2", decode_dtype=">f8"),
                AsType(encode_dtype="|u1", decode_dtype=">f4"),
                AsType(encode_dtype=">f2", decode_dtype="<i4")]:
        seed += 1
        c = cfg.get_config()
        src = c.get("dtype") or c["decode_dtype"]
        arr = float_inputs(src, seed) if np.dtype(src).kind == "f" else int_inputs(src, seed)
        whole, single = run(cfg, arr.astype(src))
        native_cfg = {k: (np.dtype(v).newbyteorder("=").str if k != "id" and isinstance(v, str)
                          else v) for k, v in c.items()}
        native = numcodecs.get_codec(native_cfg)
        nw, ns = run(native, arr.astype(np.dtype(src).newbyteorder("=")))
        assert single.astype(single.dtype.newbyteorder("=")).tobytes() == ns.tobytes(), c
        big.append({"get_config": c, "input": hexle(arr), "output": hexle(single),
                    "output_dtype": single.dtype.str})
    # AsType to and from the complex types, against every numeric type and each other
    # (NumPy drops the imaginary part, with a ComplexWarning; the real part of a cast into
    # complex is the cast value, the imaginary part +0.0). Seeded apart from the cases
    # above, which stay as they were.
    complex_cases = []
    cseed = 10_000
    for c in COMPLEX:
        for other in NUMERIC + COMPLEX:
            for enc_dt, dec_dt in ([(c, other), (other, c)] if other != c else [(c, c)]):
                cseed += 1
                complex_cases.append(astype_case(enc_dt, dec_dt, cseed))
    # AsType to and from NumPy's bool (zquant's Python AsType runs NumPy's own cast for it:
    # the crate has no bool data type): 0/1 into numbers, `!= 0` out of them (NaN: True).
    bool_cases = []
    for other in NUMERIC + COMPLEX:
        for enc_dt, dec_dt in [("|b1", other), (other, "|b1")]:
            cseed += 1
            bool_cases.append(astype_case(enc_dt, dec_dt, cseed))
    out = {
        "generator": "tests/data/numcodecs_quantize_astype/generate.py",
        "numcodecs": numcodecs.__version__, "numpy": np.__version__,
        "python": sys.version.split()[0], "machine": platform.machine(),
        "cases": cases, "complex": complex_cases, "bool": bool_cases, "big_endian": big,
    }
    path = Path(__file__).with_name("vectors.json")
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    n_diff = sum(1 for c in cases for k in ("encode", "decode")
                 if k in c and "output_vector_loop" in c[k])
    print(f"{len(cases)} cases, {len(complex_cases)} complex, {len(bool_cases)} bool, {len(big)} big-endian; {n_diff} where NumPy's vector and "
          f"scalar loops differ; {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
