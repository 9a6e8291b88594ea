#!/usr/bin/env bash
# Installs the VM's PyPI packages (infra/vm-image/python-requirements.txt: pyautogui and its
# pure-Python dependencies) into DEST, for Debian 12's /usr/bin/python3 with DEST on PYTHONPATH:
# the VM image carries them, and test/desktop/osworld-client.test.ts runs the in-VM server with
# them on this machine. Needs Debian's python3-pip, python3-setuptools and python3-wheel (the
# sdists are built with them, without fetching a build environment).
#   bash infra/vm-image/install-vm-python.sh DEST
# Does nothing when DEST holds what the requirements file says (a stamp with its sha256). Else it
# installs into a new folder beside DEST and puts that in DEST's place, so that an interrupted run
# never leaves a half-installed DEST with a matching stamp, and a changed list leaves nothing behind.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQUIREMENTS="$HERE/python-requirements.txt"
dest="${1:?usage: bash infra/vm-image/install-vm-python.sh DEST}"
dest="${dest%/}"
log() { echo "[install-vm-python] $*" >&2; }

digest="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
stamp=".coda-requirements.sha256"
current() { [ "$(cat "$dest/$stamp" 2>/dev/null)" = "$digest" ]; }
current && exit 0

mkdir -p "$(dirname "$dest")"
# One install at a time per DEST (two checkouts share the cache folder); the second finds it done.
exec 9>"$dest.lock"
flock 9
current && exit 0
log "pyautogui and its dependencies from PyPI into $dest"
new="$(mktemp -d "$dest.new.XXXXXX")"
trap 'rm -rf "$new"' EXIT
/usr/bin/python3 -m pip install -q --disable-pip-version-check --no-input --root-user-action=ignore \
  --no-deps --no-build-isolation --require-hashes --target "$new" -r "$REQUIREMENTS"
echo "$digest" >"$new/$stamp"
chmod 755 "$new" # mktemp's 700 would keep the VM's user out of it
rm -rf "$dest"
mv "$new" "$dest"
trap - EXIT
