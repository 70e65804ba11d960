#!/bin/bash
# alternate base / mine clean unit builds; user CPU of the zquant unit
for r in 1 2; do
  for who in base mine; do
    if [ $who = base ]; then d=/work/wt/infocut-base; t=/work/wt/infocut-base/target; else d=/work/wt/infocut; t=/work/wt/infocut/target; fi
    cd $d
    CARGO_TARGET_DIR=$t cargo build --release --lib -q 2>/dev/null
    CARGO_TARGET_DIR=$t cargo clean --release -p zquant -q 2>/dev/null
    /usr/bin/time -f "$who round $r: %U user %S sys %e wall" -a -o /work/wt/infocut/cpu.txt env CARGO_TARGET_DIR=$t cargo build --release --lib -q 2>/dev/null
  done
done
