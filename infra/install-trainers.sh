#!/usr/bin/env bash
# Installs the real trainers' code the tests run on CPU into the venv .tools/trainers; does nothing
# when it is there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/trainers"
log() { echo "[install-trainers] $*" >&2; }
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)

# --- OpenRLHF (reward and experience code only) ---
# OpenRLHF 0.11.2 without its dependencies (vLLM, Ray, DeepSpeed, flash-attn need GPUs; the test's
# driver, infra/trainers/openrlhf_probe.py, stands them in), plus what its reward and experience
# modules import: aiohttp (utils/agent.py), pylatexenc and sympy (utils/math_utils.py, through
# openrlhf.utils), peft and transformers (openrlhf.models), numpy, tqdm, packaging, datasets
# (openrlhf.datasets, through ppo_trainer.py) and torch (CPU build is enough; LLaMA-Factory's install
# above brings it).
# PyPI has only a cp311 wheel of it: the venv's Python must be 3.11.
OPENRLHF_VERSION="0.11.2"
if ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  log "OpenRLHF $OPENRLHF_VERSION is published for Python 3.11 only; $VENV has $("$VENV/bin/python" -V)"
  exit 1
fi
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('openrlhf') != '$OPENRLHF_VERSION')" 2>/dev/null; then
  log "OpenRLHF $OPENRLHF_VERSION (--no-deps) and what its reward and experience code imports"
  "${PIP[@]}" torch aiohttp pylatexenc sympy peft transformers numpy tqdm packaging datasets
  "${PIP[@]}" --no-deps "openrlhf==$OPENRLHF_VERSION"
fi
