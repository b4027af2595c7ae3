#!/usr/bin/env bash
# Side by side with htsim, like for like (issue 40): the same workloads in `lossless run`
# and in Broadcom's csg-htsim `htsim_roce`, run in turn on this machine, whole processes
# timed, each side doing the same work.
#
#   scripts/vs-htsim.sh HTSIM_CHECKOUT [ROUNDS]          (default 3 rounds)
#   THREADS=2 scripts/vs-htsim.sh …   # ours on 2 threads (default 1, as htsim runs)
#
# HTSIM_CHECKOUT is a clone of github.com/Broadcom/csg-htsim kept outside this repository;
# it is not modified. Its `sim/` is copied to a scratch directory (WORK, default a new
# temporary one; pass WORK=dir to reuse an earlier build) and built with its own Makefiles
# four ways:
#   plain        as it is: the binary that is timed;
#   noack        with the one call in RoceSink::receivePacket that sends an ACK per data
#                packet removed (`send_ack(ts);`): data traffic unchanged, no ACKs;
#   plain-count  plain plus a counter of packets entering links (pipes with a delay: a
#                switch's internal pipes have none), by kind, printed at exit;
#   noack-count  noack plus the counter.
# Hops come from a counting run of the same workload; the timed run is the plain (or noack)
# build. htsim's runs would differ from one to the next: each RoCE source's constructor
# seeds the random generator with the wall clock's second (`srand(time(NULL))` in
# roce.cpp) before it draws its ECMP path id, so which paths flows take, and how many hops
# they make, follows the second a run starts in (up to 10 % apart on a 2 ms K=4 run). Every
# htsim run here sees one frozen time instead (libfaketime's `faketime`, Debian's
# `faketime`), which makes its paths, and so the plain and the counting builds' runs, the
# same every time (the script checks that two counting runs agree).
#
# Like for like, two pairings per workload:
#   open loop   ours: `rocev2` flows that never hear back (the bench configs as shipped);
#               htsim: the noack build. Neither side sends an ACK.
#   closed loop ours: the same flows as RC queue pairs with `ack_every: 1`; htsim: plain,
#               whose sink ACKs every data packet. Both sides send one ACK per data packet
#               through the same queues.
# Workloads: the 8→1 incast (one 9-port switch, 100G, 10 ns cables) for INCAST (default
# 100ms); the K=4 and K=8 fat trees as shipped (1 µs switch links, 2 m host cables, hash
# ECMP, the shift permutation) for K4 and K8 (default 10ms); and a K=8 fat tree with a
# random permutation (seed 1) and 1 µs host cables, as htsim's `-tiers 3` fabric has them,
# for K8R (default 10ms). 1518-byte frames; htsim's RoCE with its defaults (go-back-N, PFC on
# its lossless input queues) but output queues of 500 packets: with its default of 15 the
# incast's queue overflows its PFC thresholds and htsim prints a warning per packet, which
# would be timed.
#
# Columns: data hops/s (data frames × links crossed, over the whole process's wall time)
# for each side and their ratio (ours / htsim); all hops (data, ACK, NAK and PFC frames)
# per side; peak memory. Our binary: BIN (default target/release/lossless, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: scripts/vs-htsim.sh HTSIM_CHECKOUT [ROUNDS]}
rounds=${2:-3}
[ -d "$src/sim/datacenter" ] || { echo "$src: no sim/datacenter (not a csg-htsim checkout)"; exit 2; }
for tool in make g++ python3 /usr/bin/time faketime; do
  command -v "$tool" >/dev/null || { echo "$tool is needed"; exit 2; }
done
work=$(realpath "${WORK:-$(mktemp -d)}")
mkdir -p "$work"
[ -n "${BIN:-}" ] || cargo build --release --bin lossless -q
bin=$(realpath "${BIN:-target/release/lossless}")
frozen=(faketime "2026-01-01 00:00:00")

build() { # variant (plain|noack|plain-count|noack-count) → $work/htsim_roce.$1
  local variant=$1 dir="$work/build-$1"
  [ -x "$work/htsim_roce.$variant" ] && return
  rm -rf "$dir"
  if [ "$variant" = plain ]; then
    mkdir -p "$dir" && cp -r "$src/sim" "$dir/"
  else
    # The plain build with its objects and their times: make recompiles the patched files.
    build plain && cp -a "$work/build-plain" "$dir"
  fi
  echo "building htsim_roce ($variant) in $dir ..." >&2
  python3 - "$dir/sim" "$variant" <<'PY'
import sys
d, variant = sys.argv[1], sys.argv[2]
if "noack" in variant:
    p = open(f"{d}/roce.cpp").read()
    call = "    send_ack(ts);\n    // have we seen everything yet?"
    assert p.count(call) == 1, "roce.cpp changed: cannot remove the per-packet ACK"
    open(f"{d}/roce.cpp", "w").write(p.replace(call, "    // have we seen everything yet?"))
if "count" in variant:
    p = open(f"{d}/pipe.cpp").read()
    head = "void\nPipe::receivePacket(Packet& pkt)\n{"
    assert head in p, "pipe.cpp changed: cannot add the hop counter"
    counter = ("#include <cstdio>\n"
               "static unsigned long long g_hops[2];\n"
               "static struct HopReport { ~HopReport() { std::fprintf(stderr, \"HOPS %llu %llu\\n\","
               " g_hops[0], g_hops[1]); } } g_hop_report;\n")
    p = p.replace(head, counter + head +
                  "\n    if (_delay > 0) { g_hops[1]++; if (pkt.type() == ROCE) g_hops[0]++; }", 1)
    open(f"{d}/pipe.cpp", "w").write(p)
PY
  (cd "$dir/sim" && make -j2 >"$dir/build.log" 2>&1 && cd datacenter &&
    make -j2 htsim_roce >>"$dir/build.log" 2>&1) || { echo "build failed: $dir/build.log"; exit 1; }
  cp "$dir/sim/datacenter/htsim_roce" "$work/htsim_roce.$variant"
}
for v in plain noack plain-count noack-count; do build "$v"; done

# Our workloads, open loop and closed loop, and htsim's connection matrices (our flows,
# host h{pod}_{edge}_{i} = htsim node in that order) and the incast's one-switch topology.
python3 scripts/fat-tree.py 8 --permutation random --seed 1 --host-delay 1us \
  >"$work/fat-tree-k8-random.yaml"
for w in incast-8to1 fat-tree-k4 fat-tree-k8; do cp "configs/bench/$w.yaml" "$work/$w.yaml"; done
python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
for name in ["incast-8to1", "fat-tree-k4", "fat-tree-k8", "fat-tree-k8-random"]:
    text = open(f"{work}/{name}.yaml").read()
    # Closed loop: every flow an RC queue pair acknowledging every packet.
    rc = re.sub(r"(frame: 1518B)\}", r"\1, transport: rc, rc: {ack_every: 1}}", text)
    assert rc.count("ack_every") == text.count("frame: 1518B}"), name
    open(f"{work}/{name}-rc.yaml", "w").write(rc)
    m = re.search(r"fat-tree-k(\d+)", name)
    if not m:
        continue
    k = int(m.group(1))
    index = lambda h: (lambda p, e, i: p * k * k // 4 + e * k // 2 + i)(*map(int, h[1:].split("_")))
    flows = re.findall(r"src: (h\d+_\d+_\d+), dst: (h\d+_\d+_\d+)", text)
    with open(f"{work}/{name}.cm", "w") as f:
        f.write(f"Nodes {k ** 3 // 4}\nConnections {len(flows)}\n")
        for s, d in flows:
            f.write(f"{index(s)}->{index(d)} start 0 size 0\n")
with open(f"{work}/incast-8to1.cm", "w") as f:
    f.write("Nodes 9\nConnections 8\n" + "".join(f"{s}->0 start 0 size 0\n" for s in range(1, 9)))
tier = "Downlink_speed_Gbps 100\nRadix_Down {}\n{}Downlink_Latency_ns 10\nSwitch_Latency_ns 0\n"
with open(f"{work}/star9.topo", "w") as f:
    f.write("Nodes 9\nTiers 2\nPodsize 9\n\nTier 0\n" + tier.format(9, "Radix_Up 1\nOversubscribed 9\n")
            + "\nTier 1\n" + tier.format(1, ""))
PY

# htsim's options for every run.
common=(-strat ecmp_host -paths 1 -mtu 1518 -q 500 -o /dev/null)

hops() { # htsim binary, args... → "data all" (from a counting run)
  (cd "$work" && "${frozen[@]}" "$@" "${common[@]}" >/dev/null 2>"$work/htsim.err")
  awk '/^HOPS/ {print $2, $3}' "$work/htsim.err"
}

one() { # label, our yaml (in $work), duration (ms), htsim variant (plain|noack), htsim args...
  local label=$1 yaml=$2 ms=$3 variant=$4; shift 4
  local us=$((ms * 1000)) counted again
  counted=$(hops "$work/htsim_roce.$variant-count" "$@" -end "$us")
  again=$(hops "$work/htsim_roce.$variant-count" "$@" -end "$us")
  [ -n "$counted" ] || { echo "htsim printed no hop count: $work/htsim.err"; exit 1; }
  [ "$counted" = "$again" ] || { echo "htsim's counting runs differ: $counted / $again"; exit 1; }
  for r in $(seq "$rounds"); do
    # One thread, as htsim runs: a fat tree would otherwise take one per core.
    /usr/bin/time -f "%e %M" -o "$work/t.ours" "$bin" run "$work/$yaml" --duration "${ms}ms" \
      --threads "${THREADS:-1}" --quiet --json "$work/ours.json" >/dev/null 2>&1
    (cd "$work" && /usr/bin/time -f "%e %M" -o "$work/t.htsim" "${frozen[@]}" \
      "$work/htsim_roce.$variant" "$@" "${common[@]}" -end "$us" >/dev/null 2>&1)
    # shellcheck disable=SC2086 # "data all"
    python3 - "$label" "$r" "$work" $counted <<'PY'
import json, sys
label, r, work, hd, ha = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
d = json.load(open(f"{work}/ours.json"))
t = d["totals"]
oa = d["packet_hops"]

def links(src, dst):
    """Links between two hosts: 2 under one switch (the incast; one edge of a fat tree),
    4 within a pod, 6 across pods (host names h{pod}_{edge}_{i})."""
    if not src.startswith("h") or "_" not in src:
        return 2
    (sp, se, _), (dp, de, _) = (src[1:].split("_"), dst[1:].split("_"))
    return 2 if (sp, se) == (dp, de) else 4 if sp == dp else 6

# Our data hops: every hop (one per frame put on a link) but the link-level frames (PFC,
# PAUSE: one hop each) and the RC ACKs and NAKs, each of which crosses its flow's path
# back (one still on its way when the run ends is counted whole: a few per flow).
acks = sum((f["transport"]["acks_sent"] + f["transport"]["naks_sent"]) * links(f["src"], f["dst"])
           for f in d["flows"] if f.get("transport"))
od = oa - t["pfc_tx_frames"] - t["pause_tx_frames"] - acks
ow, om = map(float, open(f"{work}/t.ours").read().split())
hw, hm = map(float, open(f"{work}/t.htsim").read().split())
if ow == 0 or hw == 0:
    sys.exit(f"{label}: a run took under 10 ms of wall time, too short to time: give it longer")
o, h = od / ow / 1e6, hd / hw / 1e6
print(f"| {label} | {r} | {o:.2f} M ({od:,} in {ow:.2f} s) | {h:.2f} M ({hd:,} in {hw:.2f} s)"
      f" | {o / h:.2f} | {oa:,} / {ha:,} | {om / 1024:.1f} / {hm / 1024:.1f} MiB |")
PY
  done
}

echo "| workload | round | lossless data hops/s | htsim data hops/s | ratio | all hops (ours / htsim) | peak memory (ours / htsim) |"
echo "|---|---|---|---|---|---|---|"
incast=(-nodes 9 -topo star9.topo -tm incast-8to1.cm)
k4=(-nodes 16 -tiers 3 -tm fat-tree-k4.cm)
k8=(-nodes 128 -tiers 3 -tm fat-tree-k8.cm)
k8r=(-nodes 128 -tiers 3 -tm fat-tree-k8-random.cm)
for loop in open closed; do
  if [ $loop = open ]; then v=noack sfx=""; else v=plain sfx="-rc"; fi
  one "incast 8→1, ${INCAST:-100}ms, $loop loop" "incast-8to1$sfx.yaml" "${INCAST:-100}" $v "${incast[@]}"
  one "fat tree K=4, ${K4:-10}ms, $loop loop" "fat-tree-k4$sfx.yaml" "${K4:-10}" $v "${k4[@]}"
  one "fat tree K=8, ${K8:-10}ms, $loop loop" "fat-tree-k8$sfx.yaml" "${K8:-10}" $v "${k8[@]}"
  one "fat tree K=8 random, 1 µs hosts, ${K8R:-10}ms, $loop loop" "fat-tree-k8-random$sfx.yaml" \
    "${K8R:-10}" $v "${k8r[@]}"
done
echo "(htsim builds and files in $work)" >&2
