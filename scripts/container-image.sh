#!/usr/bin/env bash
# Build the container images without fetching anything: the `lossless` switch image
# (deploy/Containerfile) and, with --host, the host image the containerlab example's hosts
# run (deploy/host.Containerfile). Binaries come from this tree and this machine, and the
# shared libraries they link (by `ldd`) are copied next to them into a scratch image.
#
#   scripts/container-image.sh [TAG]             # the switch; default tag lossless:latest
#   scripts/container-image.sh --host [TAG]      # a host; default tag lossless-host:latest
#
# The engine is docker when a docker daemon answers (containerlab's default runtime), else
# podman; ENGINE=docker or ENGINE=podman chooses. BIN=path/to/lossless uses that binary
# instead of building target/release/lossless. Extra engine options (e.g. podman's
# --runtime runc) go in ENGINE_OPTS (PODMAN_OPTS is read too, for older callers).
# The host image needs, on this machine: sh, ip, ping, ethtool, iperf3 and sleep
# (Debian: iproute2 iputils-ping ethtool iperf3).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=switch
if [ "${1:-}" = "--host" ]; then
  kind=host
  shift
fi
if [ $kind = host ]; then tag="${1:-lossless-host:latest}"; else tag="${1:-lossless:latest}"; fi
if [ -n "${ENGINE:-}" ]; then
  engine=$ENGINE
elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  engine=docker
elif command -v podman >/dev/null 2>&1; then
  engine=podman
else
  echo "neither a docker daemon nor podman is available (set ENGINE)" >&2
  exit 1
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release --bin lossless
  BIN=target/release/lossless
fi
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
rootfs=$ctx/rootfs

# Copy binary $1 to $2 inside the image, with the dynamic loader and every library it needs
# at the paths it looks for them.
put() {
  local src=$1 dst=$2
  mkdir -p "$rootfs$(dirname "$dst")"
  # Without its debug information (the release profile keeps line tables for profiling).
  strip -o "$rootfs$dst" "$src" 2>/dev/null || cp -L "$src" "$rootfs$dst"
  chmod 755 "$rootfs$dst"
  for lib in $(ldd "$src" 2>/dev/null | grep -o '/[^ ]*'); do
    mkdir -p "$rootfs$(dirname "$lib")"
    [ -e "$rootfs$lib" ] || cp -L "$lib" "$rootfs$lib"
  done
}

if [ $kind = switch ]; then
  mkdir -p "$rootfs/etc/lossless"
  put "$BIN" /lossless
  file=deploy/Containerfile
else
  missing=()
  for tool in sh ip ping ethtool iperf3 sleep; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "the host image needs ${missing[*]} on this machine (Debian: apt-get install iproute2 iputils-ping ethtool iperf3)" >&2
    exit 1
  fi
  for tool in sh ip ping ethtool iperf3 sleep; do
    put "$(readlink -f "$(command -v "$tool")")" "/bin/$tool"
  done
  put "$BIN" /bin/lossless
  # ping raises no privilege of its own in the image; the node runs as root.
  mkdir -p "$rootfs/etc" "$rootfs/tmp"
  echo "root:x:0:0:root:/root:/bin/sh" > "$rootfs/etc/passwd"
  file=deploy/host.Containerfile
fi
cp "$file" "$ctx/Containerfile"
# shellcheck disable=SC2086
"$engine" ${ENGINE_OPTS:-${PODMAN_OPTS:-}} build --pull=never -t "$tag" -f "$ctx/Containerfile" "$ctx"
echo "built $tag with $engine"
