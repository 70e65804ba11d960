"""zquant's codec names, read from the Rust registry, and the Python classes that run them.

The Rust core's registry (``zquant._zquant.codec_names()``) is the one list of codec names.
Each name maps to one class, found by its name, so that adding a codec in Python is one
class:

- a Zarr v3 name (``scale_offset``, ``packbits``): the class of :mod:`zquant.zarr` whose
  ``codec_name`` it is;
- ``numcodecs.<id>``: the class of :mod:`zquant.numcodecs` whose ``codec_id`` is ``<id>``
  (zarr-python's ``numcodecs.*`` codecs look their id up in numcodecs' registry, where
  :func:`zquant.use` puts these classes).

tests/test_registry.py checks that pyproject.toml's ``zarr.codecs`` entry points and
``use()``'s map cover the registry, minus :data:`REGISTERED_BY_USE`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

from . import _zquant

#: Every codec name zquant runs, with its kind (``"array_to_array"``, ``"array_to_bytes"``).
REGISTRY: tuple[tuple[str, str], ...] = tuple(_zquant.codec_names())

#: The prefix of the Zarr v3 names of numcodecs' filters.
NUMCODECS_PREFIX: Final = "numcodecs."

#: The Zarr v3 names zquant has no ``zarr.codecs`` entry point for, and why: ``use()``
#: registers these with zarr-python itself.
REGISTERED_BY_USE: Final = {
    "scale_offset": "zarr-python implements it too; two implementations of one name make "
    "every lookup warn and pick either, so installing zquant must not add one",
    "cast_value": "zarr-python implements it too (as scale_offset)",
}


def zarr_names() -> list[str]:
    """The registry's Zarr v3 names (not numcodecs')."""
    return [name for name, _ in REGISTRY if not name.startswith(NUMCODECS_PREFIX)]


def numcodecs_ids() -> list[str]:
    """The numcodecs ids of the registry's ``numcodecs.<id>`` names."""
    return [
        name.removeprefix(NUMCODECS_PREFIX)
        for name, _ in REGISTRY
        if name.startswith(NUMCODECS_PREFIX)
    ]


def _classes(module: ModuleType, key: str) -> dict[str, type]:
    """The classes defined in ``module`` that state ``key`` (in their own body), by it."""
    return {
        vars(c)[key]: c
        for c in vars(module).values()
        if isinstance(c, type) and c.__module__ == module.__name__ and key in vars(c)
    }


def zarr_classes() -> dict[str, type]:
    """zquant's zarr-python codec classes by Zarr v3 name (imports zarr)."""
    return _classes(importlib.import_module(".zarr", __package__), "codec_name")


def numcodecs_classes() -> dict[str, type]:
    """zquant's numcodecs codec classes by numcodecs id (imports numcodecs)."""
    return _classes(importlib.import_module(".numcodecs", __package__), "codec_id")


def missing() -> list[str]:
    """The registry's names with no Python class (empty in a consistent package)."""
    have = set(zarr_classes())
    out = [name for name in zarr_names() if name not in have]
    try:
        ids = set(numcodecs_classes())
    except ImportError:
        return out
    return out + [NUMCODECS_PREFIX + i for i in numcodecs_ids() if i not in ids]


def _resolve(names: list[str], classes: dict[str, type], module: str) -> dict[str, type]:
    absent = [n for n in names if n not in classes]
    if absent:
        raise RuntimeError(
            f"zquant's Rust registry has the codecs {absent}, which {module} has no class for "
            "(a zquant build whose Python package and extension disagree)"
        )
    return {n: classes[n] for n in names}


def zarr_map() -> dict[str, type]:
    """Each registry Zarr v3 name and its :mod:`zquant.zarr` class."""
    return _resolve(zarr_names(), zarr_classes(), "zquant.zarr")


def numcodecs_map() -> dict[str, type]:
    """Each registry numcodecs id and its :mod:`zquant.numcodecs` class (imports
    numcodecs: ``ImportError`` without it)."""
    return _resolve(numcodecs_ids(), numcodecs_classes(), "zquant.numcodecs")


def class_path(cls: type) -> str:
    """``module.Class``, as zarr's ``codecs.<name>`` configuration names a class."""
    return f"{cls.__module__}.{cls.__qualname__}"
