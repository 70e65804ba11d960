#!/usr/bin/env bash
# Instructions per element of every throughput case, at each instruction-set level that
# valgrind can run (portable and AVX2: valgrind has no AVX-512), from callgrind.
#
#   bash benches/instructions.sh [--elements N] [--filter TEXT] [--out FILE]
#
# Deterministic, so unaffected by the machine's load: the figure to compare before and
# after a kernel change on a shared machine. Runs `examples/throughput --count` under
# callgrind, collecting only inside each case's kernel call (`counted_run`) and dumping at
# each case's start (`next_case`), then divides each case's instructions by runs x elements.
# The AVX-512 paths are counted from the disassembly instead (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."

ELEMENTS=65536
RUNS=5
FILTER=()
OUT=target/instructions.md
while [[ $# -gt 0 ]]; do
    case "$1" in
        --elements) ELEMENTS="$2"; shift 2 ;;
        --filter) FILTER=(--filter "$2"); shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        *) echo "usage: instructions.sh [--elements N] [--filter TEXT] [--out FILE]" >&2; exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

cargo build --release --example throughput
BIN=target/release/examples/throughput
DIR=target/instructions
rm -rf "$DIR"
mkdir -p "$DIR"
for ISA in portable avx2; do
    mkdir -p "$DIR/$ISA"
    ZQUANT_MAX_ISA=$ISA valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect='*counted_run*' --dump-before='*next_case*' \
        --callgrind-out-file="$DIR/$ISA/callgrind.out" \
        "$BIN" --count --elements "$ELEMENTS" --runs "$RUNS" "${FILTER[@]}" \
        > "$DIR/$ISA/cases.txt" 2> "$DIR/$ISA/valgrind.log"
done
python3 - "$DIR" "$OUT" <<'PY'
import glob, os, re, sys
root, out = sys.argv[1], sys.argv[2]
levels = ["portable", "avx2"]
cols = {}
names = []
for isa in levels:
    cases = [l.rstrip("\n").split("\t") for l in open(f"{root}/{isa}/cases.txt") if l.startswith("counted\t")]
    # Dump k (1-based) is written when case k starts, so it holds case k-1's runs; the
    # last case's runs are in the final dump, written at exit (the file without a suffix).
    dumps = sorted(glob.glob(f"{root}/{isa}/callgrind.out.*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    dumps = dumps[1:] + [f"{root}/{isa}/callgrind.out"]
    if len(dumps) != len(cases):
        sys.exit(f"{isa}: {len(cases)} cases but {len(dumps)} dumps")
    for (_, name, elements, runs), path in zip(cases, dumps):
        total = 0
        for line in open(path):
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                total = int(m.group(1))
        cols.setdefault(name, {})[isa] = total / (int(elements) * int(runs))
        if name not in names:
            names.append(name)
with open(out, "w") as f:
    f.write("| case | portable | AVX2 |\n|---|---:|---:|\n")
    for n in names:
        f.write(f"| {n} | " + " | ".join(f"{cols[n].get(i, float('nan')):.2f}" for i in levels) + " |\n")
print(open(out).read())
print(f"(instructions per element; table in {out})")
PY
