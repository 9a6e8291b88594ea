#!/usr/bin/env bash
# What the Kubernetes manifests' test (infra/deploy/, docs/deploy.md) runs: kustomize (`go install`
# into .tools/bin) and PyPI's kubernetes-validate (the Kubernetes JSON schemas, offline) in
# .tools/venv. infra/install.sh runs it after the MinIO build (both compile Go on the same 2 cores)
# and the Temporal CLI (which may make .tools/venv).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
KUSTOMIZE_VERSION="v5.8.1"              # sigs.k8s.io/kustomize/kustomize/v5: the newest whose go.mod allows Go 1.24 (5.8.3 needs 1.27)
KUBERNETES_VALIDATE_VERSION="1.37.0"    # PyPI kubernetes-validate: the schemas of Kubernetes 1.25 to 1.37

log() { echo "[install-kubernetes-tools] $*" >&2; }
mkdir -p "$TOOLS/bin"
if [ "$("$TOOLS/bin/kustomize" version 2>/dev/null)" != "$KUSTOMIZE_VERSION" ]; then
  log "kustomize $KUSTOMIZE_VERSION: go install into .tools/bin"
  GOBIN="$TOOLS/bin" GOFLAGS=-buildvcs=false go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi
if [ "$("$TOOLS/bin/kubernetes-validate" --version 2>/dev/null)" != "$KUBERNETES_VALIDATE_VERSION" ]; then
  log "kubernetes-validate $KUBERNETES_VALIDATE_VERSION: PyPI into .tools/venv"
  [ -x "$TOOLS/venv/bin/python3" ] || python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  ln -sf ../venv/bin/kubernetes-validate "$TOOLS/bin/kubernetes-validate"
fi
