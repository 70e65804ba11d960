#!/usr/bin/env bash
# Interop with zarr-python (issue 11): stores written by zarr-python 3.4 are read by zquant
# (examples zarr_read/zarr_write, feature `zarrs`), and zarr-python reads what zquant writes.
# Creates its venv in target/interop-venv from Python >= 3.12 (zarr-python 3.4 needs it).
# Ends with `N passed, N failed`; exits non-zero when a check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${ZQUANT_PYTHON:-/root/.pyenv/versions/3.12.1/bin/python3}
VENV=target/interop-venv
OUT=target/interop
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
# zquant's Python package, for its data types (bfloat16, float8_*, int4, ...: zquant.dtypes)
# and the stores written with its codecs; the scripts pin the peers' codecs otherwise.
"$VENV/bin/pip" install --quiet --disable-pip-version-check ./python
cargo build --release --features zarrs --example zarr_read --example zarr_write --example zarr_quantize
# zarr-python prints asyncio "Task was destroyed" noise on stderr when a codec fails; the
# scripts' stdout holds the results.
"$VENV/bin/python" tests/interop/make_stores.py "$OUT"
# Every chunk of the uncompressed, unsharded stores through zquant::zarr (default build).
ZQUANT_INTEROP_DIR="$OUT" cargo test --test it zarr_chunks::interop_stores -- --ignored
"$VENV/bin/python" tests/interop/check.py "$OUT" \
    target/release/examples/zarr_read target/release/examples/zarr_write
# Plain zarr-python opens every store zquant's Rust paths write: the chunk API on
# zquant::zarrs::create_array and zquant::zarrs::quantize (written by an ignored test, in the
# feature build .ci/run already has), zarr_write from short forms, zarr_quantize on
# zarr-python's float32/float64, 1-D/3-D, v2/v3 stores with NaN.
ZQUANT_INTEROP_DIR="$OUT" cargo test --features "float8 rayon zarrs exact-json" --test it \
    zarrs_codecs::interop_written_stores -- --ignored
"$VENV/bin/python" tests/interop/rust_writes.py "$OUT" \
    target/release/examples/zarr_write target/release/examples/zarr_quantize
