#!/usr/bin/env bash
# The Python package's CI, as a user gets the package: maturin builds the abi3 wheel (one
# wheel for every CPython from 3.12 on), then a fresh CPython 3.12 venv under target/ installs
# that wheel and the pinned test dependencies and runs pytest, with no Rust toolchain on
# PATH (so nothing can be compiled there), then type-checks the package (mypy --strict, and
# stubtest for the compiled module's stub). Exits non-zero on any failure.
#
# ZQUANT_MATURIN_PROFILE=dev builds the wheel unoptimized (quicker; for trying the script).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${ZQUANT_PYTHON:-$(pyenv root 2>/dev/null || echo /root/.pyenv)/versions/3.12.1/bin/python3}"
BUILD=target/py-build-venv
VENV=target/py-ci-venv
WHEELS=target/wheels

# 1. The wheel, built where cargo is.
[ -x "$BUILD/bin/maturin" ] || { "$PY" -m venv "$BUILD" && "$BUILD/bin/pip" install -q "maturin>=1.9,<2"; }
rm -rf "$WHEELS"
PROFILE_ARGS=(--release)
[ "${ZQUANT_MATURIN_PROFILE:-release}" = dev ] && PROFILE_ARGS=()
"$BUILD/bin/maturin" build "${PROFILE_ARGS[@]}" -m python/Cargo.toml -o "$WHEELS"
shopt -s nullglob
wheels=("$WHEELS"/zquant-*-cp312-abi3-*.whl)
[ "${#wheels[@]}" -eq 1 ] || { echo "expected one cp312-abi3 wheel in $WHEELS: $(ls "$WHEELS")" >&2; exit 1; }

# 2. A fresh venv without a Rust toolchain: the wheel installs and the tests pass from it.
NO_RUST_PATH="$PWD/$VENV/bin:/usr/local/bin:/usr/bin:/bin"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
env PATH="$NO_RUST_PATH" bash -c '! command -v cargo && ! command -v rustc' >/dev/null \
    || { echo "cargo or rustc is on $NO_RUST_PATH" >&2; exit 1; }
env PATH="$NO_RUST_PATH" "$VENV/bin/pip" install -q --upgrade pip
env PATH="$NO_RUST_PATH" "$VENV/bin/pip" install -q -r python/tests/requirements.txt
env PATH="$NO_RUST_PATH" "$VENV/bin/pip" install -q --only-binary zquant "${wheels[0]}"
# From the repository root, so that python/zquant (without the extension) is not imported
# in place of the installed package.
env PATH="$NO_RUST_PATH" "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests
# Types: mypy --strict on the package's source ([tool.mypy] in python/pyproject.toml; the
# modules' own annotations and zquant/_zquant.pyi), then stubtest: that stub, as the wheel
# ships it, against the compiled module the wheel installed (run from the repository root,
# so the installed package is the one imported).
(cd python && env PATH="$NO_RUST_PATH" "../$VENV/bin/python" -m mypy)
env PATH="$NO_RUST_PATH" "$VENV/bin/python" -m mypy.stubtest zquant._zquant
# `zquant quantize` end to end, as a user runs it (the console script, a LocalCluster of two
# worker processes): plan, write, read back and check every element, print the report.
QDIR=target/py-ci-quantize
rm -rf "$QDIR" && mkdir -p "$QDIR"
env PATH="$NO_RUST_PATH" "$VENV/bin/python" python/tests/small_dataset.py "$QDIR/src.zarr"
if ! env PATH="$NO_RUST_PATH" "$VENV/bin/zquant" quantize "$QDIR/src.zarr" "$QDIR/dst.zarr" --max-abs-error t2m=0.05 \
    --max-abs-error tp=0.1 --max-rel-error sst=0.0001 >"$QDIR/out.txt" 2>"$QDIR/err.txt"; then
    cat "$QDIR/out.txt" "$QDIR/err.txt"
    exit 1
fi
sed -n '/^| variable/,/^$/p' "$QDIR/out.txt"
