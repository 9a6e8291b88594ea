#!/usr/bin/env bash
# `npm run demo [-- OPTIONS]`: installs what the demo uses and this machine lacks (infra/install.sh
# demo: not Chromium, the TLS terminators nor the Kubernetes tools; the trainers only for --planner
# small), builds, and runs the demo (cli/demo.ts) with OPTIONS. Each phase says how long it took;
# with CODA_TIMES=FILE the times go to FILE too (cli/stage-times.ts).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# --planner small trains and serves the real small planner: the trainers too (infra/install-trainers.sh).
parts=(demo)
previous=""
for arg in "$@"; do
  if [ "$arg" = "--planner=small" ] || { [ "$previous" = "--planner" ] && [ "$arg" = "small" ]; }; then parts+=(trainers); fi
  previous=$arg
done
bash "$ROOT/infra/install.sh" "${parts[@]}"

started=$EPOCHSECONDS
echo "[build] tsc -p ." >&2
(cd "$ROOT" && bash infra/with-node.sh node_modules/.bin/tsc -p .)
seconds=$((EPOCHSECONDS - started))
echo "[build] done in ${seconds}s" >&2
if [ -n "${CODA_TIMES:-}" ]; then printf 'build\ttsc\t%s\tok\n' "$seconds" >>"$CODA_TIMES"; fi

exec bash "$ROOT/infra/with-node.sh" node "$ROOT/build/cli/demo.js" "$@"
