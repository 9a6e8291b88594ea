#!/usr/bin/env bash
# The VM's root file system as a tarball: Debian 12 (bookworm) from Debian's packages only, by
# mmdebstrap (minbase, debian-packages.txt), with the system's own settings (user `user` as in
# ScienceBoard's VMs, /etc/fstab for /dev/vda, DHCP on QEMU's user network by systemd-networkd).
# The project's own files go in later (build-disk.sh), so that a change of them does not fetch
# and unpack the packages again.
#   bash infra/vm-image/build-rootfs.sh OUT.tar [APP_PACKAGE...]
# APP_PACKAGE: the applications' packages, from the registry (activities/desktop/qemu/image.ts).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
shift
packages="$( (grep -v '^#' "$HERE/debian-packages.txt" | grep -v '^$'; printf '%s\n' "$@") | paste -sd, -)"
setup() {
  cat <<'HOOK'
set -e
root="$1"
echo coda-vm > "$root/etc/hostname"
printf '/dev/vda / ext4 rw,relatime 0 1\n' > "$root/etc/fstab"
mkdir -p "$root/etc/systemd/network"
printf '[Match]\nName=en*\n\n[Network]\nDHCP=ipv4\n' > "$root/etc/systemd/network/10-user-net.network"
chroot "$root" systemctl enable systemd-networkd
# Nothing on a timer or a getty competes with the desktop for the VM's CPU (TCG runs it slowly).
chroot "$root" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer getty@tty1.service 2>/dev/null || true
chroot "$root" useradd --create-home --uid 1000 --shell /bin/bash user
HOOK
}
mmdebstrap --mode=root --variant=minbase --include="$packages" \
  --aptopt='APT::Install-Recommends "false"' \
  --customize-hook="$(setup)" \
  --skip=cleanup/reproducible \
  bookworm "$out" http://deb.debian.org/debian
