#!/usr/bin/env bash
# Behaviour unchanged? Runs every file in configs/ and every scenario the simulator tests
# write through two builds of `lossless run` — BASE (a git revision, default HEAD) and the
# working tree — and compares what they write: the JSON report without `wall_time_s`, every
# pcap file byte for byte, every CSV. Exit status 0 when all are identical, 1 otherwise.
#
#   scripts/compare-outputs.sh [BASE]
#   ONLY_BASE_KEYS=1 scripts/compare-outputs.sh [BASE]   # ignore JSON keys BASE lacks
#   HEAD_BIN=target/pgo/lossless scripts/compare-outputs.sh  # that binary, not a release build
#   BASE_BIN=old/lossless scripts/compare-outputs.sh  # BASE's side from that binary (built from BASE)
#
# The tests' scenarios are collected by running the simulator test files with
# LOSSLESS_RECORD_RUNS set (tests/common/mod.rs copies each scenario and its arguments).
# When outputs differ on purpose (a change of the same-instant order, of random streams),
# `scripts/classify-differences.py target/compare` sorts each differing run by what
# changed in its physics.
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=$(git rev-parse --verify "${1:-HEAD}^{commit}")  # here, not in the worktree
work=$(pwd)/target/compare
rm -rf "$work/runs" "$work/out"
mkdir -p "$work/runs" "$work/out"

if [ -n "${HEAD_BIN:-}" ]; then
  head_bin=$(realpath "$HEAD_BIN")
  echo "== the working tree's side: $head_bin"
else
  echo "== building the working tree"
  cargo build --release --bin lossless -q
  head_bin=$(pwd)/target/release/lossless
fi

if [ -n "${BASE_BIN:-}" ]; then
  base_bin=$(realpath "$BASE_BIN")
  echo "== the base side: $base_bin (said to be built from $base_rev)"
else
  echo "== building $base_rev"
  if [ ! -d "$work/base" ]; then
    git worktree add -f --detach "$work/base" "$base_rev" >/dev/null
  else
    git -C "$work/base" checkout -q --detach "$base_rev"
  fi
  (cd "$work/base" && CARGO_TARGET_DIR="$work/base-target" cargo build --release --bin lossless -q)
  base_bin=$work/base-target/release/lossless
fi

echo "== collecting the tests' scenarios"
LOSSLESS_RECORD_RUNS="$work/runs" cargo test --release -q \
  --test sim_physics --test pfc_timing --test headroom_pool --test reports >/dev/null 2>&1 || {
  echo "the simulator tests fail on the working tree"; exit 1; }
for f in $(find configs -name '*.yaml' | sort); do
  case $f in configs/tap-*) continue ;; esac
  n=cfg-$(echo "$f" | tr '/' '_')
  cp "$f" "$work/runs/$n"
  printf '%s\t--duration\t200us\n' "$n" >> "$work/runs/runs.tsv"
  grep -q '^duration:' "$f" && printf '%s\n' "$n" >> "$work/runs/runs.tsv"
done

status=0
i=0
while IFS=$'\t' read -r -a run; do
  i=$((i + 1))
  file=${run[0]}
  args=("${run[@]:1}")
  for side in base head; do
    d="$work/out/$i/$side"
    mkdir -p "$d"
    bin=$base_bin; [ $side = head ] && bin=$head_bin
    (cd "$d" && "$bin" run "$work/runs/$file" --json report.json --pcap-dir pcap --quiet \
       "${args[@]}" > stdout.txt 2> stderr.txt) || echo "exit $?" >> "$d/stderr.txt"
    if [ -f "$d/report.json" ]; then
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r.pop("wall_time_s",None); json.dump(r,open(sys.argv[1],"w"),indent=1,sort_keys=True)' "$d/report.json"
    fi
  done
  if [ "${ONLY_BASE_KEYS:-0}" = 1 ] && [ -f "$work/out/$i/base/report.json" ] && [ -f "$work/out/$i/head/report.json" ]; then
    python3 - "$work/out/$i/base/report.json" "$work/out/$i/head/report.json" <<'PY'
import json, sys
def trim(b, h):
    if isinstance(b, dict) and isinstance(h, dict):
        return {k: trim(b[k], h[k]) if k in b else None for k in h if k in b}
    if isinstance(b, list) and isinstance(h, list) and len(b) == len(h):
        return [trim(x, y) for x, y in zip(b, h)]
    return h
b = json.load(open(sys.argv[1])); h = json.load(open(sys.argv[2]))
json.dump(trim(b, h), open(sys.argv[2], "w"), indent=1, sort_keys=True)
PY
  fi
  if ! diff -r -q "$work/out/$i/base" "$work/out/$i/head" >/dev/null; then
    echo "DIFFERENT: $file ${args[*]:-}"
    diff -r -q "$work/out/$i/base" "$work/out/$i/head" | head -5 || true
    status=1
  fi
done < "$work/runs/runs.tsv"
echo "== $i runs compared: $([ $status = 0 ] && echo identical || echo "differences above (scripts/classify-differences.py target/compare sorts them)")"
exit $status
