#!/usr/bin/env bash
# Installs the Debian packages named on the command line that this machine lacks (one apt-get
# run: apt and dpkg take a lock, so two runs side by side would only wait for each other).
#   bash infra/install-debian.sh PACKAGE...
set -euo pipefail

log() { echo "[install-debian] $*" >&2; }
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
((${#missing[@]} > 0)) || exit 0
log "${missing[*]}"
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
