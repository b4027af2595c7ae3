#!/usr/bin/env python3
"""Sorts the differences scripts/compare-outputs.sh found into what they mean for a run's
physics, so that a change meant to alter only the order of same-instant events (or the
random draws) can be checked run by run.

    scripts/classify-differences.py [target/compare]

For every run whose outputs differ it prints one class:

  * "order only": every count is equal (frames, bytes, drops, PFC and PAUSE frames per
    port and priority, ECN marks, flows' bytes): only times, watermarks, latencies or the
    engine's event count moved, or only the order of same-instant frames in a pcap;
  * "counts differ": it lists each count that differs, base -> head, largest relative
    change first.

Counts are the JSON leaves named like one (…packets, …frames, …bytes, …drops, …marked,
tx_xoff, tx_xon, rx_xoff, rx_xon, retransmitted…, timeouts…); watermarks are not counts.
"""
import json
import os
import re
import sys

COUNT = re.compile(
    r"(packets|frames|bytes|drops|marked|^tx_xoff|^tx_xon|^rx_xoff|^rx_xon|"
    r"retransmitted\w*|timeouts|naks|acks|trimmed\w*)$"
)


def leaves(v, path=""):
    """Every leaf of a JSON value, by path (list entries named by their `name` or `port`
    when they have one, so that a run with a changed order of entries compares well)."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, f"{path}.{k}" if path else k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            tag = i
            if isinstance(x, dict):
                tag = x.get("name", x.get("port", x.get("pg", x.get("queue", i))))
            yield from leaves(x, f"{path}[{tag}]")
    else:
        yield path, v


def is_count(path):
    last = re.sub(r"\[.*?\]$", "", path).rsplit(".", 1)[-1]
    return "watermark" not in last and bool(COUNT.search(last))


def classify(base, head):
    b = dict(leaves(json.load(open(base))))
    h = dict(leaves(json.load(open(head))))
    counts = []
    for path in sorted(set(b) | set(h)):
        x, y = b.get(path), h.get(path)
        if x == y or not is_count(path):
            continue
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            rel = abs(y - x) / max(abs(x), 1)
        else:
            rel = float("inf")
        counts.append((rel, path, x, y))
    counts.sort(key=lambda c: (-c[0], c[1]))
    return counts


def summary(b, h):
    """The physics in one line: data delivered (all flows, and the flow that moved most),
    PFC frames and drops, base -> head."""
    rx_b = sum(f["rx_bytes"] for f in b["flows"])
    rx_h = sum(f["rx_bytes"] for f in h["flows"])
    worst = max(
        (abs(y["rx_bytes"] - x["rx_bytes"]) / max(x["rx_bytes"], 1)
         for x, y in zip(b["flows"], h["flows"])),
        default=0.0,
    )
    t_b, t_h = b["totals"], h["totals"]
    return (
        f"data delivered {(rx_h - rx_b) / max(rx_b, 1):+.4%} (worst flow {worst:.2%}); "
        f"PFC frames {t_b['pfc_tx_frames']} -> {t_h['pfc_tx_frames']}; "
        f"drops {t_b['drops']} -> {t_h['drops']}; "
        f"lost on the wire {t_b['injected_drops']} -> {t_h['injected_drops']}"
    )


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else "target/compare"
    runs = [l.rstrip("\n").split("\t") for l in open(os.path.join(work, "runs/runs.tsv"))]
    classes = {"order only": 0, "counts differ": 0}
    for i, run in enumerate(runs, 1):
        d = os.path.join(work, "out", str(i))
        base, head = os.path.join(d, "base/report.json"), os.path.join(d, "head/report.json")
        if not (os.path.exists(base) and os.path.exists(head)):
            continue
        same_json = open(base).read() == open(head).read()
        same_files = os.system(f"diff -r -q {d}/base {d}/head >/dev/null") == 0
        if same_json and same_files:
            continue
        counts = classify(base, head)
        cls = "counts differ" if counts else "order only"
        classes[cls] += 1
        print(f"{' '.join(run)}: {cls}")
        if counts:
            print("    " + summary(json.load(open(base)), json.load(open(head))))
        for rel, path, x, y in counts[:8]:
            if rel == float("inf"):
                print(f"    {path}: {x} -> {y}")
            else:
                print(f"    {path}: {x} -> {y} ({(y - x) / max(abs(x), 1):+.2%})")
        if len(counts) > 8:
            print(f"    ... and {len(counts) - 8} more counts")
    print(", ".join(f"{n} {c}" for c, n in classes.items()))


if __name__ == "__main__":
    main()
