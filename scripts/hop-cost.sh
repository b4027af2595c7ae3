#!/usr/bin/env bash
# Instructions per packet-hop of `lossless run`, from valgrind (deterministic, so not
# disturbed by the machine's noise): the difference between a short and a long run of the
# same scenario, so start-up and parsing cancel out. Where the scenario sends PFC or PAUSE
# frames it also prints instructions per data hop (those frames' hops left out), the unit
# issue 21 compares with htsim in.
#
#   scripts/hop-cost.sh FILE [SHORT LONG]      (default 200us and 2ms)
set -euo pipefail
cd "$(dirname "$0")/.."
file=$1; short=${2:-200us}; long=${3:-2ms}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
[ -n "${BIN:-}" ] || cargo build --release --bin lossless -q
bin=${BIN:-target/release/lossless}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
measure() { # duration → "instructions hops data-hops"
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg.$1" \
    "$bin" run "$file" --duration "$1" --quiet --json "$tmp/r.$1.json" 2>"$tmp/vg.$1" >/dev/null
  local ir hops
  ir=$(grep -E '^summary:' "$tmp/cg.$1" | awk '{print $2}')
  # Data hops: every hop but the PFC and PAUSE frames' (issue 21 compares those with htsim).
  hops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["totals"]
print(d["packet_hops"], d["packet_hops"] - t["pfc_tx_frames"] - t["pause_tx_frames"])' "$tmp/r.$1.json")
  echo "$ir $hops"
}
read -r i1 h1 d1 < <(measure "$short")
read -r i2 h2 d2 < <(measure "$long")
python3 - "$file" "$short" "$long" "$i1" "$h1" "$d1" "$i2" "$h2" "$d2" <<'PY'
import sys
f, s, l, i1, h1, d1, i2, h2, d2 = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
print(f"{f}: {s}: {i1:,} instructions, {h1:,} hops; {l}: {i2:,} instructions, {h2:,} hops")
print(f"{f}: {(i2 - i1) / (h2 - h1):,.0f} instructions per packet-hop")
if d2 != h2 and d2 > d1:
    print(f"{f}: {(i2 - i1) / (d2 - d1):,.0f} instructions per data hop (PFC frames' hops left out)")
PY
