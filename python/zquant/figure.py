"""A planner's figure (matplotlib, the ``plot`` extra): per variable, the real information
of each bit position with the bits bitround keeps marked (as xbitinfo plots it), and each
candidate's sample bytes against the bound it guarantees."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _zquant
from .plans import Plan

__all__ = ["plot_plans"]


def _kept_bits(plan: Plan) -> int | None:
    """The mantissa bits kept by the winner if it is bitround, else by the best bitround
    candidate that can be used."""
    if plan.keepbits is not None:
        return plan.keepbits
    best = None
    for c in plan.candidates:
        if c.ruled_out or len(c.filters) != 1 or c.serializer is not None:
            continue
        f = c.filters[0]
        if f.get("name") in ("bitround", "numcodecs.bitround"):
            k = (f.get("configuration") or {}).get("keepbits")
            if k is not None and (best is None or (c.sample_bytes or 0) < (best[1] or 0)):
                best = (int(k), c.sample_bytes)
    return None if best is None else best[0]


def _float_layout(dtype: np.dtype[Any]) -> tuple[int, int]:
    """A float type's exponent and explicit mantissa bits."""
    try:
        info: Any = np.finfo(dtype)
    except (TypeError, ValueError):
        import ml_dtypes

        info = ml_dtypes.finfo(dtype)
    return int(info.nexp), int(info.nmant)


def plot_plans(
    plans: Mapping[str, Plan],
    information: Mapping[str, np.ndarray[Any, Any]],
    path: str | None = None,
) -> Any:
    """One row per variable: left, ``information[name]`` (bits per bit position, most
    significant first) with the sign, exponent and kept mantissa bits marked; right, each
    usable candidate's sample bytes against its bound, the winner filled. Saved to
    ``path`` if given; returns the matplotlib Figure.

    Raises ``zquant.CodecError`` when matplotlib is missing (install ``zquant[plot]``).
    """
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise _zquant.CodecError(
            "the figure needs matplotlib: pip install 'zquant[plot]'"
        ) from e
    names = list(plans)
    fig, axes = plt.subplots(
        len(names), 2, figsize=(11, 3.2 * max(1, len(names))), squeeze=False
    )
    for row, name in enumerate(names):
        plan = plans[name]
        left, right = axes[row]
        info = information.get(name)
        if info is not None:
            bits = len(info)
            exponent_bits, mantissa_bits = _float_layout(plan.dtype)
            left.bar(np.arange(bits), info, color="tab:blue", width=0.8)
            left.axvspan(-0.5, 0.5, color="tab:gray", alpha=0.15, label="sign")
            left.axvspan(0.5, exponent_bits + 0.5, color="tab:orange", alpha=0.1, label="exponent")
            kept = _kept_bits(plan)
            if kept is not None:
                edge = exponent_bits + kept + 0.5
                left.axvline(edge, color="tab:red", linestyle="--", label=f"keepbits {kept}")
            left.set_xlim(-0.5, bits - 0.5)
            left.set_xlabel(f"bit position ({mantissa_bits} mantissa bits)")
            left.set_ylabel("real information (bits)")
            left.legend(loc="upper right", fontsize="small")
        else:
            left.text(0.5, 0.5, "no bit information", ha="center", va="center")
            left.set_axis_off()
        left.set_title(f"{name} ({plan.data_type})")
        usable = [
            (c, c.bound, c.sample_bytes)
            for c in plan.candidates
            if c.bound is not None and c.sample_bytes
        ]
        for c, bound, size in usable:
            if bound <= 0:
                # Lossless: no bound to place on a log axis; the line to beat.
                right.axhline(size, color="tab:gray", linestyle=":", label=c.name)
                continue
            right.scatter(
                bound,
                size,
                marker="o",
                s=60 if c.winner else 30,
                facecolors="tab:red" if c.winner else "none",
                edgecolors="tab:red" if c.winner else "tab:blue",
            )
            right.annotate(c.name, (bound, size), fontsize="x-small",
                           xytext=(4, 2), textcoords="offset points")
        if any(bound > 0 for _, bound, _ in usable):
            right.set_xscale("log")
        right.set_ylim(bottom=0)
        if any(bound <= 0 for _, bound, _ in usable):
            right.legend(loc="lower right", fontsize="small")
        (kind, value), = plan.target.items()
        right.set_title(f"{kind} {value:g}: bound {plan.bound:.3g}")
        right.set_xlabel("guaranteed bound")
        right.set_ylabel("sample bytes")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig
