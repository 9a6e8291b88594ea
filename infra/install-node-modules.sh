#!/usr/bin/env bash
# Node 24 where the machine's is older (infra/install-node.sh), then node_modules from
# package-lock.json on it. Does nothing when both are there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/infra/install-node.sh"
if [ -x "$ROOT/.tools/node24/bin/node" ]; then export PATH="$ROOT/.tools/node24/bin:$PATH"; fi

cd "$ROOT"
# node_modules/.coda-lock.sha256 records the lock file it was installed from: by content, not by
# date, because `npm install` may rewrite package-lock.json after node_modules/.package-lock.json,
# and a second run would then reinstall (over the network) for nothing.
stamp=node_modules/.coda-lock.sha256
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_sum" ]; then
  # `npm install` with the lock file, not `npm ci`: the lock names @swc/core's optional builds for
  # other platforms, which npm ci may refuse where a registry does not serve them. The installed
  # versions are the lock's either way; the lock in the repo is the one npm writes back, so an
  # install leaves it unchanged.
  echo "[install-node-modules] npm install from package-lock.json" >&2
  npm install --no-audit --no-fund --loglevel=error
  sha256sum package-lock.json | cut -d' ' -f1 >"$stamp"
fi
