#!/usr/bin/env bash
# The VM's disk from the root file system's tarball (build-rootfs.sh) and the project's layer: the
# in-VM server (server/), its pyautogui from PyPI (python-requirements.txt) and the desktop's
# systemd unit (layer/). Writes OUT/disk.qcow2 (ext4, no partition table: QEMU boots the kernel
# straight, root=/dev/vda), OUT/vmlinuz and OUT/initrd.img.
#   bash infra/vm-image/build-disk.sh ROOTFS.tar OUT [FOLDER...]
# FOLDER: folders of ScienceBoard's snapshot the applications' tasks write into (from the registry).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tarball="$1"
out="$2"
shift 2
mkdir -p "$out"
tree="$(mktemp -d "$out/.tree-XXXXXX")"
trap 'rm -rf "$tree" "$out/disk.raw"' EXIT
tar -C "$tree" -xpf "$tarball"
for folder in /home/user/Downloads /home/user/Desktop "$@"; do install -d -o 1000 -g 1000 "$tree$folder"; done
install -d "$tree/opt/coda"
install -m 0644 "$HERE/server/osworld_server.py" "$tree/opt/coda/osworld_server.py"
install -m 0755 "$HERE/layer/desktop.sh" "$tree/opt/coda/desktop.sh"
install -m 0644 "$HERE/layer/coda-desktop.service" "$tree/etc/systemd/system/coda-desktop.service"
ln -sf /etc/systemd/system/coda-desktop.service "$tree/etc/systemd/system/multi-user.target.wants/coda-desktop.service"
bash "$HERE/install-vm-python.sh" "$tree/usr/local/lib/python3.11/dist-packages"
cp "$(ls "$tree"/boot/vmlinuz-* | sort -V | tail -1)" "$out/vmlinuz"
cp "$(ls "$tree"/boot/initrd.img-* | sort -V | tail -1)" "$out/initrd.img"
# Room for the tasks' files and the apps' caches beside what is installed.
used_mb=$(du -sm "$tree" | cut -f1)
mkfs.ext4 -q -L root -d "$tree" "$out/disk.raw" "$((used_mb * 13 / 10 + 1024))M"
qemu-img convert -O qcow2 "$out/disk.raw" "$out/disk.qcow2"
