#!/usr/bin/env python3
"""Write a 3-tier fat tree of K-port switches as a lossless scenario (issue 21's bench).

    scripts/fat-tree.py K [--duration 10ms] [--permutation shift|random] [--seed N]
                          [--host-delay T] [--rc] > configs/bench/fat-tree-kK.yaml

K pods of K/2 edge and K/2 aggregation switches, (K/2)^2 core switches, K^3/4 hosts at
100G with 1518-byte frames; every switch-to-switch link has `delay: 1us` (with
--host-delay T, every host's cable is a fixed delay T too, as htsim's hop latency is),
every switch `pipeline_latency: 0`, routes go up by hash ECMP and down by prefix. Each
host sends one greedy flow on the lossless priority (DSCP 3): to host (h + K^3/8) mod
K^3/4 (--permutation shift, the default: a permutation across pods), or to the host a
random derangement drawn from --seed (default 1) gives it (--permutation random). Flows
are open-loop RoCEv2 (no ACKs), or with --rc RC queue pairs acknowledging every packet
(`ack_every: 1`, as htsim's RoCE sink does).
"""
import random
import sys

def main():
    args = sys.argv[1:]
    if not args or not args[0].isdigit() or int(args[0]) % 2:
        sys.exit("usage: fat-tree.py K (even) [--duration T] [--permutation shift|random] "
                 "[--seed N] [--host-delay T] [--rc]")
    k = int(args[0])
    opt = lambda name, default: args[args.index(name) + 1] if name in args else default
    duration = opt("--duration", "10ms")
    permutation = opt("--permutation", "shift")
    if permutation not in ("shift", "random"):
        sys.exit(f"--permutation {permutation}: shift or random")
    seed = int(opt("--seed", "1"))
    host_delay = opt("--host-delay", None)
    rc = "--rc" in args
    half = k // 2
    hosts = k ** 3 // 4
    written = " ".join(["scripts/fat-tree.py"] + args)
    out = [f"# fat-tree-k{k}: written by {written}",
           f"name: fat-tree-k{k}", "seed: 1", f"duration: {duration}", "switches:"]
    def switch(name, routes, up=None, hosts_below=False):
        out.append(f"  - name: {name}")
        # An edge switch's uplinks take their links' delay; its host ports keep this one.
        cable = f", delay: {host_delay}" if hosts_below and host_delay else ""
        out.append(f"    ports: {{count: {k}, speed: 100G, mtu: 1518{cable}}}")
        out.append("    pipeline_latency: 0ns")
        out.append("    forwarding:")
        out.append("      mode: l3")
        if up:
            members = ", ".join(f"{{port: Ethernet{p}}}" for p in up)
            out.append(f"      groups: {{up: {{members: [{members}]}}}}")
        out.append("      routes:")
        for prefix, target in routes:
            out.append(f"        - {{prefix: {prefix}, {target}}}")
    up = list(range(half, k))
    # Edge e of pod p: ports 0..half-1 hosts, half..k-1 aggregation; subnet 198.18.(p*k+e).0/24.
    for p in range(k):
        for e in range(half):
            switch(f"e{p}_{e}", [("0.0.0.0/0", "group: up")], up, hosts_below=True)
        for a in range(half):
            down = [(f"198.18.{p * k + e}.0/24", f"port: Ethernet{e}") for e in range(half)]
            switch(f"a{p}_{a}", down + [("0.0.0.0/0", "group: up")], up)
    for c in range(half * half):
        switch(f"c{c}", [(f"198.18.{p * k}.0/{24 - (k - 1).bit_length()}", f"port: Ethernet{p}") for p in range(k)])
    out.append("links:")
    for p in range(k):
        for e in range(half):
            for a in range(half):
                out.append(f"  - {{a: 'e{p}_{e}:Ethernet{half + a}', b: 'a{p}_{a}:Ethernet{e}', delay: 1us}}")
        for a in range(half):
            for j in range(half):
                out.append(f"  - {{a: 'a{p}_{a}:Ethernet{half + j}', b: 'c{a * half + j}:Ethernet{p}', delay: 1us}}")
    out.append("hosts:")
    names = []
    for p in range(k):
        for e in range(half):
            for h in range(half):
                n = f"h{p}_{e}_{h}"
                names.append(n)
                out.append(f"  - {{name: {n}, attach: 'e{p}_{e}:Ethernet{h}', ip: 198.18.{p * k + e}.{h + 1}}}")
    if permutation == "shift":
        dst = [(i + hosts // 2) % hosts for i in range(hosts)]
    else:
        # A random derangement: every host receives one flow, none from itself.
        rng = random.Random(seed)
        dst = list(range(hosts))
        while any(d == i for i, d in enumerate(dst)):
            rng.shuffle(dst)
    transport = ", transport: rc, rc: {ack_every: 1}" if rc else ""
    out.append("flows:")
    for i, n in enumerate(names):
        out.append(f"  - {{src: {n}, dst: {names[dst[i]]}, protocol: rocev2, dscp: 3, frame: 1518B{transport}}}")
    print("\n".join(out))

main()
