#!/usr/bin/env python3
"""Render a SONiC config_db.json for one hardware SKU from SONiC's own published templates,
the way a switch gets it, so that `lossless import sonic` is tested on files nobody on this
project wrote.

What runs, in the order SONiC runs it:
1. sonic-cfggen's PORT table from the SKU's port_config.ini (name, lanes, alias, index,
   speed; mtu 9100 and admin_status up, SONiC's defaults), and DEVICE_METADATA (hwsku,
   platform, type from the role).
2. The SKU's buffers.json.j2 (which includes files/build_templates/buffers_config.j2 and the
   SKU's buffers_defaults_<role>.j2) and qos.json.j2 (qos_config.j2), rendered with jinja2
   over the tables of step 1 and DEVICE_NEIGHBOR(_METADATA), which decide each port's
   cable length as buffers_config.j2 does.
3. What buffermgrd (sonic-swss cfgmgr/buffermgr.cpp, traditional buffer model) then writes
   into CONFIG_DB: for each port with PFC enabled, the profile
   pg_lossless_<speed>_<cable>_profile from pg_profile_lookup.ini (pool
   ingress_lossless_pool, xon, xon_offset, xoff, size, <pool mode>_th) and BUFFER_PG
   "<port>|3-4" naming it.

The templates are read from a sonic-buildimage tree given on the command line (a checkout or
`git archive` of it); nothing of it is copied here. Usage:

  scripts/render-sonic-config.py --tree /tmp/sonic \\
      --sku device/arista/x86_64-arista_7060_cx32s/Arista-7060CX-32S-C32 \\
      --platform x86_64-arista_7060_cx32s --role t1 \\
      --spine-ports 8 -o tests/data/sonic/arista-7060cx-32s-c32-t1.json

`--speed MBPS` sets every port's speed first (the operator's `config interface speed`).
`--spine-ports N` gives the first N ports a spine neighbour (T1: SpineRouter, 300 m) and
the rest a ToR neighbour (40 m); for a T0 the first N face leaves (40 m) and the rest
servers (5 m). Requires jinja2 (pip install jinja2).
"""

import argparse
import json
import os
import sys

import jinja2

ROLES = {"t0": "ToRRouter", "t1": "LeafRouter"}


def port_table(ini):
    """PORT as sonic-cfggen builds it from port_config.ini."""
    ports = {}
    header = None
    with open(ini) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                header = line.lstrip("#").split()
                continue
            fields = line.split()
            entry = dict(zip(header, fields))
            name = entry.pop("name")
            entry.setdefault("mtu", "9100")
            entry["admin_status"] = "up"
            ports[name] = entry
    return ports


def default_speeds(ports, hwsku_json):
    """A port_config.ini without a speed column (NVIDIA's SKUs): sonic-cfggen takes each
    port's speed from the SKU's hwsku.json, the first mode of its default_brkout_mode
    (`1x100G[50G,40G,25G,10G]`: one port at 100G)."""
    if not os.path.exists(hwsku_json):
        return
    with open(hwsku_json) as f:
        interfaces = json.load(f).get("interfaces", {})
    for name, p in ports.items():
        mode = interfaces.get(name, {}).get("default_brkout_mode", "")
        if "speed" in p or "x" not in mode:
            continue
        gbps = mode.split("x", 1)[1].split("G", 1)[0]
        p["speed"] = str(int(gbps) * 1000)


def neighbours(ports, role, uplinks):
    """DEVICE_NEIGHBOR and DEVICE_NEIGHBOR_METADATA: the first `uplinks` ports face the
    tier above, the rest the tier below."""
    up, down = {"t1": ("SpineRouter", "ToRRouter"), "t0": ("LeafRouter", None)}[role]
    dn, meta = {}, {}
    for i, p in enumerate(ports):
        kind = up if i < uplinks else down
        if kind is None:
            continue  # a T0's server ports: no neighbour entry, cable from VLAN_MEMBER
        peer = "%s-%02d" % (kind, i)
        dn[p] = {"name": peer, "port": "Ethernet1"}
        meta[peer] = {"type": kind, "hwsku": "peer", "mgmt_addr": "198.18.255.%d" % (i + 1)}
    return dn, meta


def render(env, name, ctx):
    text = env.get_template(name).render(ctx)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        sys.exit("%s did not render to JSON: %s\n%s" % (name, e, text))


def pg_lookup(path):
    table = {}
    with open(path) as f:
        for line in f:
            if line.strip().startswith("#") or not line.strip():
                continue
            speed, cable, size, xon, xoff, th, *rest = line.split()
            table[(speed, cable)] = dict(size=size, xon=xon, xoff=xoff, th=th,
                                         xon_offset=rest[0] if rest else "")
    return table


def buffermgrd(db, lookup):
    """The lossless PG profiles and BUFFER_PG entries buffermgrd adds for each port."""
    mode = db["BUFFER_POOL"]["ingress_lossless_pool"]["mode"]
    cables = db["CABLE_LENGTH"]["AZURE"]
    for port, qos in db.get("PORT_QOS_MAP", {}).items():
        pfc = qos.get("pfc_enable")
        if not pfc or port not in db["PORT"]:
            continue
        speed, cable = db["PORT"][port]["speed"], cables[port]
        row = lookup.get((speed, cable))
        if row is None:
            # buffermgrd logs "No PG profile configured for speed and cable length" and
            # leaves the port without lossless PGs.
            print("%s: no PG profile for %s/%s: no lossless PGs (as buffermgrd)" %
                  (port, speed, cable), file=sys.stderr)
            continue
        name = "pg_lossless_%s_%s_profile" % (speed, cable)
        prof = {"pool": "ingress_lossless_pool", "xon": row["xon"]}
        if row["xon_offset"]:
            prof["xon_offset"] = row["xon_offset"]
        prof.update(xoff=row["xoff"], size=row["size"])
        prof[mode + "_th"] = row["th"]
        db["BUFFER_PROFILE"].setdefault(name, prof)
        pgs = sorted(int(x) for x in pfc.split(","))
        # buffermgrd's generateIdListFromMap: consecutive ids as one range "3-4".
        runs, start = [], pgs[0]
        for a, b in zip(pgs, pgs[1:] + [None]):
            if b != a + 1:
                runs.append(str(start) if start == a else "%d-%d" % (start, a))
                start = b
        for r in runs:
            db["BUFFER_PG"]["%s|%s" % (port, r)] = {"profile": name}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", required=True, help="sonic-buildimage tree")
    ap.add_argument("--sku", required=True, help="the SKU's directory inside the tree")
    ap.add_argument("--platform", required=True)
    ap.add_argument("--role", choices=sorted(ROLES), default="t1")
    ap.add_argument("--spine-ports", type=int, default=0)
    ap.add_argument("--speed", help="every port's speed in Mb/s, as `config interface speed` "
                    "would set it before the buffers are rendered")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    sku_dir = os.path.join(a.tree, a.sku)
    loader = jinja2.FileSystemLoader([sku_dir, os.path.join(a.tree, "files/build_templates")])
    env = jinja2.Environment(loader=loader, trim_blocks=True)

    # sonic-cfggen offers the templates a test for optional templates and a port-order
    # sort; these do the same.
    def has_template(name):
        return name in loader.list_templates()

    def by_port_number(names):
        return sorted(names, key=lambda n: int("".join(c for c in n if c.isdigit()) or 0))

    env.globals["template_exists"] = has_template
    env.filters["sort_by_port_index"] = by_port_number
    ports = port_table(os.path.join(sku_dir, "port_config.ini"))
    default_speeds(ports, os.path.join(sku_dir, "hwsku.json"))
    if a.speed:
        for p in ports.values():
            p["speed"] = a.speed
    dn, meta = neighbours(list(ports), a.role, a.spine_ports)
    hwsku = os.path.basename(a.sku.rstrip("/"))
    db = {
        "DEVICE_METADATA": {"localhost": {
            "hwsku": hwsku, "platform": a.platform, "type": ROLES[a.role],
            "hostname": "lossless-dut", "mac": "02:4c:4c:00:00:00",
            "buffer_model": "traditional"}},
        "PORT": ports,
        "DEVICE_NEIGHBOR": dn,
        "DEVICE_NEIGHBOR_METADATA": meta,
    }
    ctx = dict(db)
    for t in ("buffers.json.j2", "qos.json.j2"):
        db.update(render(env, t, ctx))
    buffermgrd(db, pg_lookup(os.path.join(sku_dir, "pg_profile_lookup.ini")))
    with open(a.output, "w") as f:
        json.dump(db, f, indent=4, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
