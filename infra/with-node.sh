#!/usr/bin/env bash
# Runs a command on the project's Node: .tools/node24/bin first on PATH when infra/install-node.sh
# installed Node 24 there (the machine's Node is older), else the machine's own. The npm scripts,
# .ci/run and the README's commands go through it; what the code spawns uses process.execPath.
#   bash infra/with-node.sh node build/workers/orchestrator.js
set -euo pipefail
NODE_BIN="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/node24/bin"
if [ -x "$NODE_BIN/node" ]; then export PATH="$NODE_BIN:$PATH"; fi
# V8's compiled code of every module kept on disk (keyed by the source and Node's version): each
# Node process started from here or by it (the CLI, worker daemons, the test workers) skips
# compiling what it loads, about a fifth of a CLI command's CPU.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/coda/node-compile-cache}"
exec "$@"
