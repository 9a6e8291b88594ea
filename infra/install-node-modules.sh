#!/usr/bin/env bash
# Node 24 where the machine's is older (infra/install-node.sh), then node_modules from
# package-lock.json on it. Does nothing when both are there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/infra/install-node.sh"
if [ -x "$ROOT/.tools/node24/bin/node" ]; then export PATH="$ROOT/.tools/node24/bin:$PATH"; fi

cd "$ROOT"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # `npm install` with the lock file, not `npm ci`: the registries reachable here do not serve the
  # other platforms' builds that @swc/core lists as optional, so the lock cannot name them and
  # `npm ci` refuses it. The installed versions are the lock's either way.
  echo "[install-node-modules] npm install from package-lock.json" >&2
  npm install --no-audit --no-fund --loglevel=error
fi
