"""A planner's result: :class:`Plan` for one array, :class:`DatasetPlan` for an xarray
Dataset, and :class:`Candidates`, the table of every chain the planner weighed.

A plan is made by :func:`zquant.choose.plan` (or :func:`zquant.choose.plan_dataset`) from
the zquant planner's JSON. It holds the winning chain as zarr-python codec objects, ready
for ``zarr.create_array(filters=..., serializer=..., compressors=...)`` or xarray's
``to_zarr(encoding=...)``, the error bound the chain guarantees on every element, and the
candidates with their guarantees, sample sizes and the readers that can open them.

The codecs zquant defines (``scale_offset``, ``cast_value``, ``bitround``, ``packbits``)
are :mod:`zquant.zarr`'s classes, so zquant's arithmetic, the one the bound is proven for,
writes the data. Other codecs (``numcodecs.bitround``, compressors) are zarr-python's.
"""

from __future__ import annotations

import html
import json
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _dtypes, _zquant

__all__ = ["CF_QUANTIZATION_VARIABLE", "Candidate", "Candidates", "DatasetPlan", "Plan"]

#: The name :meth:`DatasetPlan.annotate` gives the CF 1.12 (section 8.4) quantization
#: variable, as in the convention's examples.
CF_QUANTIZATION_VARIABLE = "quantization_info"

# zquant's own zarr-python classes for the codec names zquant defines.
_ZQUANT_CLASSES = {
    "scale_offset": "ScaleOffset",
    "cast_value": "CastValue",
    "bitround": "BitRound",
    "packbits": "PackBits",
}
_BITROUND_NAMES = ("bitround", "numcodecs.bitround")
# Explicit mantissa bits of the types CF section 8.4 covers (float and double).
_CF_MANTISSA_BITS = {"float32": 23, "float64": 52}


def codec_object(codec: Any) -> Any:
    """A zarr-python codec object for ``codec``: a codec object as is, or a Zarr v3 codec
    JSON object (``{"name": ..., "configuration": ...}``) built as :mod:`zquant.zarr`'s
    class for the names zquant defines, else as the class zarr-python registers for it.

    Raises ``zquant.CodecError`` for a name neither knows.
    """
    if not isinstance(codec, dict):
        return codec
    name = codec.get("name")
    if name in _ZQUANT_CLASSES:
        from . import zarr as zq_zarr

        return getattr(zq_zarr, _ZQUANT_CLASSES[name]).from_dict(codec)
    import zarr.registry

    try:
        cls = zarr.registry.get_codec_class(str(name))
    except Exception as e:  # zarr's UnknownCodecError, KeyError in older versions
        raise _zquant.CodecError(f"codec {name!r}: zarr-python has no codec by that name ({e})")
    with warnings.catch_warnings():
        # zarr-python warns that numcodecs.* names are outside the Zarr v3 spec; the planner
        # offers them only when asked for readers that have them.
        warnings.simplefilter("ignore")
        return cls.from_dict(codec)


def codec_json(codec: Any) -> dict[str, Any]:
    """A codec object's Zarr v3 JSON (a dict as is)."""
    if isinstance(codec, dict):
        return codec
    return dict(codec.to_dict())


def _fill_from_json(fill: Any, dtype: np.dtype[Any]) -> Any:
    """A float fill value's Zarr JSON (a number, ``"NaN"``, ``"Infinity"``, ``"-Infinity"``
    or ``"0x..."`` bits) as a NumPy scalar of ``dtype``."""
    if isinstance(fill, str):
        special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if fill in special:
            return dtype.type(special[fill])
        if fill.startswith("0x"):
            words = np.array([int(fill, 16)], dtype=_dtypes.word_dtype(_dtypes.from_numpy(dtype)))
            return words.view(dtype)[0]
    return dtype.type(fill)


def _short(value: Any) -> str:
    """A configuration value in a few characters."""
    if isinstance(value, float):
        return f"{value:.6g}"
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 24 else text[:21] + "..."


def describe_codec(codec: dict[str, Any]) -> str:
    """One codec JSON object as a short line: ``scale_offset(offset=280, scale=20)``,
    ``cast_value(uint12, scalar_map)``, ``bitround(keepbits=7)``."""
    name = str(codec.get("name"))
    config = dict(codec.get("configuration") or {})
    if name == "cast_value":
        parts = [str(config.pop("data_type", "?"))]
        for key in ("rounding", "out_of_range"):
            if key in config:
                parts.append(f"{key}={config.pop(key)}")
        if config.pop("scalar_map", None):
            parts.append("scalar_map")
        parts += [f"{k}={_short(v)}" for k, v in config.items()]
        return f"{name}({', '.join(parts)})"
    if name == "packbits" and config.get("padding_encoding", "none") == "none":
        config.pop("padding_encoding", None)
    if not config:
        return name
    return f"{name}({', '.join(f'{k}={_short(v)}' for k, v in config.items())})"


def describe_chain(
    filters: Sequence[dict[str, Any]],
    serializer: dict[str, Any] | None,
    bytes_codecs: Sequence[dict[str, Any]] = (),
) -> str:
    """A chain's filters, serializer and own bytes->bytes codecs (``numcodecs.shuffle``)
    as one line (``bytes`` when the serializer is the default and there are no filters:
    the lossless baseline)."""
    parts = [describe_codec(c) for c in filters]
    if serializer is not None:
        parts.append(describe_codec(serializer))
    line = " -> ".join(parts) if parts else "bytes (lossless)"
    if bytes_codecs:
        line += " -> " + " -> ".join(describe_codec(c) for c in bytes_codecs)
    return line


def describe_codecs(codecs: Sequence[dict[str, Any]]) -> str:
    """A whole chain as it stands in an array's metadata (filters, serializer, compressors)
    as one line: the default ``bytes`` serializer left out, compressors after ``|``."""
    names = [c.get("name") for c in codecs]
    serializer_at = next(
        (i for i, c in enumerate(codecs) if c.get("name") in ("bytes", "packbits")), None
    )
    if serializer_at is None:
        return " -> ".join(describe_codec(c) for c in codecs)
    filters = list(codecs[:serializer_at])
    serializer = codecs[serializer_at]
    line = describe_chain(filters, None if names[serializer_at] == "bytes" else serializer)
    compressors = [describe_codec(c) for c in codecs[serializer_at + 1 :]]
    return line + (" | " + " -> ".join(compressors) if compressors else "")


@dataclass(frozen=True)
class Candidate:
    """One chain the planner weighed.

    ``bound`` is the error it guarantees on every element (``None`` when it has none, as
    when ruled out); ``bytes_codecs`` are the chain's own bytes->bytes codecs
    (``numcodecs.shuffle``), which go before the compressors; ``sample_bytes`` is the
    sample's size after the serializer and the compressors, and ``ratio`` the sample's uncompressed bytes over it; ``readers`` are
    the implementations that can open it; ``ruled_out`` says why it cannot be used.
    """

    name: str
    filters: tuple[dict[str, Any], ...]
    serializer: dict[str, Any] | None
    bound: float | None
    sample_bytes: int | None
    ratio: float | None
    readers: tuple[str, ...]
    ruled_out: str | None
    bytes_codecs: tuple[dict[str, Any], ...] = ()
    winner: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], winner: bool = False) -> Candidate:
        """From one entry of the planner's ``candidates`` JSON."""
        sample = data.get("sample_bytes")
        return cls(
            name=str(data.get("name", "")),
            filters=tuple(data.get("filters") or ()),
            serializer=data.get("serializer"),
            bound=None if data.get("bound") is None else float(data["bound"]),
            sample_bytes=None if sample is None else int(sample),
            ratio=None if data.get("ratio") is None else float(data["ratio"]),
            readers=tuple(str(r) for r in data.get("readers") or ()),
            ruled_out=data.get("ruled_out"),
            bytes_codecs=tuple(data.get("bytes_codecs") or ()),
            winner=winner,
        )

    @property
    def chain(self) -> str:
        """The filters and serializer as one line (empty for a candidate ruled out before
        it had codecs)."""
        if self.ruled_out and not self.filters and self.serializer is None:
            return ""
        return describe_chain(self.filters, self.serializer, self.bytes_codecs)

    def to_json(self) -> dict[str, Any]:
        """The planner's JSON form of this candidate (``bytes_codecs`` only when it has
        some)."""
        out = {
            "name": self.name,
            "filters": list(self.filters),
            "serializer": self.serializer,
            "bound": self.bound,
            "sample_bytes": self.sample_bytes,
            "ratio": self.ratio,
            "readers": list(self.readers),
            "ruled_out": self.ruled_out,
        }
        if self.bytes_codecs:
            out["bytes_codecs"] = list(self.bytes_codecs)
        return out


_COLUMNS = ("", "candidate", "chain", "bound", "sample bytes", "ratio", "readers", "ruled out")
# The text table leaves out the chain's parameters (the name says the chain); the HTML
# and Markdown tables have room for them.
_TEXT_COLUMNS = (0, 1, 3, 4, 5, 6, 7)


def _cells(c: Candidate) -> tuple[str, ...]:
    return (
        "*" if c.winner else "",
        c.name,
        c.chain,
        "" if c.bound is None else f"{c.bound:.6g}",
        "" if c.sample_bytes is None else f"{c.sample_bytes:,}",
        "" if c.ratio is None else f"{c.ratio:.3f}",
        ", ".join(c.readers),
        c.ruled_out or "",
    )


class Candidates(Sequence[Candidate]):
    """The planner's table: every candidate chain with its guarantee, its sample bytes and
    ratio, its readers, or why it was ruled out; the winner marked ``*``. Prints as text
    and renders as an HTML table in a notebook."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Sequence[Candidate]) -> None:
        self._rows = tuple(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return Candidates(self._rows[index])
        return self._rows[index]

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self._rows)

    def __repr__(self) -> str:
        return self.to_text()

    def to_text(self) -> str:
        """The table in aligned columns."""
        rows = [
            tuple(r[i] for i in _TEXT_COLUMNS)
            for r in [_COLUMNS, *(_cells(c) for c in self._rows)]
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(_TEXT_COLUMNS))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                 for r in rows]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The table in Markdown."""
        def row(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        lines = [row(_COLUMNS), row(["---"] * len(_COLUMNS))]
        lines += [row(_cells(c)) for c in self._rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in _COLUMNS)
        body = []
        for c in self._rows:
            cells = "".join(f"<td>{html.escape(x)}</td>" for x in _cells(c))
            style = ' style="font-weight:bold"' if c.winner else ""
            body.append(f"<tr{style}>{cells}</tr>")
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"

    def to_json(self) -> list[dict[str, Any]]:
        """The planner's JSON form of the candidates."""
        return [c.to_json() for c in self._rows]


class Plan:
    """The chain that stores one array smallest within the stated error, with its proof.

    Attributes
    ----------
    filters
        The array->array codecs, zarr-python codec objects (``filters=``).
    serializer
        The array->bytes codec object, or ``None`` for zarr's default ``bytes``.
    compressors
        The bytes->bytes codec objects: the winner's own (``numcodecs.shuffle``), then the
        compressors the sizes were measured with.
    bound
        The error the chain guarantees on every finite element, of the target's kind
        (relative for ``max_rel_error``, else absolute: :attr:`bound_kind`).
    candidates
        Every chain weighed: a :class:`Candidates` table.
    encoding
        The dict for this variable in xarray's ``to_zarr(encoding=...)`` (Zarr format 3).

    Examples
    --------
    >>> import numpy as np, zquant.choose
    >>> t = 280 + 10 * np.sin(np.linspace(0, 6, 4096)).astype(np.float32)
    >>> p = zquant.choose.plan(t, max_abs_error=0.05)
    >>> p.bound <= 0.05
    True
    """

    __slots__ = (
        "_candidates",
        "_compressors",
        "_data_type",
        "_fill",
        "_raw",
        "_stats",
        "_target",
        "_winner",
    )

    def __init__(
        self,
        planned: str | Mapping[str, Any],
        *,
        data_type: str,
        fill_value: Any,
        target: Mapping[str, float],
        compressors: Sequence[Any],
        stats: str | Mapping[str, Any] | None = None,
    ) -> None:
        raw = json.loads(planned) if isinstance(planned, str) else dict(planned)
        rows = raw.get("candidates") or []
        winner = int(raw.get("winner", 0))
        if not 0 <= winner < len(rows):
            raise _zquant.CodecError(
                f"plan: the planner's winner {winner} is not one of its {len(rows)} candidates"
            )
        self._raw = raw
        self._candidates = Candidates(
            [Candidate.from_json(r, winner=(i == winner)) for i, r in enumerate(rows)]
        )
        self._winner = winner
        self._data_type = str(data_type)
        self._fill = fill_value
        self._target = dict(target)
        self._compressors = [codec_object(c) for c in compressors]
        self._stats = json.loads(stats) if isinstance(stats, str) else stats

    # -- the winner -----------------------------------------------------------------------
    @property
    def winner(self) -> Candidate:
        """The winning candidate's row."""
        winner: Candidate = self._candidates[self._winner]
        return winner

    @property
    def filters(self) -> list[Any]:
        """The winner's array->array codecs as zarr-python codec objects."""
        return [codec_object(c) for c in self.winner.filters]

    @property
    def serializer(self) -> Any:
        """The winner's array->bytes codec object, or ``None`` for zarr's default ``bytes``."""
        s = self.winner.serializer
        return None if s is None else codec_object(s)

    @property
    def compressors(self) -> list[Any]:
        """The bytes->bytes codec objects: the winner's own (``numcodecs.shuffle``, when it
        has one), then the compressors (zarr's zstd at level 3 unless given)."""
        own = [codec_object(c) for c in self.winner.bytes_codecs]
        return own + list(self._compressors)

    @property
    def bound(self) -> float:
        """The error the winner guarantees on every finite element."""
        b = self._raw.get("bound", self.winner.bound)
        return float(b) if b is not None else math.nan

    @property
    def bound_kind(self) -> str:
        """What :attr:`bound` bounds: ``"max_rel_error"`` (``|x' - x| <= bound * |x|``)
        for a relative target, else ``"max_abs_error"`` (``|x' - x| <= bound``; an
        information target is planned as the absolute bound bitround at its keepbits
        guarantees)."""
        return "max_rel_error" if "max_rel_error" in self._target else "max_abs_error"

    @property
    def abs_bound(self) -> float | None:
        """The absolute error the winner guarantees, whatever the target's kind (``None``
        when the planner does not say)."""
        b = self._raw.get("abs_bound")
        return None if b is None else float(b)

    @property
    def target(self) -> dict[str, float]:
        """The target asked for: ``{"max_abs_error": e}``, ``{"max_rel_error": r}`` or
        ``{"inflevel": level}``."""
        return dict(self._target)

    @property
    def readers(self) -> tuple[str, ...]:
        """The implementations that can read the winner's chain."""
        return self.winner.readers

    @property
    def candidates(self) -> Candidates:
        """Every chain weighed, the winner marked."""
        return self._candidates

    @property
    def data_type(self) -> str:
        """The array's Zarr data type name."""
        return self._data_type

    @property
    def dtype(self) -> np.dtype[Any]:
        """The array's NumPy dtype."""
        return _dtypes.to_numpy(self._data_type)

    @property
    def fill_value(self) -> Any:
        """The array's fill value (a NumPy scalar of its dtype)."""
        return _fill_from_json(self._fill, self.dtype)

    @property
    def fill_value_json(self) -> Any:
        """The array's fill value in Zarr's JSON."""
        return self._fill

    @property
    def stats(self) -> dict[str, Any] | None:
        """The data's statistics the plan was made from (the planner's JSON), if kept."""
        return None if self._stats is None else dict(self._stats)

    @property
    def codecs(self) -> list[dict[str, Any]]:
        """The whole chain as it will stand in the array's metadata: filters, serializer
        (``bytes`` by default) and compressors, as Zarr v3 JSON (the codec objects' own
        ``to_dict()``, which leave out defaults the planner's JSON may spell out; tuples a
        ``to_dict()`` holds become lists, as in ``zarr.json``)."""
        serializer = self.serializer
        chain = [
            *(codec_json(f) for f in self.filters),
            codec_json(serializer)
            if serializer is not None
            else {"name": "bytes", "configuration": {"endian": "little"}},
            *(codec_json(c) for c in self.compressors),
        ]
        return list(json.loads(json.dumps(chain)))

    @property
    def keepbits(self) -> int | None:
        """The mantissa bits kept when the winner is bitround alone, else ``None``."""
        f = self.winner.filters
        if len(f) != 1 or self.winner.serializer is not None:
            return None
        if f[0].get("name") not in _BITROUND_NAMES:
            return None
        k = (f[0].get("configuration") or {}).get("keepbits")
        return None if k is None else int(k)

    @property
    def encoding(self) -> dict[str, Any]:
        """The variable's encoding for xarray's ``to_zarr(..., zarr_format=3, encoding=)``:
        ``filters``, ``compressors``, ``fill_value`` and, unless it is the default
        ``bytes``, ``serializer``."""
        enc: dict[str, Any] = {
            "filters": self.filters,
            "compressors": self.compressors,
            "fill_value": self.fill_value,
        }
        serializer = self.serializer
        if serializer is not None:
            enc["serializer"] = serializer
        return enc

    # -- CF 1.12 section 8.4 -------------------------------------------------------------------
    def cf_attrs(self, container: str = CF_QUANTIZATION_VARIABLE) -> dict[str, Any]:
        """The data variable's CF 1.12 section 8.4 attributes when the winner is BitRound
        alone on float32 or float64 (``quantization`` naming ``container``, and
        ``quantization_nsb``, the explicit mantissa bits kept, 1 to 23 or 52); else ``{}``
        (other chains are not quantization in the convention's sense)."""
        k = self.keepbits
        top = _CF_MANTISSA_BITS.get(self._data_type)
        if k is None or top is None or not 1 <= k <= top:
            return {}
        return {"quantization": container, "quantization_nsb": k}

    def cf_implementation(self) -> str:
        """The CF ``implementation`` text of whatever runs the winner's bitround in this
        process: zquant for ``bitround``, and for ``numcodecs.bitround`` (zarr-python's
        wrapper, which looks the codec up in numcodecs' registry) zquant after
        :func:`zquant.use`, numcodecs otherwise."""
        from . import __version__

        f = self.winner.filters
        if f and f[0].get("name") == "numcodecs.bitround":
            try:
                import numcodecs
                import numcodecs.registry
            except ImportError:
                pass
            else:
                runner = numcodecs.registry.codec_registry.get("bitround")
                if not getattr(runner, "__module__", "").startswith("zquant"):
                    return (
                        f"numcodecs version {numcodecs.__version__} "
                        f"(numcodecs.bitround, planned by zquant {__version__})"
                    )
                return f"zquant version {__version__} (numcodecs.bitround)"
        return f"zquant version {__version__}"

    # -- forms ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The plan as JSON-able data: data type, fill value, target, the bound, the whole
        chain (``codecs``) and the candidates."""
        return {
            "data_type": self._data_type,
            "fill_value": self._fill,
            "target": self.target,
            "bound": self.bound,
            "readers": list(self.readers),
            "codecs": self.codecs,
            "candidates": self._candidates.to_json(),
        }

    def summary(self) -> str:
        """One line: the winning chain, its bound and the sample's ratio."""
        (kind, value), = self._target.items()
        w = self.winner
        ratio = "" if w.ratio is None else f", sample ratio {w.ratio:.3f}"
        return f"{w.chain}: bound {self.bound:.6g} ({kind} {value:g}){ratio}"

    def __repr__(self) -> str:
        return f"Plan({self._data_type}, {self.summary()})\n{self._candidates.to_text()}"

    def _repr_html_(self) -> str:
        return (
            f"<p><b>{html.escape(self._data_type)}</b>: {html.escape(self.summary())}</p>"
            + self._candidates._repr_html_()
        )


class DatasetPlan(Mapping[str, Plan]):
    """A :class:`Plan` per data variable of an xarray Dataset, and the encoding for all.

    ``encoding`` goes straight into ``ds.to_zarr(store, zarr_format=3, encoding=...)``;
    variables without a target (or not of a float type) get the compressors alone, stored
    losslessly. :meth:`annotate` adds the CF 1.12 section 8.4 attributes where a variable
    is quantized by BitRound.
    """

    __slots__ = ("_compressors", "_lossless", "_plans")

    def __init__(
        self,
        plans: Mapping[str, Plan],
        lossless: Sequence[str] = (),
        compressors: Sequence[Any] = (),
    ) -> None:
        self._plans = dict(plans)
        self._lossless = tuple(lossless)
        self._compressors = [codec_object(c) for c in compressors]

    def __getitem__(self, name: str) -> Plan:
        return self._plans[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._plans)

    def __len__(self) -> int:
        return len(self._plans)

    @property
    def lossless(self) -> tuple[str, ...]:
        """The data variables stored losslessly (no target, or not a float type)."""
        return self._lossless

    @property
    def encoding(self) -> dict[str, dict[str, Any]]:
        """Every data variable's encoding, for ``to_zarr(zarr_format=3, encoding=...)``."""
        enc = {name: p.encoding for name, p in self._plans.items()}
        for name in self._lossless:
            enc[name] = {"compressors": list(self._compressors)}
        return enc

    @property
    def attrs(self) -> dict[str, dict[str, Any]]:
        """Each quantized variable's CF 1.12 section 8.4 attributes (only those BitRound
        quantizes)."""
        out = {}
        for name, p in self._plans.items():
            a = p.cf_attrs()
            if a:
                out[name] = a
        return out

    def annotate(self, ds: Any) -> Any:
        """A copy of ``ds`` with the CF 1.12 section 8.4 record of the quantization: each
        BitRound-quantized variable gets ``quantization`` and ``quantization_nsb``, and a
        scalar quantization variable (``quantization_info``) holds ``algorithm`` and
        ``implementation``. ``ds`` is returned unchanged when no variable is quantized so.
        """
        quantized = [n for n, p in self._plans.items() if p.cf_attrs()]
        if not quantized:
            return ds
        import xarray as xr

        out = ds.copy()
        # One quantization variable per implementation (zquant, or numcodecs for
        # numcodecs.bitround), as the convention's `implementation` is one text.
        containers: dict[str, str] = {}
        for name in quantized:
            plan = self._plans[name]
            implementation = plan.cf_implementation()
            if implementation not in containers:
                suffix = f"_{len(containers)}" if containers else ""
                container = CF_QUANTIZATION_VARIABLE + suffix
                containers[implementation] = container
                out[container] = xr.DataArray(
                    np.array(0, dtype=np.int8),
                    attrs={"algorithm": "bitround", "implementation": implementation},
                )
            out[name].attrs.update(plan.cf_attrs(containers[implementation]))
        return out

    def to_json(self) -> dict[str, Any]:
        """Every variable's plan as JSON-able data, and the lossless variables."""
        return {
            "variables": {name: p.to_json() for name, p in self._plans.items()},
            "lossless": list(self._lossless),
        }

    def __repr__(self) -> str:
        lines = [f"DatasetPlan ({len(self._plans)} planned, {len(self._lossless)} lossless)"]
        lines += [f"  {name}: {p.summary()}" for name, p in self._plans.items()]
        lines += [f"  {name}: lossless" for name in self._lossless]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [f"<h4>{html.escape(n)}</h4>{p._repr_html_()}" for n, p in self._plans.items()]
        if self._lossless:
            parts.append(f"<p>lossless: {html.escape(', '.join(self._lossless))}</p>")
        return "".join(parts)
