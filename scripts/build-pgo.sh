#!/usr/bin/env bash
# The simulator at its fastest: a profile-guided build of `lossless` (issue 21). Builds an
# instrumented binary, runs it on the benchmark scenarios and the labs (a few seconds of
# simulated traffic) to learn which branches and calls are hot, then builds again with that
# profile. The result runs the same simulation — reports are byte-identical to a plain
# build's — in about a quarter fewer instructions per packet-hop (BENCHMARKS.md, tenth part).
#
#   scripts/build-pgo.sh            → target/pgo/lossless (profile `fast`: fat LTO)
#   PROFILE=release scripts/build-pgo.sh   (a shorter build, a smaller gain)
#
# Needs llvm-profdata of the LLVM major version rustc was built with (`rustc -vV`): from
# `rustup component add llvm-tools`, or Debian's `llvm-NN` package (/usr/lib/llvm-NN/bin),
# or named by LLVM_PROFDATA. From scratch it takes 5–8 minutes here (two builds of every
# dependency, in target/pgo/gen and target/pgo/use, which later runs reuse).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-fast}
case $profile in fast | release) ;; *) echo "PROFILE must be fast or release, not '$profile'" >&2; exit 2 ;; esac

major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
[ -n "$major" ] || { echo "rustc -vV does not say its LLVM version" >&2; exit 2; }
matches() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "LLVM version $major\."; }
profdata=${LLVM_PROFDATA:-}
if [ -n "$profdata" ]; then
  matches "$profdata" || { echo "LLVM_PROFDATA=$profdata is not llvm-profdata of LLVM $major" >&2; exit 2; }
else
  host=$(rustc -vV | sed -n 's/^host: //p')
  for c in "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" \
    "$(command -v "llvm-profdata-$major" || true)" "/usr/lib/llvm-$major/bin/llvm-profdata" \
    "$(command -v llvm-profdata || true)"; do
    if [ -n "$c" ] && matches "$c"; then profdata=$c; break; fi
  done
fi
if [ -z "$profdata" ]; then
  cat >&2 <<EOF
llvm-profdata for LLVM $major (the version rustc uses) was not found. Install one of:
  rustup component add llvm-tools
  apt-get install llvm-$major
or name it with LLVM_PROFDATA=/path/to/llvm-profdata.
EOF
  exit 2
fi

out=target/pgo
raw=$(pwd)/$out/raw
rm -rf "$raw" && mkdir -p "$raw"
flags=${RUSTFLAGS:-}

echo "== 1/3 instrumented build (profile $profile, target dir $out/gen)"
RUSTFLAGS="$flags -Cprofile-generate=$raw" \
  cargo build --profile "$profile" --bin lossless --target-dir "$out/gen"
gen=$out/gen/$profile/lossless

echo "== 2/3 training runs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
train() { # file duration
  echo "   $1 for $2"
  "$gen" run "$1" --duration "$2" --quiet --json "$scratch/r.json" >/dev/null 2>"$scratch/err" || {
    echo "training run $1 failed:" >&2; cat "$scratch/err" >&2; exit 1; }
}
# The workloads the benchmarks time, at lengths where steady state dominates start-up ...
train configs/bench/incast-8to1.yaml 20ms
train configs/bench/incast-8to1-rc.yaml 5ms
train configs/bench/incast-8to1-tcp.yaml 5ms
train configs/bench/leaf-spine-18.yaml 2ms
train configs/bench/fat-tree-k4.yaml 2ms
# ... and every lab briefly, so that DCQCN, the watchdog, ECMP and flowlets are not cold.
for f in configs/labs/*.yaml; do train "$f" 1ms; done
"$profdata" merge -o "$out/merged.profdata" "$raw"/*.profraw

echo "== 3/3 optimized build with the profile (target dir $out/use)"
RUSTFLAGS="$flags -Cprofile-use=$(pwd)/$out/merged.profdata" \
  cargo build --profile "$profile" --bin lossless --target-dir "$out/use"
cp "$out/use/$profile/lossless" "$out/lossless"
echo "built $out/lossless in ${SECONDS} s (profile $profile with PGO; llvm-profdata: $profdata)"
