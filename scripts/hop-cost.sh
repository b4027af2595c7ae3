#!/usr/bin/env bash
# Instructions per packet-hop of `lossless run`, from valgrind (deterministic, so not
# disturbed by the machine's noise): the difference between a short and a long run of the
# same scenario, so start-up and parsing cancel out. Where the scenario sends PFC or PAUSE
# frames it also prints instructions per data hop (those frames' hops left out), the unit
# issue 21 compares with htsim in.
#
#   scripts/hop-cost.sh FILE [SHORT LONG]      (default 200us and 2ms)
#
# CACHE=1 also simulates the caches and the branch predictor (cachegrind's --cache-sim and
# --branch-sim: a 32 KiB L1i and L1d, and its simple predictor, not this CPU's) and prints
# per data hop the instruction-cache misses, the data-cache misses and the mispredicted
# branches: what instructions alone do not show (BENCHMARKS.md, eleventh part).
set -euo pipefail
cd "$(dirname "$0")/.."
file=$1; short=${2:-200us}; long=${3:-2ms}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
[ -n "${BIN:-}" ] || cargo build --release --bin lossless -q
bin=${BIN:-target/release/lossless}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# One thread (a fat tree would take one per core; valgrind runs them in turn and counts
# their meetings), where the build has --threads at all.
one=(); "$bin" run --help | grep -q -- '--threads' && one=(--threads 1)
sim=(--cache-sim=no)
[ "${CACHE:-0}" = 1 ] && sim=(--cache-sim=yes --branch-sim=yes)
measure() { # duration → "instructions hops data-hops"
  valgrind --tool=cachegrind "${sim[@]}" --cachegrind-out-file="$tmp/cg.$1" \
    "$bin" run "$file" --duration "$1" "${one[@]}" --quiet --json "$tmp/r.$1.json" 2>"$tmp/vg.$1" >/dev/null
  local ir hops
  ir=$(grep -E '^summary:' "$tmp/cg.$1" | awk '{print $2}')
  # Data hops: every hop but the PFC and PAUSE frames' (issue 21 compares those with htsim).
  hops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["totals"]
print(d["packet_hops"], d["packet_hops"] - t["pfc_tx_frames"] - t["pause_tx_frames"])' "$tmp/r.$1.json")
  echo "$ir $hops"
}
read -r i1 h1 d1 < <(measure "$short")
read -r i2 h2 d2 < <(measure "$long")
python3 - "$file" "$short" "$long" "$i1" "$h1" "$d1" "$i2" "$h2" "$d2" "$tmp" <<'PY'
import sys
f, s, l = sys.argv[1:4]
i1, h1, d1, i2, h2, d2 = map(int, sys.argv[4:10])
tmp = sys.argv[10]
print(f"{f}: {s}: {i1:,} instructions, {h1:,} hops; {l}: {i2:,} instructions, {h2:,} hops")
print(f"{f}: {(i2 - i1) / (h2 - h1):,.0f} instructions per packet-hop")
if d2 != h2 and d2 > d1:
    print(f"{f}: {(i2 - i1) / (d2 - d1):,.0f} instructions per data hop (PFC frames' hops left out)")
def events(d):  # cachegrind's totals by event name
    lines = open(f"{tmp}/cg.{d}").read().splitlines()
    names = next(x for x in lines if x.startswith("events:")).split()[1:]
    return dict(zip(names, map(int, next(x for x in lines if x.startswith("summary:")).split()[1:])))
e1, e2 = events(s), events(l)
if "I1mr" in e2 and d2 > d1:
    per = lambda *k: sum(e2[x] - e1[x] for x in k) / (d2 - d1)
    print(f"{f}: per data hop: {per('I1mr'):.1f} L1i misses, {per('D1mr', 'D1mw'):.1f} L1d misses, "
          f"{per('Bcm', 'Bim'):.1f} mispredicted branches ({per('Bim'):.1f} of them indirect)")
PY
