#!/usr/bin/env python3
"""Write a 3-tier fat tree of K-port switches as a lossless scenario (issue 21's bench).

    scripts/fat-tree.py K [--duration 10ms] > configs/bench/fat-tree-kK.yaml

K pods of K/2 edge and K/2 aggregation switches, (K/2)^2 core switches, K^3/4 hosts at
100G with 1518-byte frames; every link has `delay: 1us`, every switch `pipeline_latency:
0`, routes go up by hash ECMP and down by prefix. Host h sends one greedy UDP flow to host
(h + K^3/8) mod K^3/4 (a permutation across pods) on the lossless priority (DSCP 3).
"""
import sys

def main():
    args = sys.argv[1:]
    if not args or not args[0].isdigit() or int(args[0]) % 2:
        sys.exit("usage: fat-tree.py K (even) [--duration T]")
    k = int(args[0])
    duration = args[args.index("--duration") + 1] if "--duration" in args else "10ms"
    half = k // 2
    hosts = k ** 3 // 4
    out = [f"# fat-tree-k{k}: written by scripts/fat-tree.py {k} --duration {duration}",
           f"name: fat-tree-k{k}", "seed: 1", f"duration: {duration}", "switches:"]
    def switch(name, routes, up=None):
        out.append(f"  - name: {name}")
        out.append(f"    ports: {{count: {k}, speed: 100G, mtu: 1518}}")
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
            switch(f"e{p}_{e}", [("0.0.0.0/0", "group: up")], up)
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
    out.append("flows:")
    for i, n in enumerate(names):
        out.append(f"  - {{src: {n}, dst: {names[(i + hosts // 2) % hosts]}, protocol: rocev2, dscp: 3, frame: 1518B}}")
    print("\n".join(out))

main()
