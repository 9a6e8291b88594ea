#!/usr/bin/env bash
# `npm run demo [-- OPTIONS]`: installs what the demo uses and this machine lacks (infra/install.sh
# demo: not the trainers, Chromium, the TLS terminators nor the Kubernetes tools), builds, and runs
# the demo (cli/demo.ts) with OPTIONS. Each phase says how long it took; with CODA_TIMES=FILE the
# times go to FILE too (cli/stage-times.ts).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/infra/install.sh" demo

started=$EPOCHSECONDS
echo "[build] tsc -p ." >&2
(cd "$ROOT" && bash infra/with-node.sh node_modules/.bin/tsc -p .)
seconds=$((EPOCHSECONDS - started))
echo "[build] done in ${seconds}s" >&2
if [ -n "${CODA_TIMES:-}" ]; then printf 'build\ttsc\t%s\tok\n' "$seconds" >>"$CODA_TIMES"; fi

exec bash "$ROOT/infra/with-node.sh" node "$ROOT/build/cli/demo.js" "$@"
