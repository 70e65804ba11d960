"""The ``zquant`` command.

``zquant quantize SRC DST --max-abs-error t2m=0.05 --max-abs-error tp=0.1`` plans each
data variable of SRC (any store xarray opens), writes DST (Zarr format 3) with dask, on a
local cluster of worker processes or the scheduler given, then reads DST back
chunk-parallel and checks every element: each finite value within its variable's bound,
NaN, infinities and fill values kept. It prints a report and writes it beside DST as
``DST.report.md`` and ``DST.report.json``.

Needs the ``cli`` extra (xarray, dask, distributed); ``tqdm`` draws progress bars when
installed, ``matplotlib`` the ``--figure``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from . import CodecError

__all__ = ["main"]

T = TypeVar("T")


def _progress(items: Iterable[T], total: int | None = None, desc: str = "") -> Iterator[T]:
    """``items`` with a progress bar: tqdm's when installed, else a line when the step
    starts and one when it ends."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(f"{desc} ...", file=sys.stderr, flush=True)
        yield from items
        print(f"{desc} done", file=sys.stderr, flush=True)
        return
    yield from tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False)


def _assignments(values: Sequence[str] | None, flag: str) -> dict[str, float] | float | None:
    """``--flag VAR=VALUE`` (repeatable) as ``{VAR: VALUE}``, or ``--flag VALUE`` alone as
    one number for every variable."""
    if not values:
        return None
    per: dict[str, float] = {}
    every: float | None = None
    for text in values:
        name, sep, value = text.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            raise CodecError(f"{flag} {text!r}: expected VAR=NUMBER or NUMBER") from None
        if not sep:
            if every is not None:
                raise CodecError(f"{flag} is given twice for every variable")
            every = number
        elif name in per:
            raise CodecError(f"{flag} gives {name} twice")
        else:
            per[name] = number
    if every is not None and per:
        raise CodecError(
            f"{flag}: give either one number for every variable or VAR=NUMBER, not both"
        )
    return per if per else every


def _chunks(values: Sequence[str]) -> dict[str, int]:
    """``--chunks DIM=N`` (repeatable) as ``{DIM: N}``."""
    out = {}
    for text in values:
        dim, sep, n = text.partition("=")
        if not sep or not n.isdigit() or int(n) < 1:
            raise CodecError(f"--chunks {text!r}: expected DIM=N, N a positive integer")
        out[dim] = int(n)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zquant", description="zquant: Zarr's lossy codecs, planned and checked."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    q = commands.add_parser(
        "quantize",
        help="store a dataset as small as each variable's error bound allows, and check it",
        description=(
            "Plan each data variable of SRC for its error target, write DST (Zarr format 3) "
            "with dask, read it back chunk-parallel and check every element, and report."
        ),
    )
    q.add_argument("src", metavar="SRC", help="the dataset: any store xarray opens")
    q.add_argument("dst", metavar="DST", help="the Zarr v3 store to write (replaced)")
    q.add_argument("--max-abs-error", action="append", metavar="VAR=E",
                   help="pointwise |x' - x| <= E for VAR (repeat per variable; E alone: all)")
    q.add_argument("--max-rel-error", action="append", metavar="VAR=R",
                   help="pointwise |x' - x| <= R |x| for VAR")
    q.add_argument("--inflevel", action="append", metavar="VAR=L",
                   help="keep the fraction L of VAR's real information (xbitinfo's rule)")
    q.add_argument("--chunks", action="append", metavar="DIM=N",
                   help="rechunk SRC along DIM (repeat per dimension; default: SRC's own "
                        "chunks, which are DST's)")
    q.add_argument("--readers", choices=("zarr-python", "zarrs", "zarr-python+zarrs", "any"), default="zarr-python",
                   help="only chains plain zarr-python reads (default), or any zquant writes")
    q.add_argument("--headroom", type=float, default=0.0,
                   help="fraction of each range kept free above and below for data to come")
    q.add_argument("--lossless-fallback", action="store_true",
                   help="store a variable losslessly when no lossy chain meets its target "
                        "(default: stop with the smallest bound any chain gives)")
    q.add_argument("--scheduler", metavar="ADDRESS",
                   help="a dask scheduler to run on (default: a local cluster)")
    q.add_argument("--workers", type=int, default=2,
                   help="worker processes of the local cluster (default 2)")
    q.add_argument("--dry-run", action="store_true", help="print the plans; write nothing")
    q.add_argument("--report", metavar="PATH",
                   help="write the report as PATH.md and PATH.json (default: DST.report)")
    q.add_argument("--figure", metavar="PATH",
                   help="also draw the bit information and the candidates (needs matplotlib)")
    return parser


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int) -> Iterator[Any]:
    """A dask distributed client: on ``scheduler``, or on a local cluster of ``workers``
    single-threaded processes. zarr resolves zquant's codec names to zquant's classes on
    every worker (``zquant.use``)."""
    import zarr
    from distributed import Client, LocalCluster

    import zquant

    first = zarr.config.get("codecs.scale_offset", None) != "zquant.zarr.ScaleOffset"
    zquant.use()  # before the workers start: they inherit its environment
    try:
        if scheduler:
            with Client(scheduler) as client:
                client.run(zquant.use)
                yield client
            return
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            client.run(zquant.use)
            yield client
    finally:
        if first:
            zquant.unuse()  # the caller's process as it was (the command may run in-process)


def _run_blocks(
    client: Any, tasks: Sequence[Any], desc: str
) -> list[Any]:
    """Compute ``tasks`` (dask delayed) on the cluster with a progress bar per task."""
    from distributed import as_completed

    futures = client.compute(list(tasks))
    for future in _progress(as_completed(futures), total=len(futures), desc=desc):
        future.result()  # raises a task's error here
    return [f.result() for f in futures]


def _write_block(block: Any, target: Any, block_info: Any = None) -> Any:
    import numpy as np

    location = block_info[0]["array-location"]
    target[tuple(slice(start, stop) for start, stop in location)] = block
    return np.zeros((1,) * block.ndim, dtype=bool)


def _write(client: Any, src: Any, target: Any, desc: str) -> None:
    """Write the dask array ``src`` into the zarr array ``target`` chunk by chunk (its
    chunks are the array's, as xarray made it), a task per chunk."""
    import dask.array as da
    import numpy as np

    written = da.map_blocks(
        _write_block,
        src,
        target=target,
        dtype=bool,
        chunks=tuple((1,) * len(c) for c in src.chunks),
        meta=np.zeros((0,) * src.ndim, dtype=bool),
    )
    _run_blocks(client, written.to_delayed().ravel().tolist(), desc)


def _check_task(src: Any, dst: Any, kind: str, bound: float, fill: Any, offset: Any) -> Any:
    from .verify import check_block

    return check_block(src, dst, kind, bound, fill, offset)  # type: ignore[arg-type]


def _verify(client: Any, src: Any, dst: Any, kind: str, bound: float, fill: Any, desc: str) -> Any:
    """Check the decoded dask array ``dst`` against ``src`` chunk-parallel."""
    import dask
    import numpy as np

    from .verify import Check

    dst = dst.rechunk(src.chunks)
    starts = [np.concatenate([[0], np.cumsum(c)]) for c in src.chunks]
    s_grid, d_grid = src.to_delayed(), dst.to_delayed()
    tasks = []
    for index in np.ndindex(s_grid.shape):
        offset = tuple(int(starts[d][i]) for d, i in enumerate(index))
        tasks.append(
            dask.delayed(_check_task)(s_grid[index], d_grid[index], kind, bound, fill, offset)
        )
    total = Check()
    for c in _run_blocks(client, tasks, desc):
        total = total.merge(c)
    return total


def _report_paths(dst: str, report: str | None) -> tuple[Path, Path]:
    base = report if report else dst.rstrip("/\\") + ".report"
    for suffix in (".json", ".md"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return Path(base + ".md"), Path(base + ".json")


def _markdown(src: str, dst: str, variables: dict[str, dict[str, Any]], plans: Any,
              failures: list[str]) -> str:
    lines = [
        f"# zquant quantize {src} -> {dst}",
        "",
        "Bytes before: the variable in memory (uncompressed); after: its stored chunks in "
        "DST. Bound: the error the chain guarantees on every finite element (absolute, or "
        "relative for a relative target); measured: the largest absolute error read back.",
        "",
        "| variable | chain | bound | measured max abs error | bytes before | bytes after "
        "| ratio | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    from .plans import describe_codecs

    for name, v in variables.items():
        chain = describe_codecs(v["codecs"])
        lines.append(
            f"| {name} | {chain.replace('|', '/')} | {v['bound']:.6g} | "
            f"{v['max_abs_error']:.6g} | {v['bytes_before']:,} | {v['bytes_after']:,} | "
            f"{v['ratio']:.3f} | {v['seconds']:.2f} |"
        )
    if failures:
        lines += ["", "## Verification failed", ""] + [f"- {f}" for f in failures]
    for name, p in plans.items():
        lines += ["", f"## {name}: candidates", "", p.candidates.to_markdown()]
    return "\n".join(lines) + "\n"


def _information(plans: Any, ds: Any) -> dict[str, Any]:
    """Each planned variable's bit information, for the figure: from the planner's
    statistics when they hold the pair counts, else counted (one more read)."""
    from . import _zquant
    from . import choose

    out = {}
    for name, p in plans.items():
        counts = (p.stats or {}).get("counts")
        if counts:
            import numpy as np

            def row(key: str) -> Any:
                v = np.zeros(64, dtype=np.uint64)
                v[: len(counts[key])] = counts[key]
                return v

            packed = np.concatenate([row("a"), row("b"), row("both")])
            out[name] = _zquant.bit_information(
                p.data_type, int(counts["axis"]), int(counts["pairs"]), packed, 0.99
            )
        else:
            try:
                out[name] = choose.bitinformation(ds[name])
            except CodecError:
                continue
    return out


def quantize(args: argparse.Namespace) -> int:
    """``zquant quantize``: returns the exit status (0 when every element checked)."""
    with warnings.catch_warnings():
        # zarr-python's notes that consolidated metadata and numcodecs.* names are
        # outside the Zarr v3 spec: the planner chose them knowingly.
        warnings.filterwarnings("ignore", message=".*[Cc]onsolidated metadata.*")
        warnings.filterwarnings("ignore", message=".*[Nn]umcodecs.*")
        return _quantize(args)


def _quantize(args: argparse.Namespace) -> int:
    try:
        import xarray as xr
    except ImportError:
        raise CodecError("zquant quantize needs xarray, dask and distributed: "
                         "pip install 'zquant[cli]'") from None
    from . import choose

    targets: dict[str, Any] = {
        "max_abs_error": _assignments(args.max_abs_error, "--max-abs-error"),
        "max_rel_error": _assignments(args.max_rel_error, "--max-rel-error"),
        "inflevel": _assignments(args.inflevel, "--inflevel"),
    }
    if all(t is None for t in targets.values()):
        raise CodecError("give a target: --max-abs-error VAR=E, --max-rel-error VAR=R or "
                         "--inflevel VAR=L")
    ds = xr.open_dataset(args.src, chunks={})
    if args.chunks:
        ds = ds.chunk(_chunks(args.chunks))
    with _client(args.scheduler, args.workers) as client:
        started: dict[str, float] = {}

        def timed(names: Iterable[str]) -> Iterator[str]:
            for name in _progress(list(names), desc="plan"):
                started[name] = time.perf_counter()
                yield name

        t0 = time.perf_counter()
        plans = choose.plan_dataset(
            ds, headroom=args.headroom, readers=args.readers,
            lossless_fallback=args.lossless_fallback, progress=timed, **targets
        )
        plan_seconds = _plan_seconds(started, time.perf_counter())
        for name, p in plans.items():
            print(f"{name}: {p.summary()}")
            print(p.candidates.to_text(), end="\n\n")
        for name in plans.lossless:
            print(f"{name}: stored losslessly (no target, or not a float type)\n")
        if args.dry_run:
            print(f"planned in {time.perf_counter() - t0:.2f} s; --dry-run: nothing written")
            return 0
        out = plans.annotate(ds)
        encoding = plans.encoding
        # Metadata and in-memory variables now; the dask variables a chunk per task below.
        out.to_zarr(
            args.dst, mode="w", zarr_format=3, encoding=encoding, compute=False,
            consolidated=False,
        )
        import zarr

        group = zarr.open_group(args.dst, mode="r+")
        for name, var in out.variables.items():
            if name not in out.data_vars and hasattr(var.data, "dask"):
                _write(client, var.data, group[str(name)], f"write {name}")
        back = xr.open_zarr(args.dst, chunks={}, zarr_format=3, consolidated=False)
        variables: dict[str, dict[str, Any]] = {}
        failures: list[str] = []
        for name in [*plans, *plans.lossless]:
            var = ds[name]
            t1 = time.perf_counter()
            if hasattr(var.data, "dask"):
                _write(client, var.data, group[name], f"write {name}")
            planned = plans.get(name)
            kind = "exact" if planned is None else planned.bound_kind
            bound = 0.0 if planned is None else planned.bound
            fill = math.nan if planned is None else planned.fill_value
            src_data = var.data if hasattr(var.data, "dask") else _as_dask(var)
            check = _verify(client, src_data, back[name].data, kind, bound, fill,
                            f"check {name}")
            seconds = plan_seconds.get(name, 0.0) + time.perf_counter() - t1
            array = group[name]
            assert isinstance(array, zarr.Array)
            before = int(var.size * var.dtype.itemsize)
            after = int(array.nbytes_stored())
            codecs: Any = array.metadata.to_dict()["codecs"]
            variables[name] = {
                "codecs": list(codecs),
                "bound": bound,
                "max_abs_error": check.max_abs_error,
                "bytes_before": before,
                "bytes_after": after,
                "ratio": before / after if after else math.inf,
                "seconds": seconds,
            }
            if not check.ok:
                index, value, decoded = check.first
                failures.append(
                    f"{name}: {check.violations} of {check.elements} elements break "
                    f"{kind} {bound:g}; the first at {list(index)}: {value!r} read back as "
                    f"{decoded!r}"
                )
        zarr.consolidate_metadata(args.dst, zarr_format=3)
        figure = None
        if args.figure:
            from .figure import plot_plans

            plot_plans(dict(plans), _information(plans, ds), args.figure)
            figure = args.figure
    md_path, json_path = _report_paths(args.dst, args.report)
    md = _markdown(args.src, args.dst, variables, plans, failures)
    md_path.write_text(md)
    json_path.write_text(json.dumps({"variables": variables}, indent=2) + "\n")
    print(md)
    print(f"report: {md_path}, {json_path}" + (f"; figure: {figure}" if figure else ""))
    for f in failures:
        print(f"verification failed: {f}", file=sys.stderr)
    return 1 if failures else 0


def _plan_seconds(started: dict[str, float], end: float) -> dict[str, float]:
    """Each variable's planning time, from when its planning started to the next's."""
    names = list(started)
    out = {}
    for i, name in enumerate(names):
        stop = started[names[i + 1]] if i + 1 < len(names) else end
        out[name] = stop - started[name]
    return out


def _as_dask(var: Any) -> Any:
    import dask.array as da

    return da.from_array(var.values, chunks=var.shape or ())


def main(argv: Sequence[str] | None = None) -> int:
    """The console script's entry point; returns the exit status (2 for bad arguments or
    a plan that cannot be made, 1 when the check finds an element out of bound)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "quantize":
            return quantize(args)
    except CodecError as e:
        print(f"zquant: {e}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

