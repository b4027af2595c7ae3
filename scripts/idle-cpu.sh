#!/usr/bin/env bash
# CPU an idle link between two `lossless tap` switches costs each of them, by what the link
# speaks: PFC alone, CBFC + LLR sending its updates as hardware does (`idle_updates:
# periodic`), and CBFC + LLR sending them only while they can heal something (`on_demand`,
# the default on a `link:` port). As root:
#
#   scripts/idle-cpu.sh [path/to/lossless] [seconds]
#
# Two network namespaces hold a switch each, cabled by a veth (`eth9`, MTU 1508 for LLR's
# header), each with an idle host behind `eth1`. Each switch settles for 2 s, then its
# utime + stime (/proc/PID/stat) over `seconds` (default 10) gives its share of a core.
# Everything made is removed on exit. Addresses: none (the hosts send nothing).
set -euo pipefail
bin="${1:-target/release/lossless}"
secs="${2:-10}"
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 2; }
[ -x "$bin" ] || { echo "no lossless binary at $bin (cargo build --release)" >&2; exit 2; }
tag="llidle$$"
dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for k in 0 1; do
    ip netns del "$tag-sw$k" 2>/dev/null || true
    ip netns del "$tag-h$k" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
for k in 0 1; do
  ip netns add "$tag-sw$k"
  ip netns add "$tag-h$k"
  for ns in "$tag-sw$k" "$tag-h$k"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  done
  ip link add h0 netns "$tag-h$k" type veth peer name eth1 netns "$tag-sw$k"
  ip -n "$tag-h$k" link set h0 up
done
ip link add eth9 netns "$tag-sw0" mtu 1508 type veth peer name eth9 netns "$tag-sw1" mtu 1508
for k in 0 1; do
  ip -n "$tag-sw$k" link set eth1 up
  ip -n "$tag-sw$k" link set eth9 up
done
sleep 0.5

# The switch file of switch $1 whose link speaks $2 (pfc | periodic | on_demand).
config() {
  local k="$1" mode="$2" link="" extra=""
  case "$mode" in
    pfc) ;;
    *) link=", flow_control: cbfc"
       extra="    cbfc: {idle_updates: $mode}
    llr: {ports: [Ethernet1]}" ;;
  esac
  cat <<EOF
name: idle$k
switches:
  - name: sw$k
    mac: 02:00:00:0$k:00:00
    ports:
      - {iface: eth1, speed: 1G, mtu: 1518}
      - {link: eth9, speed: 1G, mtu: 1518$link}
    qos: {pfc_enable: [3]}
$extra
EOF
}

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz="$(getconf CLK_TCK)"
printf '%-10s %12s %12s\n' "link" "switch 0" "switch 1"
for mode in pfc periodic on_demand; do
  pids=()
  for k in 0 1; do
    config "$k" "$mode" >"$dir/sw$k.yaml"
    ip netns exec "$tag-sw$k" "$bin" tap "$dir/sw$k.yaml" --realtime off \
      --json "$dir/r$k.json" 2>"$dir/err$k" >/dev/null &
    pids+=("$!")
  done
  sleep 2
  before=("$(ticks "${pids[0]}")" "$(ticks "${pids[1]}")")
  sleep "$secs"
  after=("$(ticks "${pids[0]}")" "$(ticks "${pids[1]}")")
  printf '%-10s' "$mode"
  for k in 0 1; do
    awk -v a="${after[$k]}" -v b="${before[$k]}" -v hz="$hz" -v s="$secs" \
      'BEGIN { printf " %10.2f %%", 100 * (a - b) / hz / s }'
  done
  echo
  for p in "${pids[@]}"; do kill -TERM "$p"; done
  for p in "${pids[@]}"; do wait "$p" || true; done
  pids=()
done
