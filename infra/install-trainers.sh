#!/usr/bin/env bash
# Installs the real trainers the tests run on CPU into .tools/trainers-venv (docs/real-trainers.md):
#   - LLaMA-Factory 0.9.5 with its torch from PyPI. torch on Linux imports only with its nvidia-*
#     wheels, so this is about 3.9 GB and minutes to fetch the first time; from pip's cache, about a
#     minute. test/training/real-llamafactory.test.ts trains the pipeline's SFT dataset with it.
# Does nothing when the pinned versions are there. CODA_SKIP_REAL_TRAINERS=1 skips it (and the
# tests that need it: .mocharc.js leaves them out of the run).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/trainers-venv"
LLAMAFACTORY_VERSION="0.9.5"

log() { echo "[install-trainers] $*" >&2; }
if [ "${CODA_SKIP_REAL_TRAINERS:-}" = 1 ]; then
  log "CODA_SKIP_REAL_TRAINERS=1: real trainers not installed"
  exit 0
fi
started=$(date +%s)
[ -x "$VENV/bin/python3" ] || python3 -m venv "$VENV"
pip() { "$VENV/bin/pip" install -q --disable-pip-version-check "$@"; }
installed() { "$VENV/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('$1') != '$2')" 2>/dev/null; }

if ! installed llamafactory "$LLAMAFACTORY_VERSION"; then
  log "LLaMA-Factory $LLAMAFACTORY_VERSION and torch from PyPI into .tools/trainers-venv (about 3.9 GB the first time)"
  pip "llamafactory==$LLAMAFACTORY_VERSION"
fi

# --- OpenRLHF (reward and experience code only) ---

elapsed=$(($(date +%s) - started))
if ((elapsed > 2)); then log "done in ${elapsed}s"; fi
