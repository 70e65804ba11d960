"""Compare `examples/choose keepbits` with xbitinfo on realistic synthetic fields.

Not part of `cargo test` or `.ci/run`: it needs Python >= 3.10 with `xbitinfo` (which
brings xarray, dask, numpy). Set up and run from the repository root:

    python3.12 -m venv /tmp/xbi && /tmp/xbi/bin/pip install xbitinfo
    cargo build --release --example choose
    /tmp/xbi/bin/python tests/interop/xbitinfo_compare.py

xbitinfo's Python implementation (`implementation="python"`) has no significance test and
no masking; the Julia one (BitInformation.jl) applies `set_zero_insignificant` with
confidence 0.99. So each field is compared twice:

- raw: xbitinfo's Python information -> `xb.get_keepbits`, against
  `choose keepbits ... --keep-insignificant`;
- significant: the same information with BitInformation.jl's `binom_free_entropy`
  threshold applied here (`statistics.NormalDist` for the normal quantile) ->
  `xb.get_keepbits`, against `choose keepbits ...` (its default, the Julia path).

Prints one line per field and level, and exits 1 if any keepbits differ by more than one
bit.
"""

import math
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import xarray as xr
import xbitinfo as xb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "target", "release", "examples", "choose")


def fields():
    rng = np.random.default_rng(42)

    def grid(ny, nx):
        lat = np.linspace(-np.pi / 2, np.pi / 2, ny)[:, None]
        lon = np.linspace(0, 2 * np.pi, nx, endpoint=False)[None, :]
        return lat, lon

    lat, lon = grid(180, 360)
    temp = (
        250 + 45 * np.cos(lat) + 6 * np.sin(3 * lon + 2 * lat) * np.cos(4 * lat)
        + 2 * np.sin(11 * lon) * np.sin(7 * lat)
    )
    yield "temperature 180x360 f32, noise 0.05 K", (temp + 0.05 * rng.standard_normal(temp.shape)).astype("f4")
    yield "temperature 180x360 f64, noise 0.05 K", temp + 0.05 * rng.standard_normal(temp.shape)
    yield "temperature 180x360 f32, noise 0.5 K", (temp + 0.5 * rng.standard_normal(temp.shape)).astype("f4")
    # Red noise: a random walk along longitude on top of the pattern.
    walk = np.cumsum(0.1 * rng.standard_normal(temp.shape), axis=1)
    yield "temperature + random walk 180x360 f32", (temp + walk).astype("f4")
    lat, lon = grid(361, 720)
    pres = 101325 + 1500 * np.sin(2 * lon) * np.cos(3 * lat) + 300 * np.sin(9 * lon + lat)
    yield "pressure 361x720 f32, noise 1 Pa", (pres + rng.standard_normal(pres.shape)).astype("f4")
    # Humidity: positive, several orders of magnitude (exponent bits carry information).
    hum = 0.02 * np.exp(-3 * (lat ** 2)) * (1.2 + np.sin(5 * lon) * np.cos(2 * lat))
    yield "humidity 361x720 f32, relative noise 1e-3", (hum * (1 + 1e-3 * rng.standard_normal(hum.shape))).astype("f4")


def free_entropy(n, confidence=0.99):
    """BitInformation.jl's binom_free_entropy(n, c)."""
    z = statistics.NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = min(1.0, 0.5 + z / (2 * math.sqrt(n)))
    h = sum(-q * math.log2(q) for q in (p, 1 - p) if q > 0)
    return 1 - h


def ours(path, dtype, shape, level, significant):
    args = [BINARY, "keepbits", path, dtype, ",".join(map(str, shape)), str(level)]
    if not significant:
        args.append("--keep-insignificant")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()
    info = [float(x) for x in out[-2].split(":", 1)[1].split()]
    return int(out[-1].split("=")[1]), np.array(info)


def main():
    if not os.path.exists(BINARY):
        sys.exit(f"build {BINARY} first: cargo build --release --example choose")
    worst = 0
    levels = [0.99, 0.999, 0.9999]
    with tempfile.TemporaryDirectory() as tmp:
        for name, a in fields():
            dtype = {"float32": "float32", "float64": "float64"}[str(a.dtype)]
            path = os.path.join(tmp, "field.bin")
            a.astype(a.dtype.newbyteorder("<")).tofile(path)
            ds = xr.Dataset({"v": (("y", "x"), a)})
            info = xb.get_bitinformation(ds, dim="x", implementation="python")
            raw = info["v"].values.astype("f8")
            n = a.shape[0] * (a.shape[1] - 1)
            sig = np.where(raw <= free_entropy(n), 0.0, raw)
            info_sig = info.copy(deep=True)
            info_sig["v"].values[:] = sig
            for level in levels:
                xb_raw = int(xb.get_keepbits(info, inflevel=level)["v"].values[0])
                xb_sig = int(xb.get_keepbits(info_sig, inflevel=level)["v"].values[0])
                k_raw, our_raw = ours(path, dtype, a.shape, level, significant=False)
                k_sig, _ = ours(path, dtype, a.shape, level, significant=True)
                diff = np.max(np.abs(our_raw - raw))
                worst = max(worst, abs(k_raw - xb_raw), abs(k_sig - xb_sig))
                print(
                    f"{name:<42} level {level:<6}: xbitinfo {xb_raw:>2} / {xb_sig:>2} (raw / significant), "
                    f"zquant {k_raw:>2} / {k_sig:>2}; max |info diff| {diff:.1e}"
                )
    print(f"largest keepbits difference: {worst} bit(s)")
    sys.exit(0 if worst <= 1 else 1)


if __name__ == "__main__":
    main()
