#!/usr/bin/env bash
# Build the `lossless` container image (Containerfile) without fetching anything: the
# binary comes from this tree, and the shared libraries it links (glibc's, by `ldd`) are
# copied next to it into a scratch image.
#
#   scripts/container-image.sh [TAG]      # default tag: lossless:latest
#
# BIN=path/to/lossless uses that binary instead of building target/release/lossless;
# ENGINE=docker uses docker instead of podman. Extra podman options (e.g. --runtime runc)
# go in PODMAN_OPTS.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-lossless:latest}"
engine="${ENGINE:-podman}"
if [ -z "${BIN:-}" ]; then
  cargo build --release --bin lossless
  BIN=target/release/lossless
fi
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/etc/lossless"
# Without its debug information (the release profile keeps line tables for profiling).
strip -o "$ctx/rootfs/lossless" "$BIN" 2>/dev/null || cp "$BIN" "$ctx/rootfs/lossless"
# The dynamic loader and every library the binary needs, at the paths it looks for them.
for lib in $(ldd "$BIN" | grep -o '/[^ ]*'); do
  mkdir -p "$ctx/rootfs$(dirname "$lib")"
  cp -L "$lib" "$ctx/rootfs$lib"
done
cp Containerfile "$ctx/Containerfile"
# shellcheck disable=SC2086
"$engine" ${PODMAN_OPTS:-} build --pull=never -t "$tag" -f "$ctx/Containerfile" "$ctx"
echo "built $tag"
