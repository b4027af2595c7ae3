#!/usr/bin/env bash
# Side by side with htsim (issue 21): the same three workloads in `lossless run` and in
# Broadcom's csg-htsim `htsim_roce`, run in turn on this machine, whole processes timed.
#
#   scripts/vs-htsim.sh HTSIM_CHECKOUT [ROUNDS]          (default 3 rounds)
#
# HTSIM_CHECKOUT is a clone of github.com/Broadcom/csg-htsim kept outside this repository;
# it is not modified. Its `sim/` is copied to a scratch directory (WORK, default a new
# temporary one; pass WORK=dir to reuse an earlier build) and built with a counter of data
# packets entering links, reported at exit: htsim has no hop count of its own, and its runs
# differ from one to the next (its ECMP hash sees addresses), so the run that is timed is the
# one counted. The counter is a compare and an add per pipe; switches' internal pipes have
# no delay and are not counted.
#
# Workloads, as the issue has them: the 8→1 incast (one 9-port switch, 100G, 10 ns links)
# for INCAST (default 100ms), and the K=4 and K=8 fat trees (1 µs links, hash ECMP,
# permutation) for K4 and K8 (default 10ms each); 1518-byte frames; htsim's RoCE with its
# defaults (go-back-N, PFC on its lossless input queues) but output queues of 500 packets:
# with its default of 15 the incast's queue overflows its PFC thresholds, and htsim then
# prints a warning per packet (40 k lines in 5 ms), which would be timed. Data hops/s =
# frames × links they crossed, PFC frames left out, over the whole process's wall time.
#
# Our profile-guided build (BIN=target/pgo/lossless, from scripts/build-pgo.sh: fat LTO
# and PGO) is fairly met by htsim built the same way: HTSIM_PGO=1 builds htsim_roce with
# g++'s -flto and -fprofile-generate, trains it on a 20 ms incast and a 2 ms K=4 run,
# builds it again with -flto and -fprofile-use (its own -O3 / -O2 kept) and times that
# binary instead.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: scripts/vs-htsim.sh HTSIM_CHECKOUT [ROUNDS]}
rounds=${2:-3}
[ -d "$src/sim/datacenter" ] || { echo "$src: no sim/datacenter (not a csg-htsim checkout)"; exit 2; }
for tool in make g++ python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is needed"; exit 2; }
done
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${BIN:-}" ] || cargo build --release --bin lossless -q
bin=$(realpath "${BIN:-target/release/lossless}")

build() { # → $work/htsim_roce.count
  local dir="$work/build"
  [ -x "$work/htsim_roce.count" ] && return
  echo "building htsim_roce (with a hop counter) in $dir ..." >&2
  rm -rf "$dir" && mkdir -p "$dir" && cp -r "$src/sim" "$dir/"
  python3 - "$dir/sim" <<'PY'
import sys
d = sys.argv[1]
p = open(f"{d}/pipe.cpp").read()
head = "void\nPipe::receivePacket(Packet& pkt)\n{"
assert head in p, "pipe.cpp changed: cannot add the hop counter"
p = p.replace(head, "uint64_t g_data_hops = 0;\n" + head +
              "\n    if (pkt.type() == ROCE && _delay > 0) g_data_hops++;", 1)
open(f"{d}/pipe.cpp", "w").write(p)
m = open(f"{d}/datacenter/main_roce.cpp").read()
loop = "    while (eventlist.doNextEvent()) {"
assert loop in m, "main_roce.cpp changed: cannot add the hop report"
m = m.replace(loop, "    extern uint64_t g_data_hops;\n"
              "    struct HopReport { ~HopReport() { fprintf(stderr, \"DATA_HOPS %llu\\n\","
              " (unsigned long long)g_data_hops); } } hop_report;\n" + loop, 1)
open(f"{d}/datacenter/main_roce.cpp", "w").write(m)
PY
  (cd "$dir/sim" && make -j2 >"$dir/build.log" 2>&1 && cd datacenter &&
    make -j2 htsim_roce >>"$dir/build.log" 2>&1) || { echo "build failed: $dir/build.log"; exit 1; }
  cp "$dir/sim/datacenter/htsim_roce" "$work/htsim_roce.count"
}
build

htsim=$work/htsim_roce.count
# The same sources built twice more, with link-time optimization: instrumented, then with
# the profile of training runs.
build_pgo() { # → $work/htsim_roce.pgo-lto (a name of its own: a WORK from before -flto
  # holds a PGO-only htsim_roce.pgo, which must not be taken for this one)
  local dir="$work/build" prof="$work/pgo-profile"
  [ -x "$work/htsim_roce.pgo-lto" ] && return
  echo "building htsim_roce with g++ PGO in $dir ..." >&2
  make_with() { # extra flags
    rm -f "$dir"/sim/*.o "$dir"/sim/*.a "$dir"/sim/datacenter/*.o "$dir/sim/datacenter/htsim_roce"
    (cd "$dir/sim" && make -j2 libhtsim.a CFLAGS="-Wall -std=c++11 -g -fPIE -O3 -flto=2 $1" &&
      cd datacenter && make -j2 htsim_roce CFLAGS="-Wall -std=c++11 -g -O2 -flto=2 $1") \
      >>"$dir/build-pgo.log" 2>&1 || { echo "build failed: $dir/build-pgo.log"; exit 1; }
  }
  rm -rf "$prof"
  make_with "-fprofile-generate -fprofile-update=single -fprofile-dir=$prof"
  (cd "$work" && for run in "-nodes 9 -topo star9.topo -tm incast.cm -end 20000" \
    "-nodes 16 -tiers 3 -tm perm4.cm -end 2000"; do
    # shellcheck disable=SC2086 # the run's arguments are words
    "$dir/sim/datacenter/htsim_roce" $run "${common[@]}" >/dev/null 2>&1
  done)
  make_with "-fprofile-use -fprofile-dir=$prof -Wno-missing-profile"
  cp "$dir/sim/datacenter/htsim_roce" "$work/htsim_roce.pgo-lto"
}

# Connection matrices (our flows, host h{pod}_{edge}_{i} = htsim node in that order) and
# the incast's one-switch topology.
python3 - "$work" configs/bench/fat-tree-k4.yaml configs/bench/fat-tree-k8.yaml <<'PY'
import re, sys
work = sys.argv[1]
for path in sys.argv[2:]:
    text = open(path).read()
    k = int(re.search(r"fat-tree-k(\d+)", path).group(1))
    index = lambda h: (lambda p, e, i: p * k * k // 4 + e * k // 2 + i)(*map(int, h[1:].split("_")))
    flows = re.findall(r"src: (h\d+_\d+_\d+), dst: (h\d+_\d+_\d+)", text)
    with open(f"{work}/perm{k}.cm", "w") as f:
        f.write(f"Nodes {k ** 3 // 4}\nConnections {len(flows)}\n")
        for s, d in flows:
            f.write(f"{index(s)}->{index(d)} start 0 size 0\n")
with open(f"{work}/incast.cm", "w") as f:
    f.write("Nodes 9\nConnections 8\n" + "".join(f"{s}->0 start 0 size 0\n" for s in range(1, 9)))
tier = "Downlink_speed_Gbps 100\nRadix_Down {}\n{}Downlink_Latency_ns 10\nSwitch_Latency_ns 0\n"
with open(f"{work}/star9.topo", "w") as f:
    f.write("Nodes 9\nTiers 2\nPodsize 9\n\nTier 0\n" + tier.format(9, "Radix_Up 1\nOversubscribed 9\n")
            + "\nTier 1\n" + tier.format(1, ""))
PY

# htsim's options for every run (training runs included).
common=(-strat ecmp_host -paths 1 -mtu 1518 -q 500 -o /dev/null)
if [ "${HTSIM_PGO:-0}" = 1 ]; then
  build_pgo
  htsim=$work/htsim_roce.pgo-lto
fi

one() { # label, yaml, duration (ms), htsim topology args...
  local label=$1 yaml=$2 ms=$3; shift 3
  local us=$((ms * 1000)) hh
  for r in $(seq "$rounds"); do
    /usr/bin/time -f "%e %M" -o "$work/t.ours" "$bin" run "$yaml" --duration "${ms}ms" \
      --quiet --json "$work/ours.json" >/dev/null 2>&1
    hh=$(cd "$work" && /usr/bin/time -f "%e %M" -o "$work/t.htsim" "$htsim" \
      "$@" "${common[@]}" -end $us 2>&1 >/dev/null | awk '/^DATA_HOPS/ {print $2}')
    python3 - "$label" "$r" "$work" "$hh" <<'PY'
import json, sys
label, r, work, hh = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
d = json.load(open(f"{work}/ours.json"))
t = d["totals"]
oh = d["packet_hops"] - t["pfc_tx_frames"] - t["pause_tx_frames"]
ow, om = map(float, open(f"{work}/t.ours").read().split())
hw, hm = map(float, open(f"{work}/t.htsim").read().split())
o, h = oh / ow / 1e6, hh / hw / 1e6
print(f"| {label} | {r} | {o:.2f} M ({oh:,} in {ow:.2f} s) | {h:.2f} M ({hh:,} in {hw:.2f} s)"
      f" | {o / h:.2f} | {om / 1024:.1f} / {hm / 1024:.1f} MiB |")
PY
  done
}
echo "| workload | round | lossless data hops/s | htsim data hops/s | ratio | peak memory (ours / htsim) |"
echo "|---|---|---|---|---|---|"
one "incast 8→1, ${INCAST:-100}ms" configs/bench/incast-8to1.yaml "${INCAST:-100}" \
  -nodes 9 -topo star9.topo -tm incast.cm
one "fat tree K=4, ${K4:-10}ms" configs/bench/fat-tree-k4.yaml "${K4:-10}" \
  -nodes 16 -tiers 3 -tm perm4.cm
one "fat tree K=8, ${K8:-10}ms" configs/bench/fat-tree-k8.yaml "${K8:-10}" \
  -nodes 128 -tiers 3 -tm perm8.cm
echo "(htsim builds and files in $work)" >&2
