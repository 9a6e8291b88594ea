#!/usr/bin/env bash
# Runs a command on the project's Node: .tools/node24/bin first on PATH when infra/install-node.sh
# installed Node 24 there (the machine's Node is older), else the machine's own. The npm scripts,
# .ci/run and the README's commands go through it; what the code spawns uses process.execPath.
#   bash infra/with-node.sh node build/workers/orchestrator.js
set -euo pipefail
NODE_BIN="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/node24/bin"
if [ -x "$NODE_BIN/node" ]; then export PATH="$NODE_BIN:$PATH"; fi
exec "$@"
