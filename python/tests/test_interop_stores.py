"""The repository's interop stores (tests/interop/make_stores.py: zarr-python 3.4.2 with its
built-in scale_offset, cast_value (cast-value-rs) and numcodecs' fixedscaleoffset and
bitround, v3 and v2, sharded, compressed, big-endian, partial edge chunks, missing chunks)
read through zarr-python + ``zquant.use()`` equal, bit for bit, to zarr-python alone."""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest
import zarr

import zquant
import zquant.numcodecs as zn
import zquant.zarr as zz

MAKE_STORES = Path(__file__).resolve().parents[2] / "tests" / "interop" / "make_stores.py"

# zarr-python alone: its own classes for the names zquant also registers (with several
# installed implementations zarr picks by this setting).
ALONE = {
    "codecs.scale_offset": "zarr.codecs.scale_offset.ScaleOffset",
    "codecs.cast_value": "zarr.codecs.cast_value.CastValue",
}


def _make_stores_module():
    spec = importlib.util.spec_from_file_location("make_stores", MAKE_STORES)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _case_names() -> list[str]:
    mod = _make_stores_module()
    v3 = [c[0] for c in (*mod.v3_cases(), *mod.spec_example_cases(), *mod.nan_code_0_cases(),
                         *mod.codec_cases())]
    # A fill value cast_value's spec forbids: zquant refuses it (test below).
    v3 = [n for n in v3 if n not in REFUSED]
    return v3 + [c[0] for c in mod.v2_cases()]


REFUSED = {"fill_fails_round_trip"}


CASES = _case_names()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_fill_value_the_spec_forbids_is_refused(stores: Path, name: str) -> None:
    """cast_value: "If the fill value cannot survive a round-trip cast, implementations MUST
    treat this as an error." zarr-python with cast-value writes such an array; zquant
    raises instead of reading it."""
    zquant.use()
    try:
        with pytest.raises(Exception, match="round trip"):
            zarr.open_array(str(stores / name / "store"), mode="r")[...]
    finally:
        zquant.unuse()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stores, written by zarr-python alone into a temporary directory."""
    out = tmp_path_factory.mktemp("interop")
    zquant.unuse()
    with zarr.config.set(ALONE), contextlib.redirect_stdout(io.StringIO()):
        _make_stores_module().main(out)
    return out


def _zquant_codecs(z: zarr.Array) -> list[object]:
    """The zquant codec objects an opened array runs (v3: in its codecs, in shards, in
    zarr's numcodecs.* wrappers; v2: its filters)."""
    found: list[object] = []

    def walk(codecs: object) -> None:
        for c in codecs or ():  # type: ignore[attr-defined]
            if isinstance(c, zz.ScaleOffset | zz.CastValue | zz.BitRound):
                found.append(c)
            elif isinstance(c, zn.FixedScaleOffset | zn.BitRound | zn.Quantize | zn.AsType):
                found.append(c)
            elif hasattr(c, "codec_config") and hasattr(c, "_codec"):
                if isinstance(c._codec, zn.FixedScaleOffset | zn.BitRound | zn.Quantize | zn.AsType):
                    found.append(c._codec)
            elif hasattr(c, "codecs"):
                walk(c.codecs)

    md = z.metadata
    walk(getattr(md, "codecs", None))
    walk(getattr(md, "filters", None))
    return found


@pytest.mark.parametrize("name", CASES)
def test_store_reads_equal_through_zquant(stores: Path, name: str) -> None:
    path = str(stores / name / "store")
    with zarr.config.set(ALONE):
        alone = zarr.open_array(path, mode="r")[...]
    expected = np.fromfile(stores / name / "expected.bin", dtype=alone.dtype.newbyteorder("<"))
    assert expected.tobytes() == np.ascontiguousarray(alone).astype(expected.dtype).tobytes()
    zquant.use()
    try:
        z = zarr.open_array(path, mode="r")
        assert _zquant_codecs(z), f"{name}: no zquant codec ran"
        mine = z[...]
    finally:
        zquant.unuse()
    assert mine.dtype == alone.dtype and mine.shape == alone.shape
    # Bit for bit, NaN payloads and -0.0 included.
    assert np.ascontiguousarray(mine).tobytes() == np.ascontiguousarray(alone).tobytes(), name
