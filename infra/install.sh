#!/usr/bin/env bash
# Installs what a command uses and this machine lacks; does nothing when all of it is there.
#   bash infra/install.sh demo        what `npm run demo` runs on (infra/demo.sh):
#     - Debian packages for real desktops (Xvfb, a window manager, xdotool, AT-SPI, KAlgebra,
#       TeXstudio) and the TeX Live parts the TeXstudio tasks compile with: pdflatex and bibtex
#       (texlive-binaries, via texlive-latex-base: article, babel, inputenc, amsmath) and
#       bussproofs (texlive-science, which brings texlive-latex-recommended: listings, xcolor), and
#       footmisc, sidecap, enumitem, lipsum, multirow, nicefrac (texlive-latex-extra, 79 MB). Not
#       texlive-fonts-extra (1.4 GB) for kpfonts and beramono, which only TeXstudio C-03 uses, a
#       task that needs the VM snapshot's figures anyway: kpsewhich says they are missing and the
#       task is reported unsupported on local hosts naming them (core/requirements.ts)
#     - Node 24 LTS into .tools/node24 where the machine's Node is older (infra/install-node.sh),
#       then node_modules from package-lock.json (infra/install-node-modules.sh); every npm script
#       runs on it (infra/with-node.sh)
#     - the Temporal CLI, its dev server (infra/install-temporal.sh)
#     - MinIO, built from source (infra/install-minio.sh)
#   bash infra/install.sh test        (the default: `npm test`, .ci/run) the demo's, and what only
#                                     the tests use:
#     - Chromium for the viewer's browser tests (driven by playwright-core, which downloads no
#       browser); stunnel4 and haproxy, the TLS terminators the secured-Temporal tests put in front
#       of the dev server, and openssl, which makes their throwaway certificates
#     - kustomize and kubernetes-validate for the Kubernetes manifests' test
#       (infra/install-kubernetes-tools.sh)
#     - what the project's in-VM server (infra/vm-image/server) runs on in the VM, for the client's
#       contract test to start it here: Debian's python3-flask, -xlib, -pil and -tk (pyautogui's
#       mouseinfo exits without tkinter), and pyautogui from PyPI into the cache folder's vm-python
#       (infra/vm-image/install-vm-python.sh, which builds it with python3-pip, -setuptools, -wheel)
#     - QEMU and mmdebstrap, which build the project's VM image and run its VMs (infra/vm-image;
#       the image itself is built by the first test that needs it, into the cache folder)
#     - the real trainers the tests run on CPU (infra/install-trainers.sh, about 3.9 GB;
#       CODA_SKIP_REAL_TRAINERS=1 skips them)
#   bash infra/install.sh demo trainers   the demo's and the real trainers (a demo option that trains for real)
#   bash infra/install.sh unit        what `npm run test:unit` runs on, and nothing else: Node and
#                                     node_modules, and the Temporal CLI its dev server is started from
# Independent steps run side by side: the apt download, the pip and npm downloads and the MinIO
# build (network against CPU); steps that compete for the same thing run one after the other (the
# two Go builds, the two installs into .tools/venv). Each step's output is in
# .tools/install-logs/STEP.log; with CODA_TIMES=FILE each step's seconds are appended to FILE as
# `install<TAB>STEP<TAB>SECONDS<TAB>ok|failed|skipped` (cli/stage-times.ts; bench/from-bare.ts reads them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# One line each: infra/deploy/Dockerfile reads the first with sed. ImageMagick is a test package:
# screenshots are read from the X server by Node (io/x11-image.ts), and its `import` is used only
# by the test that compares their pixels with its own (test/desktop/local-desktop.test.ts).
DEMO_DEBIAN_PACKAGES=(xvfb openbox xdotool x11-utils dbus-x11 dbus-daemon dbus-bin at-spi2-core python3-pyatspi kalgebra texstudio texlive-latex-base texlive-science texlive-latex-extra)
TEST_DEBIAN_PACKAGES=(chromium stunnel4 haproxy openssl imagemagick python3-flask python3-xlib python3-pil python3-tk python3-pip python3-setuptools python3-wheel qemu-system-x86 qemu-utils mmdebstrap)
# The user's cache folder, outside the clone, as infra/install-trainers.sh picks it.
CACHE_ROOT="${CODA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/coda}"

parts=("$@")
((${#parts[@]} > 0)) || parts=(test)
demo=0 test=0 trainers=0 unit=0
for part in "${parts[@]}"; do
  case "$part" in
    demo) demo=1 ;;
    test) demo=1 test=1 trainers=1 ;;
    trainers) trainers=1 ;;
    unit) unit=1 ;;
    *) echo "infra/install.sh: unknown part \"$part\": expected demo, test, trainers or unit" >&2; exit 2 ;;
  esac
done

LOGS="$ROOT/.tools/install-logs"
mkdir -p "$LOGS"
log() { echo "[install] $*" >&2; }
# One install at a time in a checkout: a second (npm run test:unit beside npm test, say) waits for
# the first, then finds what it installed, instead of clearing its logs and running its steps again.
exec 9>"$ROOT/.tools/install.lock"
if ! flock -n 9; then
  log "waiting for the install already running in this checkout"
  flock 9
fi
rm -f "$LOGS"/*.status

# status NAME STATE SECONDS: a step's state (queued, running since SECONDS, ok or failed after
# SECONDS), replaced whole so that a reader never sees half of it.
status() { echo "$2 $3" >"$LOGS/$1.status.new" && mv "$LOGS/$1.status.new" "$LOGS/$1.status"; }
# step NAME COMMAND...: runs the command with its output in NAME.log.
step() {
  local name=$1 started=$EPOCHSECONDS
  shift
  status "$name" running "$started"
  if "$@" >"$LOGS/$name.log" 2>&1; then
    status "$name" ok $((EPOCHSECONDS - started))
  else
    status "$name" failed $((EPOCHSECONDS - started))
    return 1
  fi
}
# after NAME: waits until step NAME has ended.
after() {
  while grep -qE '^(queued|running) ' "$LOGS/$1.status" 2>/dev/null; do sleep 1; done
}

steps=()
chains=()
# queue NAME...: the steps that will run, known from the start to `after` and the progress line.
queue() {
  local name
  for name in "$@"; do
    steps+=("$name")
    : >"$LOGS/$name.log" # the last run's lines must not be announced again while this one waits
    status "$name" queued 0
  done
}
# chain COMMAND...: one line of steps, run beside the others.
chain() {
  "$@" 9>&- & # the lock stays with this script: nothing a step leaves running holds it
  chains+=($!)
}

packages=()
if ((demo)); then packages+=("${DEMO_DEBIAN_PACKAGES[@]}"); fi
if ((test)); then packages+=("${TEST_DEBIAN_PACKAGES[@]}"); fi
# The unit tier's steps are the first of the demo's: Node with node_modules, and the Temporal CLI.
if ((demo || unit)); then
  queue node-modules temporal
  chain step node-modules bash "$ROOT/infra/install-node-modules.sh"
  chain step temporal bash "$ROOT/infra/install-temporal.sh"
fi
if ((demo)); then
  queue debian minio
  chain step debian bash "$ROOT/infra/install-debian.sh" "${packages[@]}"
  if ((test)); then
    queue kubernetes-tools vm-python
    chain bash -c "$(declare -f status step after); LOGS='$LOGS'; set -e
      step minio bash '$ROOT/infra/install-minio.sh'
      after temporal
      step kubernetes-tools bash '$ROOT/infra/install-kubernetes-tools.sh'"
    chain bash -c "$(declare -f status step after); LOGS='$LOGS'; set -e
      after debian
      step vm-python bash '$ROOT/infra/vm-image/install-vm-python.sh' '$CACHE_ROOT/vm-python'"
  else
    chain step minio bash "$ROOT/infra/install-minio.sh"
  fi
fi
if ((trainers)); then
  queue trainers
  chain step trainers bash "$ROOT/infra/install-trainers.sh"
fi

# Progress: each step's own announcements as they come, then its time once it did something (a
# step that found everything installed stays quiet), and what is still running: one line kept up
# to date on a terminal, a line every 30 s in a log.
started=$EPOCHSECONDS
next_line=$((started + 30))
declare -A shown=() ended=()
announce() {
  local name=$1 lines
  lines=$(grep -c '^\[' "$LOGS/$name.log" 2>/dev/null || true)
  if ((${lines:-0} > ${shown[$name]:-0})); then
    clear_line
    grep '^\[' "$LOGS/$name.log" | tail -n +"$((${shown[$name]:-0} + 1))" >&2
    shown[$name]=$lines
  fi
  return 0
}
clear_line() { if [ -t 2 ]; then printf '\r\033[K' >&2; fi; }
finish() {
  local name=$1 state=$2 seconds=$3 outcome=$2
  ended[$name]=1
  clear_line
  if [ "$state" = failed ]; then
    log "$name FAILED after ${seconds}s; the end of .tools/install-logs/$name.log:"
    tail -n 20 "$LOGS/$name.log" >&2
  elif [ -s "$LOGS/$name.log" ]; then
    log "$name: done in ${seconds}s"
  else
    outcome=skipped
  fi
  if [ -n "${CODA_TIMES:-}" ]; then printf 'install\t%s\t%s\t%s\n' "$name" "$seconds" "$outcome" >>"$CODA_TIMES"; fi
}
report() {
  local running=() name state seconds
  for name in "${steps[@]}"; do
    [ -z "${ended[$name]:-}" ] || continue
    announce "$name"
    read -r state seconds <"$LOGS/$name.status" || continue
    case "$state" in
      queued) ;;
      running) running+=("$name $((EPOCHSECONDS - seconds))s") ;;
      *) finish "$name" "$state" "$seconds" ;;
    esac
  done
  ((${#running[@]} > 0)) || return 0
  local line
  line="running: $(printf '%s, ' "${running[@]}")"
  line=${line%, }
  if [ -t 2 ]; then
    if ((EPOCHSECONDS - started >= 2)); then printf '\r\033[K[install] %s' "$line" >&2; fi
  elif ((EPOCHSECONDS >= next_line)); then
    log "$line"
    next_line=$((EPOCHSECONDS + 30))
  fi
  return 0
}
failed=0
# The chains' ends are looked for every 0.1 s (a builtin), the progress once a second: a run that
# finds everything installed ends in a fraction of a second (npm run test:unit starts with one).
reported=0
while :; do
  alive=0
  for pid in "${chains[@]}"; do if kill -0 "$pid" 2>/dev/null; then alive=1; fi; done
  ((alive)) || break
  if ((EPOCHSECONDS != reported)); then
    report
    reported=$EPOCHSECONDS
  fi
  sleep 0.1
done
for pid in "${chains[@]}"; do wait "$pid" || failed=1; done
report
clear_line
elapsed=$((EPOCHSECONDS - started))
if [ -n "${CODA_TIMES:-}" ]; then printf 'install\ttotal\t%s\t%s\n' "$elapsed" "$( ((failed)) && echo failed || echo ok)" >>"$CODA_TIMES"; fi
if ((failed)); then
  log "failed after ${elapsed}s"
  exit 1
fi
if ((elapsed > 2)); then log "done in ${elapsed}s"; fi
