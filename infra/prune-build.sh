#!/usr/bin/env bash
# Deletes what build/ holds for TypeScript sources that are gone (moved or deleted): tsc never
# removes an output, so after a move a local `npm test` would run the stale copy of a test (mocha
# runs every build/test/**/*.test.js). A clean clone has nothing to prune.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -d build ] || exit 0
find build -name '*.js' -print0 | while IFS= read -r -d '' js; do
  source="${js#build/}"
  [ -e "${source%.js}.ts" ] || rm -f "$js" "$js.map"
done
