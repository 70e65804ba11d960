#!/usr/bin/env bash
# The Python package's CI: a fresh CPython 3.12 venv under target/, `pip install ./python`
# exactly as a user installs it (maturin builds the extension from the workspace), the
# pinned test dependencies, then pytest. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${ZQUANT_PYTHON:-$(pyenv root 2>/dev/null || echo /root/.pyenv)/versions/3.12.1/bin/python3}"
VENV=target/py-ci-venv
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q -r python/tests/requirements.txt
"$VENV/bin/pip" install -q ./python
# From the repository root, so that python/zquant (without the extension) is not imported
# in place of the installed package.
"$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests
# `zquant quantize` end to end, as a user runs it (the console script, a LocalCluster of two
# worker processes): plan, write, read back and check every element, print the report.
QDIR=target/py-ci-quantize
rm -rf "$QDIR" && mkdir -p "$QDIR"
"$VENV/bin/python" python/tests/small_dataset.py "$QDIR/src.zarr"
if ! "$VENV/bin/zquant" quantize "$QDIR/src.zarr" "$QDIR/dst.zarr" --max-abs-error t2m=0.05 \
    --max-abs-error tp=0.1 --max-rel-error sst=0.0001 >"$QDIR/out.txt" 2>"$QDIR/err.txt"; then
    cat "$QDIR/out.txt" "$QDIR/err.txt"
    exit 1
fi
sed -n '/^| variable/,/^$/p' "$QDIR/out.txt"
