#!/usr/bin/env bash
# Installs the real trainers the tests run on CPU into .tools/trainers (docs/real-trainers.md):
#   - LLaMA-Factory 0.9.5 with its torch from PyPI. torch on Linux imports only with its nvidia-*
#     wheels, so this is about 3.9 GB and minutes to fetch the first time. torch, torchvision and
#     torchaudio are pinned together: torchaudio's newest release is 2.11, and LLaMA-Factory imports
#     it (data/mm_plugin.py), which fails on any other torch ("compiled with different CUDA
#     versions"); an unpinned install takes torch 2.15. test/training/real-llamafactory.test.ts
#     trains the pipeline's SFT dataset with it.
#   - OpenRLHF 0.11.2's reward and experience code, and TRL 0.29.1 in .tools/trainers/trl (below).
# Does nothing when the pinned versions are there. CODA_SKIP_REAL_TRAINERS=1 skips it (and the
# tests that need it: .mocharc.js leaves them out of the run).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/trainers"
# The venv itself lives in the user's cache folder, outside the clone, named by this script's
# digest (its pins): a fresh clone on a machine that installed it before links it in at once
# instead of unpacking 3.9 GB again (CI runs on a fresh clone). A checkout whose .tools/trainers is
# a folder of its own keeps it. One install at a time per venv (flock).
CACHE_ROOT="${CODA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/coda}"
SHARED_VENV="$CACHE_ROOT/trainers/$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
LLAMAFACTORY_VERSION="0.9.5"
TORCH=(torch==2.11.0 torchvision==0.26.0 torchaudio==2.11.0)

log() { echo "[install-trainers] $*" >&2; }
if [ "${CODA_SKIP_REAL_TRAINERS:-}" = 1 ]; then
  log "CODA_SKIP_REAL_TRAINERS=1: real trainers not installed"
  exit 0
fi
started=$(date +%s)
if [ ! -e "$VENV" ]; then
  mkdir -p "$SHARED_VENV" "$(dirname "$VENV")"
  ln -s "$SHARED_VENV" "$VENV"
fi
# The venv is made and used by its real path: its scripts' first lines name the python they run.
VENV="$(readlink -f "$VENV")"
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/trainers.lock"
flock 9
[ -x "$VENV/bin/python3" ] || python3 -m venv "$VENV"
pip() { "$VENV/bin/pip" install -q --disable-pip-version-check "$@"; }
installed() { "$VENV/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('$1') != '$2')" 2>/dev/null; }

if ! installed llamafactory "$LLAMAFACTORY_VERSION" || ! installed torchaudio 2.11.0 || ! installed torch 2.11.0; then
  log "LLaMA-Factory $LLAMAFACTORY_VERSION and ${TORCH[*]} from PyPI into .tools/trainers (about 3.9 GB the first time)"
  pip "llamafactory==$LLAMAFACTORY_VERSION" "${TORCH[@]}"
fi

# --- OpenRLHF (reward and experience code only) ---
# OpenRLHF 0.11.2 without its dependencies (vLLM, Ray, DeepSpeed, flash-attn need GPUs; the test's
# driver, infra/trainers/openrlhf_probe.py, stands them in), plus what its reward and experience
# modules import beyond LLaMA-Factory's install above (which brings torch, transformers, peft,
# datasets, numpy, tqdm, packaging): aiohttp (utils/agent.py), pylatexenc and sympy
# (utils/math_utils.py, through openrlhf.utils). torch is named with its pin so that pip keeps it.
# PyPI has only a cp311 wheel of it: the venv's Python must be 3.11.
OPENRLHF_VERSION="0.11.2"
if ! "$VENV/bin/python3" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  log "OpenRLHF $OPENRLHF_VERSION is published for Python 3.11 only; $VENV has $("$VENV/bin/python3" -V)"
  exit 1
fi
if ! installed openrlhf "$OPENRLHF_VERSION"; then
  log "OpenRLHF $OPENRLHF_VERSION (--no-deps) and what its reward and experience code imports"
  pip aiohttp pylatexenc sympy "${TORCH[@]}"
  pip --no-deps "openrlhf==$OPENRLHF_VERSION"
fi

# --- TRL (GRPO on one GPU node or on CPU: infra/trainers/trl_grpo.py) ---
# LLaMA-Factory 0.9.5 pins trl<=0.24.0, which predates transformers 5 (its import fails on the
# transformers LLaMA-Factory brings). TRL 0.29.1 supports transformers 5 and runs on this venv's
# transformers, accelerate, datasets, peft and torch as they are, so it goes --no-deps into a folder
# of its own, put first on PYTHONPATH for the GRPO trainer only (training.grpo.env); LLaMA-Factory
# keeps its 0.24.
TRL_VERSION="0.29.1"
TRL_DIR="$VENV/trl"
if ! PYTHONPATH="$TRL_DIR" "$VENV/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('trl') != '$TRL_VERSION')" 2>/dev/null; then
  log "TRL $TRL_VERSION (--no-deps) into .tools/trainers/trl"
  pip --no-deps --upgrade --target "$TRL_DIR" "trl==$TRL_VERSION"
fi

elapsed=$(($(date +%s) - started))
if ((elapsed > 2)); then log "done in ${elapsed}s"; fi
