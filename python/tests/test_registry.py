"""The Python package's codec names against the Rust registry (``_zquant.codec_names()``):
every registry name has a class, ``use()`` maps exactly the registry's names, and the
``zarr.codecs`` entry points (pyproject.toml, and the installed distribution's) are the
registry's Zarr v3 names minus those ``use()`` registers itself."""

from __future__ import annotations

import importlib
import importlib.metadata
import tomllib
from pathlib import Path

import numcodecs.registry
import pytest
import zarr
import zarr.registry

import zquant
from zquant import _registry, _zquant

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def registry_names() -> set[str]:
    return {name for name, _ in _zquant.codec_names()}


def entry_points_of(pyproject: Path) -> dict[str, str]:
    with pyproject.open("rb") as f:
        meta = tomllib.load(f)
    return dict(meta["project"]["entry-points"]["zarr.codecs"])


def test_registry_lists_each_name_once_with_its_kind():
    pairs = _zquant.codec_names()
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names))
    assert {kind for _, kind in pairs} <= {"array_to_array", "array_to_bytes"}
    assert ("scale_offset", "array_to_array") in pairs
    assert ("packbits", "array_to_bytes") in pairs
    assert tuple(pairs) == _registry.REGISTRY


def test_every_registry_name_has_a_class():
    assert _registry.missing() == []


def test_a_name_missing_in_python_fails(monkeypatch):
    extra = (("made_up", "array_to_array"), ("numcodecs.made_up", "array_to_array"))
    monkeypatch.setattr(_registry, "REGISTRY", _registry.REGISTRY + extra)
    assert _registry.missing() == ["made_up", "numcodecs.made_up"]
    with pytest.raises(RuntimeError, match="made_up"):
        _registry.zarr_map()
    with pytest.raises(RuntimeError, match="made_up"):
        _registry.numcodecs_map()


def test_use_maps_exactly_the_registry():
    zarr_names = set(_registry.zarr_map())
    numcodecs_names = {_registry.NUMCODECS_PREFIX + i for i in _registry.numcodecs_map()}
    assert zarr_names | numcodecs_names == registry_names()
    assert not zarr_names & numcodecs_names
    for name, cls in _registry.zarr_map().items():
        assert cls.__module__ == "zquant.zarr"
        assert cls.codec_name == name
    for codec_id, cls in _registry.numcodecs_map().items():
        assert cls.__module__ == "zquant.numcodecs"
        assert cls.codec_id == codec_id


def test_use_resolves_every_registry_name_to_zquant():
    zquant.use(environment=False)
    try:
        for name, cls in _registry.zarr_map().items():
            assert zarr.registry.get_codec_class(name) is cls
        for codec_id, cls in _registry.numcodecs_map().items():
            assert numcodecs.registry.codec_registry[codec_id] is cls
    finally:
        zquant.unuse()


def test_entry_points_are_the_registry_minus_those_use_registers():
    expected = set(_registry.zarr_names()) - set(_registry.REGISTERED_BY_USE)
    declared = entry_points_of(PYPROJECT)
    assert set(declared) == expected
    for name, target in declared.items():
        module, _, attr = target.partition(":")
        assert getattr(importlib.import_module(module), attr) is _registry.zarr_map()[name]


def test_installed_entry_points_match_pyproject():
    dist = importlib.metadata.distribution("zquant")
    installed = {ep.name: ep.value for ep in dist.entry_points if ep.group == "zarr.codecs"}
    assert installed == entry_points_of(PYPROJECT)


def test_names_left_to_use_are_registry_names_with_reasons():
    for name, reason in _registry.REGISTERED_BY_USE.items():
        assert name in _registry.zarr_names()
        assert reason
