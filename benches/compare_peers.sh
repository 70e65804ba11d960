#!/usr/bin/env bash
# Compare zquant's throughput with its peers: cast-value-rs, numcodecs, numpy.
#
#   bash benches/compare_peers.sh [--quick]
#   FEATURES=rayon bash benches/compare_peers.sh --quick   # reuse a --features rayon build
#
# Sets up a Python venv in target/peers-venv (numpy, numcodecs, cast-value-rs,
# threadpoolctl), times the peers on the cases of examples/throughput.rs that they support
# (benches/peers.py: same data, same element counts, median of >= 5 runs, a numpy memcpy
# baseline beside every case), runs the Rust harness with --json target/zquant.json, and
# prints one combined table. Not part of cargo test or CI: it needs the network for pip and
# takes a few minutes (--quick: 4M elements instead of 16M).
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=()
ELEMENTS=$((16 << 20))
RUNS=7
if [[ "${1:-}" == "--quick" ]]; then
    QUICK=(--quick)
    ELEMENTS=$((4 << 20))
    RUNS=5
fi

VENV=target/peers-venv
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
    numpy numcodecs cast-value-rs threadpoolctl

echo "== machine"
echo "nproc: $(nproc)"
lscpu | grep -E '^(Model name|CPU\(s\)|Thread|L2|L3)' || true
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# On some processors this machine sets OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE for old OpenBLAS
# builds; they slow a current numpy, so they are unset for the peer run only.
PY=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$VENV/bin/python")

echo "== peers ($ELEMENTS elements, $RUNS runs)"
"${PY[@]}" benches/peers.py measure --elements "$ELEMENTS" --runs "$RUNS" --json target/peers.json

echo "== zquant"
FEATURE_ARGS=()
if [[ -n "${FEATURES:-}" ]]; then
    FEATURE_ARGS=(--features "$FEATURES")
fi
cargo run --release "${FEATURE_ARGS[@]}" --example throughput -- "${QUICK[@]}" --runs "$RUNS" \
    --json target/zquant.json

echo "== combined"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"${PY[@]}" benches/peers.py combine target/zquant.json target/peers.json
"${PY[@]}" benches/peers.py combine --markdown target/zquant.json target/peers.json \
    > target/compare.md
echo "(markdown table: target/compare.md)"
